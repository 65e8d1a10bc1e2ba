"""The builder API of notes/ENGINE_API.md, rendering, fusion and sharing."""

from __future__ import annotations

import pytest

from engine import BuildError, Circuit
from engine.aggregates import count, max_of, mean_of, min_of, sum_of
from engine.operators.join import TraceNode
from engine.operators.linear import LinearNode
from tests.engine.circuits import transitive_closure


def test_the_api_example():
    circuit = Circuit(max_iterations=100_000)
    edge = circuit.source("edge", arity=2)
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)), lambda k, p, ed: (p[0], ed[1]))
        new = e.plus(step).distinct()
        fb.connect(new)
        path = child.export(new)
    circuit.output("path", path)
    assert circuit.step({"edge": {(1, 2): 1, (2, 3): 1}}) == {
        "path": {(1, 2): 1, (2, 3): 1, (1, 3): 1}}
    assert circuit.step({"edge": {(2, 3): -1}}) == {"path": {(2, 3): -1, (1, 3): -1}}
    assert circuit.epoch == 2


def test_describe_is_stable_and_names_every_node():
    text = transitive_closure().describe()
    assert text == "\n".join([
        "0 source arity=2 `edge`",
        "1 child `path` <- 0",
        "  1.0 import (reads 0)",
        "  1.1 feedback `path` (reads 1.6)",
        "  1.2 operator trace index_by(1,) <- 1.1",
        "  1.3 operator trace index_by(0,) <- 1.0",
        "  1.4 operator join <- 1.1, 1.0 (reads 1.2, 1.3)",
        "  1.5 operator plus <- 1.0, 1.4",
        "  1.6 operator distinct_trace <- 1.5",
        "2 export <- 1 (reads 1.6)",
        "3 sink `path` <- 2",
    ])


def test_to_dot_draws_children_as_clusters():
    dot = transitive_closure().to_dot()
    assert dot.startswith("digraph circuit {")
    assert "subgraph cluster_n1 {" in dot
    assert "n1_6 -> n1_1 [style=dashed];" in dot  # the feedback edge


def test_labels_show_in_describe():
    circuit = Circuit()
    r = circuit.source("r", arity=2)
    circuit.output("out", r.filter(lambda row: row[0] > 0, label="r(x, _), x > 0"))
    assert "operator filter `r(x, _), x > 0` <- 0" in circuit.describe()


def test_linear_chains_fuse_into_one_node_and_joins_absorb_their_stages():
    circuit = Circuit()
    r = circuit.source("r", arity=2)
    s = circuit.source("s", arity=2)
    chain = r.map(lambda x: (x[1], x[0])).filter(lambda x: x[0] > 0).project((0, 1))
    joined = chain.index_by((0,)).join(s.index_by((0,)), ((0, 1), (1, 1)))
    circuit.output("out", joined.filter(lambda x: x[0] != x[1]).map(lambda x: (x[1], x[0])))
    got = circuit.step({"r": {(1, 2): 1, (3, 0): 1, (5, 4): 1}, "s": {(2, 7): 1, (2, 1): 1}})
    assert got == {"out": {(7, 1): 1}}
    linear = [n for n in circuit.all_nodes if isinstance(n, LinearNode)]
    # r's chain is one node; the join took the linear tail after it
    assert len(linear) == 1
    assert [kind for kind, _ in linear[0].stages] == ["map", "filter", "project"]


def test_one_trace_per_stream_and_key():
    circuit = Circuit()
    r = circuit.source("r", arity=2)
    s = circuit.source("s", arity=2)
    circuit.output("a", r.index_by((1,)).join(s.index_by((0,)), ((0, 0), (1, 1))))
    circuit.output("b", r.index_by((1,)).join(s.index_by((0,)), ((1, 1), (0, 0))))
    circuit.output("c", s.index_by((0,)).join(s.index_by((0,)), ((0, 1), (1, 1))))
    circuit.step({"r": [(1, 2)], "s": [(2, 3)]})
    traces = [n for n in circuit.all_nodes if isinstance(n, TraceNode)]
    assert len(traces) == 2


