"""The large-batch kernels of the columnar runtime against plain Python:
packed keys (engine.colbatch.packed_key / unpack_key), the radix order
(order_packed), consolidation and runs built on them, the interleave of runs,
weight sums of runs with each key once, the probe per distinct key; and a
closure with every kernel forced onto its large-batch path."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from engine import colbatch
from engine.colbatch import (
    SYMBOLS,
    ColBatch,
    consolidate,
    order_packed,
    packed_key,
    sorted_with,
    sum_packed,
    unpack_key,
)
from engine.columnar import Run, interleave, make_run, merge_runs
from engine.operators import columns as col
from tests.datalog.differential import closure

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


@pytest.fixture
def radix_everywhere(monkeypatch):
    """Every sort of a packed key by radix passes, every sorted probe per key."""
    monkeypatch.setattr(colbatch, "RADIX_ROWS", 0)
    monkeypatch.setattr(colbatch, "FEW_DESCENTS", 0)
    monkeypatch.setattr(col, "RADIX_ROWS", 0)
    monkeypatch.setattr(col, "DISTINCT_PROBE", 0)


def int_columns(draw, arity: int, n: int, low: int, high: int) -> list:
    return [np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)),
                     dtype="int64") for _ in range(arity)]


@st.composite
def tables(draw):
    """Columns of ints whose spans go from one value to the whole int64 range."""
    arity = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    columns = []
    for _ in range(arity):
        bits = draw(st.sampled_from([0, 1, 5, 16, 17, 31, 40, 62, 63]))
        low = draw(st.integers(INT64_MIN, INT64_MAX - ((1 << bits) - 1)))
        columns += int_columns(draw, 1, n, low, low + (1 << bits) - 1)
    return columns


@settings(max_examples=200, deadline=None)
@given(tables())
def test_packed_key_orders_as_lexsort_and_unpacks(columns):
    bounds = [(int(c.min()), int(c.max())) for c in columns]
    widths = [(high - low).bit_length() for low, high in bounds]
    found = packed_key(columns)
    if sum(widths) > 63:
        assert found is None
        return
    key, got = found
    assert got == widths and key.dtype == np.int64 and (key >= 0).all()
    assert [c.tolist() for c in unpack_key(key, bounds, widths)] == [c.tolist() for c in columns]
    rows = list(zip(*(c.tolist() for c in columns)))
    order = np.argsort(key, kind="stable").tolist()
    assert [rows[k] for k in order] == sorted(rows)
    assert len(set(key.tolist())) == len(set(rows))


def test_packed_key_at_the_63_bit_boundary():
    full = [np.array([INT64_MIN, INT64_MAX - 1])]       # a span of 2**64 - 2: 64 bits
    assert packed_key(full) is None
    half = np.array([-(1 << 62), (1 << 62) - 1])        # 63 bits, alone: fits
    key, widths = packed_key([half])
    assert widths == [63] and key.tolist() == [0, (1 << 63) - 1]
    assert packed_key([half, np.array([0, 1])]) is None  # 63 + 1
    key, widths = packed_key([np.array([-(1 << 61), 0]), np.array([5, 6])])
    assert widths == [62, 1]
    assert unpack_key(key, [(-(1 << 61), 0), (5, 6)], widths)[1].tolist() == [5, 6]
    assert packed_key([np.array([1.5, 2.0])]) is None    # floats: not packed
    assert packed_key([np.array([1, 2], dtype="uint64")]) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, (1 << 40) - 1), min_size=0, max_size=300),
       st.sampled_from([0, 1, 8, 9, 16, 17, 33, 40]), st.booleans())
def test_order_packed_is_a_stable_sort(values, bits, runs):
    """By radix (any number of passes, the last 1-16 bits wide) as by argsort."""
    key = np.array([v & ((1 << bits) - 1) for v in values], dtype="int64")
    if runs:  # a few sorted stretches
        key = np.concatenate([np.sort(part) for part in np.array_split(key, 3)])
    expected = np.argsort(key, kind="stable").tolist()
    for rows, descents in ((0, 0), (1 << 30, 128), (0, 1 << 30)):
        saved = colbatch.RADIX_ROWS, colbatch.FEW_DESCENTS
        colbatch.RADIX_ROWS, colbatch.FEW_DESCENTS = rows, descents
        try:
            assert order_packed(key, bits).tolist() == expected
        finally:
            colbatch.RADIX_ROWS, colbatch.FEW_DESCENTS = saved


def dict_sum(rows, weights) -> dict:
    out: dict = {}
    for row, w in zip(rows, weights):
        out[row] = out.get(row, 0) + w
    return {row: w for row, w in out.items() if w}


FIXTURE = [HealthCheck.function_scoped_fixture]  # radix_everywhere: the same for all examples


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, (1 << 62) - 1), min_size=1, max_size=200),
       st.sampled_from([0, 1, 11, 33, 60, 62]),
       st.lists(st.integers(-3, 3), min_size=1, max_size=200),
       st.sampled_from([0, 1, 30, 50]), st.booleans())
def test_sum_packed_by_value_equals_by_order(values, bits, small, spread, repeat):
    """Keys sorted with their weights packed under them (sorted_with) sum as
    the order's gathers do, and as rows summed in Python; weights too wide to
    share the key's int64 go by the order."""
    key = np.array([v & ((1 << bits) - 1) for v in values], dtype="int64")
    if repeat:  # equal keys, with weights to sum (and cancel)
        key = np.concatenate((key, key[::-1]))
    weights = np.resize(np.array(small, dtype="int64"), len(key))
    weights[::7] *= 1 << spread
    ordered = sum_packed(key, bits, weights, order=True)
    saved = colbatch.VALUE_SORT_ROWS
    colbatch.VALUE_SORT_ROWS = 0
    try:
        fits = sorted_with(key, bits, weights) is not None
        by_value = sum_packed(key.copy(), bits, weights)
        mine = key.copy()  # (sorted in place: the caller's to overwrite)
        in_place = sum_packed(mine, bits, weights, own=True)
    finally:
        colbatch.VALUE_SORT_ROWS = saved
    width = (int(weights.max()) - int(weights.min())).bit_length()
    assert fits == (bits + width <= 63)
    assert by_value[2] is None
    assert by_value[0].tolist() == ordered[0].tolist()
    assert by_value[1].tolist() == ordered[1].tolist()
    assert [x.tolist() for x in in_place[:2]] == [x.tolist() for x in by_value[:2]]
    expected = dict_sum(key.tolist(), weights.tolist())
    assert dict(zip(by_value[0].tolist(), by_value[1].tolist())) == expected
    assert by_value[0].tolist() == sorted(expected)


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURE)
@given(st.data())
def test_consolidate_equals_summing_rows(radix_everywhere, data):
    """Ints (negative, wide: packed or not), symbols and floats."""
    n = data.draw(st.integers(1, 60))
    kinds = tuple(data.draw(st.lists(st.sampled_from("iIsf"), min_size=1, max_size=3)))
    values = {"i": st.integers(-3, 3), "I": st.integers(INT64_MIN, INT64_MAX),
              "s": st.sampled_from(["a", "b", "ccc"]),
              "f": st.sampled_from([-0.0, 0.0, 1.5, -2.25])}
    rows = [tuple(data.draw(values[k]) for k in kinds) for _ in range(n)]
    weights = data.draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n))
    columns = []
    for c, kind in enumerate(kinds):
        cells = [row[c] for row in rows]
        columns.append(SYMBOLS.ids(cells) if kind == "s"
                       else np.array(cells, dtype="float64" if kind == "f" else "int64"))
    out = consolidate(columns, tuple("i" if k == "I" else k for k in kinds),
                      np.array(weights, dtype="int64"))
    assert dict(out) == dict_sum(rows, weights)
    keys = list(out.keys())
    if "f" not in kinds and "s" not in kinds:
        assert keys == sorted(keys)
    assert all(c.dtype == (np.float64 if k == "f" else np.int64)
               for c, k in zip(out.columns, kinds))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(INT64_MIN, INT64_MAX),
                          st.integers(-2, 2)), min_size=2, max_size=40), st.booleans())
