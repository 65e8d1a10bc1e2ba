"""A child circuit's iterations run in one call (``engine.schedule.Iteration.loop``).

While a Feedback carries data, ``run_epoch`` calls the generated ``loop``,
which runs the iterations itself, the join's and the Distinct Trace's few-row
paths inline (the Distinct's one-row formula, ``one_for``, and the
join's bind-once closure, ``left_thin``, called directly). The twins below run the same
epochs with the loop and with the one-iteration-a-call ``iteration`` only
(``Iteration._loop`` made to give nothing) and compare every output and the
collections; the counts show the loop ran.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch, logtrace, schedule
from engine.circuit import Circuit
from engine.logtrace import LogTrace
from engine.node import Export
from engine.operators import distinct as distinct_module
from engine.operators.distinct import DistinctTraceNode
from engine.operators.join import NestedJoinNode, TraceNode
from tests.engine.circuits import closure, transitive_closure
from tests.engine.test_small_iterations import counter_circuit


def run(make, steps: list, output: str) -> list:
    """Every step's output difference and the collection after it."""
    circuit = make()
    seen = []
    for inputs in steps:
        out = circuit.step(inputs)
        seen.append((dict(out[output].items()), dict(circuit.collection(output).items())))
    return seen


def run_without_loop(make, steps: list, output: str) -> list:
    """:func:`run` with one call an iteration (no generated loop)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schedule.Iteration, "_loop", lambda self, *args: None)
        return run(make, steps, output)


def counting_one(patch) -> list:
    """Counts (in ``[0]``) the calls of the Distinct's one-row formula, which
    only the generated loop calls (``DistinctTraceNode.loop_lines``), and in
    ``[1]`` those on a sealed trace, in ``[2]`` the last iteration of one."""
    calls = [0, 0, 0]
    made = DistinctTraceNode.one_for

    def one_for(self, ready):
        one, sealed = made(self, ready), ready[5] is not None

        def counted(row, w, i):
            calls[0] += 1
            calls[1] += sealed
            calls[2] = i
            return one(row, w, i)

        return counted

    patch.setattr(DistinctTraceNode, "one_for", one_for)
    return calls


def counting_thin(patch) -> list:
    """Counts (in ``[0]``) the calls of the join's bind-once closures
    (``left_thin``'s ``one``), which only the generated loop makes (when the
    join's right input is an Import), and in ``[1]`` the closures made."""
    calls = [0, 0]
    made = NestedJoinNode._thin

    def _thin(self):
        thin = made(self)
        if thin is None:
            return None
        factory = thin[3]

        def counted_factory(now, before, future):
            one = factory(now, before, future)
            calls[1] += 1

            def counted(rows, i):
                calls[0] += 1
                return one(rows, i)

            return counted

        self.thin = (*thin[:3], counted_factory)
        return self.thin

    patch.setattr(NestedJoinNode, "_thin", _thin)
    return calls


def toggles(relation_rows: dict) -> list:
    """Steps that insert each row not present and retract each present
    one (the collections stay sets: a negative weight would make a loop
    that never ends), from lists of rows to toggle per step and relation."""
    present: dict = {name: set() for name in relation_rows}
    steps = []
    for k in range(max(map(len, relation_rows.values()))):
        step = {}
        for name, per_step in relation_rows.items():
            batch = {}
            for row in (per_step[k] if k < len(per_step) else ()):
                batch[row] = -1 if row in present[name] else 1
            for row, w in batch.items():
                (present[name].discard if w < 0 else present[name].add)(row)
            step[name] = batch
        steps.append(step)
    return steps


def toggled(rows) -> st.SearchStrategy:
    return st.lists(st.sets(rows, max_size=2), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(toggled(st.tuples(st.integers(0, 6))), toggled(st.tuples(st.integers(0, 40))))
def test_the_loop_gives_what_one_call_an_iteration_gives_on_a_counter(seeds, bounds):
    steps = toggles({"c": seeds, "bound": bounds})
    make = lambda: counter_circuit(False)[0]  # noqa: E731
    before = colbatch.COUNTS["loop_iterations"]
    fused = run(make, steps, "c")
    ran = colbatch.COUNTS["loop_iterations"] - before
    plain = run_without_loop(make, steps, "c")
    assert fused == plain
    if any(len(out) > 2 for out, _ in plain):
        assert ran  # (an epoch of three iterations or more runs the loop)


@pytest.mark.parametrize("seal", [False, True])
def test_the_one_row_formula_gives_what_the_step_gives_through_epochs(seal):
    # a counter through epochs that leave a past (the formula with w1, w2 and
    # rows scheduled at their next time: a seed below one counted before),
    # the first one none (no_past's); with seal, long enough that the
    # Distinct seals its rows into runs (the sealed cursors' formula)
    top = colbatch.SEAL_ROWS + 300 if seal else 90
    steps = [{"c": {(0,): 1}, "bound": {(top,): 1}},
             {"c": {(5,): 1}},
             {"c": {(0,): -1}},
             {"bound": {(top,): -1, (top + 70,): 1}},
             {"c": {(0,): 1, (5,): -1}, "bound": {(40,): 1}}]
    make = lambda: counter_circuit(False)[0]  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        ones = counting_one(patch)
        fused = run(make, steps, "c")
    assert fused == run_without_loop(make, steps, "c")
    assert ones[0] > top // 2  # (the first epoch alone runs it ~top times)
    assert bool(ones[1]) == seal
    assert fused[-1][1] == {(n,): 1 for n in range(top + 71)}
    if seal:  # the loop seals the first epoch's rows (few_rows at i & seal_mask == 0)
        circuit, child = counter_circuit(False)
        circuit.step(steps[0])
        assert next(node for node in child.nodes if type(node) is DistinctTraceNode).sealed


def test_the_joins_closure_gives_what_its_nested_loop_gives_through_epochs():
    # the counter's join reads the bound's trace (an Import: no appends in
    # the loop) through left_thin's closure, made once a thin and loop call:
    # in the first epoch this epoch's part only, then a past one too (the
    # bound retracted and another inserted: both parts, weights cancelling)
    steps = [{"c": {(0,): 1}, "bound": {(60,): 1}},
             {"bound": {(60,): -1, (90,): 1}},
             {"c": {(0,): -1, (3,): 1}},
             {"bound": {(20,): 1}}]
    make = lambda: counter_circuit(False)[0]  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        calls = counting_thin(patch)
        fused = run(make, steps, "c")
    assert fused == run_without_loop(make, steps, "c")
    assert calls[0] > 90 and calls[1] < calls[0] // 10  # (made rarely, called often)
    assert fused[-1][1] == {(n,): 1 for n in range(3, 91)}


@settings(max_examples=60, deadline=None)
@given(toggled(st.tuples(st.integers(0, 7), st.integers(0, 7))))
def test_the_loop_gives_what_one_call_an_iteration_gives_on_a_closure(edges):
    steps = toggles({"edge": edges})
    before = colbatch.COUNTS["loop_iterations"]
    fused = run(transitive_closure, steps, "path")
    ran = colbatch.COUNTS["loop_iterations"] - before
    assert fused == run_without_loop(transitive_closure, steps, "path")
    total: dict = {}
    for step in steps:
        for row, w in step["edge"].items():
            total[row] = total.get(row, 0) + w
    assert set(fused[-1][1]) == closure({row for row, w in total.items() if w > 0})
    if any(len(out) > 2 for out, _ in fused):
        assert ran  # (an epoch of three iterations or more runs the loop)


def test_a_long_loop_logs_its_trace_and_export():
    # past LOG_FROM rows the loop's own trace is a LogTrace and the Export
    # logs its rows (the long thin loop's paths), from the generated loop
    circuit, child = counter_circuit(False)
    bound = colbatch.LOG_FROM + 3 * 4096
    circuit.step({"c": {(0,): 1}, "bound": {(5,): 1}})  # a past: the Export logs
    before = colbatch.COUNTS["loop_iterations"]
    circuit.step({"bound": {(bound,): 1}})
    assert colbatch.COUNTS["loop_iterations"] - before >= bound - 10
    trace_node = next(n for n in child.stoppers if type(n) is TraceNode
                      and n.inputs[0].kind == "feedback")
    assert type(trace_node.trace) is LogTrace
    assert circuit.collection("c") == {(n,): 1 for n in range(bound + 1)}
    out = circuit.step({"bound": {(bound,): -1, (7,): 1}})
    assert dict(out["c"].items()) == {(n,): -1 for n in range(8, bound + 1)}
    assert circuit.collection("c") == {(n,): 1 for n in range(8)}


def without_log_appends(patch) -> list:
    """Makes generated iterations call ``append_at`` for every batch (no
    ``TraceNode.append_lines``); with ``patch`` of the next run counting the
    calls of ``append_at`` (in ``[0]``)."""
    calls = [0]
    append_at = TraceNode.append_at

    def counted(self, batch, time):
        calls[0] += 1
        append_at(self, batch, time)

    patch.setattr(TraceNode, "append_at", counted)
    return calls


def with_trace(make, steps: list) -> list:
    """:func:`run`'s outputs and collections of ``c`` and, after each step,
    the entries of the trace the loop appends to (as dicts)."""
    circuit, child = make()
    seen = []
    for inputs in steps:
        out = circuit.step(inputs)
        trace = next(n for n in child.stoppers if type(n) is TraceNode
                     and n.inputs[0].kind == "feedback").trace
        entries = trace.to_trace() if type(trace) is LogTrace else trace
        seen.append((dict(out["c"].items()), dict(circuit.collection("c").items()),
                     type(trace), entries.past, entries.cur))
    return seen


def test_the_loops_log_appends_give_what_append_at_gives():
    # past LOG_FROM rows the counter's trace is a LogTrace: the generated
    # loop appends its one-row batches to the log's arrays itself (across
    # LOG_ROWS seals), not through append_at; against append_at for every
    # batch: the same outputs and trace entries, through an epoch deriving
    # the rows, one moving the bound and one retracting every row (weights
    # -1 into a log)
    bound = colbatch.LOG_FROM + 2 * logtrace.LOG_ROWS + 100
    steps = [{"c": {(0,): 1}, "bound": {(bound,): 1}},
             {"bound": {(bound,): -1, (bound - 50,): 1}},
             {"c": {(0,): -1}},
             {"c": {(0,): 1}, "bound": {(10,): 1}}]
    make = lambda: counter_circuit(False)  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        fast = without_log_appends(patch)
        fused = with_trace(make, steps)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TraceNode, "append_lines", lambda *args: None)
        calls = without_log_appends(patch)
        assert fused == with_trace(make, steps)
    # (two epochs' rows past LOG_FROM, each two seals' worth, not append_at)
    assert calls[0] - fast[0] > 4 * logtrace.LOG_ROWS
    assert fused[0][2] is LogTrace and fused[2][3] == {}
    assert fused[-1][1] == {(n,): 1 for n in range(bound - 49)}


def counting_accumulate(patch) -> list:
    """Counts (in ``[0]``) the calls of ``Export.accumulate``."""
    calls = [0]
    accumulate = Export.accumulate

    def counted(self):
        calls[0] += 1
        accumulate(self)

    patch.setattr(Export, "accumulate", counted)
    return calls


def test_the_loops_export_log_appends_give_what_accumulate_gives():
    # past EXPORT_LOG_FROM rows an Export logs the counter's one-row
    # batches: the generated loop appends them to the log's arrays itself;
    # against accumulate for every batch, through the epochs of the test
    # above (a retraction of every row: weights -1 into the log) and a word
    # after the log began (the arrays refuse it: accumulate takes it)
    bound = colbatch.EXPORT_LOG_FROM + 2000
    steps = [{"c": {(0,): 1}, "bound": {(bound,): 1}},
             {"bound": {(bound,): -1, (bound - 50,): 1}},
             {"c": {(0,): -1}},
             {"c": {(0,): 1}, "bound": {(10,): 1}}]
    word = [{"c": {(0,): 1}, "bound": {(bound + 10,): 1}}, {"c": {(0,): -1}}]
    makes = [(lambda: counter_circuit(False), steps),
             (lambda: counter_circuit(word_at=bound), word)]
    for make, epochs in makes:
        with pytest.MonkeyPatch.context() as patch:
            fast = counting_accumulate(patch)
            fused = with_trace(make, epochs)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Export, "accumulate_lines",
                          lambda self, node, inner, call, setup: [f"{call}()"])
            calls = counting_accumulate(patch)
            assert fused == with_trace(make, epochs)
        assert calls[0] - fast[0] > 1000  # (rows past EXPORT_LOG_FROM: not accumulate)
    assert fused[0][1] == {**{(n,): 1 for n in range(bound)}, ("end",): 1}


