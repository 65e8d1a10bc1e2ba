"""Key-less join traces kept in a log of typed arrays (engine.logtrace).

The twins of tests/engine/test_twins.py for a join with no key columns (a cross
product), its traces moved into a :class:`~engine.logtrace.LogTrace` from the
first append on (and kept there across commits) or from the third row on (and
back to dicts at each commit, as small traces go), at random product-order
times; rows of strings and floats send a log back to dicts mid-epoch.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.colbatch import ColBatch
from engine.columnar import Unfit
from engine.logtrace import LOG_ROWS, LogTrace
from engine.node import Export
from engine.operators.join import NestedJoinNode, TraceNode
from engine.trace import Trace
from tests.engine.harness import Holder, grid, integral, place, run_nested
from tests.engine.spec import index_with, join_stream

EPOCHS, ITERATIONS = 3, 5
KEYLESS = ("cols", ())

weights = st.integers(-2, 2).filter(bool)
int_rows = st.tuples(st.integers(0, 2), st.integers(0, 3))
mixed_rows = st.tuples(st.integers(0, 2),
                       st.one_of(st.integers(0, 3), st.sampled_from(["x", 2.5])))


def series(rows):
    return st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1), st.integers(0, ITERATIONS - 2)),
                           st.dictionaries(rows, weights, max_size=4), max_size=7)


def combine(key, left, right):
    return (left, right)


def naive_cross(a: dict, b: dict) -> dict:
    """The specification's join of two collections under the one key ``()``."""
    return join_stream(combine, index_with(lambda row: (), a), index_with(lambda row: (), b))


@contextlib.contextmanager
def logging_from(rows: int, keep: bool):
    """Key-less traces go into logs from iteration 0 once an epoch appended
    ``rows`` rows; ``keep``: and stay there at commit, however small."""
    with mock.patch.object(colbatch, "LONG_LOOP", 0), \
            mock.patch.object(colbatch, "LOG_FROM", rows), \
            mock.patch.object(colbatch, "SMALL_STATE", 0 if keep else colbatch.SMALL_STATE):
        yield


def cross_join(self_join: bool = False):
    left, right = Holder(), Holder()
    if self_join:
        right = left
    left_trace = TraceNode(left, KEYLESS, True)
    right_trace = left_trace if self_join else TraceNode(right, KEYLESS, True)
    join = NestedJoinNode(left, right, left_trace, right_trace, combine)
    nodes = [left_trace] + ([] if self_join else [right_trace]) + [join]
    place(nodes, nested=True)
    return left, right, join, nodes


MODES = pytest.mark.parametrize("rows, keep", [(0, True), (3, False)], ids=["log", "switch"])


@MODES
@settings(max_examples=150, deadline=None)
@given(series(int_rows), series(int_rows))
@example({(1, 0): {(0, 0): 1}}, {(0, 2): {(0, 1): 1}})  # old entry at a later iteration
def test_keyless_join(rows, keep, a, b):
    with logging_from(rows, keep):
        left, right, join, nodes = cross_join()
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_cross(integral(a, t), integral(b, t)), t


@MODES
@settings(max_examples=100, deadline=None)
@given(series(int_rows))
def test_keyless_self_join(rows, keep, a):
    with logging_from(rows, keep):
        left, _, join, nodes = cross_join(self_join=True)
        out = run_nested({"a": left}, {"a": a}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        collection = integral(a, t)
        assert integral(out, t) == naive_cross(collection, collection), t


@settings(max_examples=100, deadline=None)
@given(series(mixed_rows), series(mixed_rows))
def test_logs_go_back_to_dicts_for_rows_they_cannot_hold(a, b):
    """A string or a float in a logged trace's rows turns it back into a dict
    trace, with every entry, between two appends."""
    with logging_from(0, keep=True):
        left, right, join, nodes = cross_join()
        out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_cross(integral(a, t), integral(b, t)), t


def test_a_long_loop_logs_its_rows_into_runs():
    """A thin loop's trace: a log of arrays, sealed into runs every LOG_ROWS
    entries, read back whole by a key-less cursor; nothing is kept per row."""
    with logging_from(100, keep=False):
        holder = Holder()
        node = TraceNode(holder, KEYLESS, True)
        node.clock_start(0, 0)
        for i in range(2 * LOG_ROWS + 10):
            holder.out = {(i,): 1}
            node.clock_stop(1, i)
            if i == 98:
                assert type(node.trace) is Trace
        trace = node.trace
        assert type(trace) is LogTrace
        assert trace.log_size() == (2 * LOG_ROWS + 10 - 100) % LOG_ROWS
        assert [len(run) for run in trace.tail] == [LOG_ROWS]  # sealed, waiting to be read
        cursor = trace.epoch_cursor()
        assert trace.log_size() == 0 and len(trace.cur) == 1
        assert cursor.seek(()) and len(list(cursor.values())) == 2 * LOG_ROWS + 10
        assert cursor.split((5,), 5) == (0, 1, None) and cursor.split((5,), 9) == (1, 0, None)
        node.clock_stop(0, 0)
    assert type(node.trace) is Trace  # small: back to dicts at commit
    assert node.trace.collection(()) == {(i,): 1 for i in range(2 * LOG_ROWS + 10)}


def test_a_row_that_does_not_fit_leaves_the_log_as_it_was():
    trace = LogTrace()
    trace.append_rows({(1,): 1, (2,): 1}, iteration=0)
    for bad in ({(3,): 1, ("x",): 1}, {(1 << 63,): 1}, {(3, 4): 1}, {(3,): 1 << 64}):
        with pytest.raises(Unfit):
            trace.append_rows(bad, iteration=1)
        assert trace.log_size() == 2
    assert trace.to_trace().collection(()) == {(1,): 1, (2,): 1}
    with pytest.raises(Unfit):
        LogTrace().append_rows({(): 1})


def test_an_exports_small_batches_are_logged_until_a_row_does_not_fit():
    """An Export's epoch difference: once ``acc`` holds EXPORT_LOG_FROM rows, small
    batches go to a RowLog, summed into one columnar batch at the end; a row
    the log cannot hold (a string, an int past int64) ends it, losing nothing."""
    for tail in ([{(1 << 64,): 1}, {(4,): 1}], [{("x",): 1}, {(4,): 1}]):
        with mock.patch.object(colbatch, "EXPORT_LOG_FROM", 2):
            inner = Holder()
            export = Export(Holder(), inner)
            export.clock_start(0, 0)
            for batch in [{(1,): 1, (2,): 1}, {(3,): 1}, {(1,): -1}, {(5,): 2}] + tail:
                inner.out = batch
                export.accumulate()
            export.evaluate(0)
        expected = {(2,): 1, (3,): 1, (5,): 2, (4,): 1, next(iter(tail[0])): 1}
        assert dict(export.out) == expected


def test_an_exports_log_joins_the_larger_of_its_parts():
    """A long loop's tail of small batches: its few logged rows go into the
    large dict sum (no dict made into columns); a thin loop's many logged rows
    are the columnar part."""
    for first, logged, columnar in ((6, 1, False), (2, 5, True)):
        with mock.patch.object(colbatch, "EXPORT_LOG_FROM", 2):
            inner = Holder()
            export = Export(Holder(), inner)
            export.clock_start(0, 0)
            batches = [{(n,): 1 for n in range(first)}]
            batches += [{(100 + n,): 1} for n in range(logged)]
            for batch in batches:
                inner.out = batch
                export.accumulate()
            export.evaluate(0)
        assert (type(export.out) is ColBatch) is columnar
        assert dict(export.out) == {row: 1 for batch in batches for row in batch}
