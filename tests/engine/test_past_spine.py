"""A past's spine of runs at commit (engine.columnar.push_past, push_run):
an epoch's large run goes in before the small runs at the spine's end, and
a merge that leaves nothing stops the merging, so that a retraction's run
and the reinsertion's that undoes it meet alone and cancel, with no sort of
the past. Whatever the order and the merges, the spine holds the sum of the
runs pushed (random runs against that sum)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import columnar
from engine.columnar import PAST_FLOOR, PAST_LARGE, Run, make_run, push_past, push_run


def run_of(entries: dict) -> Run | None:
    """A run of ``(key, iteration) -> weight``."""
    items = sorted(entries.items())
    return make_run([np.array([k for (k, _), _ in items], dtype=np.int64)],
                    np.array([j for (_, j), _ in items], dtype=np.int64),
                    np.array([w for _, w in items], dtype=np.int64), 0)


def entries_of(spine: list) -> dict:
    """``(key, iteration) -> weight`` over the runs, zeros left out."""
    total: Counter = Counter()
    for run in spine:
        for k, j, w in zip(run.keys.tolist(), run.iterations.tolist(), run.weights.tolist()):
            total[k, j] += w
    return {entry: w for entry, w in total.items() if w}


def large(weight: int, shift: int = 0) -> Run:
    n = PAST_LARGE
    return Run([np.arange(n, dtype=np.int64) * 2 + shift], np.zeros(n, dtype=np.int64),
               np.full(n, weight, dtype=np.int64), 0)


def test_an_undone_epoch_cancels_beside_a_small_run(monkeypatch):
    """Past: a large run and a small one (a flushed overlay's). A retraction
    epoch's large run goes before the small one; the reinsertion's cancels
    it: the past is as it was, its large run never merged (no sort)."""
    sorted_entries = []
    real = columnar.merge_packed

    def counting(runs, *args, **kwargs):
        sorted_entries.append(sum(map(len, runs)))
        return real(runs, *args, **kwargs)

    monkeypatch.setattr(columnar, "merge_packed", counting)
    base = Run([np.arange(4 * PAST_LARGE, dtype=np.int64) * 2],
               np.zeros(4 * PAST_LARGE, dtype=np.int64),
               np.ones(4 * PAST_LARGE, dtype=np.int64), 0)
    small = run_of({(1, 5): 1, (3, 6): 1})
    spine = [base, small]
    retracted = large(-1)
    push_past(spine, retracted, 0)
    assert spine == [base, retracted, small]
    push_past(spine, large(1), 0)
    assert spine == [base, small]
    assert sorted_entries == []


def test_a_cancelling_push_stops_the_merges():
    """[large, half of it, small] and the small run's opposite: the two small
    ones cancel; the large runs stay apart (FACTOR would merge them)."""
    first, second = large(1), Run([np.arange(PAST_LARGE // 2, dtype=np.int64) * 2 + 1],
                                  np.zeros(PAST_LARGE // 2, dtype=np.int64),
                                  np.ones(PAST_LARGE // 2, dtype=np.int64), 0)
    small = run_of({(7, 1): 1})
    spine = [first, second, small]
    push_run(spine, run_of({(7, 1): -1}), 0, PAST_FLOOR)
    assert spine == [first, second]


runs = st.dictionaries(st.tuples(st.integers(0, 40), st.integers(0, 3)),
                       st.integers(-2, 2).filter(bool), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(runs, st.booleans(), st.booleans()), max_size=10))
def test_the_spine_holds_the_sum_of_what_was_pushed(pushes):
    """Runs pushed as epochs' (``push_past``, some made large by a block of
    far keys, some undone by the next push) or as overlays'
    (``push_run`` by the floor): the spine's entries are their sum."""
    spine: list = []
    total: Counter = Counter()
    for entries, epoch, undo in pushes:
        run = run_of(entries)
        if epoch and run is not None:
            extra = large(1, shift=1000)
            run = columnar.merge_runs([run, extra], 0)
        for step in ([run, None] if not undo or run is None
                     else [run, Run(run.columns, run.iterations, -run.weights.astype(np.int64),
                                    0)]):
            if step is None:
                continue
            for k, j, w in zip(step.keys.tolist(), step.iterations.tolist(),
                               step.weights.tolist()):
                total[k, j] += w
            if epoch:
                push_past(spine, step, 0)
            else:
                push_run(spine, step, 0, PAST_FLOOR)
    assert entries_of(spine) == {entry: w for entry, w in total.items() if w}


@settings(max_examples=200, deadline=None)
@given(st.lists(runs, min_size=1, max_size=3), st.sets(st.integers(-5, 45), min_size=1))
def test_runs_outside_the_sought_keys_are_not_probed(spine, sought):
    """gather_once with the sought keys' least and greatest (Distinct
    Trace's step: its rows are sorted) skips the runs whose keys lie
    outside (the small last run of a past) and finds the same entries."""
    from engine.operators import columns

    spine = [r for r in map(run_of, spine) if r is not None]
    keys = np.array(sorted(sought), dtype=np.int64)
    probed = []
    real = columns.probe

    def counting(sought, run):
        probed.append(run)
        return real(sought, run)

    def found(span):
        out = columns.gather_once(spine, keys, span=span)
        return [] if out is None else sorted(zip(*(x.tolist() for x in out[:3])))

    columns.probe = counting
    try:
        everywhere = found(None)
        probed.clear()
        assert found((int(keys[0]), int(keys[-1]))) == everywhere
    finally:
        columns.probe = real
    outside = [r for r in spine if r.bounds[0][1] < keys[0] or r.bounds[0][0] > keys[-1]]
    assert not any(any(p is r for r in outside) for p in probed)
