"""Every worked example of the runtime specification (seed 002), as unit tests.

Each example is checked on the specification-level function (``spec.py``) and, where the
operator is a node, on the node itself (driven at the example's times).
"""

from __future__ import annotations

from engine import Circuit
from engine.aggregates import count
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from tests.engine.harness import Holder, place, run_nested, run_root
from tests.engine.spec import (
    aggregate,
    consolidate,
    distinct,
    distinct_incremental,
    distinct_trace,
    filter_zset,
    index_with,
    join_stream,
    join_trace,
    map_zset,
    minus_zsets,
    negate_zset,
    plus_zsets,
)


def test_aggregate_count():
    indexed = {1: {"foo": 1, "bar": 1}, 2: {"baz": 1}}
    assert aggregate(count, indexed) == {(1, 2): 1, (2, 1): 1}
    circuit = Circuit()
    rows = circuit.source("r", arity=2)
    circuit.output("count", rows.index_by((0,)).aggregate(count))
    assert circuit.step({"r": {(1, "foo"): 1, (1, "bar"): 1, (2, "baz"): 1}}) == {
        "count": {(1, 2): 1, (2, 1): 1}}


def test_consolidate():
    entries = [(0, 0, 0, 1), (0, 0, 0, -1), (0, 1, 0, 1), (0, 1, 0, 1), (1, 2, 0, 2),
               (1, 3, 0, 1), (1, 3, 0, -1), (1, 4, 0, -1), (2, 2, 0, 1), (2, 4, 0, 1)]
    assert consolidate(entries) == {(0, 1): 2, (1, 2): 2, (1, 4): -1, (2, 2): 1, (2, 4): 1}


def test_distinct():
    assert distinct({0: 1, 1: 2, 2: -1, 3: 0}) == {0: 1, 1: 1}


def test_filter():
    def is_positive(row):
        return row[0] >= 1
    # {element, time, weight}: one batch per time
    assert filter_zset(is_positive, {(0,): 1, (1,): 2}) == {(1,): 2}
    assert filter_zset(is_positive, {(2,): -3}) == {(2,): -3}


def test_index_with():
    def key_function(row):
        return row[0]
    assert index_with(key_function, {(0, 1, 1): 1}) == {0: {(0, 1, 1): 1}}
    assert index_with(key_function, {(1, 2, 1): 1, (1, 3, 2): -1}) == {
        1: {(1, 2, 1): 1, (1, 3, 2): -1}}


def test_inspect_passes_batches_through_and_sees_them():
    seen = []
    circuit = Circuit()
    rows = circuit.source("r", arity=1)
    circuit.output("out", rows.inspect(lambda batch, time: seen.append((dict(batch), time))))
    assert circuit.step({"r": {(0,): 1, (1,): 1}}) == {"out": {(0,): 1, (1,): 1}}
    assert seen == [({(0,): 1, (1,): 1}, 0)]


def test_map():
    # the specification's Map example repeats the Filter one; both are checked
    assert map_zset(lambda row: (row[0] * 2,), {(0,): 1, (1,): 2, (2,): -3}) == {
        (0,): 1, (2,): 2, (4,): -3}
    assert filter_zset(lambda row: row[0] >= 1, {(0,): 1, (1,): 2, (2,): -3}) == {
        (1,): 2, (2,): -3}


def test_negate():
    assert negate_zset({0: 1, 1: -1, 2: -2}) == {0: -1, 1: 1, 2: 2}


B00 = {0: 1, 2: 1, 3: -1}
B01 = {5: 1}
B10 = {5: 1}
B11 = {0: 1, 1: 1, 2: -1, 3: 1, 4: -1}
EXPECTED = {(0, 0): {0: 1, 2: 1}, (0, 1): {5: 1}, (1, 0): {5: 1}, (1, 1): {1: 1, 2: -1, 5: -1}}


def test_distinct_trace_reference_function():
    trace = []
    for time, batch in (((0, 0), B00), ((0, 1), B01), ((1, 0), B10), ((1, 1), B11)):
        assert distinct_trace(batch, trace, time) == EXPECTED[time]
        trace += [(row, time, w) for row, w in batch.items()]


def test_distinct_trace_node_at_00_01_10_11():
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    series = {"in": {(0, 0): B00, (0, 1): B01, (1, 0): B10, (1, 1): B11}}
    assert run_nested({"in": holder}, series, [node], node, epochs=2) == EXPECTED


