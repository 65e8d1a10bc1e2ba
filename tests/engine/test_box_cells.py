"""Packed rows' cells in a box read off their keys in place
(engine.operators.densesums.Box.cells_of without the columns, through
engine.operators.columns.Packing.column) are the cells found from the rows'
columns: rows of one to three columns, inside the box and outside it (on
either side, by any distance), checked or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.operators.columns import Packing
from engine.operators.densesums import Box


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
