"""A join's pairs with a run (engine.operators.columns.join_part) take three
shortcuts: a run whose weights are all 1 (``Run.all_ones``) gives the pairs
the delta's weights, no product; a run whose bounds show no iteration past
``i`` sends nothing to later iterations, its iterations not read; a run whose
keys lie outside the delta's (both bounds known) is not probed. All must
give the pieces (and the later ones) the general path gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.colbatch import consolidate
from engine.columnar import make_run
from engine.operators import columns as col

ROWS = st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.sampled_from([-1, 1, 2])),
                min_size=1, max_size=20)
EDGES = st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(0, 4)),
                 min_size=1, max_size=20)


def pieces_of(delta, run, i, projection, left):
    pieces, later = [], {}
    col.join_part(delta, 1 if left else 0, [run], projection, left, pieces, i,
                  lambda j: later.setdefault(j, []))
    listed = lambda ps: sorted(  # noqa: E731
        (tuple(int(c[k]) for c in cs), int(w[k])) for cs, w in ps for k in range(len(w)))
    return listed(pieces), {j: listed(ps) for j, ps in later.items()}


@settings(max_examples=300, deadline=None)
@given(ROWS, EDGES, st.booleans(), st.integers(0, 4), st.booleans(), st.booleans())
def test_shortcuts_give_the_general_pieces(rows, edges, ones, i, known, left):
    delta_rows = {(x, y): w for x, y, w in rows}
    delta = consolidate([np.array([r[c] for r in delta_rows], dtype=np.int64) for c in (0, 1)],
                        ("i", "i"), np.array(list(delta_rows.values()), dtype=np.int64))
    if not len(delta):
        return
    pairs = {(x, y): t for x, y, t in edges}
    iterations = np.array(list(pairs.values()), dtype=np.int64)
    run = make_run([np.array([p[c] for p in pairs], dtype=np.int64) for c in (0, 1)],
                   iterations, np.ones(len(pairs), dtype=np.int64) if ones
                   else np.array([1 + t % 2 for t in pairs.values()], dtype=np.int64),
                   0 if left else 1)
    if run is None:
        return
    if known:  # (the key column's, the other's, the iterations')
        run.bounds = [(int(c.min()), int(c.max())) for c in (run.keys, *(
            c for c in run.columns if c is not run.keys), iterations)]
    side = 0 if left else 1
    projection = ((side, 0), (1 - side, 1 if left else 0))
    found = pieces_of(delta, run, i, projection, left)
    # the general path: product, iterations read, every run probed
    run.ones, run.bounds, delta.bounds = False, None, None
    assert found == pieces_of(delta, run, i, projection, left)


def test_a_run_outside_the_delta_keys_is_not_probed(monkeypatch):
    probed = []
    real = col.probe
    monkeypatch.setattr(col, "probe", lambda sought, run: probed.append(run) or real(sought, run))
    delta = consolidate([np.array([5, 6]), np.array([0, 3])], ("i", "i"),
                        np.ones(2, dtype=np.int64))
    assert delta.bounds == [(5, 6), (0, 3)]
    near, far = (make_run([np.array([k]), np.array([7])], np.zeros(1, dtype=np.int64),
                          np.ones(1, dtype=np.int64), 0) for k in (3, 9))
    near.bounds, far.bounds = [(3, 3), (7, 7), (0, 0)], [(9, 9), (7, 7), (0, 0)]
    pieces: list = []
    col.join_part(delta, 1, [near, far], ((0, 0), (1, 1)), True, pieces)
    assert probed == [near] and [p[0][0].tolist() for p in pieces] == [[6]]
    delta.bounds = None  # (unknown: every run probed)
    col.join_part(delta, 1, [near, far], ((0, 0), (1, 1)), True, [])
    assert probed == [near, near, far]


def test_a_run_of_ones_is_known_once():
    run = make_run([np.array([1, 2]), np.array([3, 4])], np.zeros(2, dtype=np.int64),
                   np.ones(2, dtype=np.int64), 0)
    assert run.all_ones() and run.ones is True
    run2 = make_run([np.array([1, 2]), np.array([3, 4])], np.zeros(2, dtype=np.int64),
                    np.array([1, 2]), 0)
    assert not run2.all_ones()
