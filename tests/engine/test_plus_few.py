"""A few rows in a dict added to a batch of int columns (engine.operators.
columns.add_few: each found by comparing the columns) give what the general
sum gives (both made columns, consolidated), with bounds that hold the rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import ColBatch, consolidate
from engine.operators import columns

rows = st.tuples(st.integers(-3, 3), st.integers(-(1 << 63), 3))
weights = st.integers(-2, 2).filter(bool)
bigs = st.dictionaries(rows, weights, min_size=1, max_size=12)
fews = st.dictionaries(rows, weights, min_size=1, max_size=colbatch.PLUS_FEW)


def as_batch(rows: dict) -> ColBatch:
    table = list(rows)
    return consolidate([np.array([r[c] for r in table], dtype=np.int64) for c in (0, 1)],
                       ("i", "i"), np.array(list(rows.values()), dtype=np.int64))


def dict_sum(a: dict, b: dict) -> dict:
    out = dict(a)
    for row, w in b.items():
        out[row] = out.get(row, 0) + w
    return {row: w for row, w in out.items() if w}


@settings(max_examples=300, deadline=None)
@given(bigs, fews, st.booleans())
def test_a_few_rows_added_as_the_general_sum_adds_them(big, few, few_first):
    batch = as_batch(big)
    found = columns.add_few(batch, few)
    assert found is not None and dict(found) == dict_sum(big, few)
    assert len(found) == len(dict_sum(big, few))   # consolidated: each row once
    if len(found) and found.bounds is not None:  # (a batch of one row has none)
        for column, (low, high) in zip(found.columns, found.bounds):
            assert low <= int(column.min()) and int(column.max()) <= high
    summed = columns.plus([few, batch] if few_first else [batch, few])
    assert dict(summed) == dict_sum(big, few)
    # a sorted batch stays sorted: the rows added go where they belong
    assert list(zip(*(c.tolist() for c in found.columns))) == sorted(dict_sum(big, few))


def test_rows_that_are_not_ints_go_the_general_way():
    batch = as_batch({(1, 2): 1})
    assert columns.add_few(batch, {(1, 2.0): 1}) is None
    assert columns.add_few(batch, {(1, True): 1}) is None
    assert columns.add_few(batch, {(1, 1 << 63): 1}) is None
    assert columns.add_few(batch, {(1,): 1}) is None
    assert columns.plus([batch, {(1, 1 << 63): 1}]) is None   # (kinds differ: added as dicts)
    assert dict(columns.plus([batch, {(1, 2): 1, (3, 4): -1}])) == {(1, 2): 2, (3, 4): -1}


def test_nullary_rows_are_added_as_they_are():
    """A batch of the nullary row () (no columns to compare) plus a dict of
    it: the general path (add_few once failed on it with an IndexError), which
    leaves them to be added as dicts (``None``)."""
    batch = consolidate([], (), np.array([1], dtype=np.int64))
    assert columns.plus([batch, {(): 2}]) is None
    assert columns.plus([{(): -1}, batch]) is None
