"""Distinct Trace's ``w3`` from a table of the epoch's weights by row
(engine.operators.densesums) must give what the search of the epoch's runs
gives (engine.operators.columns.distinct_step without ``sums``; that path is
checked against the naive Distinct by tests/engine/test_twins.py): random
histories of pairs at product-order times, boxes that grow, tables dropped
mid-epoch (a box too large, a small batch), int32 tables widened."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.columnar import Run
from engine.operators import columns, densesums
from engine.operators.columns import PackedTrace, Packing, distinct_step, key_run

EPOCHS, ITERATIONS = 3, 5
rows = st.tuples(st.integers(-3, 6), st.integers(-2, 40))
batches = st.dictionaries(rows, st.integers(-3, 3).filter(bool), max_size=8)
histories = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                      st.integers(0, ITERATIONS - 1)), batches, max_size=12)
PACKING = Packing(2)


def run(history: dict, dense: bool, drops: frozenset = frozenset()) -> list:
    """Every step's output (row -> weight) and each epoch's runs' entries;
    ``dense``: with a table when one is allowed, dropped (its runs merged)
    at the times in ``drops``, as a small batch does."""
    trace = PackedTrace()
    outputs = []
    sums = None
    for e in range(EPOCHS):
        i = 0
        while i < ITERATIONS or trace.scheduled:
            batch = history.get((e, i), {})
            ordered = sorted(batch)
            columns = [np.array([r[c] for r in ordered], dtype=np.int64) for c in (0, 1)]
            keys = PACKING.pack(columns) if ordered else np.zeros(0, dtype=np.int64)
            weights = np.array([batch[r] for r in ordered], dtype=np.int64)
            parts = trace.scheduled.pop(i, None)
            due = np.concatenate(parts) if parts else None
            if dense and (e, i) in drops and sums is not None:
                densesums.merge_epoch(trace)
                sums = None
            if len(keys) or due is not None:
                if dense:
                    sums = densesums.prepared(sums, trace, PACKING, None, keys, due)
                out, delta = distinct_step(trace, keys, weights, i, due, lambda j: None, sums)
                rows_out = zip(*(c.tolist() for c in PACKING.unpack(out)))
                outputs.append((e, i, dict(zip(rows_out, delta.tolist()))))
            i += 1
        if sums is not None:
            densesums.merge_epoch(trace)
            sums = None
        trace.commit()
        outputs.append(entries(trace.past))
    return outputs


def entries(spine: list) -> dict:
    """(packed row, iteration) -> weight of a spine, zeros dropped."""
    out: dict = {}
    for r in spine:
        for key, j, w in zip(r.keys.tolist(), r.iterations.tolist(), r.weights.tolist()):
            out[key, j] = out.get(key, 0) + w
    return {k: w for k, w in out.items() if w}


@settings(max_examples=200, deadline=None)
@given(histories, st.sampled_from([1, 8, 1000]),
       st.frozensets(st.tuples(st.integers(0, EPOCHS - 1), st.integers(0, ITERATIONS - 1))))
@example({(0, 0): {(0, 0): 1, (6, 40): 1}, (0, 1): {(0, 0): 1, (-3, -2): 2},
          (1, 0): {(0, 0): -1}}, 1000, frozenset())
def test_the_table_gives_what_the_search_gives(history, cells, drops):
    saved = colbatch.DENSE_ROWS, colbatch.DENSE_CELLS
    colbatch.DENSE_ROWS, colbatch.DENSE_CELLS = 0, cells
    try:
        assert run(history, True, drops) == run(history, False)
    finally:
        colbatch.DENSE_ROWS, colbatch.DENSE_CELLS = saved


def test_a_table_is_made_grown_and_refused():
    saved = colbatch.DENSE_ROWS, colbatch.DENSE_CELLS
    colbatch.DENSE_ROWS, colbatch.DENSE_CELLS = 2, 8
    try:
        trace = PackedTrace()
        keys = PACKING.pack([np.array([0, 1]), np.array([0, 1])])
        sums = densesums.prepared(None, trace, PACKING, None, keys, None)
        assert sums is not None and sums.cells == 4
        distinct_step(trace, keys, np.array([1, 1]), 0, None, lambda j: None, sums)
        more = PACKING.pack([np.array([2, 3]), np.array([0, 1])])   # 4 rows
        grown = densesums.prepared(sums, trace, PACKING, None, more, None)
        assert grown is not sums and grown.bounds() == [(0, 4), (0, 1)]   # room: 2 // 2
        assert grown.cells == 10
        assert grown.take_add(keys, np.zeros(2, dtype=np.int64)).tolist() == [1, 1]
        distinct_step(trace, more, np.array([1, 1]), 1, None, lambda j: None, grown)
        assert len(trace.cur) == 2   # appended, not merged
        far = PACKING.pack([np.array([0]), np.array([1000])])
        assert densesums.prepared(grown, trace, PACKING, None, far, None) is None
        assert len(trace.cur) == 1   # dropped: the runs merged
    finally:
        colbatch.DENSE_ROWS, colbatch.DENSE_CELLS = saved


def test_an_int32_table_widens_before_it_could_overflow():
    sums = densesums.DenseSums(PACKING, [(0, 1), (0, 0)])
    keys = PACKING.pack([np.array([0, 1]), np.array([0, 0])])
    big = np.array([(1 << 31) - 1, 5], dtype=np.int64)
    assert sums.take_add(keys, big).tolist() == [0, 0]
    assert sums.table.dtype == np.int64
    assert sums.take_add(keys, big).tolist() == [(1 << 31) - 1, 5]


def test_runs_in_iteration_order_merge_by_one_sort():
    trace = PackedTrace()
    for i, keys in enumerate(([1, 5, 9], [2, 5], [5, 11])):
        densesums.append_run(trace, np.array(keys, dtype=np.int64), i,
                             np.array([1] * len(keys), dtype=np.int64))
    assert densesums.in_order(trace.cur)
    densesums.merge_epoch(trace)
    (merged,) = trace.cur
    assert merged.keys.tolist() == [1, 2, 5, 5, 5, 9, 11]
    assert merged.iterations.tolist() == [0, 1, 0, 1, 2, 0, 2]
    assert merged.bounds == [(1, 11), (0, 2)]
    out_of_order = [Run([np.array([1])], np.array([3]), np.array([1]), 0, [(1, 1), (3, 3)]),
                    Run([np.array([1])], np.array([2]), np.array([1]), 0, [(1, 1), (2, 2)])]
    assert not densesums.in_order(out_of_order)
    trace.cur = out_of_order
    densesums.merge_epoch(trace)
    assert trace.cur[0].iterations.tolist() == [2, 3]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.integers(-(1 << 40), 1 << 40),
                                st.integers(-3, 3).filter(bool)
                                | st.integers(-(1 << 22), 1 << 22).filter(bool),
                                max_size=12), min_size=2, max_size=6),
       st.sampled_from([0, 7, 1 << 20]), st.sampled_from(["int8", "int64"]))
@example([{0: 1, 5: -2}, {0: -1 << 22, 3: 1}], 0, "int64")   # 41 + 1 + 24 bits: no packing
def test_merge_epoch_by_value_equals_the_stable_sort(batches, first, narrow_weights):
    """The epoch's runs merged by a sort of key, iteration and weight packed
    in place (densesums.sorted_in_place) as by the stable sort of their keys:
    the same entries in the same types; the packing taken whenever the three
    fit 63 bits."""
    merged = []
    packed = []
    original = densesums.sorted_in_place

    def counted(*args):
        found = original(*args)
        packed.append(found is not None)
        return found

    for value_sort in (0, 1 << 40):
        trace = PackedTrace()
        for i, batch in enumerate(batches, first):
            keys = sorted(batch)
            weights = np.array([batch[k] for k in keys], dtype=np.int64)
            if narrow_weights == "int8" and len(weights) and np.abs(weights).max() < 128:
                weights = weights.astype(np.int8)
            densesums.append_run(trace, np.array(keys, dtype=np.int64), i, weights)
        if len(trace.cur) < 2:
            return
        saved = colbatch.VALUE_SORT_ROWS
        colbatch.VALUE_SORT_ROWS = value_sort
        densesums.sorted_in_place = counted
        try:
            densesums.merge_epoch(trace)
        finally:
            colbatch.VALUE_SORT_ROWS = saved
            densesums.sorted_in_place = original
        (run,) = trace.cur
        merged.append((run.keys.tolist(), run.iterations.tolist(), run.weights.tolist(),
                       run.bounds, run.iterations.dtype, run.weights.dtype))
    assert merged[0] == merged[1]
    entries = [(k, i, w) for i, batch in enumerate(batches, first) for k, w in batch.items()]
    assert list(zip(*merged[0][:3])) == sorted(entries)
    keys, iterations, weights = zip(*entries)
    bits = sum((max(x) - min(x)).bit_length() for x in (keys, iterations, weights))
    assert packed == [bits <= 63]


past_entries = st.lists(st.tuples(rows, st.integers(0, 6), st.integers(-2, 2).filter(bool)),
                   min_size=1, max_size=40)
sought_rows = st.lists(st.one_of(rows, st.tuples(st.integers(-20, 20), st.integers(-50, 60))),
                       max_size=20)


@settings(max_examples=300, deadline=None)
@given(past_entries, sought_rows)
@example([((0, 0), 0, 1), ((0, 0), 3, 1), ((6, 40), 1, -1)], [(0, 0), (6, 40), (7, 0), (0, 41)])
def test_a_box_directory_finds_what_the_search_finds(found, wanted):
    keys = PACKING.pack([np.array([r[c] for r, _, _ in found], dtype=np.int64) for c in (0, 1)])
    run = key_run(keys, np.array([j for _, j, _ in found], dtype=np.int64),
                  np.array([w for _, _, w in found], dtype=np.int64))
    if run is None:
        return
    wanted = sorted(set(wanted))
    sought = (PACKING.pack([np.array([r[c] for r in wanted], dtype=np.int64) for c in (0, 1)])
              if wanted else np.zeros(0, dtype=np.int64))

    def gathered() -> list:
        out = columns.gather_once([run], sought)
        return [] if out is None else sorted(zip(*(x.tolist() for x in out[:3])))

    searched = gathered()
    give_a_box_directory(run)
    assert gathered() == searched


def give_a_box_directory(run) -> None:
    """A box directory for ``run``, whatever its size and box."""
    saved = colbatch.BOX_ROWS, colbatch.BOX_CELLS
    colbatch.BOX_ROWS, colbatch.BOX_CELLS = 0, 1000
    try:
        densesums.index_past([run], PACKING)
    finally:
        colbatch.BOX_ROWS, colbatch.BOX_CELLS = saved
    assert type(run.directory) is densesums.BoxDirectory


@settings(max_examples=200, deadline=None)
@given(past_entries, sought_rows, st.booleans())
def test_a_box_directory_reads_the_tables_cells_of_the_same_box(found, wanted, same):
    """A long loop's step finds its rows' cells once, for the table, and the
    past's box directory reads them when its box is the table's (``same``;
    else, a wider table, it finds its own): what it finds is what the
    search finds."""
    keys = PACKING.pack([np.array([r[c] for r, _, _ in found], dtype=np.int64) for c in (0, 1)])
    run = key_run(keys, np.array([j for _, j, _ in found], dtype=np.int64),
                  np.array([w for _, _, w in found], dtype=np.int64))
    if run is None:
        return
    box = densesums.bounds_of_packed(PACKING, run.keys)
    inside = sorted({r for r in wanted if all(lo <= v <= hi for v, (lo, hi) in zip(r, box))})
    if not inside:
        return
    sought = PACKING.pack([np.array([r[c] for r in inside], dtype=np.int64) for c in (0, 1)])
    searched = columns.gather_once([run], sought)
    give_a_box_directory(run)
    table = densesums.DenseSums(PACKING, box if same else [(lo - 1, hi + 2) for lo, hi in box])
    before = colbatch.COUNTS["shared_cells"]
    shared = columns.gather_once([run], sought, None, (table, table.index(sought)))
    assert colbatch.COUNTS["shared_cells"] - before == int(same)
    if searched is None:
        assert shared is None
    else:
        assert sorted(zip(*(x.tolist() for x in shared[:3]))) == sorted(
            zip(*(x.tolist() for x in searched[:3])))
