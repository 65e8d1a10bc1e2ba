"""A long loop's table of the epoch's weights (engine.operators.densesums:
from iteration TABLE_FROM, any batch, TABLE_SPARSITY cells an entry of the
state, the past's box taken in, boxes grown with room) answers Distinct
Trace's ``w3`` as the epoch's runs do: random histories of pairs at
product-order times through the vectorised step and the row-by-row one
(engine.operators.packedsmall, which reads and adds to the table) on one
OverlaidTrace, against the same steps with no table (that path is checked
against the naive Distinct by tests/engine/test_twins.py)."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import COUNTS
from engine.operators import densesums
from engine.operators.columns import Packing, distinct_step
from engine.operators.densesums import DenseSums
from engine.operators.packedsmall import OverlaidTrace, small_step
from engine.trace import history_items

EPOCHS, ITERATIONS = 4, 6
pairs = st.tuples(st.integers(-3, 12), st.integers(0, 9))
batches = st.dictionaries(pairs, st.integers(-2, 2).filter(bool), max_size=8)
histories = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                      st.integers(0, ITERATIONS - 1)), batches, max_size=18)
PACKING = Packing(2)


def run(history: dict, table: bool, small: bool = False) -> list:
    """Every step's output over the epochs, until nothing is due, and the
    past's entries after each commit; ``table``: tables allowed; ``small``:
    batches of one row taken row by row (packedsmall) as the Distinct does."""
    trace = OverlaidTrace()
    outputs = []
    for e in range(EPOCHS):
        i = 0
        while i < ITERATIONS or trace.scheduled:
            batch = history.get((e, i), {})
            parts = trace.scheduled.pop(i, None)
            if small and len(batch) == 1:
                out = small_step(trace, PACKING, batch, i, parts or (), lambda j: None)
                outputs.append((e, i, out))
                i += 1
                continue
            trace.flush()
            rows = sorted(batch)
            columns = [np.array([r[c] for r in rows], dtype=np.int64) for c in (0, 1)]
            keys = PACKING.pack(columns) if rows else np.zeros(0, dtype=np.int64)
            weights = np.array([batch[r] for r in rows], dtype=np.int64)
            due = np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]) if parts else None
            if len(keys) or due is not None:
                if table:
                    trace.sums = densesums.prepared(trace.sums, trace, PACKING, None, keys,
                                                    due, i)
                out, delta = distinct_step(trace, keys, weights, i, due, lambda j: None,
                                           trace.sums)
                found = zip(zip(*(c.tolist() for c in PACKING.unpack(out))), delta.tolist())
                outputs.append((e, i, dict(found)))
            i += 1
        trace.commit()
        assert trace.sums is None
        outputs.append(past_entries(trace))
    return outputs


def past_entries(trace: OverlaidTrace) -> dict:
    """(packed row, iteration) -> weight of the past runs and overlay."""
    out: dict = {}
    for r in trace.past:
        for key, j, w in zip(r.keys.tolist(), r.iterations.tolist(), r.weights.tolist()):
            out[key, j] = out.get(key, 0) + w
    for key, history in trace.older.items():
        for j, w in history_items(history):
            out[key, j] = out.get(key, 0) + w
    return {k: w for k, w in out.items() if w}


@contextmanager
def limits(sparsity: int = 1 << 20, cells: int = colbatch.DENSE_MAX):
    """Long-loop tables at any iteration and density (the small histories
    are sparse), of at most ``cells``."""
    old = colbatch.TABLE_SPARSITY, colbatch.DENSE_MAX, colbatch.TABLE_FROM
    colbatch.TABLE_SPARSITY, colbatch.DENSE_MAX, colbatch.TABLE_FROM = sparsity, cells, 0
    try:
        yield
    finally:
        colbatch.TABLE_SPARSITY, colbatch.DENSE_MAX, colbatch.TABLE_FROM = old


@settings(max_examples=200, deadline=None)
@given(histories)
def test_the_table_gives_what_the_runs_give(history):
    before = COUNTS["dense_tables"]
    with limits():
        assert run(history, table=True) == run(history, table=False)
    if any(history.values()):
        assert COUNTS["dense_tables"] > before


@settings(max_examples=200, deadline=None)
@given(histories)
def test_small_batches_between_table_steps(history):
    with limits():
        assert run(history, table=True, small=True) == run(history, table=False, small=True)


@settings(max_examples=50, deadline=None)
@given(histories)
def test_a_box_too_large_stays_on_the_runs(history):
    """No table fits (none is made); with tables of at most 12 cells, one is
    dropped mid-epoch when a row falls outside and the box cannot grow (its
    runs merged then), by a vectorised step or a small one."""
    before = COUNTS["dense_tables"]
    with limits(cells=0):
        assert run(history, table=True) == run(history, table=False)
    assert COUNTS["dense_tables"] == before
    with limits(cells=12):
        assert run(history, table=True) == run(history, table=False)
        assert run(history, table=True, small=True) == run(history, table=False, small=True)


def test_a_sparse_state_is_asked_again_at_twice_the_entries():
    trace = OverlaidTrace()
    with limits(sparsity=1):
        keys = PACKING.pack([np.array([0, 9]), np.array([0, 9])])   # 100 cells, 2 entries
        assert densesums.prepared(None, trace, PACKING, None, keys, None, 0) is None
        assert trace.sums_at == 2
        distinct_step(trace, keys, np.ones(2, dtype=np.int64), 0, None, lambda j: None)
        key = PACKING.pack([np.array([5]), np.array([5])])
        assert densesums.prepared(None, trace, PACKING, None, key, None, 1) is None
        assert trace.sums_at == 2   # (3 entries: not asked)
        trace.rollback()
        assert trace.sums_at == 0 and not trace.cur


def test_growing_the_box_with_room_and_the_runs_unmerged():
    """A row beyond the box grows it by half its width on that side (the
    table made again from the epoch's runs, which wait unmerged); the past's
    box is taken in from the first table of an epoch; the commit frees the
    table and merges the runs."""
    trace = OverlaidTrace()
    one = np.ones(1, dtype=np.int64)

    def step(x: int, y: int, w, i: int):
        keys = PACKING.pack([np.array([x]), np.array([y])])
        trace.sums = densesums.prepared(trace.sums, trace, PACKING, None, keys, None, i)
        return distinct_step(trace, keys, w, i, None, lambda j: None, trace.sums)[1]

    with limits():
        before = COUNTS["dense_tables"]
        step(1, 1, one, 0)
        assert trace.sums.bounds() == [(1, 1), (1, 1)]
        assert step(4, 1, one, 1).tolist() == [1]
        assert COUNTS["dense_tables"] == before + 2
        assert trace.sums.bounds() == [(1, 4), (1, 1)]   # (a width of 1: no room)
        assert step(9, 1, one, 2).tolist() == [1]
        assert trace.sums.bounds() == [(1, 11), (1, 1)]  # 9 + 4 // 2
        assert step(1, 1, -one, 3).tolist() == [-1]      # w3 = 1 from the table
        assert len(trace.cur) == 4
        trace.commit()
        assert trace.sums is None and len(trace.past) == 1 and len(trace.past[0]) == 4
        assert trace.past_box == [(1, 11), (1, 1)]
        step(2, 0, one, 0)
        assert trace.sums.bounds() == [(1, 11), (0, 1)]   # the past's box taken in


def test_cells_of_one_column_and_of_three():
    one, three = Packing(1), Packing(3)
    sums = DenseSums(one, [(-5, 5)])
    assert sums.index(np.array([-5, 0, 5])).tolist() == [0, 5, 10]
    assert [sums.cell(k) for k in (-5, 0, 5, 6, -6)] == [0, 5, 10, None, None]
    sums = DenseSums(three, [(0, 1), (-1, 1), (2, 3)])
    keys = three.pack([np.array([0, 1, 1, 2]), np.array([-1, 0, 1, 0]), np.array([2, 3, 3, 3])])
    assert sums.index(keys[:3]).tolist() == [0, 9, 11]
    assert [sums.cell(k) for k in keys.tolist()] == [0, 9, 11, None]
    assert densesums.bounds_of_packed(three, keys[:3]) == [(0, 1), (-1, 1), (2, 3)]


def test_small_steps_widen_an_int32_table():
    trace = OverlaidTrace()
    big = (1 << 31) - 1
    with limits():
        keys = PACKING.pack([np.array([0, 1]), np.array([0, 0])])
        trace.sums = densesums.prepared(None, trace, PACKING, None, keys, None, 0)
        distinct_step(trace, keys, np.array([1, 1], dtype=np.int64), 0, None, lambda j: None,
                      trace.sums)
        assert trace.sums.table.dtype == np.int32
        small_step(trace, PACKING, {(0, 0): big}, 1, (), lambda j: None)
        assert trace.sums.table.dtype == np.int64
        assert small_step(trace, PACKING, {(0, 0): -big - 1}, 2, (), lambda j: None) == {
            (0, 0): -1}
