"""Bulk conversions between dict traces and runs (engine.tracearrays): a dict
trace into runs and back holds the same entries, in the same encoding, at random
contents (several epochs and iterations, iterations past the packed range,
weights past the packed code, numbers at the ends of int64, runs in narrow
types); what the columns cannot hold is refused and changes nothing."""

from __future__ import annotations

import copy

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.colbatch import columns_from
from engine.columnar import ColumnarTrace, Unfit
from engine.trace import MASK, Trace, ZSetTrace
from engine.tracearrays import entries_of, groups_of, histories_of

LOW, HIGH = -(1 << 63), (1 << 63) - 1
numbers = st.one_of(st.integers(0, 5), st.sampled_from([LOW, HIGH, 1000, -7]))
weights = st.one_of(st.integers(-2, 2).filter(bool),  # (runs add in int64: sums stay in it)
                    st.sampled_from([1 << 41, -(1 << 43), 1 << 50]))
iterations = st.one_of(st.integers(0, 3), st.sampled_from([MASK, MASK + 1, 1 << 40]))
batches = st.dictionaries(st.tuples(numbers, numbers), weights, max_size=6)
histories = st.lists(st.lists(st.tuples(iterations, batches), max_size=3), max_size=4)


def consolidated(entries) -> dict:
    """(key, value, time) -> weight (a root's staged batches are listed apart by
    the dict trace, summed by the runs)."""
    out: dict = {}
    for key, value, time, weight in entries:
        out[(key, value, time)] = out.get((key, value, time), 0) + weight
    return {at: w for at, w in out.items() if w}


def build(nested: bool, epochs, key: int = 0, stage_last: bool = True) -> Trace:
    """A dict trace of the epochs (all committed but the last: a child's open
    epoch, a root's staged batch)."""
    trace = Trace(nested=nested, index=("cols", (key,)))
    for number, epoch in enumerate(epochs):
        for iteration, batch in epoch:
            trace.append_rows(batch, iteration if nested else 0)
        if number < len(epochs) - 1 or not stage_last:
            trace.commit()
    return trace


@settings(max_examples=200, deadline=None)
@given(st.booleans(), histories, st.integers(0, 1), st.booleans())
@example(True, [], 0, False)                                     # empty
@example(True, [[(0, {(1, 2): 1})]], 0, True)                     # one entry, open epoch
@example(False, [[(0, {(1, 2): 1})]], 1, False)                   # one entry, root past
@example(True, [[(MASK + 1, {(1, 2): 1})], [(2, {(1, 2): 3})]], 0, True)  # dict histories
def test_dicts_to_runs_and_back_keep_every_entry_and_the_encoding(nested, epochs, key,
                                                                   narrow):
    trace = build(nested, epochs, key)
    before = copy.deepcopy((trace.past, trace.cur))
    with columns_from(0 if narrow else None):  # NARROW_ROWS 0: every run in narrow types
        runs = ColumnarTrace.from_trace(trace)
        assert (trace.past, trace.cur) == before  # read only
        assert consolidated(runs.entries()) == consolidated(trace.entries())
        back = runs.to_trace()
    assert (back.past, back.cur) == (trace.past, trace.cur)  # same histories, same keys
    assert consolidated(back.entries()) == consolidated(trace.entries())
    assert back.epoch == trace.epoch
    runs.commit()
    trace.commit()
    assert consolidated(runs.to_trace().entries()) == consolidated(trace.entries())


@pytest.mark.parametrize("bad", [(1, "a"), (1, 2.5), (1, 1 << 63), (1, LOW - 1)])
@pytest.mark.parametrize("nested", [True, False])
def test_a_row_the_columns_cannot_hold_is_refused_and_changes_nothing(bad, nested):
    trace = build(nested, [[(0, {(1, 2): 1, (3, 4): 2})], [(1, {bad: 1, (5, 6): 1})]],
                  stage_last=False)
    before = copy.deepcopy((trace.past, trace.cur))
    with pytest.raises(Unfit):
        ColumnarTrace.from_trace(trace)
    assert (trace.past, trace.cur) == before


@pytest.mark.parametrize("weight", [1 << 63, -(1 << 63) - 1])
def test_a_weight_past_int64_is_refused(weight):
    assert entries_of([{(1, 2): weight}], 2, nested=False) is None
    assert entries_of([{(1, 2): {0: weight, 3: 1}}], 2, nested=True) is None
    with pytest.raises(Unfit):
        ColumnarTrace.from_trace(build(True, [[(0, {(1, 2): weight})], []]))


def test_rows_of_another_arity_are_refused():
    assert entries_of([{(1, 2, 3): 1}], 2, nested=False) is None
    assert entries_of([{(1,): 1}], 2, nested=False) is None


@settings(max_examples=100, deadline=None)
@given(histories)
def test_a_row_traces_histories_read_and_rebuilt_in_bulk(epochs):
    """A Distinct's ZSetTrace part: row -> history, the same after a round trip."""
    rows = ZSetTrace(nested=True)
    for epoch in epochs:
        for iteration, batch in epoch:
            rows.append(batch, iteration)
        rows.commit()
    found = entries_of([rows.past], 2, nested=True)
    assert found is not None
    columns, at, w = found
    assert sorted(zip(*(c.tolist() for c in columns), at.tolist(), w.tolist())) == sorted(
        (*row, j, weight) for row, history in rows.past.items()
        for j, weight in (history.items() if type(history) is dict
                          else [(history & MASK, history >> 20)]))
    from engine.columnar import make_run

    run = make_run(columns, at, w, 0)
    rebuilt = dict(zip(*histories_of(run.columns, run.iterations, run.weights, True))) \
        if run is not None else {}
    assert rebuilt == rows.past


def test_back_in_dicts_a_key_group_per_key_and_one_object_per_number():
    import numpy as np

    from engine.columnar import make_run

    run = make_run([np.array([7000, 7000, 8000]), np.array([9000, 9001, 9000])],
                   np.array([2, 2, 2]), np.array([1, 1, 1]), 0)
    groups = groups_of(run.columns, run.iterations, run.weights, 0, nested=True)
    assert sorted(groups) == [(7000,), (8000,)]
    (first,) = [row for row in groups[(8000,)]]
    assert first[1] is next(iter(groups[(7000,)]))[1]  # the two 9000s: one object
