"""The root circuit's columnar operators (engine.operators.rootcols) against
their naive twins: join with fused stages, semijoin and antijoin, Distinct
Incremental, at random epochs, with every batch columnar, with the defaults,
with the state back in dicts at each commit, and switching between rows and
columns from epoch to epoch; rolled-back epochs and rows the columns cannot
hold included."""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import Circuit, colbatch
from engine.colbatch import ColBatch, columns_from
from engine.operators import rootcols
from engine.operators.distinct import DistinctNode
from engine.operators.join import JoinNode, TraceNode
from engine.operators.linear import LinearNode
from engine.zset import EMPTY
from tests.engine.harness import Holder, integral, place, run_root
from tests.engine.spec import distinct, index_with, join_stream

EPOCHS = 5
weights = st.integers(-2, 2).filter(bool)
rows = st.tuples(st.integers(0, 2), st.integers(0, 3))
batches = st.dictionaries(rows, weights, max_size=5)
series = st.dictionaries(st.integers(0, EPOCHS - 1), batches, max_size=EPOCHS)
mixed_rows = st.tuples(st.integers(0, 2),
                       st.one_of(st.integers(0, 3), st.sampled_from(["x", 2.5, 1 << 40])))
mixed_series = st.dictionaries(st.integers(0, EPOCHS - 1),
                               st.dictionaries(mixed_rows, weights, max_size=5),
                               max_size=EPOCHS)

# every batch columnar (0); the defaults (None); every batch columnar with the
# state back in dicts at each commit ("epoch"); from 3 rows on (2: some epochs
# on rows, some on columns, traces switching kind)
PATHS = pytest.mark.parametrize("threshold", [0, None, "epoch", 3],
                                ids=["columns", "default", "columns-back-at-commit", "switch"])


def path(threshold):
    if threshold == "epoch":
        return columns_from(0, state=1 << 60)
    if threshold == "arrays":
        return arrays()
    return columns_from(threshold)


@contextlib.contextmanager
def arrays():
    """Every batch columnar, and a packed Distinct's small batches on whole
    arrays too (not row by row)."""
    with columns_from(0), mock.patch.object(rootcols, "SMALL_BATCH", 0):
        yield


def joined(a: dict, b: dict) -> dict:
    """``{(left row, right row): weight}`` of the collections keyed by their first column."""
    return join_stream(lambda k, left, right: (left, right),
                       index_with(lambda r: r[0], a), index_with(lambda r: r[0], b))


def stages():
    """A projection and a negation (vectorised), then a filter and a map (per row)."""
    return [("project", (2, 0)), ("negate", None), ("filter", lambda r: r[0] != 1),
            ("map", lambda r: (r[1], r[0] + r[1]))]


def naive_stages(pairs: dict) -> dict:
    out: dict = {}
    for (ra, rb), w in pairs.items():
        x, y = rb[1], ra[1]
        if x != 1:
            out[(y, x + y)] = out.get((y, x + y), 0) - w
    return {r: w for r, w in out.items() if w}


def naive_projection(pairs: dict) -> dict:
    out: dict = {}
    for (ra, rb), w in pairs.items():
        row = (ra[1], rb[0], rb[1])
        out[row] = out.get(row, 0) + w
    return {r: w for r, w in out.items() if w}


def root_join(fused=()):
    left, right = Holder(), Holder()
    left_trace = TraceNode(left, ("cols", (0,)), False)
    right_trace = TraceNode(right, ("cols", (0,)), False)
    join = JoinNode(left, right, left_trace, right_trace, ((0, 1), (1, 0), (1, 1)))
    if fused:
        join.absorb(LinearNode(join, list(fused)))
    nodes = [left_trace, right_trace, join]
    place(nodes, nested=False)
    return left, right, join, nodes


@PATHS
@settings(max_examples=100, deadline=None)
@given(series, series)
@example({0: {(0, 0): 1}, 1: {(0, 1): 1}}, {1: {(0, 2): 1}})  # a ⋈ B_past + a ⋈ b
def test_root_join(threshold, a, b):
    with path(threshold):
        left, right, join, nodes = root_join()
        out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for e in range(EPOCHS):
        assert integral(out, e) == naive_projection(joined(integral(a, e), integral(b, e))), e


@PATHS
@settings(max_examples=100, deadline=None)
@given(series, series)
def test_root_join_with_fused_stages(threshold, a, b):
    with path(threshold):
        left, right, join, nodes = root_join(stages())
        out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for e in range(EPOCHS):
        assert integral(out, e) == naive_stages(joined(integral(a, e), integral(b, e))), e


@settings(max_examples=100, deadline=None)
@given(mixed_series, mixed_series, st.sampled_from([0, 3]))
def test_root_join_with_rows_columns_cannot_hold(a, b, threshold):
    with path(threshold):
        left, right, join, nodes = root_join()
        out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for e in range(EPOCHS):
        assert integral(out, e) == naive_projection(joined(integral(a, e), integral(b, e))), e


