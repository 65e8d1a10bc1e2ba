"""A run whose keys repeat a few times at most (a Distinct's past: a row at a
few iterations) is probed by one ``searchsorted`` and a window of entries
after each key's first (``Run.window``, ``Run.find_window``); what it finds,
and what ``gather`` gives over a spine of such runs, equals the general
two-sided probe's."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.columnar import WINDOW, Run, make_run
from engine.operators.columns import gather, probe

entries = st.lists(st.tuples(st.integers(-4, 12), st.integers(0, 9), st.integers(-2, 2)),
                   max_size=40)


def run_of(found: list) -> Run | None:
    """A run of ``(key, iteration, weight)`` entries (equal ones summed)."""
    if not found:
        return None
    keys, iterations, weights = (np.array(c, dtype="int64") for c in zip(*found))
    return make_run([keys], iterations, weights, 0)


def spread(run: Run) -> int:
    keys = run.keys.tolist()
    return max(keys.count(k) for k in keys)


@settings(max_examples=300, deadline=None)
@given(entries, st.lists(st.integers(-5, 13), max_size=12))
def test_the_window_finds_every_entry_of_each_key(found, sought):
    run = run_of(found)
    if run is None:
        return
    width = run.window()
    most = spread(run)
    assert (width == 0) == (most > WINDOW)
    assert width == 0 or most <= width
    if width == 0:
        return
    wanted = np.array(sorted(sought), dtype="int64")
    general = probe(wanted, Run([run.keys], run.iterations, run.weights, 0, unique=False))
    expected = [] if general is None else sorted(zip(*(x.tolist() for x in general)))
    assert sorted(zip(*(x.tolist() for x in run.find_window(wanted, width)))) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, max_size=4), st.lists(st.integers(-5, 13), max_size=12, unique=True))
def test_gather_over_a_spine_gives_each_sought_rows_entries(spine, sought):
    runs = [run for run in map(run_of, spine) if run is not None]
    wanted = np.array(sorted(sought), dtype="int64")
    found = gather(runs, wanted)
    got = [] if found is None else sorted(zip(*(x.tolist() for x in found)))
    expected = sorted((at, j, w) for run in runs
                      for at, key in enumerate(wanted.tolist())
                      for k, j, w in zip(run.keys.tolist(), run.iterations.tolist(),
                                         run.weights.tolist()) if k == key)
    assert got == expected
