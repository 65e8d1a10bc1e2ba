"""Every non-linear operator against a naive twin (hypothesis).

Random weighted batches arrive at random product-order times; the integral of
the operator's incremental output must equal the naive operator applied to the
integrated input, at every time of the grid (DBSP's test of ``distinct``
against ``integrate -> distinct -> differentiate``).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import Circuit
from engine.aggregates import count, max_of, mean_of, min_of, sum_of
from engine.colbatch import columns_from
from engine.operators.aggregate import AggregateNode
from engine.operators.delay import DelayNode, IntegrateNode
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.operators.join import JoinNode, NestedJoinNode, TraceNode
from engine.operators.linear import LinearNode
from engine.trace import Trace
from tests.engine.harness import Holder, grid, integral, place, run_nested, run_root
from tests.engine.spec import aggregate, distinct, index_with, join_stream

EPOCHS, ITERATIONS = 3, 5

weights = st.integers(-2, 2).filter(bool)
rows = st.tuples(st.integers(0, 2), st.integers(0, 3))
batches = st.dictionaries(rows, weights, max_size=4)
nested_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                          st.integers(0, ITERATIONS - 2)), batches, max_size=7)
root_series = st.dictionaries(st.integers(0, 4), batches, max_size=5)


def combine(key, left, right):
    return (left, right)


def by_first(zset: dict) -> dict:
    return index_with(lambda row: row[0], zset)


def naive_join(a: dict, b: dict) -> dict:
    """The specification's join of two collections keyed by their first column."""
    return join_stream(combine, by_first(a), by_first(b))


naive_distinct = distinct


KEY = ("cols", (0,))


# Each trace implementation: dicts (None), columnar from the first row (0), and
# columnar from the third row appended (the change of kind mid-way).
TRACES = pytest.mark.parametrize("columnar", [None, 0, 3], ids=["dict", "columnar", "switch"])


def join_nodes(nested: bool, self_join: bool = False, columnar: int | None = None):
    left, right = Holder(), Holder()
    if self_join:
        right = left
    left_trace = TraceNode(left, KEY, nested)
    right_trace = left_trace if self_join else TraceNode(right, KEY, nested)
    for trace in (left_trace, right_trace):
        trace.use_columnar(columnar)
    cls = NestedJoinNode if nested else JoinNode
    join = cls(left, right, left_trace, right_trace, combine)
    nodes = [left_trace] + ([] if self_join else [right_trace]) + [join]
    return left, right, join, nodes


@TRACES
@settings(max_examples=150, deadline=None)
@given(nested_series, nested_series)
@example({(1, 0): {(0, 0): 1}}, {(0, 2): {(0, 1): 1}})  # old entry at a later iteration
def test_nested_join(columnar, a, b):
    left, right, join, nodes = join_nodes(nested=True, columnar=columnar)
    place(nodes, nested=True)
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                     join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


@TRACES
@settings(max_examples=100, deadline=None)
@given(nested_series)
def test_nested_self_join(columnar, a):
    left, _, join, nodes = join_nodes(nested=True, self_join=True, columnar=columnar)
    place(nodes, nested=True)
    out = run_nested({"a": left}, {"a": a}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        collection = integral(a, t)
        assert integral(out, t) == naive_join(collection, collection), t


def fused_stages():
    return [("filter", lambda r: (r[0][1] + r[1][1]) % 3 != 0),
            ("map", lambda r: (r[0][1], r[1][1])),
            ("flat_map", lambda r: [r, (r[0], r[0])]),
            ("negate", None)]


def naive_fused(joined: dict) -> dict:
    out: dict = {}
    for (ra, rb), w in joined.items():
        if (ra[1] + rb[1]) % 3 == 0:
            continue
        for row in ((ra[1], rb[1]), (ra[1], ra[1])):
            out[row] = out.get(row, 0) - w
    return {r: w for r, w in out.items() if w}


@TRACES
@settings(max_examples=100, deadline=None)
@given(nested_series, nested_series)
def test_nested_join_with_fused_stages(columnar, a, b):
    left, right, join, nodes = join_nodes(nested=True, columnar=columnar)
    join.absorb(LinearNode(join, fused_stages()))
    place(nodes, nested=True)
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                     join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        expected = naive_fused(naive_join(integral(a, t), integral(b, t)))
        assert integral(out, t) == expected, t


@TRACES
@settings(max_examples=100, deadline=None)
@given(root_series, root_series)
def test_root_join(columnar, a, b):
    left, right, join, nodes = join_nodes(nested=False, columnar=columnar)
    place(nodes, nested=False)
    out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes,
                   join, 5)
    for e in range(5):
        assert integral(out, e) == naive_join(integral(a, e), integral(b, e)), e


