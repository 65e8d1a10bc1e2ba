"""A bulk append goes into runs without building dicts first.

A join trace that one epoch grows by ``colbatch.COMMIT_ROWS`` rows or more is
in runs after that commit (tests/datalog/test_join_runs.py); a single append
of that many rows (a bulk load's input) therefore moves the trace to runs
before it is made, and no dict trace is ever built for those rows
(``TraceNode.bulk_to_runs``). Each program runs twice, at the defaults and on
dicts only (every threshold out of reach); the outputs must agree after each
transaction, and at the defaults no dict trace may take an append of
``COMMIT_ROWS`` rows.
"""

from __future__ import annotations

import random

import pytest

import datalog
from benchmarks.workloads import ANDERSEN_PROGRAM, andersen_input
from datalog.errors import DatalogError
from engine import colbatch
from engine.colbatch import columns_from
from engine.columnar import ColumnarTrace
from engine.operators.join import TraceNode
from engine.trace import Trace

NEVER = 1 << 40  # a threshold no batch reaches: dicts only

TWO_HOPS = (".decl e(x: number, y: number)\n.decl two(x: number, y: number)\n"
            "two(x, z) :- e(x, y), e(y, z).\n")


@pytest.fixture
def dict_appends(monkeypatch) -> list:
    """The size of every batch appended to a dict trace at the default
    thresholds (not by a dict-only twin) while the test runs."""
    sizes: list = []
    append_rows = Trace.append_rows

    def spy(self, batch, iteration=0):
        if colbatch.THRESHOLD != NEVER:
            sizes.append(len(batch))
        append_rows(self, batch, iteration)

    monkeypatch.setattr(Trace, "append_rows", spy)
    return sizes


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


def apply(session, twin, changes: list, output: str) -> None:
    for op, relation, row in changes:
        for current, threshold in ((session, None), (twin, NEVER)):
            with columns_from(threshold):
                getattr(current, op)(relation, row)
        assert session.query(output) == twin.query(output), (op, relation, row)


def test_a_recursive_stratums_input_trace_is_never_dicts(dict_appends):
    """Andersen's analysis over 100 functions of 50 variables: ``assign``'s
    5,000 rows arrive at the child's trace in one append at iteration 0 and go
    straight into runs; the first iteration's join of the 5,000 fed-back
    ``points_to`` rows then runs on columns too. Single facts after it agree
    with dicts."""
    facts = andersen_input(100, 50)
    assert len(facts["assign"]) >= colbatch.COMMIT_ROWS
    session, twin = sessions(ANDERSEN_PROGRAM, facts)
    assert session.query("points_to") == twin.query("points_to")
    assert dict_appends and max(dict_appends) < colbatch.COMMIT_ROWS
    traces = [node for node in session._circuit.all_nodes if type(node) is TraceNode]
    assert sum(type(node.trace) is ColumnarTrace for node in traces) >= 3
    rng = random.Random(3)
    changes = []
    for relation in ("assign", "addr_of", "load_from", "assign"):
        row = rng.choice(facts[relation])
        changes += [("retract", relation, row), ("insert", relation, row)]
    apply(session, twin, changes, "points_to")


def test_a_root_joins_traces_take_a_bulk_load_as_runs(dict_appends):
    """Two-hop paths over 5,000 random edges: both root traces of ``e`` take
    the load's 5,000 rows as runs; later single edges agree with dicts."""
    rng = random.Random(9)
    edges = sorted({(rng.randrange(3000), rng.randrange(3000)) for _ in range(5000)})
    session, twin = sessions(TWO_HOPS, {"e": edges})
    assert session.query("two") == twin.query("two")
    assert max(dict_appends, default=0) < colbatch.COMMIT_ROWS
    changes = [("retract", "e", edges[0]), ("insert", "e", edges[0]),
               ("insert", "e", (4000, edges[1][0]))]
    apply(session, twin, changes, "two")


def test_rows_that_do_not_fit_columns_stay_in_dicts():
    """Symbols (interned, not int64 columns a trace keeps) in a bulk load: the
    trace goes to runs, cannot take the rows and is dicts again, for good."""
    text = (".decl e(x: symbol, y: symbol)\n.decl two(x: symbol, y: symbol)\n"
            "two(x, z) :- e(x, y), e(y, z).\n")
    rng = random.Random(4)
    edges = sorted({(f"n{rng.randrange(3000)}", f"n{rng.randrange(3000)}")
                    for _ in range(5000)})
    session, twin = sessions(text, {"e": edges})
    assert session.query("two") == twin.query("two")
    traces = [node for node in session._circuit.all_nodes if type(node) is TraceNode]
    assert traces and all(type(node.trace) is Trace and node.no_columns for node in traces)
    apply(session, twin, [("retract", "e", edges[3]), ("insert", "e", ("a", edges[3][0]))],
          "two")


def test_a_failed_bulk_load_leaves_the_session_as_it_was():
    """A bulk load whose evaluation fails (a division by zero in a rule)
    rolls back with its traces in runs; the next load gives what dicts give."""
    text = (".decl e(x: number, y: number)\n.decl two(x: number, y: number)\n"
            ".decl q(x: number)\n"
            "two(x, z) :- e(x, y), e(y, z).\n"
            "q(100 / (x - 7)) :- two(x, _).\n")
    rng = random.Random(2)
    edges = sorted({(rng.randrange(8, 3000), rng.randrange(8, 3000)) for _ in range(5000)})
    session = datalog.Program(text).session()
    with pytest.raises(DatalogError):
        session.insert("e", [*edges, (7, edges[0][0])])
    assert session.query("e") == frozenset() and session.query("two") == frozenset()
    session.insert("e", edges)
    with columns_from(NEVER):
        twin = datalog.Program(text).session()
        twin.insert("e", edges)
    for relation in ("two", "q"):
        assert session.query(relation) == twin.query(relation)
