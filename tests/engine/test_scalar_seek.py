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
from engine.columnar import ColumnarCursor, ColumnarTrace, PastMemo, Run, gather, make_run


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
    memo = PastMemo()
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
    memo = trace.past_memo()
    trace.append_rows({(5, 7): 1}, 0)  # a small append: the overlay
    trace.commit()
    assert trace.past_memo() is memo and (5,) in memo  # (the past's runs did not change)
    assert sorted(trace.past_cursor().gather([(5,)])[(5,)]) == [
        ((5, 6), (1, 1)), ((5, 7), (0, 1)), ((5, 105), (0, 1))]
    trace.append_rows({(5, 9): 1, (6, 1): 1}, 0)
    trace.commit()
    assert trace.older
    memo = trace.past_memo()
    saved = columnar.OVERLAY_ROWS
    try:
        columnar.OVERLAY_ROWS = 4  # (the epoch's one row stays in its overlay)
        trace.append_rows({(8, 1): 1}, 0)
        trace.commit()
    finally:
        columnar.OVERLAY_ROWS = saved
    assert trace.past and not trace.older  # the overlay sorted into the runs:
    assert trace.past_memo() is memo       # the memo learnt its entries
    assert sorted(memo[(5,)]) == [((5, 6), (1, 1)), ((5, 7), (0, 1)), ((5, 9), (0, 1)),
                                  ((5, 105), (0, 1))]
    assert sorted(trace.past_cursor().gather([(5,)])[(5,)]) == sorted(memo[(5,)])
    assert sorted(trace.past_cursor().gather([(8,)])[(8,)]) == [((8, 1), (0, 1)),
                                                                ((8, 108), (0, 1))]
    saved = columnar.MEMO_KEPT
    try:
        columnar.MEMO_KEPT = 4  # (the memo lists 5 entries: not kept)
        trace.append_rows({(9, 1): 1}, 0)
        trace.commit()
        assert trace.memo is None
    finally:
        columnar.MEMO_KEPT = saved
    trace.append_rows({(5, 8): 1}, 0)
    trace.rollback()
    assert trace.memo is None


#: An epoch of the trace below: (rows appended at iterations, as a run or not;
#: the keys sought after each append, through the memo and without it).
appends = st.lists(st.tuples(st.dictionaries(st.tuples(st.integers(0, 6), st.integers(0, 3)),
                                             st.sampled_from([-1, 1, 2]), max_size=12),
                             st.integers(0, 2), st.booleans(),
                             st.lists(st.integers(-1, 7), max_size=5)), max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(appends, min_size=1, max_size=6), st.integers(1, 6), st.booleans())
def test_a_memo_kept_over_epochs_answers_as_the_runs_do(epochs, overlay_rows, nested):
    """The past memo carried from epoch to epoch (small appends: the overlay;
    the overlay sorted into the runs; an epoch's runs joining the past; the
    floor that merges small runs as they come lowered so that the past holds
    several) answers every gather as the entries appended do, and as the
    past's runs and overlay read afresh do."""
    saved = columnar.OVERLAY_ROWS, columnar.PAST_FLOOR
    try:
        columnar.OVERLAY_ROWS, columnar.PAST_FLOOR = overlay_rows, 0
        trace = ColumnarTrace(nested=nested, index=("cols", (0,)))
        committed: dict = {}  # the past's entries, as appended: key -> [(value, part)]
        for epoch in epochs:
            appended = []
            for rows, iteration, as_run, sought in epoch:
                j = iteration if nested else 0
                if rows and as_run:
                    trace.append_columns(columnar_batch(rows, rows), j)
                elif rows:
                    trace.append_rows(rows, j)
                appended += [(row, (j, w) if nested else w) for row, w in rows.items()]
                keys = [(k,) for k in sought]
                fresh = ColumnarCursor(trace._past, nested, trace.epoch - 1, trace.older)
                memoised = trace.past_cursor().gather(keys)
                want = summed({k: committed[k] for k in keys if k in committed}, nested)
                assert summed(memoised, nested) == want
                assert summed(fresh.gather(keys), nested) == want
            trace.commit()
            for row, part in appended:
                committed.setdefault((row[0],), []).append((row, part))
        memo = trace.memo
        if memo is not None and trace.kept_memo() is memo:
            assert memo[1].entries == sum(map(len, memo[1].values()))
            for key, found in memo[1].items():
                assert summed({key: found}, nested) == summed(
                    gather(trace._past, [key], nested), nested)
    finally:
        columnar.OVERLAY_ROWS, columnar.PAST_FLOOR = saved


def summed(found: dict, nested: bool) -> dict:
    """Gathered entries as key -> {(value, iteration): weight}, zeros dropped
    (a merge of runs adds up what a memo may list twice)."""
    out: dict = {}
    for key, entries in found.items():
        total: dict = {}
        for value, part in entries:
            j, w = part if nested else (0, part)
            total[(value, j)] = total.get((value, j), 0) + w
        total = {at: w for at, w in total.items() if w}
        if total:
            out[key] = total
    return out


def columnar_batch(rows: list, weights: dict | None = None):
    from engine.colbatch import ColBatch

    return ColBatch.from_rows({row: (weights or {}).get(row, 1) for row in rows})


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


values = st.one_of(st.integers(-(1 << 64), 1 << 64), st.booleans(), st.floats(allow_nan=False),
                   st.sampled_from([-(1 << 63), (1 << 63) - 1, 1 << 63, "a", None]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.lists(st.lists(values, min_size=0, max_size=5).map(tuple),
                                   max_size=6, unique=True))
def test_a_batch_fits_the_columns_as_its_values_say(arity, rows):
    """``columnar.fitting`` (written out per arity: a small append to a trace
    in runs checks its rows so) says what the rows' lengths, types and
    ranges say: ``arity`` ints (or bools) within ``int64``."""
    want = all(len(row) == arity and all(type(v) in (int, bool) and -(1 << 63) <= v < (1 << 63)
                                         for v in row) for row in rows)
    assert columnar.fitting(dict.fromkeys(rows, 1), arity) == want
