"""A few keys sought in runs without numpy calls (engine.columnar): ``Run.span``
by ``bisect`` of the keys' memoryview, and through a directory once a large
run was searched often, finds what numpy's ``searchsorted`` finds; a past
cursor's memo of gathered keys answers as a gather of the runs does, and a
change of the past (a commit, an overlay sorted in) is seen through it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch, columnar
from engine.columnar import ColumnarCursor, ColumnarTrace, Run, gather, make_run


def searched(run: Run, key: int):
    """``span`` as numpy's two-sided ``searchsorted`` gives it."""
    lo = int(run.keys.searchsorted(key, "left"))
    hi = int(run.keys.searchsorted(key, "right"))
    return (lo, hi) if hi > lo else None


def sorted_run(keys: list, unique=None) -> Run:
    values = np.array(sorted(keys), dtype="int64")
    n = len(values)
    run = Run([values, np.arange(n, dtype="int64")], np.zeros(n, dtype="int64"),
              np.ones(n, dtype="int64"), 0)
    run.unique = unique
    return run


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=60),
       st.lists(st.integers(-60, 60), max_size=30), st.booleans())
def test_span_by_bisect_and_by_directory_finds_what_searchsorted_finds(keys, sought, bounded):
    for make_directory in (False, True):
        run = sorted_run(keys, unique=len(set(keys)) == len(keys) or None)
        if bounded:
            run.bounds = [(min(keys), max(keys)), (0, len(keys)), (0, 0)]
        run.make_view(directory=make_directory)
        assert (type(run.view) is tuple) == (make_directory
                                            and max(keys) - min(keys) + 1 <= len(keys))
        for key in sought + keys:
            assert run.span(key) == searched(run, key), (make_directory, key)


def test_a_large_run_searched_often_gets_its_directory_and_a_sparse_one_does_not():
    n = columnar.SEEK_DIRECTORY
    dense = sorted_run([k // 3 for k in range(n)])
    sparse = sorted_run([k * 5 for k in range(n)])
    for run in (dense, sparse):
        for at in range(n // columnar.SEEK_SHARE + 1):
            key = int(run.keys[(at * 37) % n])
            assert run.span(key) == searched(run, key)
    assert type(dense.view) is tuple and type(sparse.view) is memoryview
    for key in range(-2, n + 2):
        assert dense.span(key) == searched(dense, key)
        assert sparse.span(key) == searched(sparse, key)


entries = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(0, 3),
                             st.sampled_from([-1, 1, 2])), max_size=40)


def run_of(rows: list) -> Run | None:
    if not rows:
        return None
    k, v, j, w = (np.array(c, dtype="int64") for c in zip(*rows))
    return make_run([k, v], j, w, 0)


@settings(max_examples=150, deadline=None)
@given(st.lists(entries, min_size=1, max_size=4),
       st.lists(st.lists(st.integers(-1, 14), max_size=8), min_size=1, max_size=5),
       st.dictionaries(st.integers(0, 14), st.integers(1, 3), max_size=4))
def test_a_memo_of_gathered_keys_answers_as_the_runs_do(parts, probes, overlaid):
    spine = [run for run in map(run_of, parts) if run is not None]
    overlay = {(k,): [((k, 7), (0, w))] for k, w in overlaid.items()}
    memo: dict = {}
    for sought in probes:
        keys = [(k,) for k in sought]
        plain = ColumnarCursor(spine, True, 0, overlay or None).gather(keys)
        memoised = ColumnarCursor(spine, True, 0, overlay or None, memo).gather(keys)
        assert memoised == plain
        assert memoised == ColumnarCursor(spine, True, 0, overlay or None, memo).gather(keys)
    for key, found in memo.items():  # the memo's lists were not changed by the overlay
        assert list(found) == gather(spine, [key], True).get(key, [])


def test_a_trace_s_memo_sees_its_past_change():
    trace = ColumnarTrace(nested=True, index=("cols", (0,)))
    assert trace.past_memo() is None  # (nothing to remember)
    trace.append_columns(columnar_batch([(k, k + 100) for k in range(2000)]), 0)
    trace.commit()
    assert trace.past_cursor().gather([(5,)]) == {(5,): [((5, 105), (0, 1))]}
    memo = trace.past_memo()
    assert (5,) in memo
    trace.append_columns(columnar_batch([(5, 6)] + [(k, 0) for k in range(3000, 5000)]), 1)
    assert trace.past_cursor().gather([(5,)]) == {(5,): [((5, 105), (0, 1))]}  # the epoch's
    trace.commit()  # the epoch's runs join the past: a new memo
    assert trace.past_memo() is not memo
    assert sorted(trace.past_cursor().gather([(5,)])[(5,)]) == [((5, 6), (1, 1)),
                                                                ((5, 105), (0, 1))]
    trace.append_rows({(5, 7): 1}, 0)  # a small append: the overlay
    trace.commit()
    assert sorted(trace.past_cursor().gather([(5,)])[(5,)]) == [
        ((5, 6), (1, 1)), ((5, 7), (0, 1)), ((5, 105), (0, 1))]
    assert trace.past and not trace.older  # the overlay sorted into the runs:
    assert trace.past_memo() == {}         # the memo starts again
    assert sorted(trace.past_cursor().gather([(5,)])[(5,)]) == [
        ((5, 6), (1, 1)), ((5, 7), (0, 1)), ((5, 105), (0, 1))]
    trace.append_rows({(5, 8): 1}, 0)
    trace.rollback()
    assert trace.memo is None


def columnar_batch(rows: list):
    from engine.colbatch import ColBatch

    return ColBatch.from_rows({row: 1 for row in rows})


@settings(max_examples=150, deadline=None)
@given(st.lists(entries, min_size=1, max_size=4), st.lists(st.integers(-1, 14), max_size=12),
       st.booleans())
def test_a_gather_of_few_keys_finds_what_the_vectorised_gather_finds(parts, sought, nested):
    spine = [run for run in map(run_of, parts) if run is not None]
    keys = [(k,) for k in sought]
    saved = colbatch.GATHER_FEW
    try:
        colbatch.GATHER_FEW = -1
        vectorised = gather(spine, keys, nested)
    finally:
        colbatch.GATHER_FEW = saved
    assert columnar.gather_few(spine, keys, nested) == vectorised