def test_root_join_takes_the_columns_for_a_large_bulk_load():
    """At the default sizes: the bulk load (empty traces) joins on columns;
    a one-row update stays on the rows and agrees."""
    left, right, join, nodes = root_join()
    a = {(k, k + 1): 1 for k in range(colbatch.THRESHOLD)}
    b = {(k, 7): 1 for k in range(0, colbatch.THRESHOLD, 2)}
    before = colbatch.COUNTS["root_join"]
    out = run_root({"a": left, "b": right}, {"a": {0: a, 1: {(2, 5): 1}}, "b": {0: b}},
                   nodes, join, 2)
    assert colbatch.COUNTS["root_join"] == before + 1
    assert type(out[0]) is dict and len(out[0]) == len(b)
    assert integral(out, 1) == naive_projection(joined({**a, (2, 5): 1}, b))


def run_circuit(make, epochs: list, names=("a", "b")):
    """Step a circuit built by ``make(circuit, sources)`` through ``epochs``
    (one ``{name: batch}`` dict each); yields the integrated outputs and
    inputs after each step."""
    circuit = Circuit()
    sources = {name: circuit.source(name, arity=2) for name in names}
    make(circuit, sources)
    got: dict = {}
    totals: dict = {name: {} for name in names}
    for step in epochs:
        delta = circuit.step({name: step.get(name, {}) for name in names})
        for name, batch in step.items():
            for r, w in batch.items():
                totals[name][r] = totals[name].get(r, 0) + w
        for name, batch in delta.items():
            out = got.setdefault(name, {})
            for r, w in batch.items():
                out[r] = out.get(r, 0) + w
        yield ({name: {r: w for r, w in out.items() if w} for name, out in got.items()},
               {name: {r: w for r, w in t.items() if w} for name, t in totals.items()})


keyed = st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 2)),
                        st.integers(-1, 1).filter(bool), max_size=5)


@PATHS
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(keyed, keyed), min_size=1, max_size=5))
def test_semijoin_and_antijoin(threshold, epochs):
    def make(circuit, s):
        circuit.output("anti", s["a"].index_by((0,)).antijoin(s["b"].index_by((0,))))
        circuit.output("semi", s["a"].index_by((0,)).semijoin(s["b"].index_by((0,))))
        circuit.output("semi2", s["a"].index_by((1,)).semijoin(s["b"].index_by((1,))))

    with path(threshold):
        steps = [{"a": a, "b": b} for a, b in epochs]
        for got, totals in run_circuit(make, steps):
            for name, column in (("semi", 0), ("anti", 0), ("semi2", 1)):
                present = {k for k, w in _key_weights(totals["b"], column).items() if w > 0}
                inside = name != "anti"
                expected = {r: w for r, w in totals["a"].items()
                            if (r[column] in present) == inside}
                assert got.get(name, {}) == expected, name


def _key_weights(rows: dict, column: int) -> dict:
    out: dict = {}
    for r, w in rows.items():
        out[r[column]] = out.get(r[column], 0) + w
    return out


def test_semijoin_takes_the_columns_at_the_default_size():
    n = colbatch.THRESHOLD
    circuit = Circuit()
    a, b = circuit.source("a", arity=2), circuit.source("b", arity=2)
    circuit.output("anti", a.index_by((0,)).antijoin(b.index_by((0,))))
    before = colbatch.COUNTS["semijoin"]
    out = circuit.step({"a": {(k, k): 1 for k in range(n)},
                        "b": {(k, 0): 1 for k in range(0, n, 3)}})["anti"]
    assert colbatch.COUNTS["semijoin"] == before + 1
    assert dict(out) == {(k, k): 1 for k in range(n) if k % 3}
    out = circuit.step({"b": {(1, 0): 1}})["anti"]   # one row: on the rows
    assert dict(out) == {(1, 1): -1}


@pytest.mark.parametrize("threshold", [0, "arrays", None, "epoch", 3],
                         ids=["columns", "arrays", "default", "columns-back-at-commit", "switch"])