@settings(max_examples=200, deadline=None)
@given(nested_series)
@example({(0, 1): {(0, 0): 1}, (1, 0): {(0, 0): 1}, (1, 2): {(0, 0): -1}})
def test_distinct_trace(a):
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_distinct(integral(a, t)), t


@settings(max_examples=100, deadline=None)
@given(root_series)
def test_distinct_incremental(a):
    holder = Holder()
    node = DistinctNode(holder)
    place([node], nested=False)
    out = run_root({"a": holder}, {"a": a}, [node], node, 5)
    for e in range(5):
        assert integral(out, e) == naive_distinct(integral(a, e)), e


AGGREGATES = [count, sum_of(1), min_of(1), max_of(1), mean_of(1)]


@TRACES
@settings(max_examples=100, deadline=None)
@given(root_series, st.sampled_from(AGGREGATES))
def test_aggregate(columnar, a, fn):
    holder = Holder()
    trace = TraceNode(holder, KEY, nested=False)
    trace.use_columnar(columnar)
    node = AggregateNode(holder, trace, fn)
    place([trace, node], nested=False)
    out = run_root({"a": holder}, {"a": a}, [trace, node], node, 5)
    for e in range(5):
        assert integral(out, e) == aggregate(fn, by_first(integral(a, e))), e


@settings(max_examples=60, deadline=None)
@given(nested_series)
def test_integrate_and_delay_in_a_child(a):
    holder = Holder()
    integrate = IntegrateNode(holder, nested=True)
    delay = DelayNode(holder)
    nodes = [integrate, delay]
    place(nodes, nested=True)
    series = {"a": a}
    seen_integral: dict = {}
    seen_delay: dict = {}

    class Watch:  # the harness records one node; this test reads both above
        out: dict = {}
    watch = Watch()
    current = [0]
    original = delay.evaluate

    def evaluate(i, _original=original):
        _original(i)
        seen_integral[(current[0], i)] = dict(integrate.out)
        seen_delay[(current[0], i)] = dict(delay.out)
    delay.evaluate = evaluate
    original_start = delay.clock_start

    def clock_start(scope, time, _original=original_start):
        current[0] = time
        _original(scope, time)
    delay.clock_start = clock_start
    # drive all epochs at once, visiting every iteration of the grid
    run_nested({"a": holder}, series, nodes, watch, EPOCHS, visit_all=ITERATIONS - 1)
    for t in grid(EPOCHS, ITERATIONS):
        assert seen_integral.get(t, {}) == integral(a, t), t
        e, i = t
        assert seen_delay.get(t, {}) == (a.get((e, i - 1), {}) if i > 0 else {}), t


keyed = st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 2)),
                        st.integers(-1, 1).filter(bool), max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(keyed, keyed), min_size=1, max_size=5))
def test_antijoin_and_semijoin(epochs):
    circuit = Circuit()
    a = circuit.source("a", arity=2)
    b = circuit.source("b", arity=2)
    circuit.output("anti", a.index_by((0,)).antijoin(b.index_by((0,))))
    circuit.output("semi", a.index_by((0,)).semijoin(b.index_by((0,))))
    total_a: dict = {}
    total_b: dict = {}
    got = {"anti": {}, "semi": {}}
    for batch_a, batch_b in epochs:
        for total, batch in ((total_a, batch_a), (total_b, batch_b)):
            for r, w in batch.items():
                total[r] = total.get(r, 0) + w
        delta = circuit.step({"a": batch_a, "b": batch_b})
        for name in got:
            for r, w in delta[name].items():
                got[name][r] = got[name].get(r, 0) + w
        key_weight: dict = {}
        for r, w in total_b.items():
            key_weight[r[0]] = key_weight.get(r[0], 0) + w
        present = {k for k, w in key_weight.items() if w > 0}
        rows_a = {r: w for r, w in total_a.items() if w}
        assert {r: w for r, w in got["semi"].items() if w} == \
            {r: w for r, w in rows_a.items() if r[0] in present}
        assert {r: w for r, w in got["anti"].items() if w} == \
            {r: w for r, w in rows_a.items() if r[0] not in present}


