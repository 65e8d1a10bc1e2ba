"""A packed merge of many small runs (engine.columnar.merge_packed) packs
consecutive runs of fewer than MERGE_CHUNK entries together as one chunk:
with chunks of a few entries, runs of every size around the chunk's (bounds
known or not, narrowed or not, empty ones) must merge to make_run of their
entries, consumed or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import columnar
from engine.columnar import Run, make_run, merge_packed
from tests.engine.test_merge_packed import ENTRY, entries_of, raw_run


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(ENTRY, max_size=12), min_size=1, max_size=12),
       st.integers(0, 1), st.lists(st.booleans(), min_size=12, max_size=12),
       st.booleans(), st.integers(1, 20))
def test_chunks_of_runs_merge_as_their_entries(parts, key_column, bounds, narrowed, chunk):
    runs = [raw_run(entries, key_column, known, narrowed) if entries
            else Run([np.zeros(0, dtype="int64")] * 2, np.zeros(0, dtype="int64"),
                     np.zeros(0, dtype="int64"), key_column)
            for entries, known in zip(parts, bounds)]
    expected = make_run([np.concatenate([r.columns[c] for r in runs]) for c in range(2)],
                        np.concatenate([r.iterations for r in runs], dtype="int64"),
                        np.concatenate([r.weights for r in runs], dtype="int64"), key_column)
    old = columnar.MERGE_CHUNK
    columnar.MERGE_CHUNK = chunk
    try:
        assert entries_of(merge_packed(list(runs), key_column)) == entries_of(expected)
        given_up = list(runs)
        found = merge_packed(given_up, key_column, consume=True)
    finally:
        columnar.MERGE_CHUNK = old
    assert given_up == [] and entries_of(found) == entries_of(expected)
    if found is not None:
        for column, (low, high) in zip([found.keys, found.columns[1 - key_column],
                                        found.iterations], found.bounds):
            assert low <= int(column.min()) and int(column.max()) <= high


def test_a_chunk_packs_many_runs_with_few_calls(monkeypatch):
    """A thousand runs of three entries in chunks: one concatenation a
    column per chunk (counted through numpy's concatenate)."""
    runs = [Run([np.array([k, k + 1, k + 2]), np.array([1, 2, 3])], np.full(3, k % 100),
                np.ones(3, dtype="int64"), 0) for k in range(1000)]
    calls = []
    real = np.concatenate

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "concatenate", counted)
    found = merge_packed(runs, 0)
    monkeypatch.undo()
    assert len(found) == 3000 and len(calls) == 4   # keys, other column, iterations, weights


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRY, min_size=1, max_size=20), st.integers(0, 1), st.booleans(),
       st.sampled_from(["same", "iteration", "row", "weight", "shorter"]))
def test_a_run_and_its_undoing_merge_to_nothing(entries, key_column, narrowed, change):
    """A run merged with one of the same entries and opposite weights gives
    nothing (engine.columnar.cancels, no sort); one entry different (an
    iteration, a row, a weight) or one missing, the general merge."""
    first = make_run([np.array([e[0] for e in entries]), np.array([e[1] for e in entries])],
                     np.array([e[2] for e in entries]), np.array([e[3] for e in entries]),
                     key_column)
    if first is None:
        return
    columns = [c.copy() for c in first.columns]
    iterations, weights = first.iterations.astype("int64"), -first.weights.astype("int64")
    if change == "iteration":
        iterations[-1] += 1
    elif change == "row":
        columns[1 - key_column][0] += 1
    elif change == "weight":
        weights[0] -= 1
    if narrowed:
        iterations, weights = iterations.astype("int16"), weights.astype("int16")
    second = Run(columns, iterations, weights, key_column)
    if change == "shorter":
        if len(first) < 2:
            return
        second = Run([c[1:] for c in columns], iterations[1:], weights[1:], key_column)
    expected = make_run([np.concatenate([r.columns[c] for r in (first, second)])
                         for c in range(2)],
                        np.concatenate([first.iterations, second.iterations], dtype="int64"),
                        np.concatenate([first.weights, second.weights], dtype="int64"),
                        key_column)
    assert columnar.cancels(first, second) == (change == "same")
    assert entries_of(columnar.merge_runs([first, second], key_column)) == entries_of(expected)
    if change == "same":
        assert expected is None
