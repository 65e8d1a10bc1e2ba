"""An Export's epoch of a Distinct Trace summed by concatenation
(:func:`engine.colbatch.concat_fresh`): the Distinct's outputs over an epoch's
iterations add up to -1, 0 or 1 per row, so batches whose weights are all 1
hold no row twice and need no sort. Checked against the general sum
(:func:`engine.operators.columns.plus`, dicts added up)."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import ColBatch, concat_fresh
from engine.node import Export
from engine.operators.distinct import DistinctTraceNode
from tests.engine.harness import Holder

VALUES = st.one_of(st.integers(-3, 3), st.integers(-(1 << 63), (1 << 63) - 1),
                   st.sampled_from(["a", "b"]))


def summed(batches: list) -> dict:
    out: dict = {}
    for batch in batches:
        for row, weight in dict(batch).items():
            out[row] = out.get(row, 0) + weight
    return {row: weight for row, weight in out.items() if weight}


def split(rows: list, cuts: list, as_columns: list) -> list:
    """``rows`` (distinct) in consecutive batches, some in columns."""
    batches, start = [], 0
    for at, columns in zip(sorted(cuts) + [len(rows)], as_columns + [True]):
        batch = {row: 1 for row in rows[start:at]}
        start = max(start, at)
        found = ColBatch.from_rows(batch) if columns and batch else None
        batches.append(found if found is not None else batch)
    return batches


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 1 << 40)), unique=True,
                max_size=40),
       st.lists(st.integers(0, 40), max_size=4), st.lists(st.booleans(), min_size=4,
                                                          max_size=4))
def test_concat_fresh_is_the_sum_of_disjoint_batches_of_weight_one(rows, cuts, as_columns):
    batches = split(rows, cuts, as_columns)
    found = concat_fresh(batches)
    if not rows:
        assert found is None
        return
    assert isinstance(found, ColBatch)
    assert dict(found) == summed(batches) == {row: 1 for row in rows}
    if found.bounds is not None:  # the bounds it claims hold
        for column, (low, high) in zip(found.columns, found.bounds):
            assert low <= int(column.min()) and int(column.max()) <= high


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES), unique=True, min_size=1, max_size=20),
       st.integers(0, 19), st.sampled_from([-1, 2, 1]))
def test_concat_fresh_declines_what_it_cannot_concatenate(rows, at, weight):
    """A weight other than 1 or -1, or not all the same, or columns of
    different kinds: ``None`` (the general sum then); otherwise the rows,
    each once."""
    batches = [{rows[0]: weight}, {row: 1 for row in rows[1:]}]
    found = concat_fresh(batches)
    kinds = {ColBatch.from_rows(b).kinds if ColBatch.from_rows(b) is not None else None
             for b in batches if b}
    same = weight == 1 or (weight == -1 and len(rows) == 1)
    if not same or None in kinds or len(kinds) > 1:
        assert found is None
    else:
        assert dict(found) == {row: weight if row == rows[0] else 1 for row in rows}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=12),
                min_size=1, max_size=5),
       st.lists(st.sampled_from([1, 1, 1, -1]), min_size=5, max_size=5))
def test_an_exports_epoch_of_a_distinct_is_its_batches_summed(iterations, signs):
    """The Export of a Distinct Trace: each iteration's output in columns;
    when every weight is 1, or every weight -1, the concatenation is taken
    (no sort), else the general sum; either way the epoch's sum of the
    batches."""
    inner = DistinctTraceNode(Holder())
    export = Export(Holder(), inner)
    export.clock_start(0, 0)
    seen: set = set()
    batches = []
    for rows, sign in zip(iterations, signs):
        batch = {row: sign for row in rows if row not in seen}  # a row once, as a Distinct's
        seen.update(batch)
        inner.out = ColBatch.from_rows(batch) if batch else {}
        if batch:
            batches.append(batch)
        export.accumulate()
    returned = []

    def recording(parts):
        returned.append(concat_fresh(parts))
        return returned[-1]

    with mock.patch.object(colbatch, "concat_fresh", recording):
        export.evaluate(0)
    assert dict(export.out) == summed(batches)
    all_one = len({w for b in batches for w in b.values()}) == 1  # (all 1 or all -1)
    assert len(returned) == (1 if batches else 0)
    if batches:  # concatenated exactly when every weight is 1
        assert (returned[0] is not None) == all_one
        assert (export.out is returned[0]) == all_one
