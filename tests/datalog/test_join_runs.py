"""Join traces an epoch grew in bulk stay in runs through that commit, and
small updates read them through overlays.

At the default thresholds a join trace that one epoch grew by
``colbatch.COMMIT_ROWS`` rows or more is in runs after that commit; the
single-fact updates after it append to its overlays (``engine.columnar``)
instead of making runs, and the first one's commit moves it back to dicts if
it holds fewer than ``colbatch.SMALL_STATE`` entries, as a small state is.
Each program runs twice, with the defaults and on dicts only (every threshold
out of reach), on the same transactions; the outputs must agree after each.
"""

from __future__ import annotations

import random

import pytest

import datalog
from benchmarks.workloads import ANDERSEN_PROGRAM, andersen_input
from engine import colbatch
from engine.colbatch import columns_from
from engine.columnar import ColumnarTrace
from engine.operators.join import TraceNode

NEVER = 1 << 40  # a threshold no batch reaches: dicts only


def trace_nodes(session) -> list:
    return [node for node in session._circuit.all_nodes if type(node) is TraceNode]


def sessions(text: str, facts: dict):
    """``(session, twin)``: the program loaded with ``facts`` at the default
    thresholds, and on dicts only."""
    session = datalog.Program(text).session()
    with columns_from(NEVER):
        twin = datalog.Program(text).session()
    for current, threshold in ((session, None), (twin, NEVER)):
        with columns_from(threshold), current.transaction() as tx:
            for relation, rows in facts.items():
                tx.insert(relation, *rows)
    assert colbatch.THRESHOLD != NEVER
    return session, twin


def overlaid(node) -> bool:
    trace = node.trace
    return bool(trace.older or trace.recent or trace.staged_small)


def run_both(text: str, facts: dict, changes: list, output: str) -> list:
    """The session at the defaults, after loading ``facts`` and applying each
    ``(op, relation, row)`` of ``changes``, checked against a dict-only twin
    after each transaction; returns its trace nodes the load left in runs
    (node -> its entries then)."""
    session, twin = sessions(text, facts)
    assert session.query(output) == twin.query(output)
    grown = {node: node.trace.past_entries() for node in trace_nodes(session)
             if type(node.trace) is ColumnarTrace}
    assert grown
    for op, relation, row in changes:
        for current, threshold in ((session, None), (twin, NEVER)):
            with columns_from(threshold):
                getattr(current, op)(relation, row)
        assert session.query(output) == twin.query(output), (op, relation, row)
    assert not any(type(node.trace) is ColumnarTrace for node in trace_nodes(twin))
    return grown


def andersen_changes(facts: dict) -> list:
    rng = random.Random(5)
    changes = []
    for relation in ("assign", "load_from", "store_to", "addr_of", "assign"):
        row = rng.choice(facts[relation])
        changes += [("retract", relation, row), ("insert", relation, row)]
    return changes + [("insert", "assign", (0, 49)), ("insert", "addr_of", (7, 4999)),
                      ("retract", "assign", (0, 49))]


def test_a_recursive_stratums_join_traces_stay_in_runs_after_the_load(monkeypatch):
    """Andersen's analysis over 100 functions of 50 variables: the traces of
    ``assign`` and of the two rules' first joins grow by 5,000-9,000 rows in
    the load (kept in runs: SMALL_STATE under their sizes); single facts
    retracted and inserted again, and new ones, give what dicts give,
    through the overlays."""
    monkeypatch.setattr(colbatch, "SMALL_STATE", colbatch.COMMIT_ROWS)
    facts = andersen_input(100, 50)
    grown = run_both(ANDERSEN_PROGRAM, facts, andersen_changes(facts), "points_to")
    assert len(grown) >= 3
    assert all(type(node.trace) is ColumnarTrace for node in grown)  # still in runs
    assert any(overlaid(node) for node in grown)


def test_a_bulk_loads_small_join_traces_go_back_to_dicts_after_an_update():
    """The same at the defaults: the traces the load grew, under SMALL_STATE
    entries, are dicts after the first update's commit (read faster by the
    small joins of the updates); those above it stay in runs."""
    facts = andersen_input(100, 50)
    grown = run_both(ANDERSEN_PROGRAM, facts, andersen_changes(facts), "points_to")
    small = [node for node, entries in grown.items() if entries < colbatch.SMALL_STATE]
    assert len(small) >= 3
    assert all(type(node.trace) is not ColumnarTrace for node in small)
    assert all(type(node.trace) is ColumnarTrace for node in grown if node not in small)


def test_a_root_joins_traces_stay_in_runs_after_the_load():
    """Two-hop paths over 5,000 random edges: both traces of ``e`` (by source
    and by target) grow by 5,000 rows in the load and stay in runs; the
    updates' rows wait in their overlays (staged until the commit)."""
    text = (".decl e(x: number, y: number)\n.decl two(x: number, y: number)\n"
            "two(x, z) :- e(x, y), e(y, z).\n")
    rng = random.Random(9)
    edges = sorted({(rng.randrange(3000), rng.randrange(3000)) for _ in range(5000)})
    changes = []
    for edge in rng.sample(edges, 4):
        changes += [("retract", "e", edge), ("insert", "e", edge)]
    changes += [("insert", "e", (5000, edges[0][0])), ("insert", "e", (edges[0][1], 5001))]
    with pytest.MonkeyPatch.context() as patch:  # (SMALL_STATE under their sizes)
        patch.setattr(colbatch, "SMALL_STATE", colbatch.COMMIT_ROWS)
        grown = run_both(text, {"e": edges}, changes, "two")
    assert len(grown) == 2 and all(overlaid(node) for node in grown)
    assert all(type(node.trace) is ColumnarTrace for node in grown)  # still in runs
    assert colbatch.COMMIT_ROWS <= 5000
