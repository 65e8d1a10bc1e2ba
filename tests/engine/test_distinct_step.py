"""The vectorised Distinct Trace step on packed rows (engine.operators.columns.
distinct_step) takes shortcuts: a batch in order is not sorted again, the past's
matches are assigned rather than added (np.add.at) when each row matches once,
and the earlier-iteration weight ``w1`` is not made when no match is earlier.
Each shortcut must give what the general path gives, on random histories at
product-order times (the general path is checked against the naive Distinct by
tests/engine/test_twins.py)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.operators import columns
from engine.operators.columns import PackedTrace, distinct_step

EPOCHS, ITERATIONS = 4, 5
batches = st.dictionaries(st.integers(0, 6), st.integers(-2, 2).filter(bool), max_size=5)
histories = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                      st.integers(0, ITERATIONS - 1)), batches, max_size=14)


def run(history: dict, shuffle: bool) -> list:
    """Every step's output (row -> weight) over the epochs and the iterations
    until nothing is due; ``shuffle``: each batch's rows out of order."""
    trace = PackedTrace()
    outputs = []
    rng = random.Random(1)
    for e in range(EPOCHS):
        i = 0
        while i < ITERATIONS or trace.scheduled:
            batch = history.get((e, i), {})
            rows = sorted(batch)
            if shuffle:
                rng.shuffle(rows)
            keys = np.array(rows, dtype=np.int64)
            weights = np.array([batch[r] for r in rows], dtype=np.int64)
            parts = trace.scheduled.pop(i, None)
            due = np.concatenate(parts) if parts else None
            if len(keys) or due is not None:
                out, delta = distinct_step(trace, keys, weights, i, due, lambda j: None)
                outputs.append((e, i, dict(zip(out.tolist(), delta.tolist()))))
            i += 1
        trace.commit()
    return outputs


@settings(max_examples=150, deadline=None)
@given(histories)
def test_batches_out_of_order_give_what_sorted_ones_give(history):
    assert run(history, shuffle=True) == run(history, shuffle=False)


@settings(max_examples=150, deadline=None)
@given(histories)
def test_matches_assigned_once_give_what_added_ones_give(history):
    plain = columns.gather_once

    def never_unique(spine, sought, *args):
        found = plain(spine, sought, *args)
        return None if found is None else (*found[:3], False)

    fast = run(history, shuffle=False)
    columns.gather_once = never_unique
    try:
        general = run(history, shuffle=False)
    finally:
        columns.gather_once = plain
    assert fast == general


def test_the_shortcuts_are_taken():
    """A row of an earlier epoch at the same iteration (w1 = 0, one match:
    assigned) and at an earlier one (w1 made)."""
    trace = PackedTrace()
    one = np.array([1], dtype=np.int64)
    distinct_step(trace, np.array([1, 2], dtype=np.int64), np.array([1, 1]), 0, None,
                  lambda j: None)
    distinct_step(trace, np.array([3], dtype=np.int64), one, 1, None, lambda j: None)
    trace.commit()
    found = columns.gather_once(trace.past, np.array([1, 3], dtype=np.int64))
    assert found[3] is True and found[0].tolist() == [0, 1]
    rows, delta = distinct_step(trace, np.array([3], dtype=np.int64), -one, 1, None,
                                lambda j: None)
    assert dict(zip(rows.tolist(), delta.tolist())) == {3: -1}
    rows, delta = distinct_step(trace, np.array([1], dtype=np.int64), -one, 2, None,
                                lambda j: None)
    assert dict(zip(rows.tolist(), delta.tolist())) == {1: -1}