def test_consolidate_of_rows_in_order(entries, repeat):
    """Rows in order, each once (taken as they are, not sorted: a join's of a
    sorted delta on unique keys), or with a row repeated (sorted, summed);
    zero weights dropped either way."""
    rows = sorted({(a, b) for a, b, _ in entries})
    weights = [w for _, _, w in entries][:len(rows)]
    if repeat:
        rows.insert(1, rows[0])
        weights.insert(1, 1)
    columns = [np.array([r[c] for r in rows], dtype="int64") for c in (0, 1)]
    out = consolidate(columns, ("i", "i"), np.array(weights, dtype="int64"))
    assert dict(out) == dict_sum(rows, weights)
    assert list(out.keys()) == sorted(out.keys())


@settings(max_examples=100, deadline=None, suppress_health_check=FIXTURE)
@given(st.integers(1, 3), st.lists(st.tuples(st.integers(-5, 5), st.integers(-3, 3),
                                             st.integers(0, 4), st.integers(-2, 2)),
                                   min_size=1, max_size=50),
       st.integers(0, 2))
def test_make_run_sorts_and_consolidates(radix_everywhere, arity, entries, key_column):
    key_column %= arity
    rows = [(a, b, a + b)[:arity] for a, b, _, _ in entries]
    columns = [np.array([r[c] for r in rows], dtype="int64") for c in range(arity)]
    iterations = np.array([e[2] for e in entries], dtype="int64")
    weights = np.array([e[3] for e in entries], dtype="int64")
    run = make_run(columns, iterations, weights, key_column)
    expected = dict_sum([(r[key_column], r, j) for r, (_, _, j, _) in zip(rows, entries)],
                        weights.tolist())
    if run is None:
        assert not expected
        return
    got = [(k, tuple(row), j, w) for k, *row, j, w in zip(
        run.keys.tolist(), *(c.tolist() for c in run.columns), run.iterations.tolist(),
        run.weights.tolist())]
    assert got == sorted((k, row, j, w) for (k, row, j), w in expected.items())


