"""Packed Distinct state (engine.operators.packedsmall) against its naive twin.

Small batches on packed state (row by row, with the dict overlays and the
probed rows' entries kept) must give what the vectorised step and the dict
loop give: Distinct Trace at random product-order times, with the small-batch
size, the overlay size and the kept rows varied so that the batches mix both
paths, the overlays flush into runs and the kept entries are added to and
dropped. The reads of packed state (count, columns, positive rows, one row's
weight) must equal the naive distinct of the integrated input at every epoch,
and leave the state packed.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import ColBatch, columns_from
from engine.operators import packedsmall
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.zset import EMPTY
from tests.engine.harness import Holder, grid, integral, place
from tests.engine.spec import distinct

EPOCHS, ITERATIONS = 4, 6

weights = st.integers(-2, 2).filter(bool)
rows = st.tuples(st.integers(-3, 3), st.integers(0, 4))
batches = st.dictionaries(rows, weights, max_size=6)
nested_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                          st.integers(0, ITERATIONS - 2)), batches, max_size=12)
root_series = st.dictionaries(st.integers(0, EPOCHS - 1), batches, max_size=EPOCHS)

#: (small-batch rows, overlay rows, kept rows): the vectorised step only; every
#: batch small with the overlays never flushed at commit; a mix, the overlay
#: flushed at every commit and the kept entries dropped often.
SIZES = pytest.mark.parametrize("sizes", [(0, 1 << 20, 1 << 20), (1 << 20, 1 << 20, 1 << 20),
                                          (3, 1, 2)], ids=["vectorised", "small", "mixed"])


def check_reads(node, expected: dict) -> None:
    """The packed collection read every way equals ``expected`` (a set as a
    Z-set of weight 1), and the state stays packed."""
    view = node.collection_cursor()
    assert node.packed is not None
    want = sorted(expected)
    assert view.count() == len(want)
    assert list(zip(*(c.tolist() for c in view.columns()))) == want
    assert sorted(view.positive()) == want
    probes = want + [(9, 9), (-3, 0), (0, "x")]
    assert [w > 0 for w in view.weights_of(probes)] == [r in expected for r in probes]
    assert all(view.weight(r) > 0 for r in want)
    assert node.packed is not None


def run_packed_nested(node: DistinctTraceNode, holder: Holder, series: dict) -> dict:
    """``run_nested`` for one Distinct Trace, its collection read after every epoch."""
    outputs: dict = {}
    for e in range(EPOCHS):
        node.clock_start(0, e)
        i = 0
        while True:
            holder.out = series.get((e, i), EMPTY)
            node.evaluate(i)
            if node.out:
                outputs[(e, i)] = dict(node.out)
            later = [j for (te, j) in series if te == e and j > i]
            if node.pending() is not None:
                later.append(node.pending())
            if not later:
                break
            i = min(later)
        node.clock_stop(0, e)
        if node.packed is not None:
            whole = {}
            for (te, _), batch in series.items():
                if te <= e:
                    for r, w in batch.items():
                        whole[r] = whole.get(r, 0) + w
            check_reads(node, distinct(whole))
    return outputs


@SIZES
@settings(max_examples=150, deadline=None)
@given(nested_series)
@example({(0, 0): {(0, 0): 1, (1, 1): 1}, (1, 0): {(0, 0): -1}, (1, 2): {(0, 0): 1},
          (2, 1): {(1, 1): -1}, (3, 0): {(1, 1): 2}})
@example({(2, 0): {(-3, 0): -1}, (2, 1): {(-3, 0): 2}})  # weights_of a row asked twice
def test_distinct_trace_on_packed_state(sizes, a):
    small, overlay, known = sizes
    with columns_from(0), pytest.MonkeyPatch.context() as patch:
        patch.setattr(colbatch, "SMALL_ROWS", small)
        patch.setattr(packedsmall, "OVERLAY_ROWS", overlay)
        patch.setattr(packedsmall, "KNOWN_ROWS", known)
        patch.setattr(packedsmall, "UNPACK_FEW", 0)  # (rows due in arrays unpacked in bulk)
        holder = Holder()
        node = DistinctTraceNode(holder)
        place([node], nested=True)
        before = colbatch.COUNTS["small_distinct"]
        out = run_packed_nested(node, holder, a)
        for t in grid(EPOCHS, ITERATIONS):
            assert integral(out, t) == distinct(integral(a, t)), t
        if small == 1 << 20 and any(a.values()):  # every batch small
            assert colbatch.COUNTS["small_distinct"] > before


@settings(max_examples=100, deadline=None)
@given(nested_series, st.integers(0, EPOCHS - 1))
def test_distinct_trace_small_batch_that_does_not_pack(a, at):
    """A row of a small batch that does not pack (a string) moves the packed
    state back to dicts, the overlays and the schedule included."""
    series = dict(a)
    series[(at, 1)] = {**series.get((at, 1), {}), (0, "x"): 1}
    with columns_from(0), pytest.MonkeyPatch.context() as patch:
        patch.setattr(colbatch, "SMALL_ROWS", 1 << 20)
        holder = Holder()
        node = DistinctTraceNode(holder)
        place([node], nested=True)
        out = run_packed_nested(node, holder, series)
        for t in grid(EPOCHS, ITERATIONS):
            assert integral(out, t) == distinct(integral(series, t)), t
        assert node.packed is None


@settings(max_examples=150, deadline=None)
@given(root_series)
def test_distinct_incremental_reads_packed_state(a):
    """Distinct Incremental's packed ``I(e-1)`` read after every epoch (count,
    columns, rows, weights) equals the naive distinct, and stays packed."""
    with columns_from(0):
        holder = Holder()
        node = DistinctNode(holder)
        place([node], nested=False)
        total: dict = {}
        emitted: dict = {}
        for e in range(EPOCHS):
            batch = a.get(e, {})
            holder.out = ColBatch.from_rows(batch) if batch else EMPTY
            node.clock_start(0, e)
            node.evaluate(0)
            for r, w in node.out.items():
                emitted[r] = emitted.get(r, 0) + w
            for r, w in batch.items():
                total[r] = total.get(r, 0) + w
            node.clock_stop(0, e)
            assert {r: w for r, w in emitted.items() if w} == distinct(total), e
            if node.packed is not None:
                check_reads(node, distinct(total))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 3), weights),
                         min_size=1, max_size=8), max_size=4),
       st.lists(st.integers(-6, 6), max_size=6, unique=True))
def test_a_probe_of_few_keys_finds_what_the_vectorised_probe_finds(runs, keys):
    """``probe_few`` (a scalar search of each key in each run) against
    ``probe``'s vectorised search, on runs with repeated keys (the sought
    keys distinct, as a batch's rows are)."""
    import numpy as np

    from engine.operators.columns import key_run

    spine = []
    for entries in runs:
        columns = [np.array(c, dtype="int64") for c in zip(*entries)]
        run = key_run(*columns)
        if run is not None:
            spine.append(run)
    saved = packedsmall.PROBE_FEW
    try:
        packedsmall.PROBE_FEW = -1
        vectorised = packedsmall.probe(spine, keys)
    finally:
        packedsmall.PROBE_FEW = saved
    assert packedsmall.probe_few(spine, keys) == vectorised


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda arity: st.lists(
    st.tuples(*[st.integers(-(1 << (63 // arity - 1)), (1 << (63 // arity - 1)) - 1)] * arity),
    min_size=1, max_size=20)))
def test_a_row_unpacked_one_by_one_is_what_the_packing_unpacks(rows):
    """The written-out :func:`packedsmall.unpacker` (a small step's rows due)
    gives back each row :func:`packedsmall.pack_row` packed, as the
    vectorised ``Packing.unpack`` of the same keys does."""
    import numpy as np

    from engine.operators.columns import Packing

    packing = Packing(len(rows[0]))
    keys = [packedsmall.pack_row(row, packing) for row in rows]
    unpack = packedsmall.unpacker(packing)
    assert [unpack(key) for key in keys] == rows
    columns = packing.unpack(np.array(keys, dtype="int64"))
    assert list(zip(*(c.tolist() for c in columns))) == rows
