"""The rows given to a session's input relations, kept compact.

A session keeps, per relation, the rows inserted (and read from fact files)
and not retracted: what a retraction can take away, and the one store of a
relation that no rule adds to (the engine keeps no arrangement of a source:
its batches pass through to the operators, which keep traces of their own by
other keys, or none). :func:`input_rows` holds those rows as an
:class:`InputRows` when every column is a ``number``, ``unsigned`` or
``symbol``: the rows as ``int64`` values in one numpy array sorted by their
bytes (an
unsigned value as its 64 bits, a symbol as its interned id,
:data:`engine.colbatch.SYMBOLS`), the latest changes in two small Python
sets, folded in when they grow (:data:`FOLD`). That is 8 bytes a value where
a set of tuples takes a slot, a tuple and its ints: Andersen's analysis on
200 functions (21,789 input rows, the tuples the caller's) 1.1 MiB of set
tables against 0.37 MiB; rows read from a file, ~160 bytes a row of two
numbers against 16. Other relations (floats, records, ADTs, no columns)
keep a plain ``set``.

>>> rows = input_rows(("number", "symbol"), [(1, "a"), (2, "b")])
>>> (1, "a") in rows, (1, "b") in rows, len(rows)
(True, False, 2)
>>> rows.difference_update([(1, "a")]); rows.update([(3, "c")]); sorted(rows)
[(2, 'b'), (3, 'c')]
>>> type(input_rows(("number", "float")))
<class 'set'>
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Set
from itertools import chain

from engine import lazy
from engine.colbatch import SYMBOLS

np = lazy.module("numpy", globals())

PACKED = ("number", "unsigned", "symbol")
#: Changes kept in the sets before they are folded into the array: at least
#: this many (so that a program whose relations stay smaller never imports
#: numpy, as with the engine's colbatch.THRESHOLD), or a 32nd of the array. A
#: fold sorts the changes and inserts them (1,000,000 rows of two numbers and
#: 31,249 new ones: 59 ms, ~1.9 µs a change; 20,000 and 8,191:
#: 4.1 ms); an add or a discard costs ~3-6 µs (a scalar search).
FOLD = 8192
#: Rows decoded at a time when the rows are read (a query of the relation).
CHUNK = 1 << 16


def input_rows(types, rows: Iterable[tuple] = ()) -> InputRows | set:
    """The rows of a relation whose columns are of ``types``: an
    :class:`InputRows` when they can be packed, else a ``set``."""
    types = tuple(types)
    if types and all(t in PACKED and type(t) is str for t in types):
        return InputRows(types, rows)
    return set(rows)


class InputRows(Set):
    """A set of rows of fixed column types, in a sorted array and two sets of
    changes (module docstring). Mutable as a set of input rows is: ``add``,
    ``discard``, ``update``, ``difference_update``, and ``change`` (a commit's
    changes, whose membership the caller knows).

    Invariants: ``table`` holds distinct encoded rows, sorted (``None`` when
    empty); ``removed`` is a set of rows of ``table``; ``added`` holds rows
    not in ``table``. The rows are ``added`` and ``table`` less ``removed``.
    """

    __slots__ = ("_struct", "added", "numbers", "removed", "table", "types")

    def __init__(self, types, rows: Iterable[tuple] = ()):
        self.types = tuple(types)
        self.numbers = all(type_ == "number" for type_ in self.types)
        # a row's values as the bytes of its int64 columns (native order, as numpy's)
        self._struct = struct.Struct("=" + "".join("Q" if type_ == "unsigned" else "q"
                                                   for type_ in self.types))
        self.table = None
        self.added: set = set()
        self.removed: set = set()
        self.update(rows)

    @classmethod
    def _from_iterable(cls, rows) -> frozenset:
        return frozenset(rows)   # what ``&``, ``|`` and ``-`` of the Set mixin make

    # -- encoding -----------------------------------------------------------

    def _void(self):
        return np.dtype((np.void, 8 * len(self.types)))

    def _encode(self, rows: list, intern: bool):
        """``rows`` as a 1-D array of encoded rows (``intern``: new symbols
        interned; else rows with a symbol never interned are left out, since
        they cannot be in the table); ``None`` when none is left."""
        if not rows:
            return None
        if self.numbers:
            try:  # one pass over the values (3x faster than a column at a time)
                table = np.fromiter(chain.from_iterable(rows), dtype=np.int64,
                                    count=len(rows) * len(self.types))
                return table.view(self._void())
            except (OverflowError, TypeError, ValueError):
                pass    # (a value past int64: the columns one by one say which)
        columns = []
        keep = None
        for values, type_ in zip(zip(*rows), self.types):
            if type_ == "symbol":
                if intern:
                    column = SYMBOLS.ids(values)
                else:
                    get = SYMBOLS.table.get
                    ids = [get(value, -1) for value in values]
                    column = np.array(ids, dtype=np.int64)
                    known = column >= 0
                    keep = known if keep is None else keep & known
            elif type_ == "unsigned":
                column = np.array(values, dtype=np.uint64).view(np.int64)
            else:
                column = np.array(values, dtype=np.int64)
            columns.append(column)
        table = np.stack(columns, axis=1)
        if keep is not None:
            table = table[keep]
            if not len(table):
                return None
        return np.ascontiguousarray(table).view(self._void()).ravel()

    def _decode(self, encoded) -> list[tuple]:
        table = encoded.view(np.int64).reshape(len(encoded), len(self.types))
        columns = []
        for c, type_ in enumerate(self.types):
            column = table[:, c]
            if type_ == "symbol":
                columns.append(SYMBOLS.symbols(column))
            elif type_ == "unsigned":
                columns.append(column.view(np.uint64).tolist())
            else:
                columns.append(column.tolist())
        return list(zip(*columns))

    def _in_table(self, row) -> bool:
        table = self.table
        if table is None:
            return False
        try:  # the row's bytes as the table holds them (one row: no array made)
            key = (self._struct.pack(*row) if self.numbers else
                   self._struct.pack(*[SYMBOLS.table[value] if type_ == "symbol" else value
                                       for value, type_ in zip(row, self.types, strict=True)]))
        except (KeyError, TypeError, ValueError, struct.error):
            return False    # a value no column of its type holds, or a symbol never seen
        at = int(table.searchsorted(np.frombuffer(key, dtype=table.dtype))[0])
        return at < len(table) and table[at].tobytes() == key

    # -- the set ------------------------------------------------------------

    def __contains__(self, row) -> bool:
        if row in self.added:
            return True
        return row not in self.removed and self._in_table(row)

    def __len__(self) -> int:
        table = 0 if self.table is None else len(self.table)
        return table - len(self.removed) + len(self.added)

    def __iter__(self) -> Iterator[tuple]:
        yield from list(self.added)
        table, removed = self.table, self.removed
        if table is None:
            return
        for start in range(0, len(table), CHUNK):
            for row in self._decode(table[start:start + CHUNK]):
                if row not in removed:
                    yield row

    def __repr__(self) -> str:
        return f"InputRows({self.types!r}, {len(self)} rows)"

    def add(self, row: tuple) -> None:
        if row in self.added:
            return
        if row in self.removed:  # (a row of the table: back, no search of it)
            self.removed.discard(row)
            return
        if self._in_table(row):
            self.removed.discard(row)
            return
        self.added.add(row)
        self._maybe_fold()

    def discard(self, row: tuple) -> None:
        if row in self.added:
            self.added.remove(row)
        elif self._in_table(row):
            self.removed.add(row)
            self._maybe_fold()

    def update(self, rows: Iterable[tuple]) -> None:
        rows = rows if isinstance(rows, (list, tuple, set, frozenset, Set)) else list(rows)
        if len(rows) < FOLD:
            for row in rows:
                self.add(row)
            return
        self._fold(self._encode(list(rows), intern=True))

    def difference_update(self, rows: Iterable[tuple]) -> None:
        rows = rows if isinstance(rows, (list, tuple, set, frozenset, Set)) else list(rows)
        if len(rows) < FOLD:
            for row in rows:
                self.discard(row)
            return
        self._fold()
        table = self.table
        gone = self._encode([row for row in rows if len(row) == len(self.types)],
                            intern=False)
        if table is None or gone is None:
            return
        at = table.searchsorted(gone)
        found = at < len(table)
        found[found] = table[at[found]] == gone[found]
        table = np.delete(table, at[found])
        self.table = table if len(table) else None

    def change(self, gained: list[tuple], lost: list[tuple]) -> None:
        """Add the rows ``gained``, known not to be here, and take away the
        rows ``lost``, known to be here (a transaction's changes, checked
        against this set): with membership known no row is searched for in
        the table (``update`` and ``difference_update`` search each row).

        >>> rows = input_rows(("number",), [(1,), (2,)])
        >>> rows.change([(3,)], [(1,)]); sorted(rows)
        [(2,), (3,)]
        >>> rows.change([(1,)], [(3,)]); sorted(rows)
        [(1,), (2,)]
        """
        if len(gained) >= FOLD or len(lost) >= FOLD:
            self.update(gained)
            self.difference_update(lost)
            return
        added, removed = self.added, self.removed
        for row in gained:
            if row in removed:   # a row of the table, back
                removed.remove(row)
            else:                # not here and not taken from the table: not in it
                added.add(row)
        for row in lost:
            if row in added:
                added.remove(row)
            else:                # here and not added: a row of the table
                removed.add(row)
        self._maybe_fold()

    # -- folding ------------------------------------------------------------

    def _maybe_fold(self) -> None:
        pending = len(self.added) + len(self.removed)
        if pending >= FOLD and pending >= (0 if self.table is None else len(self.table)) >> 5:
            self._fold()

    def _fold(self, more=None) -> None:
        """The changes (and the encoded rows ``more``) into the table: the
        removed rows deleted, the new ones sorted and inserted at their places
        (no sort of the whole table)."""
        table = self.table
        if table is not None and self.removed:
            table = np.delete(table, table.searchsorted(
                self._encode(list(self.removed), intern=False)))
        parts = [part for part in (self._encode(list(self.added), intern=True), more)
                 if part is not None]
        self.added, self.removed = set(), set()
        if parts:
            new = np.sort(np.concatenate(parts) if len(parts) > 1 else parts[0])
            if len(new) > 1:
                distinct = np.concatenate(([True], new[1:] != new[:-1]))
                if not distinct.all():
                    new = new[distinct]
            if table is not None and len(table):
                at = table.searchsorted(new)
                inside = at < len(table)
                known = np.zeros(len(new), dtype=bool)
                known[inside] = table[at[inside]] == new[inside]
                if known.any():   # (rows of ``more`` the table holds already)
                    new, at = new[~known], at[~known]
                table = np.insert(table, at, new)
            else:
                table = new
        self.table = table if table is not None and len(table) else None
