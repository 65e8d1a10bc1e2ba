"""Nodes: the vertices of a circuit, and their clock protocol.

A **Node** reads the outputs of its ``inputs`` (edges that order evaluation)
and sets ``out``, its output at the current time: a Z-set (row -> weight) or an
indexed Z-set (key -> value -> weight). ``reads`` lists nodes whose *state* it
uses without an ordering edge (a join reads the traces of its inputs; a
Feedback reads the stream it closes the loop on). Every node has a local id
(its index in its circuit) and a global id (the path of local ids from the
root).

The clock protocol, with ``scope`` 0 for the root clock (epochs) and 1 for a
child circuit's clock (iterations):

* ``clock_start(0, e)``: a new epoch begins (per-epoch buffers are reset);
* ``evaluate(i)``: compute ``out`` at the current time (``i`` is the iteration
  in a child circuit, 0 in the root);
* ``clock_stop(1, i)``: iteration ``i`` of a child circuit is over (traces
  append the iteration's batch, Feedback captures its input);
* ``pending()``: the earliest later iteration of this epoch at which the node
  holds work (future join output, scheduled distinct keys), or ``None``;
* ``clock_stop(0, e)``: the epoch succeeded (traces fold it into the past);
* ``rollback()``: the epoch failed; forget everything it added.
"""

from __future__ import annotations

from engine.zset import EMPTY


class Node:
    """A vertex of a circuit (see the module docstring)."""

    kind = "operator"
    iteration_hook = False  # True when clock_stop(1, i) does something
    may_hold_work = False   # True when pending() can return an iteration
    observable = False      # True when evaluating it has an effect of its own (inspect)

    def __init__(self, inputs=(), label: str = "", reads=()):
        self.inputs = list(inputs)
        self.reads = list(reads)
        self.label = label
        self.out = EMPTY
        self.circuit = None
        self.local_id = -1

    @property
    def global_id(self) -> tuple[int, ...]:
        path = [self.local_id]
        circuit = self.circuit
        while circuit is not None and circuit.node is not None:
            path.append(circuit.node.local_id)
            circuit = circuit.parent
        return tuple(reversed(path))

    def evaluate(self, i: int) -> None:
        """Compute ``out`` at the current time."""

    def clock_start(self, scope: int, time: int) -> None:
        pass

    def clock_stop(self, scope: int, time: int) -> None:
        pass

    def pending(self) -> int | None:
        return None

    def rollback(self) -> None:
        pass

    def prepare(self) -> None:
        """Called once when the circuit is finalized (after fusion)."""

    def replace_input(self, old: "Node", new: "Node") -> None:
        self.inputs = [new if n is old else n for n in self.inputs]
        self.reads = [new if n is old else n for n in self.reads]

    def describe_args(self) -> str:
        """Extra text for ``describe()`` (operator parameters)."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label or ''} #{self.local_id}>"