@settings(max_examples=100, deadline=None)
@given(series)
@example({0: {(0, 0): 1}, 1: {(0, 0): 1, (1, 1): 1}, 2: {(0, 0): -2}})
def test_distinct_incremental(threshold, a):
    with path(threshold):
        holder = Holder()
        node = DistinctNode(holder)
        place([node], nested=False)
        out = run_root({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for e in range(EPOCHS):
        assert integral(out, e) == distinct(integral(a, e)), e


@settings(max_examples=100, deadline=None)
@given(mixed_series, st.sampled_from([0, "arrays", 3]))
def test_distinct_incremental_goes_back_to_rows_for_rows_it_cannot_pack(a, threshold):
    with path(threshold):
        holder = Holder()
        node = DistinctNode(holder)
        place([node], nested=False)
        out = run_root({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for e in range(EPOCHS):
        assert integral(out, e) == distinct(integral(a, e)), e


@settings(max_examples=100, deadline=None)
@given(series, st.sets(st.integers(0, EPOCHS - 1)), st.sampled_from([0, "arrays", "epoch", 3]))
def test_distinct_incremental_rolled_back(a, failed, threshold):
    """An epoch evaluated then rolled back leaves the state as it was; the
    packed state read mid-way (``collection_cursor``) too."""
    with path(threshold):
        holder = Holder()
        node = DistinctNode(holder)
        place([node], nested=False)
        total: dict = {}
        emitted: dict = {}
        for e in range(EPOCHS):
            holder.out = a.get(e, EMPTY)
            node.clock_start(0, e)
            node.evaluate(0)
            if e in failed:
                node.rollback()
                continue
            for r, w in node.out.items():
                emitted[r] = emitted.get(r, 0) + w
            for r, w in holder.out.items():
                total[r] = total.get(r, 0) + w
            if e % 2:
                node.collection_cursor()  # the packed state back to dicts, staged batch too
            node.clock_stop(0, e)
            assert {r: w for r, w in emitted.items() if w} == distinct(total), e
            assert set(node.collection_cursor().positive()) == set(distinct(total)), e


def test_distinct_incremental_takes_the_columns_at_the_default_size():
    holder = Holder()
    node = DistinctNode(holder)
    place([node], nested=False)
    n = colbatch.DISTINCT_ROWS
    before = colbatch.COUNTS["root_distinct"]
    big = {(k, k % 7): 2 for k in range(colbatch.SMALL_STATE)}
    as_rows = run_root({"a": holder}, {"a": {0: big}}, [node], node, 1)
    assert node.packed is None  # a batch of rows in a dict stays on the rows
    node = DistinctNode(holder)
    place([node], nested=False)
    out = run_root({"a": holder}, {"a": {0: ColBatch.from_rows(big),
                                         1: {(3, 3): -2, (n, 1): 1}}}, [node], node, 2)
    assert colbatch.COUNTS["root_distinct"] == before + 2  # the state stays packed
    assert out[0] == as_rows[0]
    assert node.packed is not None
    assert out[1] == {(3, 3): -1, (n, 1): 1}
    assert integral(out, 1) == distinct({**big, (3, 3): 0, (n, 1): 1})


symbols = st.sampled_from(["x", "y", "zz"])
symbol_series = st.dictionaries(
    st.integers(0, EPOCHS - 1),
    st.dictionaries(st.tuples(st.integers(0, 2), symbols), weights, max_size=5),
    max_size=EPOCHS)
flipped_series = st.dictionaries(
    st.integers(0, EPOCHS - 1),
    st.dictionaries(st.tuples(symbols, st.integers(0, 3)), weights, max_size=5),
    max_size=EPOCHS)


def keyed_join(left_key: int, right_key: int):
    left, right = Holder(), Holder()
    left_trace = TraceNode(left, ("cols", (left_key,)), False)
    right_trace = TraceNode(right, ("cols", (right_key,)), False)
    join = JoinNode(left, right, left_trace, right_trace, ((0, 1), (1, 0), (1, 1)))
    nodes = [left_trace, right_trace, join]
    place(nodes, nested=False)
    return left, right, join, nodes


def naive_keyed(a: dict, b: dict, left_key: int, right_key: int) -> dict:
    pairs = join_stream(lambda k, left, right: (left, right),
                        index_with(lambda r: r[left_key], a),
                        index_with(lambda r: r[right_key], b))
    return naive_projection(pairs)


@PATHS
@settings(max_examples=100, deadline=None)
@given(series, symbol_series, flipped_series)
def test_root_join_of_symbols(threshold, ints, syms, flipped):
    """Symbols in a column joined on ints, symbols as the key, and a side
    whose rows are ints in one epoch and symbols in another."""
    alternate = {e: (syms if e % 2 else ints).get(e, {}) for e in range(EPOCHS)}
    cases = [((syms, syms), 0, 0), ((syms, flipped), 1, 0), ((ints, syms), 0, 0),
             ((syms, ints), 1, 1), ((alternate, ints), 0, 0), ((ints, alternate), 0, 0),
             ((alternate, alternate), 0, 0)]
    for (a, b), left_key, right_key in cases:
        with path(threshold):
            left, right, join, nodes = keyed_join(left_key, right_key)
            out = run_root({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
        for e in range(EPOCHS):
            assert integral(out, e) == naive_keyed(integral(a, e), integral(b, e),
                                                   left_key, right_key), e


def test_a_bulk_load_of_symbols_joins_on_columns():
    n = colbatch.THRESHOLD
    left, right, join, nodes = keyed_join(1, 0)
    a = {(k, f"s{k % 500}"): 1 for k in range(n)}
    b = {(f"s{k}", k): 1 for k in range(0, 500, 5)}
    before = colbatch.COUNTS["root_join"]
    out = run_root({"a": left, "b": right}, {"a": {0: a, 1: {(1, "s0"): 1}}, "b": {0: b}},
                   nodes, join, 2)
    assert colbatch.COUNTS["root_join"] == before + 1
    assert integral(out, 1) == naive_keyed({**a, (1, "s0"): 1}, b, 1, 0)
