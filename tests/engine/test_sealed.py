"""Distinct Trace with a long thin loop's rows sealed into packed runs
(engine.operators.sealed), against the naive twin of tests/engine/test_twins.py:
random batches at random product-order times, the trace sealed at every
iteration (and its past at every commit), kept sealed or back in dicts at
commit, or moving on to the packed path with a larger batch; rows that do not
pack send it back to dicts."""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.operators.columns import Packing
from engine.operators.distinct import DistinctTraceNode
from engine.operators.sealed import SealedTrace
from engine.trace import MAX_PACKED, ZSetTrace
from tests.engine.harness import Holder, grid, integral, place, run_nested
from tests.engine.spec import distinct
from tests.engine.test_long_loops import late_grid, late_series

EPOCHS, ITERATIONS = 3, 5

weights = st.integers(-2, 2).filter(bool)


def series(rows, size: int = 4):
    return st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1), st.integers(0, ITERATIONS - 2)),
                           st.dictionaries(rows, weights, max_size=size), max_size=7)


int_rows = st.tuples(st.integers(0, 2), st.integers(0, 3))
mixed_rows = st.tuples(st.integers(0, 2),
                       st.one_of(st.integers(0, 3), st.sampled_from(["x", 2.5, 1 << 40])))


@contextlib.contextmanager
def sealing(mode: str, rows: int = 1):
    """Seal at every iteration once the epoch's dict holds ``rows``; ``keep``: stay sealed
    at commit, however small; ``back``: back to dicts at commit; ``pack``:
    stay, and batches of two rows or more take the packed path."""
    patches = [mock.patch.object(colbatch, "LONG_LOOP", 0),
               mock.patch.object(colbatch, "SEAL_ROWS", rows),
               mock.patch.object(colbatch, "THIN_ROWS", 1 << 20)]
    if mode in ("keep", "pack"):
        patches.append(mock.patch.object(colbatch, "SMALL_STATE", 0))
    if mode == "pack":
        patches.append(mock.patch.object(colbatch, "LOOP_ROWS", 2))
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        yield


def run(a: dict, mode: str, rows: int = 1) -> tuple[dict, list]:
    kinds = []
    with sealing(mode, rows):
        holder = Holder()
        node = DistinctTraceNode(holder)
        node.seal_mask = 0
        place([node], nested=True)
        original = node.evaluate

        def evaluate(i):
            original(i)
            kinds.append(type(node.trace) is SealedTrace)
        node.evaluate = evaluate
        out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
    return out, kinds


@pytest.mark.parametrize("mode, rows", [("keep", 1), ("keep", 3), ("back", 1), ("pack", 1)])
@settings(max_examples=200, deadline=None)
@given(series(int_rows))
@example({(0, 1): {(0, 0): 1}, (1, 0): {(0, 0): 1}, (1, 2): {(0, 0): -1}})
@example({(0, 0): {(0, 0): 1}, (0, 2): {(0, 0): -1}, (1, 1): {(0, 0): 1}})
def test_sealed_distinct_trace(mode, rows, a):
    out, _ = run(a, mode, rows)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == distinct(integral(a, t)), t


@settings(max_examples=100, deadline=None)
@given(series(mixed_rows))
def test_rows_that_do_not_pack_send_a_sealed_trace_back_to_dicts(a):
    out, _ = run(a, "keep")
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == distinct(integral(a, t)), t


def test_the_twins_do_seal():
    a = {(0, 0): {(1, 1): 1}, (0, 1): {(2, 2): 1}, (1, 0): {(1, 1): -1}}
    out, kinds = run(a, "keep")
    assert kinds[1] and kinds[-1], kinds
    _, kinds = run({(0, 0): {(1, "x"): 1}}, "keep")
    assert not any(kinds)


def test_a_sealed_collection_reads_dicts_and_runs():
    """The session's reads of a Distinct (Contents): rows of positive weight
    over the past's dict and runs."""
    with sealing("keep", rows=3):
        holder = Holder()
        node = DistinctTraceNode(holder)
        node.seal_mask = 0
        place([node], nested=True)
        run_nested({"a": holder}, {"a": {(0, 0): {(n, n): 1 for n in range(5)},
                                         (1, 1): {(0, 0): -1, (7, 7): 1}}}, [node], node, 2)
        trace = node.trace
        assert type(trace) is SealedTrace and trace.sealed_past and trace.past
        cursor = node.collection_cursor()
        assert sorted(cursor.positive()) == [(1, 1), (2, 2), (3, 3), (4, 4), (7, 7)]
        assert cursor.weight((0, 0)) == 0 and cursor.weights_of([(7, 7), (9, 9)]) == [1, 0]
        assert sorted(cursor.rows())[:2] == [(0, 0), (1, 1)]


def test_a_rollback_forgets_the_epochs_seals():
    plain = ZSetTrace(nested=True)
    plain.append({(1,): 1}, iteration=0)
    plain.commit()
    trace = SealedTrace.adopt(plain, Packing(1))
    trace.append({(2,): 1}, iteration=1)
    assert trace.seal_cur() and trace.epoch_cursor().weight((2,)) == 1
    trace.rollback()
    assert trace.epoch_cursor().weight((2,)) == 0 and not trace.epoch_cursor()
    assert trace.past_cursor().times((1,)) == [((0, 0), 1)]
    trace.commit()   # (the past's times are reported at the last finished epoch)
    assert trace.past_cursor().times((1,)) == [((1, 0), 1)]


@settings(max_examples=100, deadline=None)
@given(late_series)
@example({(0, MAX_PACKED + 1): {(0, 0): 1}, (1, 0): {(0, 0): 1},
          (1, MAX_PACKED + 1): {(0, 0): -1}})
def test_sealed_distinct_trace_past_the_packed_range(a):
    """Iterations past MAX_PACKED: the epoch's dict keeps dict histories, the
    runs any iteration."""
    with sealing("keep"):
        holder = Holder()
        node = DistinctTraceNode(holder)
        node.seal_mask = 0
        place([node], nested=True)
        out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for t in late_grid():
        assert integral(out, t) == distinct(integral(a, t)), t


@pytest.mark.parametrize("width, seals", [(1, True), (colbatch.THIN_ROWS + 1, False)])
def test_only_a_thin_loop_seals(width, seals):
    """A loop of more than THIN_ROWS rows an iteration keeps its dicts: most
    of its rows would be searched for in the runs."""
    with mock.patch.object(colbatch, "LONG_LOOP", 0), \
            mock.patch.object(colbatch, "SEAL_ROWS", 8):
        holder = Holder()
        node = DistinctTraceNode(holder)
        node.seal_mask = 0
        place([node], nested=True)
        kinds = []
        original = node.evaluate
        node.evaluate = lambda i: original(i) or kinds.append(type(node.trace) is SealedTrace)
        a = {(0, i): {(i, k): 1 for k in range(width)} for i in range(12)}
        out = run_nested({"a": holder}, {"a": a}, [node], node, 1)
    assert kinds[-1] is seals, kinds
    assert integral(out, (0, 11)) == distinct(integral(a, (0, 11)))
