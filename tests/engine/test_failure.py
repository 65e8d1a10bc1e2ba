"""A failed step raises a clear error and leaves the circuit exactly as it was."""

from __future__ import annotations

import pytest

from engine import (
    ArityError,
    BuildError,
    Circuit,
    EngineError,
    EpochError,
    IterationLimitError,
    OperatorError,
    WeightError,
)
from engine.trace import Trace, ZSetTrace
from tests.engine.circuits import closure, transitive_closure

SKIP = {"circuit", "inputs", "reads", "functions", "run", "combine", "fn", "callback",
        "child", "stages", "own_stages", "index", "own_index", "label", "local_id"}


def freeze(value):
    if isinstance(value, (Trace, ZSetTrace)):
        return ("trace", freeze(value.past), freeze(value.cur), freeze(value.staged),
                value.epoch)
    if isinstance(value, dict):
        return ("dict", sorted(((repr(k), freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [freeze(v) for v in value])
    if isinstance(value, set):
        return ("set", sorted(map(repr, value)))
    return repr(value)


def snapshot(circuit: Circuit):
    """Every piece of operator state, in a comparable form."""
    state = [circuit.epoch]
    for node in circuit.all_nodes:
        fields = {k: freeze(v) for k, v in vars(node).items() if k not in SKIP}
        state.append((node.global_id, type(node).__name__, sorted(fields.items())))
    return state


def chain(n, start=0):
    return {(i, i + 1): 1 for i in range(start, start + n)}


def test_wrong_arity_names_the_relation_and_changes_nothing():
    circuit = transitive_closure()
    circuit.step({"edge": chain(3)})
    before = snapshot(circuit)
    with pytest.raises(ArityError, match="relation `edge`: row \\(1, 2, 3\\) has 3 columns"):
        circuit.step({"edge": {(7, 8): 1, (1, 2, 3): 1}})
    with pytest.raises(ArityError, match="relation `edge`: row \\[1, 2\\] is a list"):
        circuit.step({"edge": [[1, 2]]})
    with pytest.raises(WeightError, match="relation `edge`"):
        circuit.step({"edge": {(1, 2): "1"}})
    with pytest.raises(EngineError, match="no source named `edges`"):
        circuit.step({"edges": {(1, 2): 1}})
    assert snapshot(circuit) == before
    circuit.step({"edge": {(3, 4): 1}})
    assert set(circuit.collection("path")) == closure(set(chain(4)))


def test_epoch_out_of_order():
    circuit = transitive_closure()
    circuit.step({"edge": chain(2)}, epoch=0)
    before = snapshot(circuit)
    with pytest.raises(EpochError, match="at epoch 1; got a step for epoch 3"):
        circuit.step({"edge": chain(2, 5)}, epoch=3)
    assert snapshot(circuit) == before
    circuit.step({"edge": {(2, 3): 1}}, epoch=1)
    assert circuit.epoch == 2


def test_trace_rejects_an_epoch_out_of_order():
    trace = Trace(nested=True)
    trace.append({(1,): {(1, 2): 1}}, iteration=0, epoch=0)
    with pytest.raises(EpochError):
        trace.append({(1,): {(1, 3): 1}}, iteration=0, epoch=1)


def test_iteration_limit_names_the_child_and_restores_state():
    circuit = transitive_closure(max_iterations=6)
    circuit.step({"edge": chain(4)})
    before = snapshot(circuit)
    with pytest.raises(IterationLimitError, match="child circuit `path`.*6 iterations"):
        circuit.step({"edge": chain(6, 4)})
    assert snapshot(circuit) == before
    # still usable, and still right
    circuit.step({"edge": {(1, 2): -1}})
    assert set(circuit.collection("path")) == closure(set(chain(4)) - {(1, 2)})
    circuit.step({"edge": {(1, 2): 1, (4, 5): 1}})
    assert set(circuit.collection("path")) == closure(set(chain(5)))


def closure_refusing_99() -> Circuit:
    """Transitive closure whose join raises on an edge to node 99."""
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)

    def combine(key, p, e):
        if e[1] == 99:
            raise ValueError("no 99 please")
        return (p[0], e[1])

    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)), combine,
                                             label="path(x, z) :- path(x, y), edge(y, z).")
        new = e.plus(step).distinct()
        fb.connect(new)
        path = child.export(new)
    circuit.output("path", path, keep=True)
    return circuit


