"""Timestamps and the product order.

A :class:`Timestamp` is a tuple of ints: the first coordinate is the epoch (one
tick per transaction of the root circuit); each further coordinate is the
iteration of an enclosing child circuit. Times are compared in the **product
order**: ``s <= t`` iff every coordinate of ``s`` is ``<=`` the same coordinate
of ``t``. Two times can be incomparable: ``(0, 2)`` and ``(1, 1)``. Their least
upper bound is the coordinate-wise maximum.

Work is *processed* in lexicographic order (a linear extension of the product
order), but what belongs to a collection at ``t`` is decided by the product
order only: the collection at ``t`` is the sum of the differences at all
``s <= t``.

>>> s, t = Timestamp((0, 2)), Timestamp((1, 1))
>>> s.leq(t), t.leq(s)
(False, False)
>>> s.lub(t)
Timestamp((1, 2))
>>> Timestamp((0, 1)).less_than((1, 1))
True

The runtime itself uses plain tuples and the module functions below; the class
is for readers and tests.
"""

from __future__ import annotations


def leq(s: tuple, t: tuple) -> bool:
    """Product order: every coordinate of ``s`` is ``<=`` that of ``t``.

    >>> leq((0, 1), (1, 1)), leq((0, 2), (1, 1))
    (True, False)
    """
    return all(a <= b for a, b in zip(s, t, strict=True))


def less_than(s: tuple, t: tuple) -> bool:
    """``s <= t`` and ``s != t`` in the product order."""
    return s != t and leq(s, t)


def lub(s: tuple, t: tuple) -> tuple:
    """Least upper bound: the coordinate-wise maximum.

    >>> lub((0, 3), (2, 1))
    (2, 3)
    """
    return tuple(a if a >= b else b for a, b in zip(s, t, strict=True))


class Timestamp(tuple):
    """A product-order time ``(epoch, iteration, ...)``; see the module docstring."""

    __slots__ = ()

    @property
    def epoch(self) -> int:
        return self[0]

    @property
    def iteration(self) -> int:
        """The innermost iteration (``0`` for a root time)."""
        return self[-1] if len(self) > 1 else 0

    def leq(self, other: tuple) -> bool:
        return leq(self, other)

    def less_than(self, other: tuple) -> bool:
        return less_than(self, other)

    def lub(self, other: tuple) -> Timestamp:
        return Timestamp(lub(self, other))

    def __repr__(self) -> str:
        return f"Timestamp({tuple(self)!r})"