class OutsideTrace(Trace):
    """A trace that moves its entries 'outside' whenever a join fetches matches,
    like ``engine.spark.spill.SpillingTrace`` does with Spark; the matches come
    back as a trace in memory, read through its cursors."""

    __slots__ = ("outside",)

    def __init__(self, nested, index):
        super().__init__(nested=nested, index=index)
        self.outside: list = []  # (key, value, epoch, iteration, weight)

    def spilled_matches(self, keys):
        for cursor in (self.past_cursor(), self.epoch_cursor()):
            for key, value, time, weight in cursor.entries():
                self.outside.append((key, value, time[0], time[-1] if self.nested else 0,
                                     weight))
        self.drop_entries()
        wanted = set(keys)
        found = [entry for entry in self.outside if entry[0] in wanted]
        return Trace.from_entries(self.nested, self.index, self.epoch, found) if found else None

    def rollback(self):
        super().rollback()
        self.outside = [entry for entry in self.outside if entry[2] < self.epoch]


@settings(max_examples=100, deadline=None)
@given(nested_series, nested_series, st.booleans())
def test_join_against_traces_kept_outside_memory(a, b, nested):
    left, right, join, nodes = join_nodes(nested=nested)
    for trace_node in nodes[:2]:
        trace_node.trace = OutsideTrace(nested, KEY)
    join.spilled = True
    place(nodes, nested=nested)
    if nested:
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        times = grid(EPOCHS, ITERATIONS)
    else:
        flat_a = {e: batch for (e, i), batch in a.items() if i == 0}
        flat_b = {e: batch for (e, i), batch in b.items() if i == 0}
        a, b = flat_a, flat_b
        out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        times = range(EPOCHS)
    for t in times:
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


mixed_rows = st.tuples(st.integers(0, 2),
                       st.one_of(st.integers(0, 3), st.sampled_from(["x", 2.5])))
mixed_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                         st.integers(0, ITERATIONS - 2)),
                               st.dictionaries(mixed_rows, weights, max_size=4), max_size=7)


@settings(max_examples=100, deadline=None)
@given(mixed_series, mixed_series, st.sampled_from([0, 3]))
def test_columnar_traces_go_back_to_dicts_for_rows_they_cannot_hold(a, b, columnar):
    """A string or a float in a columnar trace's rows turns it back into a dict
    trace, with every entry, between two appends."""
    left, right, join, nodes = join_nodes(nested=True, columnar=columnar)
    place(nodes, nested=True)
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


# ---------------------------------------------------------------------------
# The columnar path (engine.operators.columns): the same twins with every
# batch columnar (colbatch.THRESHOLD = 0) and with the default choice per batch.

PATHS = pytest.mark.parametrize("threshold", [0, None, "epoch"],
                                ids=["columns", "default", "columns-back-at-commit"])


def path(threshold):
    """Every batch columnar (0), the defaults (None), or every batch columnar
    with the state back in dicts at each commit ("epoch")."""
    if threshold == "epoch":
        return columns_from(0, state=1 << 60)
    return columns_from(threshold)


PROJECTION = ((0, 1), (1, 0), (1, 1))  # (left[1], right[0], right[1])


def naive_projection(joined: dict) -> dict:
    out: dict = {}
    for (ra, rb), w in joined.items():
        row = (ra[1], rb[0], rb[1])
        out[row] = out.get(row, 0) + w
    return {r: w for r, w in out.items() if w}


