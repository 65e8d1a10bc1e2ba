"""Loops past a million iterations: the traces' packed histories end at
``MAX_PACKED`` and later iterations are kept in dict histories (engine/trace.py).

The naive twins of the stateful child-scope operators (Distinct Trace, the
nested join over dict and columnar traces) at times whose iterations straddle
that boundary: the harness jumps the clock straight to them, so no test runs a
million iterations. A loop of that length end to end is timed by the
benchmarks (``counter`` in benchmarks/workloads.py) and run by
tests/cli/test_long_loops.py.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import Circuit
from engine.operators.distinct import DistinctTraceNode
from engine.trace import MAX_PACKED, Trace, ZSetTrace, encode, history_items
from tests.engine.harness import Holder, integral, place, run_nested
from tests.engine.spec import distinct
from tests.engine.test_twins import TRACES, batches, join_nodes, naive_join

EPOCHS = 3
#: Iterations on both sides of the last packed one.
LATE = (0, 1, MAX_PACKED - 1, MAX_PACKED, MAX_PACKED + 1, MAX_PACKED + 5, 3 * MAX_PACKED)
late_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1), st.sampled_from(LATE)),
                              batches, max_size=7)


def late_grid():
    return [(e, i) for e in range(EPOCHS) for i in LATE]


def test_histories_past_the_packed_range():
    assert history_items(encode(MAX_PACKED, -3)) == [(MAX_PACKED, -3)]
    assert history_items(encode(MAX_PACKED + 1, 2)) == [(MAX_PACKED + 1, 2)]
    t = Trace(nested=True, index=("cols", (0,)))
    t.append_rows({(1, 2): 1}, iteration=MAX_PACKED)
    t.append_rows({(1, 2): 1, (1, 3): -2}, iteration=MAX_PACKED + 1)
    t.append({(1,): {(1, 3): 2}}, iteration=MAX_PACKED + 1)
    t.commit()
    assert sorted(t.entries()) == [((1,), (1, 2), (0, MAX_PACKED), 1),
                                   ((1,), (1, 2), (0, MAX_PACKED + 1), 1)]
    z = ZSetTrace(nested=True)
    z.append({"a": 1}, iteration=2 ** 40)
    z.append({"a": -1}, iteration=2 ** 40)
    z.append({"b": 4}, iteration=2 ** 40 + 1)
    assert z.epoch_cursor().weight("a") == 0 and z.epoch_cursor().weight("b") == 4


@settings(max_examples=150, deadline=None)
@given(late_series)
@example({(0, MAX_PACKED + 1): {(0, 0): 1}, (1, 0): {(0, 0): 1},
          (1, MAX_PACKED + 1): {(0, 0): -1}})
def test_distinct_trace_past_the_packed_range(a):
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for t in late_grid():
        assert integral(out, t) == distinct(integral(a, t)), t


@TRACES
@settings(max_examples=100, deadline=None)
@given(late_series, late_series)
def test_nested_join_past_the_packed_range(columnar, a, b):
    left, right, join, nodes = join_nodes(nested=True, columnar=columnar)
    place(nodes, nested=True)
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for t in late_grid():
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


def test_no_iteration_limit_unless_asked():
    assert Circuit().max_iterations is None
    assert Circuit(max_iterations=10 ** 12).max_iterations == 10 ** 12
