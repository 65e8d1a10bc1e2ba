"""The nested join's bind-once closure (``left_thin`` of
``engine.operators.join.compile_join``, which the generated loop calls when
the right input is an Import) against ``left_nested`` on the same cursors:
the same output and the same pairs buffered for later iterations, the
closure made once and called for every batch, on dict and columnar right
traces, with and without each part (this epoch's, past epochs')."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.columnar import ColumnarTrace
from engine.operators.join import compile_join, read_sources
from engine.trace import Trace

KEY = ("cols", (0,))
rows = st.tuples(st.integers(0, 4), st.integers(0, 6))
weights = st.integers(-2, 2).filter(bool)
#: (row, weight, iteration) appended to the right trace
entries = st.lists(st.tuples(rows, weights, st.integers(0, 5)), max_size=25)
#: the left batches, each at its iteration
batches = st.lists(st.tuples(st.dictionaries(rows, weights, max_size=4), st.integers(1, 6)),
                   min_size=1, max_size=6)
STAGES = [("filter", lambda row: row[1] != 3), ("map", lambda row: (row[0], row[1] % 4))]


def right_trace(past, current, columnar: bool):
    """A child's right trace keyed by column 0: ``past`` as its finished
    epoch, ``current`` appended in this one (as runs if ``columnar``)."""
    trace = Trace(nested=True, index=KEY)
    for part in (past, current):
        for row, w, j in sorted(part, key=lambda entry: entry[2]):
            trace.append_rows({row: w}, j)
        if part is past:
            trace.commit()
    return ColumnarTrace.from_trace(trace) if columnar else trace


def buckets() -> tuple[dict, callable]:
    found: dict = {}
    return found, lambda j: found.setdefault(j, {})


@settings(max_examples=150, deadline=None)
@given(entries, entries, batches, st.booleans(), st.booleans())
def test_the_thin_closure_gives_what_left_nested_gives(past, current, lefts, columnar,
                                                        spec):
    right = right_trace(past, current, columnar)
    left = Trace(nested=True, index=KEY)
    combine = ((0, 0), (1, 1)) if spec else (lambda k, lv, rv: (lv[1] + k[0], rv[1]))
    functions = compile_join(combine, STAGES, KEY, KEY, read_sources(right, True),
                             read_sources(left, True))
    now, before = right.epoch_cursor(), right.past_cursor()
    nested_later, nested_future = buckets()
    thin_later, thin_future = buckets()
    one = functions["left_thin"](now, before, thin_future)
    for batch, i in sorted(lefts, key=lambda pair: pair[1]):
        expected: dict = {}
        functions["left_nested"](expected, batch, now, before, i, nested_future)
        assert one(batch, i) == expected
        assert thin_later == nested_later


def test_the_twin_covers_both_parts_and_later_iterations():
    # (the hypothesis twin's cases include these; here each is certain)
    past = [((1, 2), 1, 4), ((1, 5), 1, 0)]
    current = [((1, 4), 1, 1), ((2, 0), 2, 0)]
    for columnar in (False, True):
        right = right_trace(past, current, columnar)
        left = Trace(nested=True, index=KEY)
        functions = compile_join(((0, 0), (1, 1)), [], KEY, KEY, read_sources(right, True),
                                 read_sources(left, True))
        later, future = buckets()
        one = functions["left_thin"](right.epoch_cursor(), right.past_cursor(), future)
        assert one({(1, 9): 1}, 2) == {(1, 4): 1, (1, 5): 1}
        assert later == {4: {(1, 2): 1}}
        assert one({(3, 9): 1}, 2) == {}
