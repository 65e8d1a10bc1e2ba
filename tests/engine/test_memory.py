"""Compaction: memory grows with the data, not with the number of epochs."""

from __future__ import annotations

import pytest

from engine import Circuit
from engine.aggregates import count
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.operators.join import TraceNode
from tests.engine.circuits import transitive_closure


def stored_entries(circuit: Circuit) -> dict:
    sizes = {}
    for node in circuit.all_nodes:
        if isinstance(node, (TraceNode, DistinctNode, DistinctTraceNode)):
            sizes[node.global_id] = node.trace.size()
    for name, sink in circuit.sinks.items():
        sizes[name] = len(sink.collection)
    return sizes


def test_thousand_insert_then_retract_epochs_leave_the_traces_as_they_were():
    circuit = transitive_closure()
    base = {(i, i + 1): 1 for i in range(8)}
    extra = {(8, 0): 1, (3, 20): 1, (20, 21): 1}  # closes a cycle, adds a branch
    circuit.step({"edge": base})
    baseline = stored_entries(circuit)
    assert sum(baseline.values()) > 0
    for _ in range(500):
        circuit.step({"edge": extra})
        circuit.step({"edge": {row: -w for row, w in extra.items()}})
    assert circuit.epoch == 1001
    assert stored_entries(circuit) == baseline


def test_root_operators_compact_too():
    circuit = Circuit()
    a = circuit.source("a", arity=2)
    b = circuit.source("b", arity=2)
    joined = a.index_by((1,)).join(b.index_by((0,)), lambda k, x, y: (x[0], y[1]))
    circuit.output("joined", joined.distinct(), keep=True)
    circuit.output("count", a.index_by((0,)).aggregate(count), keep=True)
    circuit.output("anti", a.index_by((1,)).antijoin(b.index_by((0,))), keep=True)
    circuit.step({"a": {(1, 2): 1, (2, 3): 1}, "b": {(2, 5): 1}})
    baseline = stored_entries(circuit)
    results = {node.global_id: dict(node.results) for node in circuit.all_nodes
               if hasattr(node, "results")}
    for i in range(1000):
        batch = {"a": {(1, 100 + i): 1, (7, 2): 1}, "b": {(3, 4): 1}}
        circuit.step(batch)
        circuit.step({name: {r: -w for r, w in rows.items()} for name, rows in batch.items()})
    assert stored_entries(circuit) == baseline
    assert {node.global_id: dict(node.results) for node in circuit.all_nodes
            if hasattr(node, "results")} == results


def test_a_long_step_hands_what_it_freed_back_and_a_short_one_does_not(monkeypatch):
    from engine import memory

    trims = []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(1))
    circuit = transitive_closure()
    monkeypatch.setattr(memory, "TRIM_AFTER", 3600.0)   # every step is short
    circuit.step({"edge": {(1, 2): 1}})
    circuit.step({"edge": {(2, 3): 1}}, dry_run=True)
    assert trims == []
    monkeypatch.setattr(memory, "TRIM_AFTER", 0.0)      # every step is long
    monkeypatch.setattr(memory, "TRIM_GROWTH", 0)       # and grew the process enough
    monkeypatch.setattr(memory, "TRIM_SHARE", -1.0)     # and its state
    monkeypatch.setattr(memory, "_trimmed_at", 0)
    monkeypatch.setattr(memory, "_allocated_at", 0)
    circuit.step({"edge": {(2, 3): 1}})
    circuit.step({"edge": {(3, 4): 1}}, dry_run=True)
    assert trims == [1, 1]
    assert circuit.collection("path") == {(1, 2): 1, (2, 3): 1, (1, 3): 1}


def long_steps_counted(monkeypatch) -> list:
    """Every step long, TRIM_GROWTH 32 MiB from now; the trims it would make
    listed (and not made)."""
    from engine import memory

    trims = []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(1))
    monkeypatch.setattr(memory, "TRIM_AFTER", 0.0)
    monkeypatch.setattr(memory, "TRIM_GROWTH", 32 << 20)
    monkeypatch.setattr(memory, "_trimmed_at", memory.resident())
    monkeypatch.setattr(memory, "_allocated_at", memory.allocated())
    return trims


def test_a_long_step_trims_only_once_the_process_has_grown(monkeypatch):
    """Long updates that reuse freed memory do not trim (the pages would be
    faulted in again by the next); one after TRIM_GROWTH of growth does."""

    trims = long_steps_counted(monkeypatch)
    circuit = transitive_closure()
    circuit.step({"edge": {(1, 2): 1}})
    circuit.step({"edge": {(2, 3): 1}})
    assert trims == []
    grown = b"\1" * (64 << 20)   # resident: every page written
    circuit.step({"edge": {(3, 4): 1}})
    assert trims == [1]
    circuit.step({"edge": {(4, 5): 1}})   # grown no further since
    assert trims == [1] and len(grown) == 64 << 20


def test_a_long_step_whose_state_did_not_grow_keeps_its_free_pages(monkeypatch):
    """A long update that freed its temporaries (resident growth the allocator
    holds as free pages) leaves them for the next update to reuse: no trim
    until the allocated bytes grow by TRIM_SHARE."""
    from engine import memory

    if not memory.allocated():
        pytest.skip("no mallinfo2 (not glibc)")
    trims = long_steps_counted(monkeypatch)
    resident = memory.resident()
    monkeypatch.setattr(memory, "resident", lambda: resident + (1 << 30))  # pages held free
    circuit = transitive_closure()
    circuit.step({"edge": {(1, 2): 1}})
    assert trims == []
    grown = b"\1" * int(memory.TRIM_SHARE * memory.allocated() + (1 << 20))
    circuit.step({"edge": {(2, 3): 1}})
    assert trims == [1] and len(grown)