def counter_to_a_word(top: int):
    """The counter of ``counter_circuit`` up to ``top``, whose last row is a
    word: ``c(n + 1) :- c(n), n < top - 1`` and ``c("end") :- c(top - 1)``
    (a row that no sealed run can hold, arriving after the seals)."""
    circuit = Circuit()
    seed = circuit.source("c", arity=1)
    with circuit.child("c") as child:
        c = child.feedback("c", arity=1)
        step = (c.stream.filter(lambda row: type(row[0]) is int)
                .map(lambda row: (row[0] + 1,) if row[0] < top - 1 else ("end",)))
        total = child.import_(seed).plus(step).distinct()
        c.connect(total)
        circuit.output("c", child.export(total), keep=True)
    return circuit, child


def test_a_row_the_sealed_runs_cannot_hold_leaves_the_one_row_formula():
    # the loop's one-row formula on a sealed trace only for a row that packs
    # (ready's pack): the word goes to few_rows, which unseals the trace
    top = colbatch.SEAL_ROWS + 200
    make = lambda: counter_to_a_word(top)[0]  # noqa: E731
    steps = [{"c": {(0,): 1}}, {"c": {(0,): -1}}, {"c": {(0,): 1}}]
    with pytest.MonkeyPatch.context() as patch:
        ones = counting_one(patch)
        circuit, child = counter_to_a_word(top)
        circuit.step(steps[0])
        distinct = next(node for node in child.nodes if type(node) is DistinctTraceNode)
        assert ones[1] and distinct.no_columns  # (sealed, then a word: back to dicts)
        fused = run(make, steps, "c")
    assert fused == run_without_loop(make, steps, "c")
    assert fused[0][1] == {**{(n,): 1 for n in range(top)}, ("end",): 1}


