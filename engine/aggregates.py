"""Built-in aggregates for ``IndexedStream.aggregate``, as plain descriptions.

An aggregate function takes a group's ``(value, weight)`` pairs of positive
weight, sorted, and returns the group's result (``None``: no row for the
group). Any pure function will do; the built-ins are :class:`Reduce`
descriptions — a kind and a column — which the Aggregate operator can also
compute on the columns of a large batch (:mod:`engine.operators.aggcols`),
the way a linear stage's :class:`engine.vector.Program` is computed on columns.
Called on a group's pairs, a :class:`Reduce` gives its result per row; the
columnar path gives the same results.

>>> count([((1,), 1), ((2,), 1)]), sum_of(0)([((1,), 1), ((2,), 1)])
(2, 3)
>>> Reduce("sum", 1, weighted=True)([(("a", 2), 3)])   # each derivation counts
6
>>> Reduce("count", flag=0, weighted=True)([((0, None), 1)])   # a group marker only
0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("count", "sum", "min", "max", "mean")


@dataclass(frozen=True)
class Reduce:
    """A built-in aggregate: ``kind`` (count, sum, min, max, mean) of slot
    ``column`` of the group's values (``None`` for count).

    - ``weighted``: a value counts as many times as its weight (a bag: the
      number of its derivations); otherwise once (a set).
    - ``flag``: a slot whose value is 0 on a group's *marker* rows, which make
      the group exist but are not aggregated (``None``: every row counts). A
      group of markers only has count and sum 0, and no min, max or mean.
    - ``finish``: applied to a sum or a mean before it is the result (e.g.
      wrapping to 64 bits, refusing NaN); ``modular``: ``finish`` gives the
      same result for any two sums equal modulo ``2**64`` (a wrapping sum), so
      integer sums may be computed in wrapping 64-bit arithmetic.

    A sum or mean adds ``value * weight`` in the order of the sorted values.

    >>> m = Reduce("mean", 1, weighted=True)
    >>> m([(("a", 1), 1), (("a", 4), 2)])
    3.0
    >>> str(m), str(count)
    ('mean(#1, weighted)', 'count')
    """

    kind: str
    column: int | None = None
    weighted: bool = False
    flag: int | None = None
    finish: Callable | None = None
    modular: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown aggregate kind {self.kind!r}")
        if (self.column is None) != (self.kind == "count"):
            raise ValueError("count takes no column; every other kind one")

    def __str__(self) -> str:
        parts = [] if self.column is None else [f"#{self.column}"]
        if self.weighted:
            parts.append("weighted")
        if self.flag is not None:
            parts.append(f"flag #{self.flag}")
        return f"{self.kind}({', '.join(parts)})" if parts else self.kind

    def __call__(self, items):
        """The result of a group of ``(value, weight)`` pairs (positive
        weights, sorted): the row path."""
        flag = self.flag
        if flag is not None:
            items = [(value, w) for value, w in items if value[flag]]
        elif not items:
            return None
        kind, column, weighted = self.kind, self.column, self.weighted
        if kind == "count":
            return sum(w for _, w in items) if weighted else len(items)
        if kind in ("min", "max"):
            if not items:
                return None
            pick = min if kind == "min" else max
            return pick(value[column] for value, _ in items)
        if kind == "mean" and not items:
            return None
        if weighted:
            total = sum(value[column] * w for value, w in items)
            n = sum(w for _, w in items)
        else:
            total = sum(value[column] for value, _ in items)
            n = len(items)
        result = total / n if kind == "mean" else total
        return self.finish(result) if self.finish is not None else result


#: Number of values in the group (``None`` for an empty group).
count = Reduce("count")


def sum_of(column: int) -> Reduce:
    """Sum of column ``column`` over the group's values."""
    return Reduce("sum", column)


def min_of(column: int) -> Reduce:
    """Least value of column ``column`` in the group."""
    return Reduce("min", column)


def max_of(column: int) -> Reduce:
    """Greatest value of column ``column`` in the group."""
    return Reduce("max", column)


def mean_of(column: int) -> Reduce:
    """Arithmetic mean of column ``column`` over the group's values (a float)."""
    return Reduce("mean", column)


__all__ = ["Reduce", "count", "max_of", "mean_of", "min_of", "sum_of"]
