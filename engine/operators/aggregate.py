"""Aggregate (root scope only): count, sum, min, max, mean, or any pure function.

For each key whose group changed at epoch ``e``, the group's collection is
read from the shared trace of the indexed input (the past) plus the batch, the
aggregate function is applied to its ``(value, weight)`` pairs of positive
weight, and::

    out(e) = {key + (new,): +1} - {key + (old,): -1}     (when new != old)

``None`` as a result means "no row for this key" (an empty group, or a
function that declines). Groups are sets: the built-ins count each value of
positive weight once, whatever its weight (the number of its derivations),
unless they are ``weighted`` (:class:`~engine.aggregates.Reduce`).

A columnar batch of :data:`engine.colbatch.AGGREGATE_ROWS` rows or more (a
batch of rows: ``AGGREGATE_DICT_ROWS``) whose function is a built-in (a
:class:`~engine.aggregates.Reduce`) has its changed groups computed on
columns (:mod:`engine.operators.aggcols`), with the same results; a smaller
batch, any other function, or a batch the columns cannot compute exactly goes
through the row loop below. The trace stays where its owner put it (dicts
unless ``Circuit(columnar_threshold=...)``): in runs, the one-row epochs of
small updates would cost more (50,000 entries: 155 µs an epoch, 9 µs in
dicts), while the columnar path reads a dict past per key and runs in bulk.

>>> count([(("a", 1), 1), (("a", 2), 3)])
2
>>> sum_of(1)([(("a", 1), 1), (("a", 2), 3)]), max_of(1)([(("a", 1), 1), (("a", 2), 3)])
(3, 2)
"""

from __future__ import annotations

from collections.abc import Callable

from engine import colbatch
from engine.aggregates import Reduce, count, max_of, mean_of, min_of, sum_of
from engine.colbatch import ColBatch
from engine.node import Node
from engine.operators import aggcols
from engine.zset import EMPTY

__all__ = ["AggregateNode", "count", "max_of", "mean_of", "min_of", "sum_of"]
MISSING = object()


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
        read: list = []   # the past's groups, if the columnar path read them as rows
        indexed = None
        if type(fn) is Reduce and len(batch) >= (
                colbatch.AGGREGATE_ROWS if type(batch) is ColBatch
                else colbatch.AGGREGATE_DICT_ROWS):
            if type(batch) is not ColBatch and past:  # (the past read first)
                indexed = trace.index_rows(batch)
            found = self._changed_on_columns(batch, past, read, indexed)
            if found is not None:
                for key, new in zip(*found):
                    old = results.get(key)
                    if new == old and type(new) is type(old):
                        continue
                    if old is not None:
                        out[key + (old,)] = out.get(key + (old,), 0) - 1
                    if new is not None:
                        out[key + (new,)] = out.get(key + (new,), 0) + 1
                    staged[key] = new
                self.staged = staged
                self.out = {row: w for row, w in out.items() if w} or EMPTY
                return
        if indexed is None:
            indexed = trace.index_rows(batch)
        before = read[0] if read else {  # one batch
            key: past.weights() for key in past.seek_many(indexed)}
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

    def _changed_on_columns(self, batch, past, read: list, indexed):
        """``(keys, results)`` of the batch's groups computed on columns
        (:mod:`engine.operators.aggcols`), or ``None`` for the row path
        (``indexed``: a dict batch by key)."""
        kind, spec = self.reads[0].index
        found = None
        if kind == "cols":
            if indexed is None:
                batch = colbatch.as_columns(batch, 0)
            if batch is not None:
                keys = None if indexed is None else list(indexed)
                found = aggcols.changed(self.fn, tuple(spec), batch, past, read, keys)
        colbatch.COUNTS["aggregate" if found is not None else "aggregate_rows"] += 1
        return found

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
        fn = self.fn
        return f"aggregate {fn if type(fn) is Reduce else getattr(fn, '__name__', 'fn')}"