def test_a_row_the_log_cannot_hold_leaves_the_loops_log_append():
    # a word after LOG_FROM rows: the log's arrays refuse it (nothing
    # appended), append_at takes it (the trace back to dicts)
    top = colbatch.LOG_FROM + 300
    make = lambda: counter_circuit(word_at=top)[0]  # noqa: E731
    steps = [{"c": {(0,): 1}, "bound": {(top + 5,): 1}}, {"c": {(0,): -1}},
             {"c": {(0,): 1}}]
    fused = run(make, steps, "c")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TraceNode, "append_lines", lambda *args: None)
        assert fused == run(make, steps, "c")
    assert fused[0][1] == {**{(n,): 1 for n in range(top)}, ("end",): 1}
    circuit, child = counter_circuit(word_at=top)
    seen = []
    with pytest.MonkeyPatch.context() as patch:
        append_at = TraceNode.append_at
        patch.setattr(TraceNode, "append_at", lambda self, batch, time: (
            seen.append((type(self.trace), dict(batch))), append_at(self, batch, time)))
        circuit.step(steps[0])
    trace_node = next(n for n in child.stoppers if type(n) is TraceNode
                      and n.inputs[0].kind == "feedback")
    assert (LogTrace, {("end",): 1}) in seen  # (the loop's arrays refused it)
    assert type(trace_node.trace) is not LogTrace and trace_node.appended == top + 1


def test_past_the_packed_iterations_the_loop_leaves_the_one_row_formula():
    # the one-row formula appends packed histories (20 bits of iteration);
    # past distinct's MAX_PACKED (made 40 here) the loop calls few_rows
    steps = [{"c": {(0,): 1}, "bound": {(100,): 1}}]
    make = lambda: counter_circuit(False)[0]  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(distinct_module, "MAX_PACKED", 40)
        ones = counting_one(patch)
        fused = run(make, steps, "c")
    assert ones[0] and ones[2] <= 40
    assert fused[0][1] == {(n,): 1 for n in range(101)}
