"""Iterations of a few rows: the short paths of the child-scope operators and
the scheduler (a loop deriving one row per iteration runs them a million times).

- ``NestedJoinNode.evaluate`` goes straight to its row loops when both deltas
  are small and no output is due now; ``evaluate_general`` does the rest
  (output due from an earlier iteration, large deltas, spilled traces).
- ``DistinctTraceNode.evaluate`` likewise for a small batch with no row
  scheduled now.
- Traces hand out the same cursor until their epoch or part changes.
- The generated iteration passes a plus's one live input through.

The twins run long, thin series (one or two rows at iterations up to 12, over
three epochs) at random product-order times, and check every time of the
grid; the path tests check that both paths run on a series made to need each.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import Circuit
from engine.operators.distinct import DistinctTraceNode
from engine.trace import Trace, ZSetTrace
from tests.engine.harness import Holder, grid, integral, place, run_nested
from tests.engine.spec import distinct
from tests.engine.test_twins import join_nodes, naive_join

EPOCHS, ITERATIONS = 3, 13

weights = st.integers(-2, 2).filter(bool)
rows = st.tuples(st.integers(0, 2), st.integers(0, 3))
thin = st.dictionaries(rows, weights, min_size=1, max_size=2)
thin_series = st.dictionaries(st.tuples(st.integers(0, EPOCHS - 1),
                                        st.integers(0, ITERATIONS - 2)), thin, max_size=12)


def counted(node, method: str) -> dict:
    """Count the calls of ``node.method`` (an instance attribute shadows it)."""
    calls = {"n": 0}
    original = getattr(node, method)

    def wrapper(*args):
        calls["n"] += 1
        return original(*args)

    setattr(node, method, wrapper)
    return calls


@settings(max_examples=150, deadline=None)
@given(thin_series, thin_series)
@example({(0, 5): {(0, 0): 1}, (1, 0): {(0, 1): 1}}, {(0, 9): {(0, 2): 1}, (1, 1): {(0, 3): 1}})
def test_nested_join_on_thin_series(a, b):
    left, right, join, nodes = join_nodes(nested=True)
    place(nodes, nested=True)
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


def test_nested_join_takes_both_paths():
    # epoch 0 leaves b's row at iteration 6; a's row at (1, 2) pairs with it at
    # (1, 6): output due at a later iteration, which the general path emits
    a = {(0, 1): {(0, 0): 1}, (1, 2): {(0, 1): 1}, (1, 3): {(1, 0): 1}}
    b = {(0, 6): {(0, 2): 1}, (1, 4): {(1, 5): -1}}
    left, right, join, nodes = join_nodes(nested=True)
    place(nodes, nested=True)
    general = counted(join, "evaluate_general")
    every = counted(join, "evaluate")
    out = run_nested({"a": left, "b": right}, {"a": a, "b": b}, nodes, join, 2)
    assert out[(1, 6)] == {((0, 1), (0, 2)): 1}
    assert 0 < general["n"] < every["n"]
    for t in grid(2, 8):
        assert integral(out, t) == naive_join(integral(a, t), integral(b, t)), t


@settings(max_examples=200, deadline=None)
@given(thin_series)
@example({(0, 4): {(0, 0): 1}, (1, 0): {(0, 0): 1}, (1, 2): {(0, 0): -1}})
def test_distinct_trace_on_thin_series(a):
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    out = run_nested({"a": holder}, {"a": a}, [node], node, EPOCHS)
    for t in grid(EPOCHS, ITERATIONS):
        assert integral(out, t) == distinct(integral(a, t)), t


def test_distinct_trace_takes_both_paths():
    # the row's old weight at iteration 4 schedules it there in epoch 1
    a = {(0, 4): {(0, 0): 1}, (1, 1): {(0, 0): 1}, (1, 2): {(0, 1): 1}}
    holder = Holder()
    node = DistinctTraceNode(holder)
    place([node], nested=True)
    rows = counted(node, "evaluate_rows")
    few = counted(node, "few_rows")
    every = counted(node, "evaluate")
    out = run_nested({"a": holder}, {"a": a}, [node], node, 2)
    # evaluated at (1, 4) although nothing arrived then: the row due there
    # takes the general path (the short one is for times with nothing due)
    assert out[(1, 4)] == {(0, 0): -1}
    assert node.heap == [] and node.scheduled == {}
    # evaluated at (0, 0), (0, 4), (1, 0), (1, 1), (1, 2), (1, 4): all but
    # (1, 4) on the short path (few_rows: the two iterations 0 are empty,
    # (0, 4) has no past epoch, (1, 1) and (1, 2) read it), (1, 4) on the
    # general one (evaluate_rows)
    assert (every["n"], few["n"], rows["n"]) == (6, 5, 1)
    for t in grid(2, 6):
        assert integral(out, t) == distinct(integral(a, t)), t


def test_cursors_are_made_again_when_the_trace_moves_on():
    t = Trace(nested=True, index=("cols", (0,)))
    past, cur = t.past_cursor(), t.epoch_cursor()
    assert t.past_cursor() is past and t.epoch_cursor() is cur
    t.append_rows({(1, 2): 1}, iteration=3)
    assert t.epoch_cursor() is cur and cur.seek((1,)) and cur.weight((1, 2)) == 1
    t.commit()
    assert t.epoch_cursor() is not cur and not t.epoch_cursor()
    past = t.past_cursor()
    assert past.epoch == 0 and past.seek((1,)) and past.times((1, 2)) == [((0, 3), 1)]
    t.append_rows({(1, 2): -1}, iteration=3)
    t.rollback()
    assert not t.epoch_cursor() and t.past_cursor() is past
    rows = ZSetTrace(nested=True)
    cur = rows.epoch_cursor()
    rows.append({(1,): 1}, iteration=2)
    assert rows.epoch_cursor() is cur and cur.weight((1,)) == 1
    rows.commit()
    assert rows.past_cursor().weight((1,)) == 1 and not rows.epoch_cursor()


def held(trace) -> bool:
    """Whether every cursor ``trace`` keeps reads one of its current parts."""
    parts = [cursor.groups if isinstance(trace, Trace) else cursor.rows_
             for cursor in trace.cursors if cursor is not None]
    return all(part is trace.past or part is trace.cur for part in parts)


def test_a_trace_keeps_no_cursor_over_a_part_it_replaced():
    # a cursor over a replaced part would keep that dict (an epoch's entries) alive
    for trace in (Trace(nested=True, index=("cols", (0,))), ZSetTrace(nested=True)):
        rows = {(1, 2): 1} if isinstance(trace, Trace) else {(1,): 1}
        add = trace.append_rows if isinstance(trace, Trace) else trace.append

        for epoch in range(3):   # the second and third commits merge into a past
            trace.past_cursor(), trace.epoch_cursor()
            add(rows, iteration=epoch)
            trace.epoch_cursor()
            trace.commit()
            assert held(trace), epoch
        trace.epoch_cursor()
        add(rows, iteration=1)
        trace.rollback()
        assert held(trace)
        trace.past_cursor(), trace.epoch_cursor()
        trace.past, trace.cur = {}, {}   # as an operator moving its state to runs does
        assert held(trace) and trace.cursors == [None, None]


def counter_circuit(extra: bool = False, word_at: int | None = None):
    """``c(n + 1) :- c(n), bound(b), n < b.`` over the sources ``c`` (the seed)
    and ``bound``: a child with a join, a plus of an Import and the join's
    rows, and a distinct. ``extra``: a second live input into the plus (the
    same rows through a linear node), so that it sums. ``word_at``: the row
    after ``word_at - 1`` is the word ``("end",)`` (and the counter ends)."""
    circuit = Circuit()
    seed = circuit.source("c", arity=1)
    bound = circuit.source("bound", arity=1)
    last = word_at - 1 if word_at is not None else None
    with circuit.child("c") as child:
        c = child.feedback("c", arity=1)
        limits = child.import_(bound)
        step = (c.stream.index_by(()).join(limits.index_by(()), lambda k, n, b: (n[0], b[0]))
                .filter(lambda row: type(row[0]) is int and row[0] < row[1])
                .map(lambda row: ("end",) if row[0] == last else (row[0] + 1,)))
        parts = [step] + ([step.map(lambda row: row)] if extra else [])
        total = child.import_(seed).plus(*parts).distinct()
        c.connect(total)
        circuit.output("c", child.export(total), keep=True)
    return circuit, child


def test_a_plus_of_an_import_and_one_stream_passes_it_through():
    for extra in (False, True):
        circuit, child = counter_circuit(extra)
        steps = [({"c": {(0,): 1}, "bound": {(30,): 1}}, range(31)),
                 ({"bound": {(30,): -1, (10,): 1}}, range(11)),
                 ({"bound": {(40,): 1}}, range(41)),
                 ({"c": {(0,): -1}, "bound": {(5,): 1}}, ())]
        for inputs, expected in steps:
            circuit.step(inputs)
            assert circuit.collection("c") == {(n,): 1 for n in expected}, (extra, inputs)
        plus = child.nodes[-2] if extra else None
        source = child._compiled[1].source
        passes = [line for line in source.splitlines() if ".out or EMPTY" in line
                  and ".held" not in line]
        assert len(passes) == (0 if extra else 1), source
        assert plus is None or "plus" in plus.describe_args()
