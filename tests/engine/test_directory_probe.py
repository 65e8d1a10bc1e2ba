"""A run whose keys span few values (a closure's edges by source) is probed
through a directory of each key value's first entry
(engine.operators.columns.directory_of, probe_directory); the pairs it finds
equal the binary-search probe's (engine.operators.columns.probe), for sought
keys inside, around and far outside the run's span, and a join through it
equals the join without it."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.colbatch import ColBatch
from engine.columnar import Run, make_run
from engine.operators import columns
from engine.operators.columns import directory_of, finish, join_part, probe, probe_directory

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
keys = st.lists(st.integers(-6, 20), min_size=1, max_size=40)
sought = st.lists(st.one_of(st.integers(-10, 25), st.sampled_from([INT64_MIN, INT64_MAX])),
                  max_size=30)


def pairs(found) -> list:
    return [] if found is None else sorted(zip(*(x.tolist() for x in found)))


@settings(max_examples=300, deadline=None)
@given(keys, sought)
@example([5], [INT64_MIN, 5, INT64_MAX, 4, 6])
def test_the_directory_finds_what_the_search_finds(run_keys, wanted):
    run_keys.sort()
    ones = np.ones(len(run_keys), dtype=np.int64)
    run = Run([np.array(run_keys, dtype=np.int64)], ones - 1, ones, 0)
    wanted = np.array(wanted, dtype=np.int64)
    directory = directory_of(run, 1 << 20)
    span = run_keys[-1] - run_keys[0] + 1
    if span > columns.DIRECTORY_SPAN * len(run_keys):
        assert directory is None
        return
    assert pairs(probe_directory(wanted.copy(), directory)) == pairs(probe(wanted, run))


USED: list = []  # whether each join with a directory allowed took one


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 5)), min_size=1, max_size=30),
       st.dictionaries(st.tuples(st.integers(-2, 10), st.integers(0, 3)),
                       st.integers(-2, 2).filter(bool), min_size=1, max_size=20))
def test_a_join_through_the_directory_equals_one_without(edges, delta):
    rows = np.array(edges, dtype=np.int64)
    ones = np.ones(len(rows), dtype=np.int64)
    batch = ColBatch.from_rows(delta)
    projection = ((0, 0), (1, 1))   # path(x, y), edge(y, z) -> (x, z), on y

    def joined(with_directory: bool) -> dict:
        run = make_run([rows[:, 0].copy(), rows[:, 1].copy()], ones - 1, ones, 0)
        if not with_directory:
            run.directory = False
        pieces: list = []
        join_part(batch, 1, [run], projection, True, pieces)
        if with_directory:
            USED.append(type(run.directory) is tuple)
        return dict(finish(pieces, ("i", "i")))

    saved = columns.DISTINCT_PROBE
    columns.DISTINCT_PROBE = 0   # (a delta this small takes no directory otherwise)
    try:
        assert joined(True) == joined(False)
    finally:
        columns.DISTINCT_PROBE = saved


def test_a_wide_run_has_no_directory_and_a_small_probe_makes_none_yet():
    ones = np.ones(2, dtype=np.int64)
    wide = Run([np.array([0, 1000])], ones - 1, ones, 0)
    assert directory_of(wide, 1 << 20) is None and wide.directory is False
    narrow = Run([np.array([0, 7])], ones - 1, ones, 0)
    assert directory_of(narrow, 0) is None and narrow.directory is None
    assert directory_of(narrow, 1) is not None


def test_a_join_of_a_dense_run_takes_its_directory():
    USED.clear()
    test_a_join_through_the_directory_equals_one_without.hypothesis.inner_test(
        [(0, 0), (1, 1), (1, 2), (2, 5), (3, 3)], {(7, 1): 1, (8, 2): -1, (9, 4): 1})
    assert USED == [True]