def test_inputs_may_be_iterables_of_rows_and_every_output_is_reported():
    circuit = Circuit()
    r = circuit.source("r", arity=1)
    circuit.output("evens", r.filter(lambda x: x[0] % 2 == 0))
    circuit.output("all", r)
    assert circuit.step({"r": [(1,), (3,), (3,)]}) == {"evens": {}, "all": {(1,): 1, (3,): 2}}


def test_flat_map_negate_index_with_and_consolidate():
    circuit = Circuit()
    r = circuit.source("r", arity=1)
    spread = r.flat_map(lambda x: [(x[0],), (x[0] + 1,)]).negate().consolidate()
    by_parity = spread.index_with(lambda x: x[0] % 2)
    circuit.output("out", by_parity.join(by_parity, lambda k, a, b: (k, a[0], b[0])))
    got = circuit.step({"r": [(1,)]})["out"]
    # spread = {1: -1, 2: -1}; pairs with equal parity, weights (-1)*(-1)
    assert got == {(1, 1, 1): 1, (0, 2, 2): 1}


def test_delay_and_integrate_in_the_root():
    circuit = Circuit()
    r = circuit.source("r", arity=1)
    circuit.output("delayed", r.delay())
    circuit.output("integral", r.integrate())
    assert circuit.step({"r": [(1,)]}) == {"delayed": {}, "integral": {(1,): 1}}
    assert circuit.step({"r": [(2,)]}) == {"delayed": {(1,): 1}, "integral": {(1,): 1, (2,): 1}}
    assert circuit.step({}) == {"delayed": {(2,): 1}, "integral": {(1,): 1, (2,): 1}}


def test_inspect_in_a_child_sees_epoch_and_iteration():
    seen = []
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)), ((0, 0), (1, 1)))
        new = e.plus(step).distinct().inspect(lambda batch, t: seen.append((t, dict(batch))))
        fb.connect(new)
        circuit.output("path", child.export(new))
    circuit.step({"edge": [(1, 2), (2, 3)]})
    circuit.step({"edge": {(2, 3): -1}})
    assert seen == [((0, 0), {(1, 2): 1, (2, 3): 1}), ((0, 1), {(1, 3): 1}),
                    ((1, 0), {(2, 3): -1}), ((1, 1), {(1, 3): -1})]


def test_aggregates_over_epochs():
    circuit = Circuit()
    r = circuit.source("r", arity=2)
    groups = r.index_by((0,))
    for name, fn in (("count", count), ("sum", sum_of(1)), ("min", min_of(1)),
                     ("max", max_of(1)), ("mean", mean_of(1))):
        circuit.output(name, groups.aggregate(fn), keep=True)
    circuit.step({"r": [("a", 1), ("a", 5), ("b", 2)]})
    assert circuit.collection("count") == {("a", 2): 1, ("b", 1): 1}
    assert circuit.collection("mean") == {("a", 3.0): 1, ("b", 2.0): 1}
    got = circuit.step({"r": {("a", 1): -1, ("b", 2): -1, ("b", 7): 1}})
    assert got["min"] == {("a", 1): -1, ("a", 5): 1, ("b", 2): -1, ("b", 7): 1}
    assert got["count"] == {("a", 2): -1, ("a", 1): 1}
    assert circuit.collection("sum") == {("a", 5): 1, ("b", 7): 1}
    got = circuit.step({"r": {("a", 5): -1}})
    assert got["max"] == {("a", 5): -1}
    assert circuit.collection("count") == {("b", 1): 1}


