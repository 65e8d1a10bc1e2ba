"""A merge of runs one after the other in time (engine.columnar.make_run with
``chronological``: an epoch's appends, each consolidated and at later
iterations than the one before) sorts by row alone, sums nothing and takes
the bounds it is given; it must build the run the general merge builds, for
rows of one to three columns, keyed by any of them, short and long (the long
read back from the packed keys)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import ColBatch
from engine.columnar import ColumnarTrace, Run, make_run, merge_runs

rows = st.integers(1, 3).flatmap(
    lambda arity: st.lists(st.dictionaries(st.tuples(*[st.integers(-4, 9)] * arity),
                                           st.integers(-3, 3).filter(bool), max_size=12),
                           min_size=1, max_size=6))


def as_run(batch: dict, iteration: int, key_column: int) -> Run | None:
    columns = ColBatch.from_rows(batch)
    return None if columns is None else make_run(
        list(columns.columns), np.full(len(batch), iteration), columns.weights, key_column)


def entries(run) -> list:
    if run is None:
        return []
    return list(zip(*(c.tolist() for c in run.columns), run.iterations.tolist(),
                    run.weights.tolist()))


@settings(max_examples=200, deadline=None)
@given(rows, st.integers(0, 2), st.booleans(), st.booleans())
def test_a_chronological_merge_builds_what_the_general_one_builds(batches, key, long, gaps):
    arity = len(next((row for batch in batches for row in batch), (0,)))
    key = min(key, arity - 1)
    if long:  # past RADIX_ROWS: the columns read back from the sorted keys
        batches = [{tuple(v + 100 * k for v in row): w for k in range(400)
                    for row, w in batch.items()} for batch in batches]
    runs = [as_run(batch, at * (3 if gaps else 1), key) for at, batch in enumerate(batches)]
    runs = [run for run in runs if run is not None]
    if not runs:
        return
    merged = merge_runs(runs, key)
    concatenated = [np.concatenate([r.columns[c] for r in runs]) for c in range(arity)]
    general = make_run(concatenated, np.concatenate([r.iterations for r in runs]),
                       np.concatenate([r.weights for r in runs]), key)
    assert entries(merged) == entries(general)
    assert [c.dtype for c in merged.columns] == [c.dtype for c in general.columns]


def test_an_epochs_appends_merge_chronologically(monkeypatch):
    """A child trace's appends of columnar batches carry their bounds, so the
    merge that reads them (the epoch's part, or the commit) takes the
    chronological path; the trace reads the same as from the rows."""
    from engine import columnar

    taken = []
    plain = columnar._chronological_run
    monkeypatch.setattr(columnar, "_chronological_run",
                        lambda *args: taken.append(1) or plain(*args))
    trace = ColumnarTrace(nested=True, index=("cols", (1,)))
    expected = ColumnarTrace(nested=True, index=("cols", (1,)))
    for i in range(5):
        batch = {(x, (x * 7 + i) % 5): 1 if x % 3 else -1 for x in range(6 * i, 6 * i + 20)}
        trace.append_columns(colbatch.consolidate(*_columns(batch)), i)
        expected.append_rows(batch, i)
    assert taken == [] and len(trace.tail) == 5
    assert list(trace.epoch_cursor().entries()) == list(expected.epoch_cursor().entries())
    assert taken
    trace.commit()
    expected.commit()
    assert list(trace.entries()) == list(expected.entries())


def _columns(batch: dict):
    found = ColBatch.from_rows(batch)
    return found.columns, found.kinds, found.weights


one_column = st.lists(st.integers(-5, 20), max_size=15)


@settings(max_examples=200, deadline=None)
@given(one_column, one_column, st.booleans())
def test_a_short_interleave_sorts_to_what_the_scatters_build(first, second, distinct):
    """Two runs of one column, the second's iterations later: under
    RADIX_ROWS entries they merge by one stable sort; the same as by the
    scatters of longer runs (positions and whether the keys are unique)."""
    from engine.columnar import interleave

    if distinct:
        first, second = sorted(set(first)), sorted(set(second))
    a = make_run([np.array(first, dtype=np.int64)], np.arange(len(first)) % 2,
                 np.ones(len(first), dtype=np.int64), 0)
    b = make_run([np.array(second, dtype=np.int64)], np.full(len(second), 2),
                 np.full(len(second), -1), 0)
    if a is None or b is None:
        return
    a.unique, b.unique = a.is_unique(), b.is_unique()
    bounds = [(-5, 20), (0, 2)]
    saved = colbatch.RADIX_ROWS
    try:
        colbatch.RADIX_ROWS = 1 << 30
        short = interleave(a, b, bounds)
        colbatch.RADIX_ROWS = 0
        long = interleave(a, b, bounds)
    finally:
        colbatch.RADIX_ROWS = saved
    assert entries(short) == entries(long)
    assert short.unique == long.unique
