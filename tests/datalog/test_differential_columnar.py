"""The columnar operators (engine.operators.columns) against the reference
evaluator: random programs with every batch columnar, and a program at a size
where the default per-batch choice takes the columnar paths."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, example, given, settings

import datalog
from datalog.syntax.parser import parse
from engine import colbatch
from engine.colbatch import columns_from
from tests.datalog.differential import closure, programs, run_differential, transactions
from tests.reference import evaluate


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(max_transactions=6))
# Nullary rows on columns (a head with no variables over a cross product):
# they were dropped, or failed with an IndexError, once filters and maps ran on columns.
@example(text=".decl e(c0: number, c1: number)\n.decl r2(c0: number)\n"
              "r2(0) :- e(0, _).\nr2(x) :- e(0, x).\nr2(0) :- r2(_), e(x, _).\n",
         txs=[[("insert", "e", (0, 1))], [("insert", "e", (0, 0))]])
@example(text=".decl e(c0: number, c1: number)\n.decl r2(c0: number)\n"
              "r2(1) :- e(0, 0).\nr2(0) :- r2(_), e(_, _).\n",
         txs=[[("insert", "e", (0, 0))], [("insert", "e", (0, 0))]])
# A nullary batch on columns plus a few nullary rows (add_few compared no column).
@example(text=".decl v(c0: number)\n.decl r1(c0: number, c1: number)\n"
              "r1(0, 0) :- v(0), !v(_).\n",
         txs=[[("insert", "v", (0,))]])
def test_incremental_equals_reference_with_every_batch_columnar(text, txs):
    """Symbols, floats, negation and aggregates included: what columns cannot
    hold goes back to rows."""
    with columns_from(0):
        run_differential(text, txs)


SIZED = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl far(x: number, y: number)
.decl sg(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
far(x, y + 1) :- path(x, y), !edge(x, y), x < 20.
sg(x, y) :- edge(p, x), edge(p, y), x != y.
sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).
"""


def expected_sized(edges: set) -> dict:
    """``SIZED`` evaluated by plain set loops (the reference evaluator is naive,
    too slow at this size)."""
    successors, path = closure(edges)
    far = {(x, y + 1) for x, y in path if (x, y) not in edges and x < 20}
    sg = {(x, y) for p in successors for x in successors[p] for y in successors[p] if x != y}
    new = set(sg)
    while new:
        new = {(x, y) for a, b in new for x in successors.get(a, ())
               for y in successors.get(b, ())} - sg
        sg |= new
    return {"path": path, "far": far, "sg": sg}


def test_columnar_paths_taken_by_default_and_equal_to_plain_loops():
    """A random graph of 300 nodes and 600 edges (49,132 paths, 52,799
    same-generation pairs, deltas of thousands of rows): the recursive joins
    and distincts go columnar by default (counted); bulk load, a retraction of
    several edges (a past to correct), then their re-insertion with new
    edges."""
    rng = random.Random(5)
    edges = sorted({(rng.randrange(300), rng.randrange(300)) for _ in range(600)})
    removed = edges[::40]
    added = [(rng.randrange(300), rng.randrange(300)) for _ in range(6)]
    session = datalog.Program(SIZED).session()
    before = dict(colbatch.COUNTS)
    current: set = set()
    for inserts, retracts in ((edges, []), ([], removed), (removed + added, [])):
        with session.transaction() as tx:
            tx.insert("edge", *inserts)
            tx.retract("edge", *retracts)
        current = (current | set(inserts)) - set(retracts)
        expected = expected_sized(current)
        for name in ("path", "far", "sg"):
            assert session.query(name) == expected[name], name
    assert colbatch.COUNTS["join"] > before["join"]
    assert colbatch.COUNTS["distinct"] > before["distinct"]


def test_a_chain_goes_columnar_with_mid_size_deltas_once_its_state_is_large():
    """A 600-node chain (179,700 paths): every iteration's delta has fewer
    than 600 rows, far below colbatch.THRESHOLD, so only the loop rule
    (colbatch.LOOP_ROWS rows against SMALL_STATE of state, from iteration
    LONG_LOOP on) takes the loop columnar (counted); then a retraction
    in the middle of the chain (up to 300 changed paths an iteration) and its
    re-insertion, on the state in runs."""
    edges = [(k, k + 1) for k in range(599)]
    assert 600 < min(colbatch.THRESHOLD, colbatch.DISTINCT_ROWS)
    session = datalog.Program(SIZED).session()
    current: set = set()
    for inserts, retracts in ((edges, []), ([], [(299, 300)]), ([(299, 300)], [])):
        before = dict(colbatch.COUNTS)
        with session.transaction() as tx:
            tx.insert("edge", *inserts)
            tx.retract("edge", *retracts)
        current = (current | set(inserts)) - set(retracts)
        expected = expected_sized(current)
        for name in ("path", "far", "sg"):
            assert session.query(name) == expected[name], name
        assert colbatch.COUNTS["join"] > before["join"]
        assert colbatch.COUNTS["distinct"] > before["distinct"]