def test_two_thousand_iterations_per_epoch_are_cheap():
    # x(v) :- start(v).  x(v + 1) :- x(v), v < 2000.  One row per iteration.
    circuit = Circuit()
    start = circuit.source("start", arity=1)
    with circuit.child("count") as child:
        fb = child.feedback("x", arity=1)
        new = child.import_(start).plus(
            fb.stream.filter(lambda r: r[0] < 2000).map(lambda r: (r[0] + 1,))).distinct()
        fb.connect(new)
        circuit.output("x", child.export(new))
    assert len(circuit.step({"start": [(0,)]})["x"]) == 2001
    assert circuit.children()[0].iterations == 2002
    assert circuit.step({"start": {(0,): -1, (1000,): 1}})["x"] == {
        (v,): -1 for v in range(1000)}


def test_builder_rejects_misuse():
    with pytest.raises(BuildError, match="max_iterations"):
        Circuit(max_iterations=0)
    circuit = Circuit()
    r = circuit.source("r", arity=2)
    with pytest.raises(BuildError, match="projection"):
        r.index_by((0,)).join(r.index_by((0,)), ((2, 0),))
    with pytest.raises(BuildError, match="project"):
        r.project(("a",))
    with circuit.child("c") as child:
        with pytest.raises(BuildError, match="one level"):
            child.child("inner")
        with pytest.raises(BuildError, match="root circuit only"):
            child.import_(r).index_by((0,)).aggregate(count)
        x = child.import_(r)
        fb = child.feedback("x")
        fb.connect(x)
        with pytest.raises(BuildError, match="already connected"):
            fb.connect(x)


def test_antijoins_against_one_relation_by_different_keys():
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    # sink(y) :- edge(_, y), !edge(y, _).
    targets = edge.project((1,))
    circuit.output("sink", targets.index_by((0,)).antijoin(edge.index_by((0,))).distinct())
    # into_leaf(x, y) :- edge(x, y), !edge(_, x).   (by the second column this time)
    circuit.output("from_root", edge.index_by((0,)).antijoin(edge.index_by((1,))))
    got = circuit.step({"edge": [(1, 2), (2, 1), (2, 3), (3, 4), (5, 1)]})
    assert got["sink"] == {(4,): 1}
    assert got["from_root"] == {(5, 1): 1}
    got = circuit.step({"edge": {(3, 4): -1, (4, 6): 1}})
    assert got["sink"] == {(3,): 1, (4,): -1, (6,): 1}  # 3 lost its only out-edge
    assert got["from_root"] == {(4, 6): 1}  # nothing leads into 4 any more


def test_results_belong_to_the_caller():
    circuit = transitive_closure()
    delayed = Circuit()  # a root operator keeping an exported batch across epochs
    first = circuit.step({"edge": [(1, 2), (2, 3)]})["path"]
    first.clear()  # the caller may do what it likes with it
    assert circuit.step({"edge": {(3, 4): 1}})["path"] == {(1, 4): 1, (2, 4): 1, (3, 4): 1}
    assert set(circuit.collection("path")) == {(1, 2), (2, 3), (1, 3), (1, 4), (2, 4), (3, 4)}
    r = delayed.source("r", arity=1)
    delayed.output("late", r.delay())
    batch = {(1,): 1}
    delayed.step({"r": batch})
    batch.clear()
    assert delayed.step({}) == {"late": {(1,): 1}}


def test_a_child_whose_imports_are_empty_runs_no_iteration():
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    circuit.output("other", circuit.source("other", arity=1))
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        new = e.plus(fb.stream.index_by((1,)).join(
            e.index_by((0,)), lambda k, p, ed: (p[0], ed[1]))).distinct()
        fb.connect(new)
        circuit.output("path", child.export(new), keep=True)
    circuit.step({"edge": [(1, 2), (2, 3)]})
    assert circuit.children()[0].iterations == 3
    assert circuit.step({"other": [(7,)]}) == {"other": {(7,): 1}, "path": {}}
    assert circuit.children()[0].iterations == 0
    assert circuit.step({"edge": [(3, 4)]})["path"] == {(1, 4): 1, (2, 4): 1, (3, 4): 1}
    assert circuit.collection("path") == {(1, 2): 1, (2, 3): 1, (1, 3): 1, (1, 4): 1,
                                          (2, 4): 1, (3, 4): 1}
