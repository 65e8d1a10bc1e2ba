"""A bulk load's input goes into runs and columns without building dicts or
rows first.

A join trace that one epoch grows by ``colbatch.COMMIT_ROWS`` rows or more is
in runs after that commit (tests/datalog/test_join_runs.py); a single append
of that many rows (a bulk load's input) therefore moves the trace to runs
before it is made, and no dict trace is ever built for those rows
(``TraceNode.bulk_to_runs``). Each program runs twice, at the defaults and on
dicts only (every threshold out of reach); the outputs must agree after each
transaction, and at the defaults no dict trace may take an append of
``COMMIT_ROWS`` rows. A linear chain with a columnar form takes a dict
batch of ``colbatch.THRESHOLD`` rows on columns too (``LinearNode``): no row
of it is made.
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
from tests.datalog.test_join_runs import NEVER, sessions

TWO_HOPS = (".decl e(x: number, y: number)\n.decl two(x: number, y: number)\n"
            "two(x, z) :- e(x, y), e(y, z).\n")


@pytest.fixture
def dict_appends(monkeypatch) -> list:
    """The size of every batch appended to a dict trace at iteration 0 (the
    root's, or a child's input) at the default thresholds (not by a
    dict-only twin) while the test runs."""
    sizes: list = []
    append_rows = Trace.append_rows

    def spy(self, batch, iteration=0):
        if colbatch.THRESHOLD != NEVER and not iteration:
            sizes.append(len(batch))
        append_rows(self, batch, iteration)

    monkeypatch.setattr(Trace, "append_rows", spy)
    return sizes


def apply(session, twin, changes: list, output: str) -> None:
    for op, relation, row in changes:
        for current, threshold in ((session, None), (twin, NEVER)):
            with columns_from(threshold):
                getattr(current, op)(relation, row)
        assert session.query(output) == twin.query(output), (op, relation, row)


def test_a_recursive_stratums_input_trace_is_never_dicts(dict_appends):
    """Andersen's analysis over 100 functions of 50 variables: ``assign``'s
    5,000 rows arrive at the child's trace in one append at iteration 0 and go
    straight into runs. Single facts after it agree with dicts."""
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


def test_a_loops_own_trace_keeps_the_loops_rules(monkeypatch):
    """Reachability over a random graph of 1,000 nodes and 1,500 edges: the
    trace of ``reach`` by ``y`` takes a row delta of 4,096 rows or more at a
    later iteration into dicts (a loop's own trace: moved there at once, it
    left the batch 5 MiB more RSS before a trim), as on dicts only."""
    from benchmarks.profile_engine import find
    from benchmarks.workloads import NEGAGG_PROGRAM

    appends: list = []
    append_rows = Trace.append_rows

    def spy(self, batch, iteration=0):
        appends.append((iteration, len(batch)))
        append_rows(self, batch, iteration)

    monkeypatch.setattr(Trace, "append_rows", spy)
    facts = find("negagg-1000-1500").facts
    session, twin = sessions(NEGAGG_PROGRAM, facts)
    assert any(i and size >= colbatch.COMMIT_ROWS for i, size in appends)
    for relation in ("reach", "acyclic", "reach_count"):
        assert session.size(relation) == twin.size(relation)
    assert session.query("reach_count") == twin.query("reach_count")


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


ROOT_STAGES = """.decl e(x: number, y: number)
.decl s(a: symbol, x: number)
.decl m(x: number, v: float)
.decl f(x: number, y: number)
.decl g(a: symbol, y: number)
.decl h(x: number, v: float)
f(x, y * 2 + x) :- e(x, y), x < y.
g(a, x / 3) :- s(a, x), x != 5.
h(x, v) :- m(x, v), x > 2.
"""


def test_a_large_dict_batch_runs_the_root_stages_on_columns():
    """9,000 rows of each input, given as rows (dicts): ``f``'s and ``g``'s
    arithmetic and filters run on their columns (counted, no row run through
    a stage), ``h``'s float column too; then single facts, on rows. Every
    answer is the dict-only twin's."""
    rng = random.Random(6)
    facts = {"e": [(x, rng.randrange(-50, 9000)) for x in range(9000)],
             "s": [(f"n{x % 700}", x) for x in range(9000)],
             "m": [(x, x / 8) for x in range(9000)]}
    linear, stages = colbatch.COUNTS["linear"], colbatch.COUNTS["row_stages"]
    session, twin = sessions(ROOT_STAGES, facts)
    assert colbatch.COUNTS["linear"] >= linear + 3
    assert colbatch.COUNTS["row_stages"] == stages
    for relation in ("f", "g", "h"):
        assert session.query(relation) == twin.query(relation) != frozenset()
    apply(session, twin, [("retract", "e", facts["e"][10]), ("insert", "s", ("n1", 5)),
                          ("insert", "s", ("n1", 6)), ("retract", "m", (3, 3 / 8))], "g")
    for relation in ("f", "g", "h"):
        assert session.query(relation) == twin.query(relation)


def test_a_large_batch_that_does_not_fit_columns_runs_per_row():
    """A record column (no column kind holds it): the chain takes the 9,000
    rows as they are, through the fused loop."""
    text = (".type P = [a: number, b: number]\n.decl m(x: number, p: P)\n"
            ".decl h(x: number, p: P)\nh(x, p) :- m(x, p), x > 2.\n")
    session = datalog.Program(text).session()
    linear = colbatch.COUNTS["linear"]
    session.insert("m", [(x, (x, x + 1)) for x in range(9000)])
    assert colbatch.COUNTS["linear"] == linear
    assert session.query("h") == {(x, (x, x + 1)) for x in range(3, 9000)}


def test_a_division_by_zero_in_a_large_dict_batch_is_located_and_changes_nothing():
    """The root stage divides by ``x - 7``: on columns the row with ``x = 7``
    cannot be computed, the batch runs per row and raises the row path's
    located error; the session keeps its state."""
    text = ".decl e(x: number, y: number)\n.decl q(x: number, y: number)\n" \
           "q(x, y / (x - 7)) :- e(x, y).\n"
    session = datalog.Program(text).session()
    session.insert("e", [(x, 3 * x) for x in range(8, 9008)])
    kept = session.query("q")
    assert len(kept) == 9000
    batches = colbatch.COUNTS["row_batches"]
    with pytest.raises(DatalogError) as error:
        session.insert("e", [(x, 3 * x) for x in range(-9000, 8)])
    assert colbatch.COUNTS["row_batches"] == batches + 1
    assert "division by zero" in str(error.value) and "<string>:3:1" in str(error.value)
    assert session.query("q") == kept and len(session.query("e")) == 9000


@pytest.mark.parametrize("threshold", [None, 0])
def test_a_nullary_head_over_a_large_dict_batch(threshold):
    """``any() :- e(x).`` projects 9,000 rows to the empty row on columns:
    its Distinct takes the nullary batch by rows (it had nothing to pack and
    failed to, with every batch columnar)."""
    text = ".decl e(x: number)\n.decl any()\nany() :- e(x).\n"
    with columns_from(threshold):
        session = datalog.Program(text).session()
        session.insert("e", [(x,) for x in range(9000)])
        assert session.query("any") == {()}
        with session.transaction() as tx:
            tx.retract("e", *[(x,) for x in range(8999)])
        assert session.query("any") == {()}
        session.retract("e", (8999,))
        assert session.query("any") == frozenset()
