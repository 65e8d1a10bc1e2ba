"""Spilled traces (``engine.spark.spill``) against the in-memory ones, on a real
local Spark (the session-scoped ``spark`` fixture).

Every Spark lookup costs a job (0.1-1 s here), so hypothesis draws few
examples; each one compares, at every (epoch, iteration) time, the output of
a join whose traces spill at once (threshold 0) with the output of the same
join in memory, then the collections and entries of the traces themselves.
"""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import datalog
from cli import main
from engine import Circuit
from engine.errors import OperatorError
from engine.operators.join import JoinNode, NestedJoinNode, TraceNode
from engine.spark.spill import SpillError, SpillingTrace, check_spilling, spill_traces
from engine.trace import Trace
from tests.datalog.differential import (
    MUTUAL_RECURSION,
    MUTUAL_RECURSION_TXS,
    programs,
    run_differential,
    transactions,
)
from tests.engine.harness import Holder, place, run_nested, run_root

EPOCHS, ITERATIONS = 3, 4
FEW = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))

weights = st.integers(-2, 2).filter(bool)
rows = st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", "c"]))
batches = st.dictionaries(rows, weights, max_size=4)
nested_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                          st.integers(0, ITERATIONS - 1)), batches, max_size=6)
root_series = st.dictionaries(st.integers(0, EPOCHS), batches, max_size=4)

KEY = ("cols", (0,))


def _join(nested: bool, spill_session=None, self_join: bool = False, key=KEY):
    """A join of two holders by column 0 (``self_join``: of one holder with
    itself); its traces spill at once when a session is given."""
    left = Holder()
    right = left if self_join else Holder()
    left_trace = TraceNode(left, key, nested)
    right_trace = left_trace if self_join else TraceNode(right, key, nested)
    cls = NestedJoinNode if nested else JoinNode
    join = cls(left, right, left_trace, right_trace, lambda k, lv, rv: (lv, rv))
    nodes = [left_trace] + ([] if self_join else [right_trace]) + [join]
    place(nodes, nested=nested)
    if spill_session is not None:
        assert spill_traces(nodes, 0, spill_session) == (1 if self_join else 2)
    return left, right, join, nodes


def _same_traces(memory_nodes, spilled_nodes) -> None:
    for plain, spilled in zip(memory_nodes, spilled_nodes):
        if isinstance(plain, TraceNode):
            assert isinstance(spilled.trace, SpillingTrace)
            assert list(spilled.trace.entries()) == list(plain.trace.entries())
            for key in (0, 1, 2):
                assert spilled.trace.collection((key,)) == plain.trace.collection((key,))


@FEW
@given(nested_series, nested_series)
@example({(1, 0): {(0, "a"): 1}}, {(0, 2): {(0, "b"): 1}})  # old entry, later iteration
@example({(0, 0): {(1, "a"): 1}, (1, 1): {(1, "a"): -1}},    # a retraction in epoch 1
         {(0, 1): {(1, "b"): 2}, (1, 0): {(1, "c"): -1}})
def test_nested_join_spilled_equals_in_memory(spark, a, b):
    outputs = []
    for session in (None, spark):
        left, right, join, nodes = _join(True, session)
        outputs.append((run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                                   join, EPOCHS), nodes))
    (memory, memory_nodes), (spilled, spilled_nodes) = outputs
    assert spilled == memory
    _same_traces(memory_nodes, spilled_nodes)


def test_join_by_a_key_function_spilled(spark):
    """Keys computed by a function (not a choice of columns), and not tuples."""
    a = {(0, 0): {(1, "a"): 1, (2, "b"): 1}, (1, 2): {(1, "a"): -1, (2, "c"): 2}}
    b = {(0, 1): {(1, "x"): 1}, (1, 0): {(2, "y"): 1, (1, "z"): -1}}
    key = ("fn", lambda row: row[0] * 10)
    outputs = []
    for session in (None, spark):
        left, right, join, nodes = _join(True, session, key=key)
        outputs.append(run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                                  join, EPOCHS))
    assert outputs[1] == outputs[0] and outputs[0]


@FEW
@given(nested_series)
def test_nested_self_join_spilled(spark, a):
    results = []
    for session in (None, spark):
        left, _, join, nodes = _join(True, session, self_join=True)
        results.append(run_nested({"a": left}, {"a": a}, nodes, join, EPOCHS))
    assert results[1] == results[0]


