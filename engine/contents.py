"""An output's current rows, read where the circuit already keeps them.

A Distinct's input trace holds its output's whole collection: the rows of
positive weight in the trace's finished epochs (each once: Distinct's output is
a set). :class:`Contents` is a read-only set over such a trace, asked through
the trace read API (:mod:`engine.cursor`): iterating walks the trace's rows,
``row in contents`` asks one row's weight. So a caller that wants the rows of
an output (a session answering queries) keeps no copy of its own.

The view is live: it reads the trace as it is at each question, so after a
step it answers for the new epoch (a fresh cursor each time: a trace may
replace its stores when it commits).

>>> from engine import Circuit
>>> circuit = Circuit()
>>> edge = circuit.source("edge", arity=2)
>>> circuit.output("ends", edge.map(lambda r: (r[1],)).distinct())
>>> _ = circuit.step({"edge": {(1, 2): 1, (3, 2): 1, (1, 4): 1}})
>>> ends = circuit.contents("ends")
>>> sorted(ends), len(ends), (2,) in ends, (1,) in ends
([(2,), (4,)], 2, True, False)
>>> _ = circuit.step({"edge": {(1, 4): -1}})
>>> sorted(ends)
[(2,)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Set

from engine.cursor import RowCursor


class Contents(Set):
    """The rows of positive weight in the part a cursor reads (module docstring);
    ``cursor()`` gives a fresh :class:`~engine.cursor.RowCursor` over it."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: Callable[[], RowCursor]):
        self._cursor = cursor

    def __contains__(self, row) -> bool:
        try:
            return self._cursor().weight(row) > 0
        except TypeError:   # an unhashable probe is in no set
            return False

    def __iter__(self) -> Iterator[tuple]:
        return self._cursor().positive()

    def __len__(self) -> int:
        return sum(1 for _ in self._cursor().positive())

    @classmethod
    def _from_iterable(cls, rows) -> frozenset:
        # what the set operators (``-``, ``&``, ``|``) build: a plain frozenset
        return frozenset(rows)

    def __repr__(self) -> str:
        return f"Contents({len(self)} rows)"
