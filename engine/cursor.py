"""The trace read API: how operators read a trace, whatever stores it.

As differential dataflow's ``TraceReader`` and ``Cursor``: an operator never
touches a trace's dicts or its time encoding; it asks a **cursor** to seek a
key, walk the key's values and walk each value's ``(time, weight)`` history,
and asks the product-order questions it needs of a history. Then a trace can
be kept in dicts, in sorted columns, or in Spark, and no operator changes.

A trace is read in two **parts**, each through its own cursor:

* ``trace.past_cursor()``: the finished epochs, compacted. Every time in it
  has an epoch before the current one ``e`` (they are all reported as
  ``e - 1``); in a child circuit each entry keeps its iteration.
* ``trace.epoch_cursor()``: what the current epoch has appended so far (a
  child circuit's earlier iterations of epoch ``e``). A root trace's current
  epoch is not visible to readers (they see ``z^-1``, the trace before it).

A :class:`Cursor` walks a trace of an indexed Z-set (key -> value -> time ->
weight); a :class:`RowCursor` a trace of a Z-set (row -> time -> weight, no
key level: Distinct's). The history questions, for the entries of one part:

``weight(v)``
    the weight of ``v`` summed over all the part's times;
``weight(v, until=i)``
    over the times at iteration ``<= i`` (a child circuit's past: the times
    ``<= (e, i)`` in the product order, since all their epochs are earlier);
``split(v, i)``
    ``(before, at, later)``: the weight at iterations ``< i``, at iteration
    ``i``, and the least iteration ``> i`` holding weight (``None`` if none):
    what Distinct Trace asks of the past (``w1``, ``w2``, its next time).

Hot loops (the join's pair loops, Distinct Trace) are generated Python; they
read a part through its cursor's :class:`CursorSource`, which writes the same
questions as source fragments of the trace's own implementation, so the loop
inlines the reading without knowing the encoding (Python's counterpart of the
Rust cursor generics being compiled for one concrete trace).

>>> from engine.trace import Trace
>>> t = Trace(nested=True, index=("cols", (0,)))
>>> t.append_rows({("a", 1): 1, ("b", 2): 1}, iteration=0)
>>> t.append_rows({("a", 1): 2}, iteration=3)
>>> t.commit()
>>> past = t.past_cursor()
>>> [key for key in past.seek_many([("b",), ("z",), ("a",)])]
[('a',), ('b',)]
>>> past.seek(("a",)), list(past.values())
(True, [('a', 1)])
>>> past.times(("a", 1))
[((0, 0), 1), ((0, 3), 2)]
>>> past.weight(("a", 1)), past.weight(("a", 1), until=2), past.split(("a", 1), 1)
(3, 1, (1, 0, 3))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator


class Cursor(ABC):
    """A position in one part of a trace of an indexed Z-set (module docstring).

    ``seek`` / ``seek_many`` move to a key; ``values`` and the history
    questions then concern that key's values. ``epoch`` is the epoch the
    part's times report; ``nested`` whether times carry an iteration.
    """

    nested: bool
    epoch: int

    @property
    @abstractmethod
    def source(self) -> CursorSource:
        """The source fragments that read this part inside generated loops."""

    @abstractmethod
    def __bool__(self) -> bool:
        """Whether the part holds any entry (it may be true of entries that
        cancel, e.g. in two runs not merged yet)."""

    @abstractmethod
    def seek(self, key) -> bool:
        """Move to ``key``; whether the part holds it."""

    @abstractmethod
    def seek_many(self, keys: Iterable) -> Iterator:
        """Move to each of ``keys`` the part holds, in key order (duplicates
        once), yielding the key: a batch of lookups in one pass."""

    @abstractmethod
    def keys(self) -> Iterator:
        """Every key of the part (in no particular order)."""

    @abstractmethod
    def values(self) -> Iterator:
        """The values of the current key."""

    @abstractmethod
    def times(self, value) -> list[tuple[tuple, int]]:
        """``(time, weight)`` of ``value`` (under the current key), by time."""

    @abstractmethod
    def weight(self, value, until: int | None = None) -> int:
        """Weight of ``value`` over the part's times (iteration ``<= until``)."""

    @abstractmethod
    def split(self, value, i: int) -> tuple[int, int, int | None]:
        """``(before, at, later)`` of ``value`` around iteration ``i``."""

    def entries(self) -> Iterator[tuple]:
        """``(key, value, time, weight)`` of every entry of the part, walking
        it key by key (in no particular key order)."""
        for key in list(self.keys()):
            self.seek(key)
            for value in list(self.values()):
                for time, weight in self.times(value):
                    yield key, value, time, weight

    def weights(self) -> dict:
        """value -> weight (over all the part's times) of the current key,
        zeros left out."""
        out = {}
        for value in self.values():
            weight = self.weight(value)
            if weight:
                out[value] = weight
        return out