@FEW
@given(root_series, root_series)
def test_root_join_spilled_equals_in_memory(spark, a, b):
    outputs = []
    for session in (None, spark):
        left, right, join, nodes = _join(False, session)
        outputs.append((run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                                 join, EPOCHS + 1), nodes))
    (memory, memory_nodes), (spilled, spilled_nodes) = outputs
    assert spilled == memory
    _same_traces(memory_nodes, spilled_nodes)


def transitive_closure(spill_threshold=None, fail_on=None) -> Circuit:
    """path(x, z) :- edge(x, z).  path(x, z) :- path(x, y), edge(y, z).
    The join's combine raises on the pair ``fail_on``."""
    circuit = Circuit(spill_threshold=spill_threshold)
    edge = circuit.source("edge", arity=2)

    def combine(key, p, e):
        if (p, e) == fail_on:
            raise ValueError("boom")
        return (p[0], e[1])

    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        new = e.plus(fb.stream.index_by((1,)).join(e.index_by((0,)), combine)).distinct()
        fb.connect(new)
        path = child.export(new)
    circuit.output("path", path)
    return circuit


def _traces(circuit):
    return [n.trace for n in circuit.all_nodes if isinstance(n, TraceNode)]


def test_failed_epoch_restores_spilled_state_exactly(spark):
    memory = transitive_closure()
    spilled = transitive_closure(spill_threshold=1, fail_on=((0, 3), (3, 4)))
    epochs = [{(0, 1): 1, (1, 2): 1, (2, 3): 1}, {(5, 6): 1, (1, 5): 1},
              {(2, 3): -1}, {(2, 3): 1}]
    for batch in epochs:
        assert spilled.step({"edge": batch}) == memory.step({"edge": batch})
    assert all(isinstance(t, SpillingTrace) and t.part is not None
               for t in _traces(spilled))
    before = [list(t.entries()) for t in _traces(spilled)]
    with pytest.raises(OperatorError):   # (0, 3) meets (3, 4) a few iterations in
        spilled.step({"edge": {(3, 4): 1, (6, 7): 1}})
    assert [list(t.entries()) for t in _traces(spilled)] == before
    assert spilled.epoch == memory.epoch
    for batch in ({(0, 1): -1, (6, 7): 1}, {(0, 1): 1, (4, 0): 1}):
        assert spilled.step({"edge": batch}) == memory.step({"edge": batch})
    for plain, moved in zip(_traces(memory), _traces(spilled)):
        assert list(moved.entries()) == list(plain.entries())


def test_rollback_after_a_compaction_inside_the_epoch(spark):
    trace = SpillingTrace(nested=True, index=KEY, threshold=0, session=spark)
    twin = Trace(nested=True, index=KEY)
    for t in (trace, twin):
        t.append_rows({(0, "a"): 1, (1, "b"): 2}, iteration=0)
        t.append_rows({(0, "c"): 1, (0, "a"): -1}, iteration=2)
        t.commit()
    before = list(trace.entries())
    assert before == list(twin.entries())
    trace.append_rows({(0, "a"): 5, (2, "z"): 1}, iteration=1)   # epoch 1 ...
    trace.part.compact(trace.epoch)             # ... moved into the body, then lost
    assert trace.part.body_epoch == 1 and not trace.part.tail
    trace.rollback()
    assert list(trace.entries()) == before
    for t in (trace, twin):
        t.append_rows({(0, "a"): 1}, iteration=3)
        t.commit()
    assert list(trace.entries()) == list(twin.entries())
    assert trace.collection((0,)) == twin.collection((0,)) == {(0, "a"): 1, (0, "c"): 1}


def test_compaction_in_spark_drops_cancelled_rows(spark):
    circuit = transitive_closure(spill_threshold=0)
    circuit.step({"edge": {(0, 1): 1, (1, 2): 1}})
    for _ in range(4):                  # the same edge in and out, epoch after epoch
        circuit.step({"edge": {(2, 3): 1}})
        circuit.step({"edge": {(2, 3): -1}})
    traces = _traces(circuit)
    assert all(t.part.body is not None for t in traces)   # compacted on the way
    for trace in traces:
        trace.part.compact(trace.epoch)
        body = trace.part.entries()
        assert not trace.part.tail and not trace.past and not trace.cur
        assert {epoch for _, _, epoch, _, _ in body} == {trace.epoch - 1}
        assert all(weight != 0 for *_, weight in body)
        assert not any(3 in value for _, value, *_ in body)   # (2, 3) cancelled out
        assert len(body) == trace.size()                      # one row per entry


