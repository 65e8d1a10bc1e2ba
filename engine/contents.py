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

A Distinct whose state is packed into ``int64`` runs gives a reader of the
runs instead of a row cursor
(:class:`~engine.operators.packedsmall.PackedCollection`): ``len`` counts on
the runs' weights and :meth:`Contents.columns` gives the rows as sorted
``int64`` columns, without making the rows (nor moving the state to dicts).

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
        cursor = self._cursor()
        count = getattr(cursor, "count", None)  # packed state: counted on its arrays
        return count() if count is not None else sum(1 for _ in cursor.positive())

    def columns(self) -> list | None:
        """The rows as ``int64`` numpy columns, in the rows' sorted order, when
        the trace keeps them packed (read off its arrays, no row made);
        ``None`` otherwise (iterate instead).

        >>> from engine import Circuit
        >>> from engine.colbatch import columns_from
        >>> circuit = Circuit()
        >>> edge = circuit.source("edge", arity=2)
        >>> two = edge.index_by((1,)).join(edge.index_by((0,)), ((0, 0), (1, 1)))
        >>> circuit.output("two", two.distinct())
        >>> with columns_from(0):  # columnar batches: the Distinct's state packed
        ...     _ = circuit.step({"edge": [(3, 1), (1, 2), (2, 1)]})
        >>> paths = circuit.contents("two")
        >>> [c.tolist() for c in paths.columns()], len(paths), (3, 2) in paths
        ([[1, 2, 3], [1, 2, 2]], 3, True)
        """
        columns = getattr(self._cursor(), "columns", None)
        return None if columns is None else columns()

    @classmethod
    def _from_iterable(cls, rows) -> frozenset:
        # what the set operators (``-``, ``&``, ``|``) build: a plain frozenset
        return frozenset(rows)

    def __repr__(self) -> str:
        return f"Contents({len(self)} rows)"