class RowCursor(ABC):
    """One part of a trace of a Z-set: rows, each with its history. The
    history questions are those of :class:`Cursor`, asked of a row."""

    nested: bool
    epoch: int

    @property
    @abstractmethod
    def source(self) -> RowCursorSource:
        """The source fragments that read this part inside generated loops."""

    @abstractmethod
    def __bool__(self) -> bool:
        """Whether the part holds any entry."""

    @abstractmethod
    def rows(self) -> Iterator:
        """Every row of the part (in no particular order)."""

    @abstractmethod
    def times(self, row) -> list[tuple[tuple, int]]:
        """``(time, weight)`` of ``row``, by time (``[]`` when absent)."""

    @abstractmethod
    def weight(self, row, until: int | None = None) -> int:
        """Weight of ``row`` over the part's times (iteration ``<= until``)."""

    @abstractmethod
    def weights_of(self, rows: Iterable) -> list[int]:
        """``[weight(row) for row in rows]``, in one pass."""

    @abstractmethod
    def split(self, row, i: int) -> tuple[int, int, int | None]:
        """``(before, at, later)`` of ``row`` around iteration ``i``."""

    def positive(self) -> Iterator:
        """The rows whose weight over all the part's times is positive (when the
        part is a Distinct's past: its output's collection), in no particular
        order."""
        rows = list(self.rows())
        return (row for row, weight in zip(rows, self.weights_of(rows)) if weight > 0)


Body = Callable[[str], list]
"""Writes the lines of a loop body at the given indentation."""


class CursorSource(ABC):
    """Source fragments reading a :class:`Cursor`'s part inside a generated
    function that receives the cursor as an argument. Names passed in are
    Python identifiers of the generated code; ``prefix`` keeps the locals of
    two cursors read by one function apart."""

    def names(self) -> dict:
        """Globals the fragments use, for the generated code's namespace."""
        return {}

    def nonempty(self, cursor: str) -> str:
        """An expression: whether ``cursor``'s part holds anything (by
        default the cursor's truth)."""
        return cursor

    @abstractmethod
    def bind(self, cursor: str, prefix: str, keys: str = "()") -> list[str]:
        """Lines (at function level) preparing to read ``cursor``; ``keys`` is
        an expression for every key the function will seek (a batch of
        lookups, for an implementation that gathers them in one pass)."""

    @abstractmethod
    def seek(self, prefix: str, key: str, group: str, indent: str) -> list[str]:
        """Lines binding ``group`` to key ``key``'s entries and skipping the
        loop iteration (``continue``) when the part lacks the key."""

    @abstractmethod
    def values(self, group: str, value: str, history: str) -> str:
        """A ``for`` header walking ``group``: each ``value`` with its
        ``history`` (an opaque handle for the fragments below). A value may
        come more than once, each time with a part of its history (the
        weights add)."""

    @abstractmethod
    def weight(self, history: str) -> str:
        """An expression: the history's weight over all the part's times."""

    @abstractmethod
    def walk_times(self, history: str, iteration: str, weight: str, body: Body,
                   indent: str) -> list[str]:
        """Lines running ``body`` once per time of the history, with
        ``iteration`` and ``weight`` bound (child scope)."""


class RowCursorSource(ABC):
    """Source fragments reading a :class:`RowCursor`'s part (and, for the
    current epoch, appending to it in the same pass) inside generated code."""

    def names(self) -> dict:
        """Globals the fragments use, for the generated code's namespace."""
        return {}

    @abstractmethod
    def bind(self, cursor: str, prefix: str, i: str = "0") -> list[str]:
        """Lines (at function level) preparing to read ``cursor``; ``i`` names
        the iteration the function appends at."""

    @abstractmethod
    def split(self, prefix: str, row: str, i: str, found: str, before: str, at: str,
              later: str, indent: str) -> list[str]:
        """Lines binding ``found`` (whether the part holds ``row``) and, when it
        does, ``before``, ``at``, ``later`` (``split(row, i)``)."""

    @abstractmethod
    def accumulate(self, prefix: str, row: str, weight: str, i: str, before: str,
                   indent: str) -> list[str]:
        """Lines adding ``weight`` (non-zero) to ``row`` at iteration ``i`` of
        the part (the current epoch), binding ``before`` to the row's weight in
        the part before (``None`` when the part did not hold it)."""

    @abstractmethod
    def weight(self, prefix: str, row: str) -> str:
        """An expression: ``row``'s weight over all the part's times."""
