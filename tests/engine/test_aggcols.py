"""The Aggregate operator on columns (engine.operators.aggcols) against its row path.

Random weighted batches of ``(key, flag, value)`` rows — values ints, floats or
symbols — arrive at random epochs (an aggregate runs at the root, where every
time is an epoch); the same operator runs once on its row loop and once with
every batch taking the columnar path, its trace in dicts or in runs. The
outputs must be the same rows with the same weights, value types included
(``1`` is not ``1.0``), at every epoch, and equal the specification's
aggregate of the integrated input.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.aggregates import Reduce, count, max_of, mean_of, min_of, sum_of
from engine.colbatch import ColBatch, columns_from
from engine.operators import aggcols
from engine.operators.aggregate import AggregateNode
from engine.operators.join import TraceNode
from tests.engine.harness import Holder, integral, place, run_root
from tests.engine.spec import aggregate, index_with

EPOCHS = 5
MASK = (1 << 64) - 1


def wrap_number(value: int) -> int:
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


AGGREGATES = [
    count, sum_of(2), min_of(2), max_of(2), mean_of(2),
    # the compiler's: weighted bags whose flag-0 rows only mark the group
    Reduce("count", weighted=True, flag=1),
    Reduce("sum", 2, weighted=True, flag=1),
    Reduce("sum", 2, weighted=True, flag=1, finish=wrap_number, modular=True),
    Reduce("min", 2, weighted=True, flag=1),
    Reduce("max", 2, weighted=True, flag=1),
    Reduce("mean", 2, weighted=True, flag=1, finish=float),
]
NAMES = [str(fn) for fn in AGGREGATES]
NOT_MODULAR = [fn for fn in AGGREGATES if not fn.modular]  # (wrapping is for ints)

ints = st.integers(-3, 3) | st.sampled_from([(1 << 62) + 7, -(1 << 63), (1 << 63) - 1])
floats = st.sampled_from([0.5, -1.25, 1e300, -1e300, 3.0, 0.1, 0.2, 0.0, -0.0])
symbols = st.sampled_from(["b", "a", "ab", "", "Z", "é"])
weights = st.integers(-2, 3).filter(bool)


def series_of(values):
    rows = st.tuples(st.integers(0, 2), st.integers(0, 1), values)
    return st.dictionaries(st.integers(0, EPOCHS - 1),
                           st.dictionaries(rows, weights, max_size=8), max_size=EPOCHS)


def run(fn, series: dict, columns: bool, runs: bool):
    holder = Holder()
    trace = TraceNode(holder, ("cols", (0,)), nested=False)
    trace.use_columnar(0 if runs else None)
    node = AggregateNode(holder, trace, fn)
    place([trace, node], nested=False)
    with columns_from(0 if columns else None):
        if columns:  # every batch on columns: even epochs' in columns as a large
            # upstream batch arrives, odd epochs' as rows (put in columns there)
            series = {e: b if e % 2 else ColBatch.from_rows(b) or b for e, b in series.items()}
        else:        # the row loop, however large the batch
            colbatch.AGGREGATE_ROWS = colbatch.AGGREGATE_DICT_ROWS = 1 << 62
        return run_root({"a": holder}, {"a": series}, [trace, node], node, EPOCHS)


def typed(out: dict) -> dict:
    return {e: sorted((tuple(map(repr, row)), w) for row, w in batch.items())
            for e, batch in out.items()}


def check(fn, series: dict, runs: bool) -> None:
    expected = run(fn, series, columns=False, runs=runs)
    before = colbatch.COUNTS["aggregate"]
    found = run(fn, series, columns=True, runs=runs)
    assert typed(found) == typed(expected)
    for e in range(EPOCHS):
        assert integral(found, e) == aggregate(fn, index_with(lambda r: (r[0],),
                                                              integral(series, e))), e
    if any(series.values()) and not runs:
        assert colbatch.COUNTS["aggregate"] + colbatch.COUNTS["aggregate_rows"] > before


@pytest.mark.parametrize("runs", [False, True], ids=["dicts", "runs"])
@pytest.mark.parametrize("fn", AGGREGATES, ids=NAMES)
@settings(max_examples=60, deadline=None)
@given(series_of(ints))
@example({0: {(0, 1, (1 << 62) + 7): 2, (0, 1, 3): 1}, 1: {(0, 1, (1 << 62) + 7): 1}})
@example({0: {(0, 1, -(1 << 63)): 1, (1, 0, 0): 1}, 2: {(1, 0, 0): -1}})
def test_ints(runs, fn, series):
    check(fn, series, runs)


@pytest.mark.parametrize("fn", NOT_MODULAR, ids=str)
@settings(max_examples=60, deadline=None)
@given(series_of(floats))
@example({0: {(0, 1, 0.1): 1, (0, 1, 0.2): 2, (0, 1, 1e300): 1, (0, 1, -1e300): 1}})
def test_floats(fn, series):
    check(fn, series, runs=False)


@pytest.mark.parametrize("fn", [count, min_of(2), max_of(2), AGGREGATES[5], AGGREGATES[8],
                                AGGREGATES[9]], ids=str)
@settings(max_examples=60, deadline=None)
@given(series_of(symbols))
def test_symbols(fn, series):
    check(fn, series, runs=False)


def test_columns_are_taken_and_exact():
    """Large groups go columnar (counted), with Python's float sums exactly."""
    rows = {(k % 3, 1, 0.1 * k): 1 + k % 2 for k in range(3000)}
    fn = Reduce("sum", 2, weighted=True, flag=1)
    before = colbatch.COUNTS["aggregate"]
    found = aggcols.changed(fn, (0,), ColBatch.from_rows(rows), None)
    assert colbatch.COUNTS["aggregate"] == before  # (the operator counts, not this)
    by_key = dict(zip(*found))
    for k in range(3):
        items = sorted((row, w) for row, w in rows.items() if row[0] == k)
        assert by_key[(k,)] == fn(items)
    series = {0: rows, 1: {(0, 1, 0.1 * 3): -2, (2, 1, 7.5): 1}}
    fallbacks = colbatch.COUNTS["aggregate_rows"]
    check(fn, series, runs=False)
    # the bulk load on columns; the update (2 rows against 2,000 past rows of
    # their keys in dicts, over aggcols.PAST_RATIO) on the rows read once
    assert colbatch.COUNTS["aggregate"] == before + 1
    assert colbatch.COUNTS["aggregate_rows"] == fallbacks + 1


def test_unfit_batches_take_the_row_path():
    """A -0.0, a NaN, a non-modular unsigned sum: the row path, counted."""
    fn = sum_of(2)
    for rows in ({(0, 1, -0.0): 1, (0, 1, 2.0): 1}, {(0, 1, float("nan")): 1},
                 {(0, 1, 1 << 63): 1}):
        assert aggcols.changed(fn, (0,), ColBatch.from_rows(rows), None) is None
    flagged = Reduce("count", flag=1)   # a flag of symbols: "" is false, its id need not be 0
    assert aggcols.changed(flagged, (0,), ColBatch.from_rows({(0, "", 1): 1}), None) is None
    before = colbatch.COUNTS["aggregate_rows"]
    check(fn, {0: {(0, 1, 1 << 63): 1, (0, 1, 5): 1}}, runs=False)
    assert colbatch.COUNTS["aggregate_rows"] > before