def projection_join(nested: bool, stages=()):
    left, right = Holder(), Holder()
    left_trace = TraceNode(left, KEY, nested)
    right_trace = TraceNode(right, KEY, nested)
    cls = NestedJoinNode if nested else JoinNode
    join = cls(left, right, left_trace, right_trace, PROJECTION)
    if stages:
        join.absorb(LinearNode(join, list(stages)))
    return left, right, join, [left_trace, right_trace, join]


@PATHS
@settings(max_examples=100, deadline=None)
@given(nested_series, nested_series)
@example({(1, 0): {(0, 0): 1}}, {(0, 2): {(0, 1): 1}})
def test_nested_projection_join(threshold, a, b):
    with path(threshold):
        left, right, join, nodes = projection_join(nested=True)
        place(nodes, nested=True)
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        for t in grid(EPOCHS, ITERATIONS):
            expected = naive_projection(naive_join(integral(a, t), integral(b, t)))
            assert integral(out, t) == expected, t


def columnar_stages():
    """A projection and a negation (vectorised), then a filter and a map (per row)."""
    return [("project", (2, 0)), ("negate", None), ("filter", lambda r: r[0] != 1),
            ("map", lambda r: (r[1], r[0] + r[1]))]


def naive_columnar_stages(joined: dict) -> dict:
    out: dict = {}
    for (ra, rb), w in joined.items():
        x, y = rb[1], ra[1]
        if x == 1:
            continue
        row = (y, x + y)
        out[row] = out.get(row, 0) - w
    return {r: w for r, w in out.items() if w}


@PATHS
@settings(max_examples=100, deadline=None)
@given(nested_series, nested_series)
def test_nested_projection_join_with_fused_stages(threshold, a, b):
    with path(threshold):
        left, right, join, nodes = projection_join(nested=True, stages=columnar_stages())
        place(nodes, nested=True)
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        for t in grid(EPOCHS, ITERATIONS):
            expected = naive_columnar_stages(naive_join(integral(a, t), integral(b, t)))
            assert integral(out, t) == expected, t


@PATHS
@settings(max_examples=100, deadline=None)
@given(root_series, root_series)
def test_root_projection_join(threshold, a, b):
    with path(threshold):
        left, right, join, nodes = projection_join(nested=False)
        place(nodes, nested=False)
        out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, 5)
        for e in range(5):
            expected = naive_projection(naive_join(integral(a, e), integral(b, e)))
            assert integral(out, e) == expected, e


@PATHS
@settings(max_examples=200, deadline=None)
@given(nested_series)
@example({(0, 1): {(0, 0): 1}, (1, 0): {(0, 0): 1}, (1, 2): {(0, 0): -1}})
def test_distinct_trace_on_columns(threshold, a):
    with path(threshold):
        holder = Holder()
        node = DistinctTraceNode(holder)
        place([node], nested=True)
        out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
        for t in grid(EPOCHS, ITERATIONS):
            assert integral(out, t) == naive_distinct(integral(a, t)), t


@settings(max_examples=100, deadline=None)
@given(mixed_series, st.sampled_from([0, 2]))
def test_distinct_trace_goes_back_to_rows_for_rows_it_cannot_pack(a, threshold):
    """A string, a float or a wide int in a batch moves a packed Distinct
    Trace back to dicts, with its whole history and schedule."""
    with path(threshold):
        holder = Holder()
        node = DistinctTraceNode(holder)
        place([node], nested=True)
        wide = {t: {(r[0] << 40 if r[1] == 2.5 else r[0], r[1]): w for r, w in batch.items()}
                for t, batch in a.items()}
        out = run_nested({"a": holder}, {"a": wide}, [node], node, EPOCHS)
        for t in grid(EPOCHS, ITERATIONS):
            assert integral(out, t) == naive_distinct(integral(wide, t)), t


@settings(max_examples=100, deadline=None)
@given(mixed_series, mixed_series)
def test_projection_join_with_rows_columns_cannot_hold(a, b):
    with columns_from(0):
        left, right, join, nodes = projection_join(nested=True)
        place(nodes, nested=True)
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        for t in grid(EPOCHS, ITERATIONS):
            expected = naive_projection(naive_join(integral(a, t), integral(b, t)))
            assert integral(out, t) == expected, t
