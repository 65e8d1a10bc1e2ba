"""A merge of runs packed run by run into one key (engine.columnar.merge_packed)
equals :func:`~engine.columnar.make_run` of their entries concatenated: the
same entries in the same order, equal ones summed, zeros dropped, the
iterations and weights narrowed as there (runs of several columns, any key
column, narrowed iterations and weights, bounds known or not); consuming
the list of runs changes only the list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.columnar import Run, make_run, merge_packed, merge_runs

ENTRY = st.tuples(st.integers(-4, 9), st.integers(0, 1 << 20), st.integers(0, 3),
                  st.sampled_from([-1, 1, 2]))


def raw_run(entries: list, key_column: int, bounds: bool, narrowed: bool) -> Run:
    """An unsorted run of ``(x, y, iteration, weight)`` entries, as a child
    circuit's appends wait in a trace's tail (bounds given or not)."""
    x, y, at, w = (np.array(c, dtype="int64") for c in zip(*entries))
    if narrowed:
        at, w = at.astype("int8"), w.astype("int8")
    columns = [x, y]
    found = None
    if bounds:
        ordered = [columns[key_column], columns[1 - key_column], at]
        found = [(int(c.min()), int(c.max())) for c in ordered]
    return Run(columns, at, w, key_column, found)


def entries_of(run: Run | None) -> list:
    if run is None:
        return []
    return list(zip(*(c.tolist() for c in run.columns), run.iterations.tolist(),
                    run.weights.tolist()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(ENTRY, min_size=1, max_size=30), min_size=1, max_size=4),
       st.integers(0, 1), st.booleans(), st.booleans(), st.booleans())
def test_a_packed_merge_is_make_run_of_the_entries(parts, key_column, bounds, narrowed, large):
    """``large``: as a large merge is, the key sorted by value in place
    (colbatch.sorted_with's ``own``) and the iterations read back narrow."""
    runs = [raw_run(entries, key_column, bounds, narrowed) for entries in parts]
    saved = colbatch.VALUE_SORT_ROWS, colbatch.NARROW_ROWS
    if large:
        colbatch.VALUE_SORT_ROWS = colbatch.NARROW_ROWS = 0
    try:
        found = merge_packed(runs, key_column)
        given_up = list(runs)  # consumed: the same merge, the list emptied
        consumed = merge_packed(given_up, key_column, consume=True)
    finally:
        colbatch.VALUE_SORT_ROWS, colbatch.NARROW_ROWS = saved
    expected = make_run([np.concatenate([r.columns[c] for r in runs]) for c in range(2)],
                        np.concatenate([r.iterations for r in runs], dtype="int64"),
                        np.concatenate([r.weights for r in runs], dtype="int64"), key_column)
    assert entries_of(found) == entries_of(expected)
    assert entries_of(consumed) == entries_of(expected)
    assert given_up == []
    if found is not None:
        assert [c.dtype for c in found.columns] == [np.int64] * 2
        assert found.iterations.dtype == (np.int8 if large else np.int64)
    if found is not None:
        assert found.keys is found.columns[key_column]
        for column, (low, high) in zip([found.keys, found.columns[1 - key_column],
                                        found.iterations], found.bounds):
            assert low <= int(column.min()) and int(column.max()) <= high


def concatenated(runs: list, key_column: int) -> Run | None:
    return make_run([np.concatenate([r.columns[c] for r in runs]) for c in range(2)],
                    np.concatenate([r.iterations for r in runs], dtype="int64"),
                    np.concatenate([r.weights for r in runs], dtype="int64"), key_column)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 1), st.booleans(), st.booleans())
def test_entries_past_63_bits_merge_as_they_are_consumed_or_not(key_column, bounds, narrowed):
    """Rows whose columns spread over more than 63 bits together (node ids
    2^40 apart) do not pack: the merge makes their run as make_run does,
    also when it consumed the list (a child's appends at its commit: the
    entries were lost and the merge failed)."""
    many = [(k << 40, -(k << 41), k % 3, 1) for k in range(colbatch.RADIX_ROWS)]
    parts = [many[1::2], many[::2], many[:7]]
    expected = concatenated([raw_run(p, key_column, bounds, narrowed) for p in parts],
                            key_column)
    for consume in (False, True):
        runs = [raw_run(p, key_column, bounds, narrowed) for p in parts]
        assert entries_of(merge_packed(list(runs), key_column, consume)) == entries_of(expected)
        taken = list(runs)
        assert entries_of(merge_runs(taken, key_column, consume)) == entries_of(expected)
        assert taken == [] if consume else taken == runs
    many = [(k % 7, k, k % 3, 1) for k in range(colbatch.RADIX_ROWS)]
    runs = [raw_run(many, 0, False, False), raw_run(many[:5], 0, False, True)]
    assert entries_of(merge_runs(runs, 0)) == entries_of(concatenated(runs, 0))  # (packed)
