"""Child circuits against from-scratch evaluation, epoch after epoch."""

from __future__ import annotations

import random

import pytest

from engine import Circuit
from tests.engine.circuits import (
    closure,
    same_generation,
    same_generation_scratch,
    transitive_closure,
)


def random_history(rng: random.Random, epochs: int, universe, size=(1, 4)):
    """Valid set-semantics batches: insert absent facts, retract present ones."""
    present: set = set()
    history = []
    for _ in range(epochs):
        batch: dict = {}
        for _ in range(rng.randint(*size)):
            fact = rng.choice(universe)
            if fact in present:
                if rng.random() < 0.5:
                    batch[fact] = batch.get(fact, 0) - 1
                    present.discard(fact)
            else:
                batch[fact] = batch.get(fact, 0) + 1
                present.add(fact)
        history.append(({f: w for f, w in batch.items() if w}, set(present)))
    return history


@pytest.mark.parametrize("seed", range(12))
def test_transitive_closure_matches_scratch_after_every_epoch(seed):
    rng = random.Random(seed)
    universe = [(a, b) for a in range(8) for b in range(8)]
    circuit = transitive_closure()
    expected_total: dict = {}
    for batch, edges in random_history(rng, 40, universe):
        delta = circuit.step({"edge": batch})["path"]
        for row, w in delta.items():
            expected_total[row] = expected_total.get(row, 0) + w
        expected_total = {r: w for r, w in expected_total.items() if w}
        assert expected_total == {p: 1 for p in closure(edges)}
        assert circuit.collection("path") == expected_total


def test_retracting_an_edge_that_cuts_a_cycle():
    circuit = transitive_closure()
    ring = {(i, (i + 1) % 5): 1 for i in range(5)}
    first = circuit.step({"edge": ring})["path"]
    assert set(first) == {(a, b) for a in range(5) for b in range(5)}
    delta = circuit.step({"edge": {(2, 3): -1}})["path"]
    remaining = closure(set(ring) - {(2, 3)})
    assert {r for r, w in delta.items() if w < 0} == set(first) - remaining
    assert all(w == -1 for w in delta.values())
    assert set(circuit.collection("path")) == remaining
    circuit.step({"edge": {(2, 3): 1}})
    assert set(circuit.collection("path")) == set(first)


def test_retracting_an_edge_whose_paths_are_derivable_another_way():
    circuit = transitive_closure()
    circuit.step({"edge": {(1, 2): 1, (2, 3): 1, (1, 3): 1, (3, 4): 1}})
    delta = circuit.step({"edge": {(1, 3): -1}})["path"]
    assert delta == {}
    assert set(circuit.collection("path")) == closure({(1, 2), (2, 3), (3, 4)})


@pytest.mark.parametrize("seed", range(8))
def test_same_generation_matches_scratch_after_every_epoch(seed):
    rng = random.Random(100 + seed)
    universe = [(x, p) for x in range(9) for p in range(5)]
    circuit = same_generation()
    for batch, parents in random_history(rng, 30, universe, size=(1, 3)):
        circuit.step({"parent": batch})
        got = circuit.collection("sg")
        assert got == {row: 1 for row in same_generation_scratch(parents)}


def doubling_datalog() -> Circuit:
    """x(v) :- input(v).  x(2v) :- x(v), 2v <= 50."""
    circuit = Circuit()
    source = circuit.source("input", arity=1)
    with circuit.child("x") as child:
        a = child.import_(source)
        fb = child.feedback("x", arity=1)
        new = a.plus(fb.stream.map(lambda r: (2 * r[0],)).filter(lambda r: r[0] <= 50))
        new = new.distinct()
        fb.connect(new)
        out = child.export(new)
    circuit.output("x", out, keep=True)
    return circuit


def doubling_iterate() -> Circuit:
    """Reference 001's construction: the input enters at iteration 0 and is
    retracted at iteration 1; each iteration computes distinct(x ∪ 2x, <= 50)."""
    circuit = Circuit()
    source = circuit.source("input", arity=1)
    with circuit.child("iterate") as child:
        a = child.import_(source)
        fb = child.feedback("x", arity=1)
        x = a.plus(fb.stream).minus(a.delay())
        body = x.map(lambda r: (2 * r[0],)).plus(x).filter(lambda r: r[0] <= 50).distinct()
        fb.connect(body)
        out = child.export(body)
    circuit.output("x", out, keep=True)
    return circuit


def geometric(values) -> set:
    out = set()
    for v in values:
        while v <= 50:
            out.add((v,))
            v *= 2
    return out


@pytest.mark.parametrize("build", [doubling_datalog, doubling_iterate])
def test_reference_001_insert_3_at_epoch_1_retract_at_epoch_2(build):
    circuit = build()
    assert circuit.step({"input": {(1,): 1}})["x"] == {(v,): 1 for v in (1, 2, 4, 8, 16, 32)}
    delta = circuit.step({"input": {(16,): 1, (3,): 1}})["x"]
    assert delta == {(v,): 1 for v in (3, 6, 12, 24, 48)}
    # lexicographic times answer only (3, -1) here; product order removes every multiple
    delta = circuit.step({"input": {(3,): -1}})["x"]
    assert delta == {(v,): -1 for v in (3, 6, 12, 24, 48)}
    assert set(circuit.collection("x")) == geometric([1, 16])
    delta = circuit.step({"input": {(1,): -1}})["x"]
    assert delta == {(v,): -1 for v in (1, 2, 4, 8)}
    assert set(circuit.collection("x")) == geometric([16])


