"""Packed rows' cells in a box read off their keys in place
(engine.operators.densesums.Box.cells_of without the columns, through
engine.operators.columns.Packing.column) are the cells found from the rows'
columns: rows of one to three columns, inside the box and outside it (on
either side, by any distance), checked or not. The past's cells
(PastCells.add) widen their iterations by the bounds of the run added."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.operators.columns import Packing, key_run
from engine.operators.densesums import Box, PastCells


@st.composite
def boxed_rows(draw):
    arity = draw(st.integers(1, 3))
    bias = 1 << (63 // arity - 1)  # (a packing's range: values in [-bias, bias))
    value = st.one_of(st.integers(-6, 6), st.integers(-bias, bias - 1))
    rows = draw(st.lists(st.tuples(*[value] * arity), min_size=1, max_size=20))
    lows = draw(st.lists(st.integers(-5, 5), min_size=arity, max_size=arity))
    sizes = draw(st.lists(st.integers(1, 8), min_size=arity, max_size=arity))
    return arity, rows, [(low, low + size - 1) for low, size in zip(lows, sizes)]


@settings(max_examples=300, deadline=None)
@given(boxed_rows(), st.booleans())
def test_cells_off_the_keys_are_the_cells_of_the_columns(case, check):
    arity, rows, bounds = case
    packing = Packing(arity)
    columns = [np.array([row[c] for row in rows], dtype=np.int64) for c in range(arity)]
    keys = packing.pack(columns)
    assert keys is not None
    box = Box(packing, bounds)
    if arity > 1:
        assert all(packing.column(keys, c).tolist() == columns[c].tolist()
                   for c in range(arity))
    inside = np.ones(len(rows), dtype=bool)
    for column, (low, high) in zip(columns, bounds):
        inside &= (column >= low) & (column <= high)
    found = box.cells_of(keys.copy(), check)
    expected = box.cells_of(None, check, columns)
    assert found[inside].tolist() == expected[inside].tolist()
    if check:  # (outside the box: the empty slot)
        assert found.tolist() == expected.tolist()
        assert set(found[~inside].tolist()) <= {box.cells}


@pytest.mark.parametrize("iteration", [5, 300, 40_000, 1 << 33])
def test_past_cells_widen_to_the_iterations_their_runs_bound(iteration):
    """Cells added a run at a later iteration than their type holds take a
    wider type (from the run's bounds): its rows read back at it."""
    packing = Packing(2)
    keys = packing.pack([np.array([0, 1]), np.array([1, 1])])
    past = PastCells(packing, [(0, 1), (0, 1)], [])
    run = key_run(keys, np.array([2, iteration]), np.array([1, -1]))
    assert run.bounds[-1] == (2, iteration)
    assert past.add(run)
    mine, at, weights = past.gather(keys, None, None)
    assert (mine.tolist(), at.tolist(), weights.tolist()) == ([0, 1], [2, iteration], [1, -1])
