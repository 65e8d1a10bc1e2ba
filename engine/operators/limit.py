"""Size limits: stop a child circuit's loop once a stream's collection is large.

A :class:`SizeLimit` watches one stream of a child circuit (a recursive
relation after its distinct). It keeps the size of the stream's collection: the
sum of the weights of every difference it has seen, over the iterations of every
committed epoch and of the current one. The child circuit asks it after each
iteration (:meth:`reached`); once the size is at least ``limit``, the epoch ends
there, as at a fixed point (Soufflé's ``.limitsize``: a soft limit, checked
between iterations, so the collection may pass it by what the last iteration
added).

An epoch whose imports remove anything (a negative weight at iteration 0) is
not limited: it runs to its fixed point, so that a removal is carried through
(a loop cut short would keep rows whose support is gone). Only epochs that add
to the loop's inputs, where every collection only grows, end at the limit.

Ending an epoch early is safe for the operators: what was due at later
iterations (a Feedback's held difference, future join output, scheduled
distinct rows) is dropped when the next epoch starts, so the history is that of
a loop whose later iterations received nothing.

>>> from engine import Circuit
>>> circuit = Circuit()
>>> seed = circuit.source("seed", arity=1)
>>> with circuit.child("count") as child:
...     c = child.feedback("c", arity=1)
...     new = child.import_(seed).plus(c.stream.map(lambda r: (r[0] + 1,))).distinct()
...     c.connect(new)
...     child.limit(new, 5)
...     out = child.export(new)
>>> circuit.output("c", out)
>>> sorted(circuit.step({"seed": {(0,): 1}})["c"])
[(0,), (1,), (2,), (3,), (4,)]
"""

from __future__ import annotations

from engine.node import Node


class SizeLimit(Node):
    """Counts the collection of its input stream (module docstring)."""

    kind = "limit"
    observable = True   # the loop reads it: never dropped as dead

    def __init__(self, source: Node, limit: int, label: str = ""):
        super().__init__([source], label)
        self.limit = limit
        self.committed = 0   # the size after the last committed epoch
        self.size = 0        # the size now

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if batch:
            self.size += sum(batch.values())

    def reached(self) -> bool:
        return self.size >= self.limit

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.committed = self.size

    def rollback(self) -> None:
        self.size = self.committed

    def describe_args(self) -> str:
        return f"limit {self.limit}"
