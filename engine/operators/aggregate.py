"""Aggregate (root scope only): count, sum, min, max, mean, or any pure function.

For each key whose group changed at epoch ``e``, the group's collection is
read from the shared trace of the indexed input (the past) plus the batch, the
aggregate function is applied to its ``(value, weight)`` pairs of positive
weight, and::

    out(e) = {key + (new,): +1} - {key + (old,): -1}     (when new != old)

``None`` as a result means "no row for this key" (an empty group, or a
function that declines). Groups are sets: the built-ins count each value of
positive weight once, whatever its weight (the number of its derivations).

>>> count([(("a", 1), 1), (("a", 2), 3)])
2
>>> sum_of(1)([(("a", 1), 1), (("a", 2), 3)]), max_of(1)([(("a", 1), 1), (("a", 2), 3)])
(3, 2)
"""

from __future__ import annotations

from collections.abc import Callable

from engine.node import Node
from engine.zset import EMPTY

MISSING = object()


def count(items) -> int | None:
    """Number of values in the group (``None`` for an empty group)."""
    return len(items) or None


def sum_of(column: int) -> Callable:
    """Sum of column ``column`` over the group's values."""
    def aggregate_sum(items):
        return sum(value[column] for value, _ in items) if items else None
    aggregate_sum.__name__ = f"sum_of({column})"
    return aggregate_sum


def min_of(column: int) -> Callable:
    """Least value of column ``column`` in the group."""
    def aggregate_min(items):
        return min(value[column] for value, _ in items) if items else None
    aggregate_min.__name__ = f"min_of({column})"
    return aggregate_min


def max_of(column: int) -> Callable:
    """Greatest value of column ``column`` in the group."""
    def aggregate_max(items):
        return max(value[column] for value, _ in items) if items else None
    aggregate_max.__name__ = f"max_of({column})"
    return aggregate_max


def mean_of(column: int) -> Callable:
    """Arithmetic mean of column ``column`` over the group's values (a float)."""
    def aggregate_mean(items):
        return sum(value[column] for value, _ in items) / len(items) if items else None
    aggregate_mean.__name__ = f"mean_of({column})"
    return aggregate_mean


class AggregateNode(Node):
    """Aggregate over the groups of an indexed stream (module docstring). Its input
    is the row stream; the groups are the keys of its TraceNode."""

    quiet = True

    def __init__(self, source: Node, trace_node: Node, fn: Callable, label: str = ""):
        super().__init__([source], label, reads=[trace_node])
        self.fn = fn
        self.results: dict = {}   # key -> current result (committed epochs)
        self.staged: dict = {}    # key -> result of this epoch (MISSING: none)

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if not batch:
            self.out = EMPTY
            return
        trace = self.reads[0].trace
        past = trace.past_cursor()
        fn = self.fn
        results = self.results
        staged = {}
        out: dict = {}
        indexed = trace.index_rows(batch)
        before = {key: past.weights() for key in past.seek_many(indexed)}  # one batch
        for key, delta in indexed.items():
            group = before.get(key) or {}
            for value, weight in delta.items():
                total = group.get(value, 0) + weight
                if total:
                    group[value] = total
                else:
                    del group[value]
            items = [(value, weight) for value, weight in group.items() if weight > 0]
            try:
                items.sort()
            except TypeError:
                pass
            new = fn(items) if items else None
            old = results.get(key)
            if new == old and type(new) is type(old):
                continue
            prefix = key if type(key) is tuple else (key,)
            if old is not None:
                out[prefix + (old,)] = out.get(prefix + (old,), 0) - 1
            if new is not None:
                row = prefix + (new,)
                out[row] = out.get(row, 0) + 1
            staged[key] = new
        self.staged = staged
        self.out = {row: w for row, w in out.items() if w} or EMPTY

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            for key, result in self.staged.items():
                if result is None:
                    self.results.pop(key, None)
                else:
                    self.results[key] = result
            self.staged = {}

    def rollback(self) -> None:
        self.staged = {}

    def describe_args(self) -> str:
        return f"aggregate {getattr(self.fn, '__name__', 'fn')}"
