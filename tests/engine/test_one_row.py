"""The Distinct Trace's one-row formula (``one_row`` and ``fresh_row`` of
``engine.operators.distinct.compile_distinct_trace``, which the generated
loop calls for a batch of one row) against ``step`` and ``no_past`` on the
same rows: the same deltas, the same trace after, the same rows scheduled,
the same ``fresh``; on dict and on sealed traces, with and without a past.
"""

from __future__ import annotations

import copy
import heapq
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.operators.columns import Packing
from engine.operators.distinct import compile_distinct_trace
from engine.operators.sealed import SealedTrace
from engine.trace import ZSetTrace

rows = st.tuples(st.integers(0, 12))
weights = st.integers(-2, 2).filter(bool)
#: (row, weight, iteration), the iterations of an epoch in order
entries = st.lists(st.tuples(rows, weights, st.integers(0, 3)), max_size=30).map(
    lambda found: [(row, w, i) for (row, w, i), _ in sorted(
        zip(found, range(len(found))), key=lambda pair: (pair[0][2], pair[1]))])


def made(past_entries, seal: int) -> ZSetTrace:
    """A child's Distinct trace holding ``past_entries`` as its finished
    epoch (sealed into runs from the first ``seal`` of them, if any)."""
    trace = ZSetTrace(nested=True)
    for row, w, i in past_entries:
        trace.append({row: w}, i)
    if seal:
        trace = SealedTrace.adopt(trace, Packing(1))
        assert trace.seal_cur()
    trace.commit()
    return trace


def twins(trace, epoch_entries, seal_at: int | None):
    """Each entry through ``step``/``no_past`` on one copy of ``trace`` and
    the one-row formula on another; asserts they agree at every entry."""
    traces = [trace, copy.deepcopy(trace)]
    nodes = [SimpleNamespace(fresh=None), SimpleNamespace(fresh=None)]
    schedules = [({}, []), ({}, [])]
    ones = None
    for k, (row, w, i) in enumerate(epoch_entries):
        if k == seal_at and isinstance(trace, SealedTrace):
            for each in traces:
                each.seal_cur()
            ones = None  # (the cursors' parts changed: made anew, as ready is)
        functions = compile_distinct_trace(traces[0].past_cursor().source,
                                           traces[0].epoch_cursor().source)
        past, cur = traces[0].past_cursor(), traces[0].epoch_cursor()
        if past:
            out = functions["step"]({row: w}, {row: w}, past, cur, i, *schedules[0])
            nodes[0].fresh = False
        else:
            out, nodes[0].fresh = functions["no_past"]({row: w}, cur, i)
        if ones is None:
            past, cur = traces[1].past_cursor(), traces[1].epoch_cursor()
            ones = (functions["one_row"](past, cur, *schedules[1], nodes[1]) if past
                    else functions["fresh_row"](cur, nodes[1]))
        delta = ones(row, w, i)
        assert ({row: delta} if delta else {}) == out, (row, w, i)
        assert nodes[0].fresh == nodes[1].fresh
        assert traces[0].cur == traces[1].cur
        assert schedules[0][0] == schedules[1][0]
        assert sorted(schedules[0][1]) == sorted(schedules[1][1])


@settings(max_examples=150, deadline=None)
@given(entries, entries, st.booleans(), st.integers(0, 30))
def test_one_row_gives_what_step_and_no_past_give(past_entries, epoch_entries, seal, seal_at):
    twins(made(past_entries, seal), epoch_entries, seal_at)


def test_a_row_with_a_later_past_entry_is_scheduled_and_a_new_retraction_gives_none():
    # (the paths the hypothesis twin must reach, written out once)
    twins(made([((1,), 1, 3)], 0), [((1,), 1, 1), ((2,), -1, 1), ((2,), 1, 2)], None)
    twins(made([], 0), [((4,), -1, 0), ((4,), 2, 1), ((4,), -2, 2)], None)
    heap: list = []
    trace = made([((1,), 1, 3)], 0)
    functions = compile_distinct_trace(trace.past_cursor().source,
                                       trace.epoch_cursor().source)
    scheduled: dict = {}
    one = functions["one_row"](trace.past_cursor(), trace.epoch_cursor(), scheduled, heap,
                               SimpleNamespace(fresh=None))
    assert one((1,), 1, 1) == 1 and scheduled == {3: {(1,)}} and heapq.heappop(heap) == 3


one_column = st.one_of(
    st.integers(-(1 << 64), 1 << 64), st.booleans(), st.floats(allow_nan=False),
    st.text(max_size=2))


@settings(max_examples=200, deadline=None)
@given(st.lists(one_column, max_size=2).map(tuple))
def test_the_inlined_one_column_check_is_what_packs(row):
    """The generated loop's in-line test (``packs_one``) against what
    ``Packing(1)`` packs, a column of int64 (what the runs can hold): a
    tuple of one int within int64, no bool, float or other arity."""
    import numpy as np

    from engine.operators.packedsmall import packs_one

    fits = eval(packs_one("row"), {"row": row})
    expected = (len(row) == 1 and type(row[0]) is int and -(1 << 63) <= row[0] < (1 << 63))
    assert fits == expected
    if fits:  # then Packing(1) takes it and gives it back
        packing = Packing(1)
        keys = packing.pack([np.array([row[0]], dtype=np.int64)])
        assert [tuple(int(c[0]) for c in packing.unpack(keys))] == [row]
