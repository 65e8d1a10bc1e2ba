"""Delay, Delay Trace, Trace Append, Untimed Trace Append, Consolidate, Integrate.

* **Delay** ``z^-1``: ``out(t) = in(t - 1)``: the previous epoch in the root, the
  previous iteration of the same epoch in a child circuit (nothing at 0). It
  is linear: ``delta(z^-1(x)) = z^-1(delta(x))``.
* **Trace Append** adds a batch to a trace at a time; **Untimed Trace Append**
  adds it without a time (the trace is then just a Z-set: the root-scope
  integral). **Delay Trace** is the trace as of the previous time.
* **Consolidate** merges all deltas of a trace into one Z-set.
* **Integrate** (Trace Append followed by Consolidate): ``out(t) = I(x)(t)``,
  the whole collection, as a stream.

The specification's own definitions on plain data are in ``tests/engine/spec.py``.
"""

from __future__ import annotations

from engine.node import Node
from engine.trace import ZSetTrace
from engine.zset import EMPTY, add_into


class DelayNode(Node):
    """Delay: the input one tick earlier (epoch in the root, iteration in a child)."""

    iteration_hook = True
    may_hold_work = True

    def __init__(self, source: Node, label: str = ""):
        super().__init__([source], label)
        self.held = EMPTY       # the input at the previous tick
        self.committed = EMPTY  # root: the input of the last committed epoch

    @property
    def nested(self) -> bool:
        return self.circuit is not None and self.circuit.nested

    def evaluate(self, i: int) -> None:
        if self.nested:
            self.out = self.held if i > 0 else EMPTY
        else:
            self.out = self.committed

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 1:
            self.held = self.inputs[0].out
        else:
            self.held = EMPTY
            if not self.nested:
                self.committed = dict(self.inputs[0].out) or EMPTY

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.held = EMPTY

    def pending(self) -> int | None:
        return 0 if self.nested and self.held else None

    def rollback(self) -> None:
        self.held = EMPTY

    def describe_args(self) -> str:
        return "delay"


class IntegrateNode(Node):
    """Integrate: ``out(t) = I(x)(t)``, the sum of the input at all times ``<= t``
    (product order). Costs a copy of the collection per tick: for inspection and
    for building other operators, not for hot paths."""

    def __init__(self, source: Node, nested: bool, label: str = ""):
        super().__init__([source], label)
        self.trace = ZSetTrace(nested=nested)

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        trace = self.trace
        past = trace.past_cursor()
        out = {row: past.weight(row, until=i) for row in past.rows()}
        if trace.nested:  # the past at times <= (e, i), this epoch's earlier iterations
            current = trace.epoch_cursor()
            for row in current.rows():
                out[row] = out.get(row, 0) + current.weight(row)
            out = {row: w for row, w in out.items() if w}
            trace.append(batch, i)
        add_into(out, batch)
        self.out = out or EMPTY

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            if not self.trace.nested:
                self.trace.append(self.inputs[0].out)
            self.trace.commit()

    def rollback(self) -> None:
        self.trace.rollback()

    def describe_args(self) -> str:
        return "integrate"
