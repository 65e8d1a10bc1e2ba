"""Two runs of one column, the second's iterations after the first's
(engine.columnar.interleave: a Distinct's appends within an epoch): under
RADIX_ROWS entries they merge by one stable sort of the keys concatenated,
above it by scatters at the second's positions among the first's. Both must
build the same run, and know alike whether its keys are unique."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.columnar import interleave, make_run

keys = st.lists(st.integers(-5, 20), max_size=15)


def entries(run) -> list:
    return list(zip(run.keys.tolist(), run.iterations.tolist(), run.weights.tolist()))


@settings(max_examples=300, deadline=None)
@given(keys, keys, st.booleans())
def test_a_short_interleave_sorts_to_what_the_scatters_build(first, second, distinct):
    if distinct:
        first, second = sorted(set(first)), sorted(set(second))
    a = make_run([np.array(first, dtype=np.int64)], np.arange(len(first)) % 2,
                 np.ones(len(first), dtype=np.int64), 0)
    b = make_run([np.array(second, dtype=np.int64)], np.full(len(second), 2),
                 np.full(len(second), -1), 0)
    if a is None or b is None:
        return
    a.unique, b.unique = a.is_unique(), b.is_unique()
    bounds = [(-5, 20), (0, 2)]
    saved = colbatch.RADIX_ROWS
    try:
        colbatch.RADIX_ROWS = 1 << 30
        short = interleave(a, b, bounds)
        colbatch.RADIX_ROWS = 0
        long = interleave(a, b, bounds)
    finally:
        colbatch.RADIX_ROWS = saved
    assert entries(short) == entries(long)
    assert entries(short) == sorted(entries(a) + entries(b))
    assert short.unique == long.unique == (len({*first, *second}) == len(first) + len(second)
                                           if distinct else short.unique)
