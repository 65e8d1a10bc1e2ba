"""Greedy matching (root scope only): the rows of positive weight, least first,
each kept unless a kept row shares one of its keys.

Given key functions ``k_1 .. k_n`` and the collection ``I(e)`` (rows of positive
weight), the kept set ``M(e)`` is built by taking the rows of ``I(e)`` in
ascending order and keeping a row when no row kept before it has the same
``k_j`` for any ``j``. The output is its difference::

    out(e) = M(e) - M(e-1)

**Incremental.** Whether a row is kept depends only on the kept rows *less* than
it. So after the rows whose presence changed at ``e`` are re-decided in
ascending order, only rows greater than a row whose status changed, sharing one
of its keys, can change in turn; they are queued (a heap), and every row is
decided after all the rows less than it are final. A change costs the cascade it
causes, not the size of the collection. State: each present row's weight, the
present rows of each key value (sorted), the kept rows and the kept row holding
each key value; an epoch's changes are logged and undone by ``rollback``.

>>> from engine import Circuit
>>> from engine.stream import Stream
>>> c = Circuit(); s = c.source("s", arity=2)
>>> m = Stream(c, c.add(MatchingNode(s.node, [lambda r: r[0], lambda r: r[1]])))
>>> c.output("m", m)
>>> c.step({"s": [(1, 1), (1, 2), (2, 2)]})
{'m': ZSet({(1, 1): 1, (2, 2): 1})}
>>> sorted(c.step({"s": {(1, 1): -1}})["m"].items())  # (1, 2) comes in, (2, 2) out
[((1, 1), -1), ((1, 2), 1), ((2, 2), -1)]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from sortedcontainers import SortedList

from engine.node import Node
from engine.zset import EMPTY


class MatchingNode(Node):
    """Greedy matching of the rows of ``source`` under ``keys`` (module docstring)."""

    def __init__(self, source: Node, keys: Sequence[Callable], label: str = ""):
        super().__init__([source], label)
        self.keys = list(keys)
        self.weights: dict = {}                          # present row -> weight
        self.rows: list[dict] = [{} for _ in self.keys]  # per key: value -> SortedList
        self.holder: list[dict] = [{} for _ in self.keys]  # per key: value -> kept row
        self.kept: set = set()
        self.log: list = []                              # this epoch's changes, to undo

    # ------------------------------------------------------------ state, logged

    def _weight(self, row, weight: int) -> None:
        self.log.append(("weight", row, self.weights.get(row, 0)))
        if weight:
            self.weights[row] = weight
        else:
            del self.weights[row]

    def _present(self, row, present: bool) -> None:
        self.log.append(("present", row, present))
        for key, rows in zip(self.keys, self.rows):
            value = key(row)
            if present:
                rows.setdefault(value, SortedList()).add(row)
            else:
                rows[value].remove(row)
                if not rows[value]:
                    del rows[value]

    def _keep(self, row, kept: bool) -> None:
        self.log.append(("keep", row, kept))
        for key, holder in zip(self.keys, self.holder):
            if kept:
                holder[key(row)] = row
            else:
                del holder[key(row)]
        (self.kept.add if kept else self.kept.discard)(row)

    def rollback(self) -> None:
        log, self.log = self.log, []
        for kind, row, arg in reversed(log):
            if kind == "weight":
                if arg:
                    self.weights[row] = arg
                else:
                    self.weights.pop(row, None)
            elif kind == "present":
                self._present(row, not arg)
            else:
                self._keep(row, not arg)
        self.log = []

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.log = []

    # ------------------------------------------------------------ evaluation

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if not batch:
            self.out = EMPTY
            return
        queue: list = []
        for row, weight in batch.items():
            old = self.weights.get(row, 0)
            new = old + weight
            self._weight(row, new)
            if (old > 0) != (new > 0):
                self._present(row, new > 0)
                queue.append(row)
        heapq.heapify(queue)
        out: dict = {}
        done: set = set()
        while queue:
            row = heapq.heappop(queue)
            if row in done:
                continue
            done.add(row)
            keep = self.weights.get(row, 0) > 0 and not any(
                (held := holder.get(key(row))) is not None and held < row
                for key, holder in zip(self.keys, self.holder))
            if keep == (row in self.kept):
                continue
            if keep:
                for key, holder in zip(self.keys, self.holder):
                    held = holder.get(key(row))
                    if held is not None:        # a greater row held it: out it goes
                        self._keep(held, False)
                        out[held] = out.get(held, 0) - 1
                        self._successors(held, queue)
                self._keep(row, True)
                out[row] = out.get(row, 0) + 1
            else:
                self._keep(row, False)
                out[row] = out.get(row, 0) - 1
                self._successors(row, queue)
        self.out = {row: w for row, w in out.items() if w} or EMPTY

    def _successors(self, row, queue: list) -> None:
        """Queue the present rows greater than ``row`` that share a key value
        with it (their status may change with ``row``'s)."""
        for key, rows in zip(self.keys, self.rows):
            same = rows.get(key(row))
            if same is not None:
                for other in same.irange(row, inclusive=(False, False)):
                    heapq.heappush(queue, other)

    def describe_args(self) -> str:
        return f"greedy matching on {len(self.keys)} keys"
