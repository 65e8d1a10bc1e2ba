"""Traces: histories, compaction, rollback and ordered access."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.time import Timestamp, leq, lub
from engine.trace import Trace, ZSetTrace, encode, history_add, history_items, history_total

rows = st.tuples(st.integers(0, 4), st.integers(0, 3))
batches = st.dictionaries(rows, st.integers(-2, 2).filter(bool), max_size=5)
epochs = st.lists(st.lists(st.tuples(st.integers(0, 3), batches), max_size=3), max_size=6)


@settings(max_examples=150, deadline=None)
@given(epochs, st.booleans())
def test_nested_trace_keeps_every_weight_by_iteration_and_compacts(history, fail_last):
    trace = Trace(nested=True, index=("cols", (0,)))
    expected: dict = {}  # (key, row, iteration) -> weight over committed epochs
    list(trace.keys())   # build the sorted index early: commits must keep it
    for number, epoch in enumerate(history):
        pending = dict(expected)
        for iteration, batch in epoch:
            trace.append_rows(batch, iteration)
            for row, w in batch.items():
                k = ((row[0],), row, iteration)
                pending[k] = pending.get(k, 0) + w
        if fail_last and number == len(history) - 1:
            trace.rollback()
        else:
            expected = {k: w for k, w in pending.items() if w}
        trace.commit()
        got = {(key, value, time[1]): w for key, value, time, w in trace.entries()}
        assert got == expected
        assert list(trace.keys()) == sorted({k for k, _, _ in expected})
        assert trace.size() == len(expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(batches, max_size=6))
def test_root_trace_is_the_consolidated_past(history):
    trace = Trace(nested=False, index=("cols", (1,)))
    total: dict = {}
    for batch in history:
        trace.append_rows(batch)
        for row, w in batch.items():
            total[row] = total.get(row, 0) + w
        trace.commit()
        total = {r: w for r, w in total.items() if w}
        assert {value: w for _, value, _, w in trace.entries()} == total
        for key in {(r[1],) for r in total}:
            assert trace.collection(key) == {r: w for r, w in total.items() if (r[1],) == key}


def test_zset_trace_rollback_and_commit():
    trace = ZSetTrace(nested=True)
    trace.append({(1,): 1}, iteration=2)
    trace.commit()
    trace.append({(1,): -1}, iteration=2)
    trace.rollback()
    trace.commit()
    assert history_items(trace.past[(1,)]) == [(2, 1)]
    trace.append({(1,): -1}, iteration=2)
    trace.commit()
    assert trace.past == {} and trace.size() == 0


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3).filter(bool)), max_size=8))
def test_histories_add_up_per_iteration(additions):
    history = None
    expected: dict = {}
    for iteration, weight in additions:
        history = history_add(history, iteration, weight)
        expected[iteration] = expected.get(iteration, 0) + weight
        expected = {i: w for i, w in expected.items() if w}
        if history is None:
            assert expected == {}
        else:
            assert history_items(history) == sorted(expected.items())
            assert history_total(history) == sum(expected.values())


def test_encoded_histories_hold_negative_and_large_weights():
    for iteration, weight in ((0, -1), (7, -(2 ** 40)), (1_000_000, 3 ** 50)):
        assert history_items(encode(iteration, weight)) == [(iteration, weight)]


def test_product_order():
    assert leq((0, 1), (1, 1)) and not leq((0, 2), (1, 1)) and not leq((1, 1), (0, 2))
    assert lub((0, 2), (1, 1)) == (1, 2)
    assert Timestamp((2, 5)).epoch == 2 and Timestamp((2, 5)).iteration == 5
