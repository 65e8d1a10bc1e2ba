"""The epoch that loads an empty past (engine.operators.columns.load_runs):
its runs go into the past merged into one, the sum of their entries; a
later epoch's runs go in by push_past's rules, the past's run kept apart
(random runs against the sum of what was committed)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.columnar import PAST_LARGE, Run
from engine.operators.columns import PackedTrace, load_runs
from tests.engine.test_past_spine import entries_of, large, run_of

runs = st.dictionaries(st.tuples(st.integers(0, 40), st.integers(0, 3)),
                       st.integers(-2, 2).filter(bool), max_size=12)


def summed(*epochs: list) -> dict:
    """``(key, iteration) -> weight`` over the entries of the epochs' runs."""
    total: Counter = Counter()
    for spine in epochs:
        for entry, weight in entries_of(spine).items():
            total[entry] += weight
    return {entry: w for entry, w in total.items() if w}


@settings(max_examples=200, deadline=None)
@given(st.lists(runs, max_size=5))
def test_the_load_leaves_one_run_holding_its_sum(epoch):
    """An epoch's runs (as its spine left them: a large one first, then
    small ones, which push_past would leave apart) committed into an empty
    past: one run, holding their sum."""
    trace = PackedTrace()
    trace.cur = [large(1, shift=1000)] + [r for r in map(run_of, epoch) if r is not None]
    expected = summed(trace.cur)
    trace.commit()
    assert len(trace.past) == 1
    assert entries_of(trace.past) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(runs, min_size=2, max_size=4).filter(lambda e: sum(map(len, e)) > 1))
def test_a_later_epoch_is_not_merged_into_the_loaded_past(epoch):
    """After the load, a large epoch's run (a chain's retraction) goes beside
    the past's run, which stays as it was (push_past's rules, not a merge
    of everything); the entries are the sum of both epochs."""
    trace = PackedTrace()
    trace.cur = [r for r in map(run_of, epoch) if r is not None]
    loaded = trace.cur
    trace.commit()
    before = list(trace.past)
    n = PAST_LARGE
    later = [Run([np.arange(n, dtype=np.int64) + 1000], np.zeros(n, dtype=np.int64),
                 np.ones(n, dtype=np.int64), 0)]
    trace.cur = list(later)
    trace.commit()
    assert all(any(run is kept for kept in trace.past) for run in before)
    assert entries_of(trace.past) == summed(loaded, later)


def test_one_run_is_left_as_it_is():
    """A load of one run needs no merge: the run itself goes in."""
    run = run_of({(1, 0): 1, (2, 1): -1})
    assert load_runs([run])[0] is run
