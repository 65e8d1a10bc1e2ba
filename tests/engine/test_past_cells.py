"""A Distinct Trace's past read through its large runs summed by cell
(engine.operators.densesums.PastCells: each row's weight and iteration, when
every row is at one iteration) gives what probing each run gives: on random
histories of pairs at product-order times (rows at several iterations, where
the cells are refused or dropped, and rows each at one iteration, a chain's
closure's shape, where they serve), the same outputs and past, step by step,
the cells kept up at commit and checked against the runs."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.operators import densesums
from tests.engine.test_distinct_columns import boxed, run
from tests.engine.test_longtable import EPOCHS, ITERATIONS, histories, limits

pairs = st.tuples(st.integers(-3, 12), st.integers(0, 9))
epochs = st.lists(st.dictionaries(pairs, st.integers(-2, 2).filter(bool), max_size=12),
                  min_size=EPOCHS, max_size=EPOCHS)


def at_one_iteration(epochs: list) -> dict:
    """A history whose every row is at one iteration, from its columns."""
    history: dict = {}
    for e, batch in enumerate(epochs):
        for row, w in batch.items():
            history.setdefault((e, (row[0] + row[1]) % ITERATIONS), {})[row] = w
    return history


@contextmanager
def every_run_summed():
    old = densesums.CELLS_FLOOR
    densesums.CELLS_FLOOR = 1
    try:
        yield
    finally:
        densesums.CELLS_FLOOR = old


def check(trace) -> None:
    """The cells, where they describe the past, hold its covered runs' sums."""
    cells = trace.past_cells
    if cells is None or cells.rest(trace.past) is None:
        return
    sums: dict = {}
    for covered in cells.covered:
        for key, j, w in zip(covered.keys.tolist(), covered.iterations.tolist(),
                             covered.weights.tolist()):
            sums[key] = (j, sums.get(key, (j, 0))[1] + w)
    keys = np.array(sorted(sums), dtype=np.int64)
    index = cells.cells_of(keys)
    held = dict(zip(keys.tolist(), zip(cells.iterations[index].tolist(),
                                      cells.weights[index].tolist())))
    assert {k: v for k, v in held.items() if v[1]} == {k: v for k, v in sums.items() if v[1]}
    assert int(np.count_nonzero(cells.weights)) == sum(1 for v in sums.values() if v[1])


@settings(max_examples=150, deadline=None)
@given(histories, st.booleans())
def test_cells_give_what_the_runs_give(history, columnar):
    with limits(), boxed(), every_run_summed():
        assert (run(history, True, columnar, False, cells=True, visit=check)
                == run(history, True, columnar, False))


@settings(max_examples=150, deadline=None)
@given(epochs)
def test_rows_at_one_iteration_are_read_through_the_cells(chosen):
    history = at_one_iteration(chosen)
    before = cells_read()
    with limits(), boxed(), every_run_summed():
        assert (run(history, True, False, False, cells=True, visit=check)
                == run(history, True, False, False))
    if any(chosen[e] and any(chosen[:e]) for e in range(EPOCHS)):  # (a past read: the cells)
        assert cells_read() > before


def cells_read() -> int:
    """The past's probes through the cells: matches found
    (:meth:`~engine.operators.densesums.PastCells.gather`) or read densely
    through a table's cells (:meth:`~engine.operators.densesums.PastCells.at_cells`)."""
    return colbatch.COUNTS["past_cells"] + colbatch.COUNTS["past_cells_dense"]