def test_a_long_update_loop_joins_its_small_deltas_on_columns():
    """A retraction near the start of a 600-node chain (state in runs after the
    bulk load) changes ~150 paths an iteration over ~450 iterations: below
    LOOP_ROWS, but past LONG_LOOP the join moves the small edge trace (in dicts
    between epochs) to runs and joins on columns (counted), instead of making
    rows of every delta; then the re-insertion."""
    edges = [(k, k + 1) for k in range(599)]
    session = datalog.Program(SIZED).session()
    session.insert("edge", edges)
    current = set(edges)
    for retract in (True, False):
        before = dict(colbatch.COUNTS)
        with session.transaction() as tx:
            (tx.retract if retract else tx.insert)("edge", (150, 151))
        current = current - {(150, 151)} if retract else current | {(150, 151)}
        expected = expected_sized(current)
        for name in ("path", "far", "sg"):
            assert session.query(name) == expected[name], name
        assert colbatch.COUNTS["join"] - before["join"] > 300


def test_a_short_loop_keeps_its_large_state_in_dicts():
    """Closure of a random graph of 200 nodes and 400 edges: 26,000-odd paths
    in about 20 iterations whose deltas (up to ~7,000 rows) are past LOOP_ROWS
    but under THRESHOLD: the loop ends before LONG_LOOP, so its state stays in
    dicts (moved to runs at iteration 9-10 it cost the batch 108 -> 78 ms and
    left the single-fact updates after it at 4.6 ms instead of 1.8)."""
    rng = random.Random(13)
    edges: set = set()
    while len(edges) < 400:
        x, y = rng.randrange(200), rng.randrange(200)
        if x != y:
            edges.add((x, y))
    program = datalog.Program(".decl edge(x: number, y: number)\n"
                              ".decl path(x: number, y: number)\n"
                              "path(x, y) :- edge(x, y).\n"
                              "path(x, z) :- path(x, y), edge(y, z).\n")
    session = program.session()
    before = dict(colbatch.COUNTS)
    session.insert("edge", sorted(edges))
    paths = closure(edges)[1]
    assert len(paths) >= colbatch.SMALL_STATE
    assert session.query("path") == paths
    assert (colbatch.COUNTS["join"], colbatch.COUNTS["distinct"]) == (
        before["join"], before["distinct"])


def test_a_small_update_keeps_a_large_loop_state_in_dicts():
    """A 300-row batch into a loop whose state is large (a 250-node chain's
    31,125 paths, in dicts) stays on dicts when the epoch changes few rows:
    packing the state would make every small update after it pay numpy's
    per-call costs (Andersen's single-fact updates went 1.5 -> 2.7 ms)."""
    chain = [(k, k + 1) for k in range(249)]
    fan = [(2000 + k, 1000) for k in range(300)]   # 300 new paths, no new sg pairs
    assert 300 >= colbatch.LOOP_ROWS and 250 * 249 // 2 >= colbatch.SMALL_STATE
    session = datalog.Program(SIZED).session()
    session.insert("edge", chain)
    assert session.size("path") == 250 * 249 // 2   # (reading it leaves it in dicts)
    before = dict(colbatch.COUNTS)
    session.insert("edge", fan)
    assert colbatch.COUNTS["distinct"] == before["distinct"]
    expected = expected_sized(set(chain) | set(fan))
    for name in ("path", "far", "sg"):
        assert session.query(name) == expected[name], name


def test_the_plain_loops_agree_with_the_reference():
    """The oracle above against the reference evaluator, on a small graph."""
    rng = random.Random(6)
    edges = {(rng.randrange(25), rng.randrange(25)) for _ in range(40)}
    expected = evaluate(parse(SIZED), {"edge": edges})
    assert expected_sized(edges) == {name: expected[name] for name in ("path", "far", "sg")}


def test_a_join_compiles_its_loops_once_per_kind_of_trace(monkeypatch):
    """A chain's update loop moves the join's small edge trace to runs (past
    LONG_LOOP) and back to dicts at commit: the loops compiled for each kind
    are kept, so later updates compile none (each epoch compiled twice, and
    read the columnar trace's epoch part to do it)."""
    from engine.operators import join

    compiled = []
    original = join.compile_join
    monkeypatch.setattr(join, "compile_join",
                        lambda *args: compiled.append(1) or original(*args))
    edges = [(k, k + 1) for k in range(599)]
    session = datalog.Program(SIZED).session()
    session.insert("edge", edges)
    counts = []
    for _ in range(3):
        before = len(compiled)
        session.retract("edge", (150, 151))
        session.insert("edge", (150, 151))
        counts.append(len(compiled) - before)
    assert counts[0] > 0 and counts[1:] == [0, 0], counts


def test_a_large_delta_that_takes_the_state_past_small_state_joins_on_columns():
    """100 sources to 100 middles (10,000 edges), each middle to two of 200
    sinks: the second iteration's 20,000 new paths meet 10,200 in the trace,
    under colbatch.SMALL_STATE before the delta and past it with it: the join
    goes columnar there (counted) instead of making rows of a columnar delta
    of more than THRESHOLD rows (negagg-1000-1500's iteration 6: 33 ms on rows,
    10 on columns)."""
    edges = [(a, 100 + b) for a in range(100) for b in range(100)]
    edges += [(100 + b, 200 + (2 * b + k) % 200) for b in range(100) for k in (0, 1)]
    assert 20_000 >= colbatch.THRESHOLD
    assert len(edges) < colbatch.SMALL_STATE <= len(edges) + 20_000
    program = datalog.Program(".decl edge(x: number, y: number)\n"
                              ".decl path(x: number, y: number)\n"
                              "path(x, y) :- edge(x, y).\n"
                              "path(x, z) :- path(x, y), edge(y, z).\n")
    session = program.session()
    before = colbatch.COUNTS["join"]
    session.insert("edge", edges)
    assert colbatch.COUNTS["join"] > before
    assert session.query("path") == closure(set(edges))[1]
