"""Distinct Trace's step for a batch at hand in columns
(engine.operators.columns.distinct_columns) takes a table's cells from the
batch's columns and gives the output's columns from them (as they are when
every row is output) instead of unpacking packed rows: on random histories of
pairs at product-order times, batches in order or not, with rows due, with
long-loop tables or without, it must give what distinct_step gives (the path
checked against the naive Distinct by tests/engine/test_twins.py), and leave
the same trace."""

from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.operators import densesums
from engine.operators.columns import distinct_columns, distinct_step, key_run
from engine.operators.densesums import BoxDirectory
from engine.operators.packedsmall import OverlaidTrace
from tests.engine.test_longtable import (
    EPOCHS,
    ITERATIONS,
    PACKING,
    histories,
    limits,
    past_entries,
)


def run(history: dict, table: bool, columnar: bool, shuffle: bool, cells: bool = False,
        visit=None) -> list:
    """Every step's output (row -> weight) over the epochs, until nothing is
    due, and the past's entries after each commit; ``columnar``: through
    distinct_columns; ``cells`` (with ``table``): the past summed by cell
    (densesums.sum_past) as the Distinct does; ``visit``: called with the
    trace before each step and after each commit."""
    trace = OverlaidTrace()
    outputs = []
    rng = random.Random(7)
    for e in range(EPOCHS):
        i = 0
        while i < ITERATIONS or trace.scheduled:
            batch = history.get((e, i), {})
            parts = trace.scheduled.pop(i, None)
            rows = sorted(batch)
            if shuffle:
                rng.shuffle(rows)
            columns = [np.array([r[c] for r in rows], dtype=np.int64) for c in (0, 1)]
            keys = PACKING.pack(columns) if rows else np.zeros(0, dtype=np.int64)
            weights = np.array([batch[r] for r in rows], dtype=np.int64)
            due = np.concatenate(parts) if parts else None
            if len(keys) or due is not None:
                if table:
                    trace.sums = densesums.prepared(trace.sums, trace, PACKING, None, keys,
                                                    due, i)
                    densesums.index_past(trace.past, PACKING)   # (as the Distinct does)
                    if cells:
                        densesums.sum_past(trace, PACKING)
                if visit is not None:
                    visit(trace)
                if columnar:
                    copies = [c.copy() for c in columns]
                    out, delta, theirs = distinct_columns(trace, columns, keys, weights, i,
                                                          due, lambda j: None, trace.sums,
                                                          PACKING.unpack)
                    if due is None and not shuffle:   # in order, nothing due
                        assert theirs
                    if due is not None:
                        assert not theirs
                    assert all((a == b).all() for a, b in zip(columns, copies))  # unchanged
                    assert delta.dtype == np.int64
                else:
                    rows_out, delta = distinct_step(trace, keys, weights, i, due,
                                                    lambda j: None, trace.sums)
                    out = PACKING.unpack(rows_out)
                found = dict(zip(zip(*(c.tolist() for c in out)), delta.tolist()))
                assert len(found) == len(delta) and all(delta)
                outputs.append((e, i, found))
            i += 1
        trace.commit()
        if visit is not None:
            visit(trace)
        outputs.append(past_entries(trace))
    return outputs


@contextmanager
def boxed():
    """Every past run indexed by a box directory (engine.operators.densesums.
    BoxDirectory), whatever its size and density."""
    old = colbatch.BOX_ROWS, colbatch.BOX_CELLS
    colbatch.BOX_ROWS, colbatch.BOX_CELLS = 1, 1 << 20
    try:
        yield
    finally:
        colbatch.BOX_ROWS, colbatch.BOX_CELLS = old


@settings(max_examples=200, deadline=None)
@given(histories, st.booleans(), st.booleans())
def test_columns_give_what_packed_rows_give(history, table, shuffle):
    """(With tables, every past run is indexed by a box directory.)"""
    with limits(), boxed():
        assert (run(history, table, columnar=True, shuffle=shuffle)
                == run(history, table, columnar=False, shuffle=shuffle))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 12), st.integers(0, 9)), min_size=1, max_size=30,
                unique=True),
       st.lists(st.tuples(st.integers(-5, 14), st.integers(-2, 11)), min_size=1, max_size=12,
                unique=True))
def test_a_box_directory_finds_rows_by_their_columns(past, sought):
    """Cells from the sought rows' columns (some outside the box) are those
    of their packed keys."""
    columns = [np.array([r[c] for r in sorted(past)], dtype=np.int64) for c in (0, 1)]
    run = key_run(PACKING.pack(columns), np.zeros(len(past), dtype=np.int64),
                  np.ones(len(past), dtype=np.int64))
    box = BoxDirectory(PACKING, run, densesums.bounds_of_packed(PACKING, run.keys))
    wanted = [np.array([r[c] for r in sought], dtype=np.int64) for c in (0, 1)]
    copies = [c.copy() for c in wanted]
    keys = PACKING.pack(wanted)
    assert all((a == b).all() for a, b in
               zip(box.spans(keys, wanted), box.spans(keys)))
    assert all((a == b).all() for a, b in zip(wanted, copies))


def test_every_row_new_gives_the_batch_columns_themselves():
    """A batch in order, nothing due, every row output: the output's columns
    are the batch's arrays (no gather, no unpack); a row not output leaves
    the others gathered from them."""
    trace = OverlaidTrace()
    columns = [np.array([0, 1, 2]), np.array([5, 5, 7])]
    keys, ones = PACKING.pack(columns), np.ones(3, dtype=np.int64)
    with limits():
        trace.sums = densesums.prepared(None, trace, PACKING, None, keys, None, 0)
        out, delta, _ = distinct_columns(trace, columns, keys, ones, 0, None, lambda j: None,
                                         trace.sums, PACKING.unpack)
        assert trace.sums is not None
        assert out[0] is columns[0] and out[1] is columns[1] and delta.tolist() == [1, 1, 1]
        more = [np.array([1, 3]), np.array([5, 0])]
        out, delta, _ = distinct_columns(trace, more, PACKING.pack(more), ones[:2], 1, None,
                                         lambda j: None, trace.sums, PACKING.unpack)
    assert [c.tolist() for c in out] == [[3], [0]] and delta.tolist() == [1]
