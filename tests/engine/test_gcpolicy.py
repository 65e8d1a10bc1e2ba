"""The garbage collector while a step runs (engine.gcpolicy): young
collections rarer inside the step, the caller's settings exactly as they were
after it — after a step, a failed step, a memory-limit error and through the
API's transactions — and cyclic garbage made inside a step still collected."""

from __future__ import annotations

import gc

import pytest

import datalog
from engine import Circuit, MemoryLimitError, OperatorError, gcpolicy
from tests.engine.circuits import transitive_closure


def settings():
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


@pytest.fixture(params=["default", "custom", "disabled"])
def callers_gc(request):
    """The caller's settings: CPython's own, thresholds of its choosing, or
    the collector off; put back after the test whatever happens."""
    saved = gc.get_threshold(), gc.isenabled()
    if request.param == "custom":
        gc.set_threshold(500, 7, 3)
    elif request.param == "disabled":
        gc.disable()
    yield settings()
    gc.set_threshold(*saved[0])
    if saved[1]:
        gc.enable()
    else:
        gc.disable()


def recording_circuit(seen: list, fail_on=None) -> Circuit:
    circuit = Circuit()

    def look(row):
        seen.append(settings())
        if row == fail_on:
            raise ValueError("no such row")
        return row

    circuit.output("out", circuit.source("a", arity=1).map(look), keep=True)
    return circuit


def test_a_step_raises_the_young_threshold_and_puts_everything_back(callers_gc):
    enabled, threshold, frozen = callers_gc
    seen: list = []
    circuit = recording_circuit(seen)
    circuit.step({"a": {(1,): 1}})
    if enabled:
        assert seen == [(True, (gcpolicy.YOUNG, *threshold[1:]), frozen)]
    else:
        assert seen == [callers_gc]          # off stays off, nothing raised
    assert settings() == callers_gc
    circuit.step({"a": {(2,): 1}}, dry_run=True)
    assert settings() == callers_gc
    assert circuit.collection("out") == {(1,): 1}


def test_a_failed_step_puts_the_callers_settings_back(callers_gc):
    seen: list = []
    circuit = recording_circuit(seen, fail_on=(3,))
    with pytest.raises(OperatorError, match="no such row"):
        circuit.step({"a": {(3,): 1}})
    assert len(seen) == 1 and settings() == callers_gc
    circuit.step({"a": {(4,): 1}})          # and the next step runs as usual
    assert circuit.collection("out") == {(4,): 1} and settings() == callers_gc


def test_the_memory_limit_error_puts_the_callers_settings_back(callers_gc):
    held = []
    circuit = Circuit()
    # each row makes the process 64 MiB larger (written, so resident)
    grown = circuit.source("a", arity=1).map(lambda row: held.append(b"x" * (64 << 20)) or row)
    circuit.output("out", grown, keep=True)
    circuit.limit_memory(1)                 # the bound: the resident memory at the step's start
    with pytest.raises(MemoryLimitError):
        circuit.step({"a": {(1,): 1}})
    held.clear()
    assert settings() == callers_gc
    assert circuit.collection("out") == {} and circuit.epoch == 0


def test_a_step_inside_a_step_restores_in_order():
    outer = gc.get_threshold()
    inner = transitive_closure()
    circuit = Circuit()

    def nested(row):
        inner.step({"edge": {row: 1}})
        assert gc.get_threshold()[0] == gcpolicy.YOUNG   # still the outer step's
        return row

    circuit.output("out", circuit.source("a", arity=2).map(nested), keep=True)
    circuit.step({"a": {(1, 2): 1}})
    assert gc.get_threshold() == outer
    assert inner.collection("path") == {(1, 2): 1}


def test_cycles_made_inside_a_long_step_are_collected_inside_it():
    """The collector is not off during a step: a functor leaving reference
    cycles behind does not grow the process without bound."""
    assert gc.isenabled() and gc.get_threshold()[0] < gcpolicy.YOUNG
    collected = []

    def count(phase, info):
        if phase == "stop":
            collected.append(info["collected"])

    class Node:
        pass

    def cyclic(row):
        node = Node()
        node.self = node            # a cycle: freed only by the collector
        return row

    circuit = Circuit()
    circuit.output("out", circuit.source("a", arity=1).map(cyclic), keep=False)
    gc.collect()
    gc.callbacks.append(count)
    try:
        circuit.step({"a": {(i,): 1 for i in range(3 * gcpolicy.YOUNG)}})
    finally:
        gc.callbacks.remove(count)
    assert sum(collected) >= gcpolicy.YOUNG   # 3 * YOUNG cycles (2 objects each) made


PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl q(x: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
q(100 / (y - x)) :- edge(x, y).
"""


def test_transactions_leave_the_callers_settings_as_they_were(callers_gc):
    session = datalog.Program(PROGRAM).session()
    assert settings() == callers_gc
    session.insert("edge", *[(i, i + 1) for i in range(200)])
    assert settings() == callers_gc
    with pytest.raises(datalog.DatalogError, match="division by zero"):
        session.insert("edge", (5, 5))
    assert settings() == callers_gc
    with session.transaction(dry_run=True) as tx:
        tx.retract("edge", (0, 1))
    session.retract("edge", (0, 1))
    assert settings() == callers_gc
    assert session.size("path") == 199 * 200 // 2
