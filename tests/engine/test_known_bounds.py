"""A join's output consolidated with the bounds its delta and runs already
know (engine.operators.columns.piece_bounds, finish's ``known``;
engine.colbatch.consolidate's ``known``), not found again: the same rows in
the same order as with the ranges found, and bounds that hold them; bounds
wider than the values (a run's entries that matched nothing) must not keep
a Distinct Trace from packing its batch."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.colbatch import ColBatch, consolidate, pack_into, pack_rows
from engine.columnar import make_run
from engine.operators import columns as col
from engine.operators.distinct import DistinctTraceNode
from tests.engine.harness import Holder

PAIRS = st.lists(st.tuples(st.integers(-20, 20), st.integers(-5, 5),
                           st.sampled_from([-1, 1, 2])), min_size=1, max_size=25)
WIDE = (1 << 40)


def listed(batch: ColBatch) -> list:
    return list(zip(*(c.tolist() for c in batch.columns), batch.weights.tolist()))


def holds(batch: ColBatch) -> bool:
    return batch.bounds is None or not len(batch) or all(
        low <= int(c.min()) and int(c.max()) <= high
        for c, (low, high) in zip(batch.columns, batch.bounds))


@settings(max_examples=300, deadline=None)
@given(PAIRS, st.lists(st.integers(0, 1000), min_size=4, max_size=4))
def test_known_bounds_consolidate_as_found_ones(entries, slack):
    columns = [np.array([e[c] for e in entries], dtype=np.int64) for c in (0, 1)]
    weights = np.array([e[2] for e in entries], dtype=np.int64)
    known = [(int(c.min()) - slack[2 * k], int(c.max()) + slack[2 * k + 1])
             for k, c in enumerate(columns)]
    plain = consolidate(columns, ("i", "i"), weights)
    found = consolidate(columns, ("i", "i"), weights, known)
    assert listed(found) == listed(plain) and holds(found)


@settings(max_examples=300, deadline=None)
@given(PAIRS, PAIRS, st.integers(0, 1), st.integers(0, 1), st.booleans())
def test_a_joins_pieces_know_their_bounds(delta_rows, run_rows, delta_key, run_key, left):
    """Pairs of a delta (bounds known) with a run, through a projection of
    both sides' columns: the output consolidated with the pieces' bounds is
    the one with the ranges found, and the bounds hold."""
    rows = {(x, y): w for x, y, w in delta_rows}
    delta = consolidate([np.array([r[c] for r in rows], dtype=np.int64) for c in (0, 1)],
                        ("i", "i"), np.array(list(rows.values()), dtype=np.int64))
    if delta.bounds is None:  # (one row: none found)
        delta.bounds = [(int(c[0]), int(c[0])) for c in delta.columns]
    run = make_run([np.array([e[c] for e in run_rows], dtype=np.int64) for c in (0, 1)],
                   np.zeros(len(run_rows), dtype=np.int64),
                   np.array([e[2] for e in run_rows], dtype=np.int64), run_key)
    if run is None:
        return
    side = 0 if left else 1
    projection = ((side, delta_key), (1 - side, 1 - run_key), (1 - side, run_key), (side, 1))
    pieces, known = [], []
    col.join_part(delta, delta_key, [run], projection, left, pieces, known=known)
    if not pieces:
        assert known == []
        return
    kinds = ("i",) * len(projection)
    found = col.finish(pieces, kinds, known)
    assert listed(found) == listed(col.finish(pieces, kinds)) and holds(found)
    assert found.bounds is not None


def test_bounds_too_wide_to_pack_are_found_again():
    """A batch whose bounds (a join's, from a run holding a huge value that
    matched nothing) are past the packing's range, but whose values fit: the
    Distinct packs it with the ranges found again."""
    node = DistinctTraceNode(Holder())
    batch = ColBatch([np.array([1, 2]), np.array([3, 4])], ("i", "i"),
                     np.array([1, 1]), [(1, 2), (0, WIDE)])
    keys, weights, bounds, columns = node._packed_batch(batch)
    assert bounds is None and columns is batch.columns
    assert [c.tolist() for c in node.packing.unpack(keys)] == [[1, 2], [3, 4]]


@settings(max_examples=300, deadline=None)
@given(PAIRS, st.lists(st.integers(0, 1000), min_size=4, max_size=4), st.booleans())
def test_a_consolidation_hands_its_packed_rows_on(entries, slack, wide):
    """Entries consolidated with known bounds carry their rows packed as a
    Distinct packs them (``ColBatch.packed``), in order and distinct, after
    the sort, the sums and the zeros dropped; a Distinct takes them as they
    are. Bounds past the packing's range hand none on."""
    columns = [np.array([e[c] for e in entries], dtype=np.int64) for c in (0, 1)]
    weights = np.array([e[2] for e in entries], dtype=np.int64)
    known = [(int(c.min()) - slack[2 * k], int(c.max()) + slack[2 * k + 1])
             for k, c in enumerate(columns)]
    if wide:
        known[1] = (known[1][0], WIDE)
    found = consolidate(columns, ("i", "i"), weights, known)
    assert listed(found) == listed(consolidate(columns, ("i", "i"), weights))
    if wide:
        assert found.packed is None
        return
    packing = col.Packing(2)
    assert found.packed.tolist() == packing.pack(found.columns).tolist()
    assert (np.diff(found.packed) > 0).all()
    node = DistinctTraceNode(Holder())
    keys, _, _, _ = node._packed_batch(found)
    assert keys is found.packed


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4), st.data())
def test_rows_packed_with_their_biases_added_last_as_biased_first(arity, data):
    """:func:`~engine.colbatch.pack_rows` (shifts and adds, the biases added
    at the end) against :func:`~engine.colbatch.pack_into` biasing each
    column first, over the whole range of each column."""
    bits = 63 // arity
    bias = 1 << (bits - 1)
    value = st.integers(-bias, bias - 1)
    rows = data.draw(st.lists(st.tuples(*[value] * arity), min_size=1, max_size=10))
    columns = [np.array([r[c] for r in rows], dtype=np.int64) for c in range(arity)]
    bounds = [(int(c.min()), int(c.max())) for c in columns]
    general = pack_into(np.empty(len(rows), dtype=np.int64), columns, [(-bias, 0)] * arity,
                        [bits] * arity)
    assert pack_rows(columns, bounds).tolist() == general.tolist()