def test_check_spilling_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)   # `import pyspark` fails
    with pytest.raises(SpillError, match=r"^spilling traces to Spark .* install them with"):
        check_spilling(10)
    program = datalog.Program(".decl e(x: number)\n.decl p(x: number)\np(x) :- e(x).\n")
    with pytest.raises(datalog.DatalogError) as raised:
        program.session(spill_threshold=10)
    assert str(raised.value).count("error:") == 1
    assert "pip install" in str(raised.value) and "Java 17" in str(raised.value)


def test_check_spilling_without_java(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SpillError, match="Java 17"):
        check_spilling(0)


# -- the compiler's differential tests, every trace spilled ---------------------

def test_differential_mutual_recursion_spilled(spark):
    assert run_differential(MUTUAL_RECURSION, MUTUAL_RECURSION_TXS, spill_threshold=0) == 4


def test_differential_symbols_and_aggregates_spilled(spark):
    text = """.decl e(c0: number, c1: number)
.decl v(c0: number)
.decl s(c0: symbol, c1: number)
.decl r0(c0: symbol, c1: number)
r0(a, c) :- s(a, _), c = sum u : { s(a, u) }.
r0(a, m) :- s(a, x), m = max u : { e(x, u) }, m > x.
r0(a, x) :- s(a, x), e(x, y), !v(y).
"""
    txs = [[("insert", "s", ("a", 1)), ("insert", "s", ("a", 2)), ("insert", "v", (0,))],
           [("insert", "e", (1, 4)), ("insert", "e", (2, 0))],
           [("retract", "s", ("a", 2)), ("insert", "v", (4,))],
           [("retract", "e", (1, 4)), ("retract", "v", (0,))]]
    assert run_differential(text, txs, spill_threshold=0) == 4


def test_differential_key_of_no_columns_spilled(spark):
    # Found by the random test below (seed 1): `!v(_)` indexes both sides by the
    # empty key, which a spilled trace stores in no column at all.
    text = """.decl e(c0: number, c1: number)
.decl v(c0: number)
.decl r0(c0: number)
.decl r1(c0: number, c1: number)
r0(0) :- e(0, 0).
r1(0, 0) :- e(0, _), !v(_).
"""
    txs = [[("insert", "e", (0, 0))], [("insert", "v", (0,))], [("insert", "e", (0, 1))],
           [("retract", "v", (0,))]]
    assert run_differential(text, txs, spill_threshold=0) == 4


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(max_transactions=4))
def test_differential_random_programs_spilled(spark, text, txs):
    run_differential(text, txs, spill_threshold=0)


def test_cli_run_with_spill_threshold(spark, tmp_path):
    (tmp_path / "tc.dl").write_text(
        ".decl edge(x: number, y: number)\n.input edge\n"
        ".decl path(x: number, y: number)\n.output path\n"
        "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n")
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n3\t4\n")
    outputs = {}
    for name, extra in (("memory", []), ("spilled", ["--spill-threshold", "0"])):
        out = tmp_path / name
        out.mkdir()
        result = CliRunner().invoke(main, ["run", str(tmp_path / "tc.dl"), "-F",
                                           str(tmp_path), "-D", str(out), *extra])
        assert result.exit_code == 0, result.output
        outputs[name] = (out / "path.csv").read_text()
    assert outputs["spilled"] == outputs["memory"]
    assert sorted(outputs["memory"].splitlines()) == [
        "1\t2", "1\t3", "1\t4", "2\t3", "2\t4", "3\t4"]


def test_spill_benchmark_on_a_tiny_graph(spark):
    from benchmarks.spill import graph, run, trace_rows

    edges = graph(8, 12)
    memory = run(edges, edges[:1])
    spilled = run(edges, edges[:1], spill_threshold=3)
    assert spilled["paths"] == memory["paths"] > len(edges)
    in_python, in_spark = trace_rows(spilled["session"])
    memory_rows, nothing = trace_rows(memory["session"])
    assert nothing == 0 and in_spark > 0 and in_python < memory_rows


def test_repl_with_spill_threshold(spark):
    import io

    from datalog.repl import run

    script = (".decl edge(x: number, y: number)\n.decl path(x: number, y: number)\n"
              "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"
              "edge(1, 2). edge(2, 3).\n?- path(1, x).\n-edge(1, 2).\n?- path(x, 3).\n")
    outputs = []
    for options in ({}, {"spill_threshold": 0}):
        out = io.StringIO()
        assert run(stdin=io.StringIO(script), stdout=out, stderr=out,
                   session_options=options) == 0, out.getvalue()
        outputs.append(out.getvalue())
    assert outputs[1] == outputs[0]
    assert "path(1, 3)" in outputs[0]
