"""Columnar batches: a Z-set as typed numpy columns and a weight array.

A :class:`ColBatch` holds the same thing as a dict batch (row -> nonzero
weight) as one array per column and an ``int64`` array of weights, one entry
per row, **consolidated** (each row once, no zero weight). A column has a
**kind**: ``"i"`` (``int64``: Soufflé's ``number``), ``"u"`` (``uint64``: ints
past ``int64``), ``"f"`` (``float64``) or ``"s"`` (symbols, interned to dense
``int64`` ids by :data:`SYMBOLS`, which keeps the reverse table).

It *is* a read-only mapping row -> weight, so every operator that reads a batch
as a dict reads a columnar one unchanged: the rows are made (once, lazily) when
something asks for them. The operators of a recursive stratum that work on
columns (:mod:`engine.operators.columns`) take the columns instead and never
make rows.

Consolidation sorts (never ``np.unique`` without counts, which measured 20–70×
slower than a sort on large ``int64`` arrays in numpy 2.x; DESIGN.md §10): the
columns are packed into one ``int64`` sort key when their ranges allow, else
sorted with ``np.lexsort``.

>>> b = ColBatch.from_rows({(1, "a"): 1, (2, "b"): -2})
>>> b.kinds, len(b), b[(2, "b")]
(('i', 's'), 2, -2)
>>> s = concat([b, b.negate(), ColBatch.from_rows({(3, "a"): 1})]); dict(s)
{(3, 'a'): 1}
>>> ColBatch.from_rows({(1, 2.5): 1}).kinds, ColBatch.from_rows({(1 << 63,): 1}).kinds
(('i', 'f'), ('u',))
>>> ColBatch.from_rows({(1, "a"): 1, ("b", 2): 1}) is None   # a column of two types
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from itertools import chain

from engine import lazy
from engine.zset import ZSet

np = lazy.module("numpy", globals())
INT64 = "int64"
# Where the columnar path starts to win, per operator: batches smaller than
# these stay dicts (numpy calls cost microseconds each even on a few rows).
# Measured with `python -m benchmarks.columnar_crossover` (state 50,000 rows,
# 2-core AMD EPYC, loaded; µs per call, rows path / columns path):
#   join on a dict trace:  64 rows 48/69, 256 rows 178/134, 1,024 rows 1,096/389
#   join on runs:          16 rows 84/76 (the row path reads runs slowly)
#   distinct:              256 rows 124/203, 1,024 rows 585/419, 4,096 2,742/1,365
#   plus:                  64 rows 24/40, 256 rows 81/81, 1,024 rows 329/275
# `columns_from(0)` forces the columnar path on every batch (tests).

#: A join's delta of at least this many rows is joined on columns (its traces
#: then go into runs); a trace append of a columnar batch this large too. Far
#: above the join's own crossover (256), for the whole loop: until Distinct Trace
#: is columnar too the loop converts batches between rows and columns (a
#: 400-node chain ran 1.7x slower at 256), and state left in runs makes the
#: small updates that follow pay numpy's per-call costs (same generation on a
#: depth-6 tree, 5,334 tuples, at 1,024: batch 8 -> 22 ms, single-fact updates
#: 1 -> 5-7 ms). At 8,192 the workloads of `python -m benchmarks --quick` stay
#: on rows (as fast as before) and the large ones go columnar (closure of the
#: 1,000-node random graph: batch 2.6 -> 1.2 s, same generation on the depth-10
#: tree 3.4 -> 2.1 s, their single-fact updates unchanged).
THRESHOLD = 8192
#: A join whose traces are runs already takes the columnar path from this size.
JOIN_ON_RUNS = 16
#: Distinct Trace moves its trace into packed runs at a batch this large (and
#: then stays there while it holds SMALL_STATE entries or more: its small
#: batches cost ~160 µs each there, ~15 µs on dicts). Its own crossover is
#: 1,024; set with THRESHOLD for the same reasons.
DISTINCT_ROWS = 8192
#: Plus adds on columns from this many rows (when one input is columnar).
PLUS_ROWS = 256
#: An Aggregate of a built-in (engine.aggregates.Reduce) computes its changed
#: groups on columns (engine.operators.aggcols) from a columnar batch this
#: large, and from a batch of rows in a dict AGGREGATE_DICT_ROWS large (it is
#: converted first). `python -m benchmarks.aggregate_crossover` (weighted
#: count and sum, 8 values a key, µs per call rows/columns): columnar batch,
#: past 50,000 rows in dicts: 16 rows 26/96, 256 221/195 (sum 250/171), 1,024
#: 919/410; bulk load (no past): 64 45/75, 256 165/100, 1,024 662/167. Dict
#: batch, past in dicts: 256 272/243 (sum 244/252), 1,024 918/748, 16,384
#: 17,411/13,088; bulk load: 256 179/218, 1,024 682/458. (Past in runs,
#: Circuit(columnar_threshold=...): 64 198/106, 1,024 2,668/261.)
AGGREGATE_ROWS = 256
AGGREGATE_DICT_ROWS = 1024
#: In a loop whose state is large, a join's delta or a Distinct Trace's batch
#: of at least this many rows goes columnar (below THRESHOLD): the join's
#: traces holding SMALL_STATE rows; a Distinct Trace in dicts once this
#: epoch has brought it SMALL_STATE entries (a chain's long epoch, not a small
#: update: its packed state would stay and make the small updates after it pay
#: numpy's per-call costs, Andersen's analysis 1.5 -> 2.7 ms an update).
#: A dict probe costs ~1 µs a row whatever the state, a columnar step a fixed
#: 50-150 µs plus little per row; with the state large the loop stays
#: columnar from there on (no rows made per iteration, the state in runs).
#: Closure of a 1,000-node chain (~500 rows an iteration over 1,000
#: iterations, 500,000 paths): see README "Columnar runtime".
LOOP_ROWS = 256
#: Under THRESHOLD, a join whose other trace is a small dict (under SMALL_STATE
#: rows, more than the delta) moves it into runs only from this iteration on:
#: it would go back to dicts at commit, a round trip of ~2 µs an entry that a
#: short loop's updates do not repay (same generation on a depth-10 tree:
#: single-fact updates 9 -> 13-21 ms without this) and a long one does.
LONG_LOOP = 64
#: At the end of an epoch, a Distinct Trace or join trace in runs holding fewer
#: entries than this goes back to dicts, where the small deltas of the next
#: updates are cheaper (same generation on a depth-6 tree: single-fact updates
#: 5-7 ms with its state left in runs, 1 ms in dicts); the move costs about a
#: microsecond per entry, so larger states stay in runs.
SMALL_STATE = 20_000
#: A run (engine.columnar) of this many entries or more keeps its iterations
#: and weights in the narrowest int type that holds them; shorter ones stay
#: int64: they hold little, and finding the range (two passes) cost single-fact
#: updates more than it saved (their appends make many small runs, which merge
#: into larger ones later).
NARROW_ROWS = 1024
#: Times each columnar operator ran (``join``, ``distinct``, ``plus``, a linear
#: chain wholly on columns: ``linear``), rows of columnar batches that went
#: through linear stages per row (``row_stages``: stages with no columnar form,
#: or a batch the vectorised form could not compute exactly) and such batches
#: (``row_batches``): for tests and profiles, which check that a path was (or
#: was not) taken.
COUNTS: dict[str, int] = {"join": 0, "distinct": 0, "plus": 0, "linear": 0,
                          "row_stages": 0, "row_batches": 0}


@contextlib.contextmanager
def columns_from(rows: int | None, state: int | None = None):
    """Every threshold above set to ``rows`` for the block (``None``: the
    defaults), :data:`SMALL_STATE` to ``state`` (by default ``rows`` too);
    ``columns_from(0)``: every batch columnar, state kept in runs.

    >>> from engine import colbatch
    >>> with columns_from(0): print(colbatch.THRESHOLD, colbatch.DISTINCT_ROWS)
    0 0
    >>> colbatch.THRESHOLD == THRESHOLD
    True
    """
    names = ("THRESHOLD", "JOIN_ON_RUNS", "DISTINCT_ROWS", "PLUS_ROWS", "NARROW_ROWS",
             "LOOP_ROWS", "AGGREGATE_ROWS", "AGGREGATE_DICT_ROWS")
    saved = {name: globals()[name] for name in (*names, "SMALL_STATE")}
    if rows is not None:
        globals().update(dict.fromkeys(names, rows))
        globals()["SMALL_STATE"] = rows
    if state is not None:
        globals()["SMALL_STATE"] = state
    try:
        yield
    finally:
        globals().update(saved)


class Interner:
    """Symbols <-> dense ``int64`` ids (the ids say nothing about order).

    >>> t = Interner(); t.ids(["x", "y", "x"]).tolist(), t.symbols(np.array([1, 0]))
    ([0, 1, 0], ['y', 'x'])
    """

    def __init__(self):
        self.table: dict[str, int] = {}
        self.names: list[str] = []

    def ids(self, symbols) -> np.ndarray:
        table, names = self.table, self.names
        out = []
        for symbol in symbols:
            found = table.get(symbol)
            if found is None:
                found = table[symbol] = len(names)
                names.append(symbol)
            out.append(found)
        return np.array(out, dtype=INT64)

    def symbols(self, ids: np.ndarray) -> list[str]:
        names = self.names
        return [names[k] for k in ids.tolist()]


SYMBOLS = Interner()


def _column(values: list):
    """``(kind, array)`` of one column of Python values; ``None`` when the
    column mixes types or holds a value no kind can."""
    types = set(map(type, values))   # one C-level pass (a generator: 3x slower)
    if types <= {int, bool}:
        try:
            return "i", np.array(values, dtype=INT64)
        except OverflowError:
            try:
                return "u", np.array(values, dtype=np.uint64)
            except OverflowError:
                return None
    if types == {float}:
        return "f", np.array(values, dtype=np.float64)
    if types == {str}:
        return "s", SYMBOLS.ids(values)
    return None


class ColBatch(Mapping):
    """A consolidated Z-set in columns (module docstring)."""

    __slots__ = ("columns", "kinds", "weights", "_rows")

    def __init__(self, columns: list, kinds: tuple, weights: np.ndarray):
        self.columns = columns
        self.kinds = kinds
        self.weights = weights
        self._rows: dict | None = None

    # -- conversion ---------------------------------------------------------

    @classmethod
    def from_rows(cls, batch: Mapping) -> ColBatch | None:
        """The batch (row -> weight) in columns; ``None`` when its rows do not
        fit (no columns, rows of several arities, a column of mixed types)."""
        if isinstance(batch, ColBatch):
            return batch
        n = len(batch)
        if not n:
            return None
        rows = list(batch)
        arity = len(rows[0])
        if not arity:
            return None
        weights = np.fromiter(batch.values(), dtype=INT64, count=n)
        table = None
        if set(map(type, chain.from_iterable(rows))) <= {int, bool}:
            try:  # ints of int64 in rows of one arity: 3x faster than np.array(rows)
                table = np.fromiter(chain.from_iterable(rows), dtype=INT64,
                                    count=n * arity).reshape(n, arity)
            except (OverflowError, ValueError):
                table = None
        if table is not None:  # (bools equal their ints as dict keys)
            return cls([np.ascontiguousarray(table[:, c]) for c in range(arity)],
                       ("i",) * arity, weights)
        if set(map(len, rows)) != {arity}:
            return None
        columns, kinds = [], []
        for values in zip(*rows):
            found = _column(list(values))
            if found is None:
                return None
            kinds.append(found[0])
            columns.append(found[1])
        out = cls(columns, tuple(kinds), weights)
        out._rows = batch if type(batch) is dict else None
        return out

    def column_values(self, c: int) -> list:
        """Column ``c`` as Python values (symbols decoded). A long column of
        few distinct numbers shares one Python object per number (as rows made
        from the same input would), not one per cell."""
        column = self.columns[c]
        if self.kinds[c] == "s":
            return SYMBOLS.symbols(column)
        if len(column) < 4096 or self.kinds[c] == "f":
            return column.tolist()
        ordered = np.sort(column)
        starts = np.concatenate(([True], ordered[1:] != ordered[:-1]))
        if int(starts.sum()) * 4 > len(column):
            return column.tolist()
        distinct = ordered[starts]
        return list(map(distinct.tolist().__getitem__,
                        distinct.searchsorted(column).tolist()))

    def rows(self) -> dict:
        """The batch as a :class:`~engine.zset.ZSet` row -> weight (made once,
        then kept)."""
        if self._rows is None:
            values = [self.column_values(c) for c in range(len(self.columns))]
            rows = zip(*values) if values else [()] * len(self.weights)
            self._rows = ZSet(zip(rows, self.weights.tolist()))
        return self._rows

    @property
    def int_only(self) -> bool:
        """Whether every column is ``int64`` (what columnar traces hold)."""
        return all(kind == "i" for kind in self.kinds)

    # -- the mapping, over the rows -------------------------------------------

    def __len__(self) -> int:
        return len(self.weights)

    def __bool__(self) -> bool:
        return len(self.weights) > 0

    def __getitem__(self, row):
        return self.rows()[row]

    def __iter__(self) -> Iterator:
        return iter(self.rows())

    def __contains__(self, row) -> bool:
        return row in self.rows()

    def get(self, row, default=None):
        return self.rows().get(row, default)

    def keys(self):
        return self.rows().keys()

    def items(self):
        return self.rows().items()

    def values(self):
        return self.rows().values()

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and self.rows() == dict(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"ColBatch({self.rows()!r})"

    # -- operations ---------------------------------------------------------

    def negate(self) -> ColBatch:
        return ColBatch(self.columns, self.kinds, -self.weights)

    def project(self, columns) -> ColBatch:
        """``tuple(row[c] for c in columns)`` of each row, consolidated."""
        return consolidate([self.columns[c] for c in columns],
                           tuple(self.kinds[c] for c in columns), self.weights)


def bounds_of(columns: list) -> list | None:
    """``[(low, high), ...]`` of ``int64`` columns (``None`` for another dtype
    or no entries)."""
    if not len(columns[0]) or any(c.dtype != INT64 for c in columns):
        return None
    return [(int(c.min()), int(c.max())) for c in columns]


def sort_key(columns: list, bounds: list | None = None) -> np.ndarray | None:
    """One ``int64`` per entry ordering the entries as ``np.lexsort`` of the
    columns (the first column most significant) would, for equal entries
    equal; ``None`` when the columns' ranges do not fit 63 bits together.
    Each column is shifted by its own minimum (the key is for this sort
    only); ``bounds`` (``[(low, high), ...]``, e.g. of runs being merged)
    saves finding them.

    >>> sort_key([np.array([2, 1, 2]), np.array([-5, 7, 0])]).tolist()
    [16, 12, 21]
    """
    if len(columns) == 1 and columns[0].dtype == INT64:
        return columns[0]
    if not len(columns[0]):
        return np.zeros(0, dtype=INT64)
    if bounds is None:
        bounds = bounds_of(columns)
        if bounds is None:
            return None
    widths = [(high - low).bit_length() for low, high in bounds]
    if sum(widths) > 63:
        return None
    key = np.zeros(len(columns[0]), dtype=INT64)
    for column, (low, _), width in zip(columns, bounds, widths):
        if width:
            key <<= width
            key |= column - low if low else column
    return key


def sort_order(columns: list) -> np.ndarray:
    """The stable order sorting the entries by the columns (first most
    significant)."""
    key = sort_key(columns)
    if key is not None:
        return np.argsort(key, kind="stable")
    return np.lexsort([c.view(INT64) if c.dtype.kind == "f" else c
                       for c in reversed(columns)])


def consolidate(columns: list, kinds: tuple, weights: np.ndarray) -> ColBatch:
    """Entries (any order, repeats allowed) summed per row, zeros dropped.

    Floats are compared by value (``-0.0`` is ``0.0``; a NaN equals only a
    NaN of the same bits), as dict keys would be up to NaN.

    >>> dict(consolidate([np.array([3, 1, 3])], ("i",), np.array([1, 1, -1])))
    {(1,): 1}
    >>> dict(consolidate([], (), np.array([2, -1])))   # nullary: one row ()
    {(): 1}
    """
    if not columns:   # nullary rows: all the same row ()
        total = int(weights.sum())
        return ColBatch([], kinds, np.array([total] if total else [], dtype=INT64))
    columns = [c + 0.0 if c.dtype.kind == "f" else c for c in columns]  # -0.0 -> 0.0
    n = len(weights)
    if n > 1:
        key = sort_key(columns)
        if key is not None:
            order = np.argsort(key, kind="stable")
            key = key[order]
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(key[1:], key[:-1], out=new[1:])
        else:
            order = np.lexsort([c.view(INT64) if c.dtype.kind == "f" else c
                                for c in reversed(columns)])
            new = np.zeros(n, dtype=bool)
            new[0] = True
            for column in columns:
                column = column[order]
                if column.dtype.kind == "f":
                    column = column.view(INT64)
                new[1:] |= column[1:] != column[:-1]
        columns = [c[order] for c in columns]
        weights = weights[order]
        if not new.all():
            starts = np.flatnonzero(new)
            weights = np.add.reduceat(weights, starts)
            columns = [c[starts] for c in columns]
    keep = weights != 0
    if not keep.all():
        columns = [c[keep] for c in columns]
        weights = weights[keep]
    return ColBatch(columns, kinds, weights)


def concat(batches: list) -> ColBatch | None:
    """The sum of columnar batches of one kind of row, consolidated; ``None``
    when their kinds differ (the caller then adds them as dicts)."""
    batches = [b for b in batches if len(b)]
    if not batches:
        return None
    kinds = batches[0].kinds
    if any(b.kinds != kinds for b in batches):
        return None
    if len(batches) == 1:
        return batches[0]
    return consolidate([np.concatenate([b.columns[c] for b in batches])
                        for c in range(len(kinds))], kinds,
                       np.concatenate([b.weights for b in batches]))


def as_columns(batch: Mapping, minimum: int | None = None) -> ColBatch | None:
    """``batch`` in columns when it is one already, or has at least
    ``minimum`` rows (default :data:`THRESHOLD`) and fits; else ``None``."""
    if isinstance(batch, ColBatch):
        return batch
    if len(batch) < (THRESHOLD if minimum is None else minimum) or not batch:
        return None
    return ColBatch.from_rows(batch)