def test_user_function_error_in_a_child_restores_state():
    circuit = closure_refusing_99()
    circuit.step({"edge": chain(3)})
    before = snapshot(circuit)
    with pytest.raises(OperatorError, match="path\\(x, z\\) :- .*ValueError: no 99") as info:
        circuit.step({"edge": {(3, 99): 1, (5, 6): 1}})
    assert isinstance(info.value.__cause__, ValueError)
    assert snapshot(circuit) == before
    assert circuit.step({"edge": {(3, 4): 1}})["path"] == {(i, 4): 1 for i in range(4)}


def test_user_function_error_in_the_root_restores_state():
    circuit = Circuit()
    rows = circuit.source("r", arity=1)
    counted = rows.map(lambda r: (1 // r[0],), label="inverse").distinct()
    circuit.output("out", counted, keep=True)
    circuit.step({"r": {(1,): 1}})
    before = snapshot(circuit)
    with pytest.raises(OperatorError, match="inverse.*ZeroDivisionError"):
        circuit.step({"r": {(2,): 1, (0,): 1}})
    assert snapshot(circuit) == before
    assert circuit.step({"r": {(2,): 1}}) == {"out": {(0,): 1}}


def test_build_errors():
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    with pytest.raises(BuildError, match="already exists"):
        circuit.source("edge", arity=2)
    with pytest.raises(BuildError, match="never connected"):
        with circuit.child("c") as child:
            child.feedback("x")
    with circuit.child("d") as child:
        with pytest.raises(BuildError, match="import_"):
            child.import_(edge).plus(edge)
        inner = child.import_(edge)
        with pytest.raises(BuildError, match="export"):
            circuit.output("inner", inner)
    circuit.output("edge", edge)
    circuit.step({})
    with pytest.raises(BuildError, match="after its first step"):
        edge.map(lambda r: r)


def test_zero_weights_in_a_batch_mean_nothing():
    circuit = transitive_closure()
    assert circuit.step({"edge": {(1, 2): 0, (2, 3): 1}})["path"] == {(2, 3): 1}
    assert circuit.step({"edge": {(2, 3): 0}})["path"] == {}


def test_user_function_error_at_a_later_iteration_names_the_node_and_restores_state():
    # The error comes at iteration 2 (path(3, 4) joined with edge(4, 99)): from
    # the generated loop of the later iterations, not the first one.
    circuit = closure_refusing_99()
    circuit.step({"edge": chain(3)})
    before = snapshot(circuit)
    with pytest.raises(OperatorError, match="path\\(x, z\\) :- .*ValueError: no 99") as info:
        circuit.step({"edge": {(5, 6): 1, (6, 7): 1, (7, 8): 1, (8, 99): 1}})
    assert isinstance(info.value.__cause__, ValueError)
    assert snapshot(circuit) == before
    assert circuit.step({"edge": {(3, 4): 1}})["path"] == {(i, 4): 1 for i in range(4)}


def test_error_in_a_trace_append_at_a_later_iteration_is_not_renamed():
    # Only a failing evaluate is an OperatorError of its node; what a trace
    # append (clock_stop(1, i): append_at) raises at iteration 1 goes up as it
    # is (as at iteration 0).
    circuit = transitive_closure()
    circuit.finalize()
    child = circuit.children()[0]
    trace_node = next(n for n in child.stoppers if n.kind == "operator")
    original = trace_node.append_at

    def append_at(batch, time):
        if time == 1:
            raise KeyError("append failed")
        original(batch, time)
    trace_node.append_at = append_at
    with pytest.raises(OperatorError) as info:  # the root names the child node
        circuit.step({"edge": chain(4)})
    assert isinstance(info.value.__cause__, KeyError)
    assert "path" in str(info.value)