def test_distinct_trace_node_schedules_row_5_without_input_at_11():
    # at (1, 1) row 5 has no input: it is evaluated because it had input at
    # (1, 0) and the past holds weight for it at iteration 1
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    series = {"in": {(0, 0): B00, (0, 1): B01, (1, 0): B10}}
    out = run_nested({"in": holder}, series, [node], node, epochs=2)
    assert out[(1, 1)] == {5: -1}


def test_join_stream():
    def combine(k, v1, v2):
        return (k, (v1, v2))
    a = {"a": {1: 1}, "b": {2: 2}, "c": {2: 1}}
    b = {"a": {1: 1}, "b": {3: 1, 4: -1}}
    assert join_stream(combine, a, b) == {
        ("a", (1, 1)): 1, ("b", (2, 3)): 2, ("b", (2, 4)): -2}


JOIN_TRACE_ZSET = {"a": {0: 0, 1: 1}, "b": {2: 2}, "c": {2: 1}}  # (a, 0) +1 -1 cancels
JOIN_TRACE_TRACE = [("a", 1, 0, 1), ("b", -3, 0, -1), ("b", 3, 0, 1), ("b", 4, 0, -1),
                    ("c", 4, 0, 1)]
JOIN_TRACE_EXPECTED = {("a", 1, 1): 1, ("b", 2, -3): -2, ("b", 2, 3): 2, ("b", 2, 4): -2,
                       ("c", 2, 4): 1}


def test_join_trace():
    zset = {k: {v: w for v, w in g.items() if w} for k, g in JOIN_TRACE_ZSET.items()}
    assert join_trace(lambda k, v1, v2: (k, v1, v2), zset, JOIN_TRACE_TRACE) == \
        JOIN_TRACE_EXPECTED


def test_join_trace_as_the_incremental_join_of_a_circuit():
    # epoch 0 fills the right trace; at epoch 1 the batch joins it (a ⋈ z^-1(B))
    circuit = Circuit()
    left = circuit.source("left", arity=2)
    right = circuit.source("right", arity=2)
    joined = left.index_by((0,)).join(right.index_by((0,)),
                                      lambda k, x, y: (k[0], x[1], y[1]))
    circuit.output("out", joined)
    circuit.step({"right": {(k, v): w for k, v, _, w in JOIN_TRACE_TRACE}})
    batch = {(k, v): w for k, g in JOIN_TRACE_ZSET.items() for v, w in g.items() if w}
    assert circuit.step({"left": batch}) == {"out": JOIN_TRACE_EXPECTED}


def test_minus():
    a = {0: 1, 1: 1, 2: 2, 3: 1}
    b = {0: 1, 1: -1, 2: 1}
    assert minus_zsets(a, b) == {1: 2, 2: 1, 3: 1}


def test_plus():
    a = {0: 1, 1: 1, 2: 2, 3: 1}
    b = {0: 1, 1: -1, 2: 1}
    assert plus_zsets(a, b) == {0: 2, 2: 3, 3: 1}


def test_plus_and_minus_nodes():
    circuit = Circuit()
    a = circuit.source("a", arity=1)
    b = circuit.source("b", arity=1)
    circuit.output("plus", a.plus(b))
    circuit.output("minus", a.minus(b))
    got = circuit.step({"a": {(0,): 1, (1,): 1, (2,): 2, (3,): 1},
                        "b": {(0,): 1, (1,): -1, (2,): 1}})
    assert got == {"plus": {(0,): 2, (2,): 3, (3,): 1}, "minus": {(1,): 2, (2,): 1, (3,): 1}}


BATCH = {0: 2, 2: 1, 3: -1}


def test_distinct_incremental():
    assert distinct_incremental(BATCH, [(0, 0, 1)]) == {2: 1}
    assert distinct_incremental(BATCH, [(2, 1, 1), (3, 1, 1)]) == {0: 1, 3: -1}
    assert distinct_incremental(BATCH, [(0, 2, -1)]) == {0: 1, 2: 1}


def test_distinct_incremental_node():
    for history, expected in (({0: 1}, {2: 1}), ({2: 1, 3: 1}, {0: 1, 3: -1}),
                              ({0: -1}, {0: 1, 2: 1})):
        holder = Holder()
        node = DistinctNode(holder)
        place([node], nested=False)
        out = run_root({"in": holder}, {"in": {0: history, 1: BATCH}}, [node], node, 2)
        assert out[1] == expected