def single_run(keys, iteration, weights) -> Run:
    return make_run([np.array(keys, dtype="int64")], np.full(len(keys), iteration),
                    np.array(weights, dtype="int64"), 0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(-2, 2).filter(bool)), min_size=1,
                max_size=60),
       st.lists(st.tuples(st.integers(-50, 50), st.integers(-300, 300).filter(bool)),
                min_size=1, max_size=60),
       st.sampled_from([0, 1 << 30]))
def test_interleave_equals_a_sorting_merge(first, second, narrow_from):
    """Runs at different iterations (weights wide enough to need int16)."""
    saved = colbatch.NARROW_ROWS
    colbatch.NARROW_ROWS = narrow_from
    try:
        a = single_run([k for k, _ in first], 1, [w for _, w in first])
        b = single_run([k for k, _ in second], 3, [w for _, w in second])
        if a is None or b is None:
            return
        got = interleave(a, b, [(-50, 50), (1, 3)])
        expected = make_run([np.concatenate([a.keys, b.keys])],
                            np.concatenate([a.iterations, b.iterations]).astype("int64"),
                            np.concatenate([a.weights, b.weights]).astype("int64"), 0)
        for name in ("keys", "iterations", "weights"):
            assert getattr(got, name).tolist() == getattr(expected, name).tolist()
        assert got.keys.dtype == np.int64
        assert (got.iterations.dtype == np.int8) == (narrow_from == 0)
        assert merge_runs([a, b], 0).keys.tolist() == expected.keys.tolist()
    finally:
        colbatch.NARROW_ROWS = saved


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 3), st.integers(-2, 2)),
                min_size=1, max_size=80),
       st.lists(st.integers(-2, 22), min_size=1, max_size=30))
