"""Distinct: Distinct (plain), Distinct Incremental (root), Distinct Trace (child).

``distinct(x)`` has weight 1 for each row of positive weight. It is not linear,
so its incremental forms read the history of the input.

**Distinct Incremental** (root circuit, times are epochs)::

    out(e) = [I(e) > 0] - [I(e-1) > 0]        for each row of the batch at e

**Distinct Trace** (child circuit, time ``(e, i)``). For a row with new weight
``w``, let ``w1`` be its weight at times ``(e' < e, i' < i)``, ``w2`` at
``(e' < e, i)``, ``w3`` at ``(e, i' < i)``. Then::

    out = ([w1+w2+w3+w > 0] - [w1+w3 > 0]) - ([w1+w2 > 0] - [w1 > 0])

(the second bracket is what older epochs already emitted at iteration ``i``).
A row must be evaluated at ``(e, i)`` when it has input there, **or** when it
had input earlier in this epoch and older epochs hold weight for it at exactly
iteration ``i``. So after evaluating a row, it is scheduled at the next
iteration ``j > i`` at which the past holds weight for it, if its weight in
this epoch is not zero (otherwise every later output is zero).
"""

from __future__ import annotations

import heapq

from engine.node import Node
from engine.trace import MASK, SHIFT, ZSetTrace, history_add
from engine.zset import EMPTY


class DistinctNode(Node):
    """Distinct Incremental (root scope): ``out(e) = [I(e) > 0] - [I(e-1) > 0]``."""

    def __init__(self, source: Node, label: str = ""):
        super().__init__([source], label)
        self.trace = ZSetTrace(nested=False)

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if not batch:
            self.out = EMPTY
            return
        get = self.trace.past.get
        out = {}
        for row, w in batch.items():
            old = get(row, 0)
            delta = (old + w > 0) - (old > 0)
            if delta:
                out[row] = delta
        self.out = out or EMPTY

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.trace.append(self.inputs[0].out)
            self.trace.commit()

    def rollback(self) -> None:
        self.trace.rollback()

    def describe_args(self) -> str:
        return "distinct"


class DistinctTraceNode(Node):
    """Distinct Trace (child scope); formula and scheduling in the module docstring."""

    may_hold_work = True

    def __init__(self, source: Node, label: str = ""):
        super().__init__([source], label)
        self.trace = ZSetTrace(nested=True)
        self.scheduled: dict = {}
        self.heap: list = []
        # True when no row of ``out`` was in this epoch's trace before: none was
        # emitted earlier in the epoch, so an Export adds ``out`` without lookups
        self.fresh = False

    def pending(self) -> int | None:
        return self.heap[0] if self.heap else None

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.scheduled, self.heap = {}, []

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.trace.commit()
            self.fresh = False

    def rollback(self) -> None:
        self.scheduled, self.heap = {}, []
        self.fresh = False
        self.trace.rollback()

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        rows = batch
        if self.heap and self.heap[0] == i:
            heapq.heappop(self.heap)
            due = self.scheduled.pop(i)
            if batch:
                due.update(batch)
            rows = due
        if not rows:
            self.out = EMPTY
            return
        trace = self.trace
        self.fresh = False
        if rows is batch and not trace.past:
            self.out, self.fresh = self._no_past(batch, trace, i)
            return
        cur = trace.cur
        past_get, cur_get = trace.past.get, cur.get
        bget = batch.get
        scheduled, heap = self.scheduled, self.heap
        unit = (1 << SHIFT) | i
        out = {}
        for row in rows:
            w = bget(row, 0)
            h = cur_get(row)
            if h is None:
                w3 = 0
            elif type(h) is int:
                w3 = h >> SHIFT
            else:
                w3 = sum(h.values())
            p = past_get(row)
            if p is None:
                delta = (w3 + w > 0) - (w3 > 0)
                if delta:
                    out[row] = delta
            else:
                w1 = w2 = 0
                nxt = None
                if type(p) is int:
                    j = p & MASK
                    if j < i:
                        w1 = p >> SHIFT
                    elif j == i:
                        w2 = p >> SHIFT
                    else:
                        nxt = j
                else:
                    for j, pw in p.items():
                        if j < i:
                            w1 += pw
                        elif j == i:
                            w2 += pw
                        elif nxt is None or j < nxt:
                            nxt = j
                w13 = w1 + w3
                w12 = w1 + w2
                delta = ((w12 + w3 + w > 0) - (w13 > 0)) - ((w12 > 0) - (w1 > 0))
                if delta:
                    out[row] = delta
                if nxt is not None and w3 + w:
                    waiting = scheduled.get(nxt)
                    if waiting is None:
                        scheduled[nxt] = {row}
                        heapq.heappush(heap, nxt)
                    else:
                        waiting.add(row)
            if w:  # the trace append, in the same pass
                if h is None:
                    cur[row] = unit if w == 1 else (w << SHIFT) | i
                else:
                    h = history_add(h, i, w)
                    if h is None:
                        del cur[row]
                    else:
                        cur[row] = h
        self.out = out or EMPTY

    @staticmethod
    def _no_past(batch: dict, trace: ZSetTrace, i: int) -> tuple[dict, bool]:
        """The formula when no earlier epoch left anything (w1 = w2 = 0; e.g. the
        bulk load): ``[w3 + w > 0] - [w3 > 0]``; appends the batch to the trace
        in the same pass. Also returns whether every row was new to the epoch."""
        cur = trace.cur
        setdefault = cur.setdefault  # one probe of the (large) trace per row
        unit = (1 << SHIFT) | i  # an int object made here: no stored history is it
        out = {}
        fresh = True
        for row, w in batch.items():
            new = unit if w == 1 else (w << SHIFT) | i
            h = setdefault(row, new)
            if h is new:  # the row had no history in this epoch: now it has
                if w > 0:
                    out[row] = 1
                continue
            fresh = False
            w3 = h >> SHIFT if type(h) is int else sum(h.values())
            delta = (w3 + w > 0) - (w3 > 0)
            if delta:
                out[row] = delta
            h = history_add(h, i, w)
            if h is None:
                del cur[row]
            else:
                cur[row] = h
        return out or EMPTY, fresh

    def describe_args(self) -> str:
        return "distinct_trace"