def even_odd_paths() -> Circuit:
    """odd(x, y) :- edge(x, y).   odd(x, z) :- even(x, y), edge(y, z).
    even(x, z) :- odd(x, y), edge(y, z).   Two feedbacks in one child."""
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    with circuit.child("parity") as child:
        e = child.import_(edge)
        odd_fb = child.feedback("odd", arity=2)
        even_fb = child.feedback("even", arity=2)
        by_src = e.index_by((0,))
        odd = e.plus(even_fb.stream.index_by((1,)).join(by_src, ((0, 0), (1, 1)))).distinct()
        even = odd_fb.stream.index_by((1,)).join(by_src, ((0, 0), (1, 1))).distinct()
        odd_fb.connect(odd)
        even_fb.connect(even)
        circuit.output("odd", child.export(odd), keep=True)
        circuit.output("even", child.export(even), keep=True)
    return circuit


def even_odd_scratch(edges):
    odd, even = set(edges), set()
    while True:
        new_even = {(x, z) for (x, y) in odd for (y2, z) in edges if y == y2}
        new_odd = {(x, z) for (x, y) in even for (y2, z) in edges if y == y2} | set(edges)
        if new_even == even and new_odd == odd:
            return odd, even
        odd, even = new_odd | odd, new_even | even


@pytest.mark.parametrize("seed", range(6))
def test_mutual_recursion_with_two_feedbacks(seed):
    rng = random.Random(200 + seed)
    universe = [(a, b) for a in range(6) for b in range(6)]
    circuit = even_odd_paths()
    for batch, edges in random_history(rng, 30, universe):
        circuit.step({"edge": batch})
        odd, even = even_odd_scratch(edges)
        assert circuit.collection("odd") == {r: 1 for r in odd}
        assert circuit.collection("even") == {r: 1 for r in even}


def reach_avoiding() -> Circuit:
    """reach(x) :- start(x), !blocked(x).
    reach(y) :- reach(x), edge(x, y), !blocked(y).   (negation of a lower stratum)"""
    circuit = Circuit()
    start = circuit.source("start", arity=1)
    edge = circuit.source("edge", arity=2)
    blocked = circuit.source("blocked", arity=1)
    with circuit.child("reach") as child:
        s, e, b = child.import_(start), child.import_(edge), child.import_(blocked)
        fb = child.feedback("reach", arity=1)
        stepped = fb.stream.index_by((0,)).join(e.index_by((0,)), ((1, 1),))
        candidates = s.plus(stepped)
        new = candidates.index_by((0,)).antijoin(b.index_by((0,))).distinct()
        fb.connect(new)
        circuit.output("reach", child.export(new), keep=True)
    return circuit


def reach_scratch(starts, edges, blocked):
    reach = {x for (x,) in starts if (x,) not in blocked}
    while True:
        new = {y for (x, y) in edges if x in reach and (y,) not in blocked} - reach
        if not new:
            return {(x,) for x in reach}
        reach |= new


@pytest.mark.parametrize("seed", range(6))
def test_negation_of_a_lower_stratum_inside_recursion(seed):
    rng = random.Random(300 + seed)
    circuit = reach_avoiding()
    facts = {"start": set(), "edge": set(), "blocked": set()}
    universes = {"start": [(x,) for x in range(7)],
                 "edge": [(a, b) for a in range(7) for b in range(7)],
                 "blocked": [(x,) for x in range(7)]}
    for _ in range(40):
        batch: dict = {}
        for name in facts:
            changes: dict = {}
            for _ in range(rng.randint(0, 2)):
                fact = rng.choice(universes[name])
                if fact in facts[name]:
                    facts[name].discard(fact)
                    changes[fact] = changes.get(fact, 0) - 1
                else:
                    facts[name].add(fact)
                    changes[fact] = changes.get(fact, 0) + 1
            batch[name] = {f: w for f, w in changes.items() if w}
        circuit.step(batch)
        expected = reach_scratch(facts["start"], facts["edge"], facts["blocked"])
        assert circuit.collection("reach") == {r: 1 for r in expected}


@pytest.mark.parametrize("back", [None, (6, 2), (9, 0)])
def test_bulk_load_exports_each_path_once(back):
    """The first epoch's export adds fresh distinct output without lookups; rows
    derived again at later iterations (a cycle) must still come out once."""
    edges = {(i, i + 1): 1 for i in range(9)}
    if back is not None:
        edges[back] = 1
    delta = transitive_closure().step({"edge": edges})["path"]
    assert delta == {p: 1 for p in closure(set(edges))}


def test_first_epoch_retraction_inside_the_fixed_point():
    """A row the first epoch emits at iteration 0 and retracts at iteration 4
    (a counter reaching 3 negates it) cancels in the export: its second output
    is not fresh, so it is added, not written over."""
    circuit = Circuit()
    seed = circuit.source("seed", arity=2)
    with circuit.child("count") as child:
        start = child.import_(seed)
        fb = child.feedback("rows", arity=2)
        step = fb.stream.filter(lambda t: t[0] == "c" and t[1] < 3).map(
            lambda t: ("c", t[1] + 1))
        kill = fb.stream.filter(lambda t: t == ("c", 3)).map(lambda t: ("r", 0)).negate()
        rows = start.plus(step, kill).distinct()
        fb.connect(rows)
        out = child.export(rows)
    circuit.output("rows", out)
    delta = circuit.step({"seed": {("r", 0): 1, ("c", 0): 1}})["rows"]
    assert delta == {("c", n): 1 for n in range(4)}