def test_weight_sums_over_repeated_keys(entries, sought):
    run = make_run([np.array([k for k, _, _ in entries], dtype="int64")],
                   np.array([j for _, j, _ in entries], dtype="int64"),
                   np.array([w for _, _, w in entries], dtype="int64"), 0)
    if run is None:
        return
    total: dict = {}
    for k, w in zip(run.keys.tolist(), run.weights.tolist()):
        total[k] = total.get(k, 0) + w
    sought = np.array(sought, dtype="int64")
    expected = [total.get(k, 0) for k in sought.tolist()]
    assert run.weight_sums(sought).tolist() == expected      # many sought: walks
    after = run.keys.searchsorted(sought, "right")
    assert run.weight_sums(sought, after).tolist() == expected
    for k, w in zip(sought.tolist(), expected):              # one: running sums
        assert run.weight_sums(np.array([k])).tolist() == [w]
        assert run.weight_sums(np.array([k]), run.keys.searchsorted([k], "right")) == [w]
    assert run.sums is None or len(run.keys) > 16


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=60),
       st.lists(st.integers(0, 12), min_size=1, max_size=30))
def test_probe_per_distinct_key_equals_probe_per_row(sought, keys):
    sought = np.sort(np.array(sought, dtype="int64"))
    keys = np.sort(np.array(keys, dtype="int64"))
    ones = np.ones(len(keys), dtype="int64")
    run = Run([keys], ones - 1, ones, 0)      # (a run is never empty)
    plain, per_key = col.probe(sought, run), col.probe_sorted(sought, run)

    def pairs(found):
        return sorted(zip(*(x.tolist() for x in found))) if found else []
    assert pairs(per_key) == pairs(plain)
    assert all(sought[m] == keys[t] for m, t in pairs(per_key))


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE)
@given(st.lists(st.integers(INT64_MIN, INT64_MAX) | st.integers(-3, 3), min_size=1,
                max_size=40))
def test_delta_sorted_by_its_key_at_any_span(radix_everywhere, keys):
    """Radix on keys shifted to 0 when their span allows, else argsort."""
    batch = ColBatch([np.array(keys, dtype="int64"), np.arange(len(keys))], ("i", "i"),
                     np.ones(len(keys), dtype="int64"))
    run = col.DeltaRun(batch, 0)
    assert run.keys.tolist() == sorted(keys)
    assert sorted(zip(run.keys.tolist(), run.columns[1].tolist())) == sorted(
        zip(keys, range(len(keys))))


def test_closure_with_every_kernel_on_its_large_batch_path(radix_everywhere):
    """Transitive closure and a retraction, every batch columnar, every packed
    sort by radix and every sorted probe per key, against the plain loop."""
    rng = random.Random(11)
    edges = sorted({(rng.randrange(-40, 40), rng.randrange(-40, 40)) for _ in range(150)})
    program = datalog.Program(".decl edge(x: number, y: number)\n"
                              ".decl path(x: number, y: number)\n"
                              "path(x, y) :- edge(x, y).\n"
                              "path(x, z) :- path(x, y), edge(y, z).\n")
    with colbatch.columns_from(0):
        session = program.session()
        with session.transaction() as tx:
            tx.insert("edge", *edges)
        assert set(session.query("path")) == closure(edges)[1]
        removed = edges[::7]
        with session.transaction() as tx:
            tx.retract("edge", *removed)
        assert set(session.query("path")) == closure(set(edges) - set(removed))[1]


def test_columnar_batch_from_consolidation_reads_as_rows():
    out = consolidate([np.array([3, -1, 3]), SYMBOLS.ids(["x", "y", "x"])], ("i", "s"),
                      np.array([1, 1, 1]))
    assert isinstance(out, ColBatch) and dict(out) == {(-1, "y"): 1, (3, "x"): 2}
