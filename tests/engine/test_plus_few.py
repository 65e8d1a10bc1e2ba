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


def test_the_nullary_row_is_added_the_general_way():
    """A batch of the one row with no columns (a rule's head with no
    variables, an antijoin on nothing) plus a few rows: none to compare by."""
    batch = ColBatch([], (), np.array([2], dtype=np.int64))
    assert columns.add_few(batch, {(): 1}) is None
    for few, total in (({(): 1}, {(): 3}), ({(): -2}, {})):
        found = columns.plus([batch, few])   # (None: the linear node adds them as dicts)
        assert found is None or dict(found) == total


small_rows = st.tuples(st.integers(-3, 3), st.integers(-3, 3))
small_bigs = st.dictionaries(small_rows, weights, min_size=1, max_size=12)
small_fews = st.dictionaries(small_rows, weights, min_size=1, max_size=colbatch.PLUS_FEW)


@settings(max_examples=300, deadline=None)
@given(small_bigs, small_fews)
def test_a_batch_of_packed_rows_takes_a_few_by_their_keys_and_stays_packed(big, few):
    """A join's consolidated output has its rows packed (``packed``, in order):
    the rows added are found by their packed keys, and the sum's keys are
    the packing of its rows, in order (the Distinct takes them as they are)."""
    table = list(big)
    cols = [np.array([r[c] for r in table], dtype=np.int64) for c in (0, 1)]
    batch = consolidate(cols, ("i", "i"), np.array(list(big.values()), dtype=np.int64),
                        [(-3, 3), (-3, 3)])
    assert batch.packed is not None
    before = colbatch.COUNTS["plus_packed"]
    found = columns.add_few(batch, few)
    assert colbatch.COUNTS["plus_packed"] == before + 1
    expected = dict_sum(big, few)
    assert dict(found) == expected and len(found) == len(expected)
    assert list(zip(*(c.tolist() for c in found.columns))) == sorted(expected)
    if found.bounds is not None:
        assert found.packed.tolist() == colbatch.pack_rows(found.columns, found.bounds).tolist()
    else:
        assert len(found.packed) == len(expected)


def test_a_row_outside_the_packing_adds_a_packed_batch_the_general_way():
    batch = consolidate([np.array([1, 2]), np.array([5, 6])], ("i", "i"),
                        np.array([1, 1]), [(1, 2), (5, 6)])
    assert batch.packed is not None
    found = columns.add_few(batch, {(1 << 40, 0): 1})
    assert dict(found) == {(1, 5): 1, (2, 6): 1, (1 << 40, 0): 1} and found.packed is None
