"""Distinct Trace in a long thin loop: rows sealed out of the dicts into packed runs.

A loop of a few rows per iteration (a counter: one) keeps its Distinct Trace
in dicts (row -> history, :mod:`engine.trace`), where a one-row step costs
about a microsecond; but each row then costs its tuple, its ints, a history
and a dict entry (~150 bytes), a million iterations long. The packed path
(:mod:`engine.operators.columns`, :mod:`engine.operators.packedsmall`) keeps
13 bytes a row but pays numpy's per-call costs (tens of µs) at every step.

A :class:`SealedTrace` is a :class:`~engine.trace.ZSetTrace` whose dicts take
the steps as before and whose rows are **sealed**, many at a time, into
:class:`SealedRuns`: runs of packed rows (each row one ``int64``:
:class:`~engine.operators.columns.Packing`; sorted by row, then iteration;
iterations and weights narrowed). The current epoch's dict is sealed when it
reaches :data:`~engine.colbatch.SEAL_ROWS` rows in a long thin loop (at most
:data:`~engine.colbatch.THIN_ROWS` rows an iteration), the past's at a commit
(as large). A row may then have entries in a part's dict and in its runs: its
history is the sum of both. The generated step (:class:`SealedRowSource`) searches the runs
only for a row between the least and the greatest sealed row (compared as
tuples: the packing keeps the rows' order), with one scalar ``searchsorted``
in each run whose own bounds hold it: a loop whose rows grow (a counter's)
never searches. Every row of a batch is checked to pack before a step reads
the runs (:meth:`SealedTrace.fits`); one that does not sends the trace back
to dicts.

>>> from engine.trace import ZSetTrace, encode, history_items
>>> plain = ZSetTrace(nested=True)
>>> plain.append({(1, 5): 1, (2, 7): 1}, iteration=0)
>>> trace = SealedTrace.adopt(plain, Packing(2)); trace.seal_cur(), trace.cur
(True, {})
>>> trace.append({(1, 5): -1, (3, 3): 1}, iteration=2)
>>> cursor = trace.epoch_cursor()
>>> cursor.times((1, 5)), cursor.weight((2, 7)), cursor.split((1, 5), 2), bool(cursor)
([((0, 0), 1), ((0, 2), -1)], 1, (1, -1, None), True)
>>> trace.commit(); sorted(trace.past_cursor().positive())
[(2, 7), (3, 3)]
>>> sorted(trace.to_dicts().past.items()) == sorted(
...     {(1, 5): {0: 1, 2: -1}, (2, 7): encode(0, 1), (3, 3): encode(2, 1)}.items())
True
"""

from __future__ import annotations

from engine import colbatch, lazy
from engine.colbatch import INT64
from engine.columnar import PAST_FLOOR, narrow, push_run
from engine.operators.columns import Packing, key_run
from engine.operators.packedsmall import packer, unpacker
from engine.trace import (
    DictRowCursor,
    DictRowSource,
    ZSetTrace,
    history_add,
    history_items,
    split_pairs,
)
from engine.tracearrays import entries_of

np = lazy.module("numpy", globals())

#: Bounds of an empty part: no row is between them.
NOTHING = ((float("inf"),), (float("-inf"),))


class SealedRuns:
    """Packed runs of one part of a :class:`SealedTrace` (module docstring):
    ``spine`` (engine.columnar runs of one key column, the packed row),
    ``edges`` (each run's first and last key) and ``lo``, ``hi`` (the least
    and greatest row sealed, as tuples)."""

    __slots__ = ("edges", "hi", "lo", "pack", "packing", "spine", "unpack")

    def __init__(self, packing: Packing):
        self.packing = packing
        self.pack = packer(packing)
        self.unpack = unpacker(packing)
        self.spine: list = []
        self.edges: list = []
        self.lo, self.hi = NOTHING

    def __len__(self) -> int:
        return sum(map(len, self.spine))

    def __bool__(self) -> bool:
        return bool(self.spine)

    def seal(self, store: dict) -> bool:
        """Add the entries of a part's dict (row -> history) as a run;
        ``False``, nothing changed, when a row does not pack."""
        if not store:
            return True
        found = entries_of([store], self.packing.arity, nested=True)
        keys = None if found is None else self.packing.pack(found[0])
        if keys is None:
            return False
        self.add(key_run(keys, found[1], found[2]))
        return True

    def add(self, run, floor: int = 0) -> None:
        """Add a run (merging geometrically: ``push_run``), in its least memory."""
        push_run(self.spine, run, 0, floor)
        for run in self.spine:
            if len(run) >= colbatch.NARROW_ROWS:
                if run.iterations.dtype == INT64:
                    run.iterations = narrow(run.iterations)
                if run.weights.dtype == INT64:
                    run.weights = narrow(run.weights)
        self.edges = [(run.keys.item(0), run.keys.item(len(run) - 1)) for run in self.spine]
        if self.edges:
            self.lo = self.unpack(min(first for first, _ in self.edges))
            self.hi = self.unpack(max(last for _, last in self.edges))

    def entries(self, row) -> list[tuple[int, int]]:
        """``(iteration, weight)`` of the entries of ``row`` (a row that does
        not pack has none)."""
        out: list = []
        key = self.pack(row)
        if key is None:
            return out
        for run, (first, last) in zip(self.spine, self.edges):
            if first <= key <= last:
                keys = run.keys
                start = int(keys.searchsorted(key))  # (one search: then step while equal)
                if keys.item(start) != key:
                    continue
                end, size = start + 1, len(keys)
                while end < size and keys.item(end) == key:
                    end += 1
                if end == start + 1:
                    out.append((run.iterations.item(start), run.weights.item(start)))
                else:
                    out += zip(run.iterations[start:end].tolist(),
                               run.weights[start:end].tolist())
        return out

    def total(self, row) -> int:
        """The weight of ``row`` over all its entries."""
        return sum(weight for _, weight in self.entries(row))

    def totals(self):
        """``(rows, weights)``: each row of the runs once with its total
        weight (zeros kept), sorted."""
        if not self.spine:
            return [], []
        keys = np.concatenate([run.keys for run in self.spine])
        weights = np.concatenate([run.weights for run in self.spine], dtype=INT64)
        if len(self.spine) > 1:
            order = np.argsort(keys, kind="stable")
            keys, weights = keys[order], weights[order]
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        if len(starts) < len(keys):
            weights, keys = np.add.reduceat(weights, starts), keys[starts]
        return (list(zip(*(c.tolist() for c in self.packing.unpack(keys)))),
                weights.tolist())

    def positive(self, keys, weights):
        """The packed rows of positive weight over the runs' entries and the
        extra entries ``keys``, ``weights`` (int64 arrays), sorted."""
        keys = np.concatenate([run.keys for run in self.spine] + [keys])
        weights = np.concatenate([run.weights for run in self.spine] + [weights], dtype=INT64)
        if not len(keys):
            return keys
        order = np.argsort(keys, kind="stable")
        keys, weights = keys[order], weights[order]
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        return keys[starts][np.add.reduceat(weights, starts) > 0]

    def into(self, store: dict) -> None:
        """Add every entry to a dict part (row -> history)."""
        for run in self.spine:
            rows = zip(*(c.tolist() for c in self.packing.unpack(run.keys)))
            for row, j, w in zip(rows, run.iterations.tolist(), run.weights.tolist()):
                history = history_add(store.get(row), j, w)
                if history is None:
                    del store[row]
                else:
                    store[row] = history


class SealedRowSource(DictRowSource):
    """Fragments reading a :class:`SealedRowCursor`: the dict's (those of
    :class:`~engine.trace.DictRowSource`), then the runs' for a row within
    their bounds."""

    def bind(self, cursor: str, prefix: str, i: str = "0") -> list[str]:
        return super().bind(cursor, prefix, i) + [
            f"    {prefix}sealed = {cursor}.sealed",
            f"    {prefix}lo, {prefix}hi = {prefix}sealed.lo, {prefix}sealed.hi"]

    def split(self, prefix, row, i, found, before, at, later, indent) -> list[str]:
        return super().split(prefix, row, i, found, before, at, later, indent) + [
            f"{indent}if {prefix}lo <= {row} <= {prefix}hi:",
            f"{indent}    for _j, _w in {prefix}sealed.entries({row}):",
            f"{indent}        if not {found}:",
            f"{indent}            {found} = True",
            f"{indent}            {before} = {at} = 0",
            f"{indent}            {later} = None",
            f"{indent}        if _j < {i}: {before} += _w",
            f"{indent}        elif _j == {i}: {at} += _w",
            f"{indent}        elif {later} is None or _j < {later}: {later} = _j",
        ]

    def accumulate(self, prefix, row, weight, i, before, indent) -> list[str]:
        return super().accumulate(prefix, row, weight, i, before, indent) + [
            f"{indent}if {prefix}lo <= {row} <= {prefix}hi:",
            f"{indent}    _e = {prefix}sealed.entries({row})",
            f"{indent}    if _e:",
            f"{indent}        _s = sum(_w for _, _w in _e)",
            f"{indent}        {before} = _s if {before} is None else {before} + _s",
        ]

    def weight(self, prefix: str, row: str) -> str:
        return (f"({super().weight(prefix, row)} + ({prefix}sealed.total({row}) "
                f"if {prefix}lo <= {row} <= {prefix}hi else 0))")


SOURCE = SealedRowSource(True)
#: The current epoch appended to past MAX_PACKED (dict histories).
WIDE_SOURCE = SealedRowSource(True, wide=True)


class SealedRowCursor(DictRowCursor):
    """A :class:`~engine.cursor.RowCursor` over one part of a
    :class:`SealedTrace`: its dict (``rows_``) and its runs (``sealed``)."""

    __slots__ = ("sealed",)

    def __init__(self, rows: dict, sealed: SealedRuns, epoch: int):
        super().__init__(rows, True, epoch)
        self.sealed = sealed

    @property
    def source(self) -> SealedRowSource:
        return SOURCE

    def __bool__(self) -> bool:
        return bool(self.rows_) or bool(self.sealed)

    def _items(self, row) -> list[tuple[int, int]]:
        history = self.rows_.get(row)
        items = [] if history is None else history_items(history)
        sealed = self.sealed
        if sealed and sealed.lo <= row <= sealed.hi:
            items += sealed.entries(row)
        return items

    def rows(self):
        rows = self.rows_
        sealed, _ = self.sealed.totals()
        return iter([*rows, *(row for row in sealed if row not in rows)])

    def times(self, row) -> list[tuple[tuple, int]]:
        summed: dict = {}
        for j, w in self._items(row):
            summed[j] = summed.get(j, 0) + w
        return [((self.epoch, j), w) for j, w in sorted(summed.items()) if w]

    def weight(self, row, until: int | None = None) -> int:
        return sum(w for j, w in self._items(row) if until is None or j <= until)

    def weights_of(self, rows) -> list[int]:
        return [self.weight(row) for row in rows]

    def split(self, row, i: int) -> tuple[int, int, int | None]:
        return split_pairs(self._items(row), i)

    def positive(self):
        rows = self.rows_
        sealed, totals = self.sealed.totals()
        out = [row for row in rows if self.weight(row) > 0]
        out += (row for row, total in zip(sealed, totals)
                if total > 0 and row not in rows)
        return iter(out)


class SealedTrace(ZSetTrace):
    """A child's :class:`~engine.trace.ZSetTrace` with sealed runs in each
    part (module docstring)."""

    __slots__ = ("sealed_cur", "sealed_past")

    @classmethod
    def adopt(cls, trace: ZSetTrace, packing: Packing) -> SealedTrace:
        """A sealed trace holding ``trace``'s dicts (nothing sealed yet)."""
        new = cls(nested=True)
        new.past, new.cur, new.epoch = trace.past, trace.cur, trace.epoch
        new.sealed_past, new.sealed_cur = SealedRuns(packing), SealedRuns(packing)
        return new

    def fits(self, rows) -> bool:
        """Whether every row packs (may be read against the runs)."""
        pack = self.sealed_cur.pack
        for row in rows:
            if pack(row) is None:
                return False
        return True

    def seal_cur(self) -> bool:
        """Seal the current epoch's dict; ``False`` (nothing changed) when a
        row does not pack."""
        if not self.sealed_cur.seal(self.cur):
            return False
        self.cur = {}
        return True

    def commit(self) -> None:
        super().commit()
        for run in self.sealed_cur.spine:
            self.sealed_past.add(run, PAST_FLOOR)
        self.sealed_cur = SealedRuns(self.sealed_cur.packing)
        if len(self.past) >= colbatch.SEAL_ROWS and self.sealed_past.seal(self.past):
            self.past = {}
        self.cursors[:] = [None, None]

    def rollback(self) -> None:
        super().rollback()
        self.sealed_cur = SealedRuns(self.sealed_cur.packing)
        self.cursors[:] = [None, None]

    # Each part's cursor is made once and kept until the part changes: a
    # replaced dict (the ``past``/``cur`` setters), a commit or a rollback
    # (``cursors`` emptied) drop it.

    def past_cursor(self) -> SealedRowCursor:
        cursor = self.cursors[0]
        if cursor is None:
            cursor = self.cursors[0] = SealedRowCursor(self._past, self.sealed_past,
                                                       self.epoch - 1)
        return cursor

    def epoch_cursor(self) -> SealedRowCursor:
        cursor = self.cursors[1]
        if cursor is None:
            cursor = self.cursors[1] = SealedRowCursor(self._cur, self.sealed_cur, self.epoch)
        return cursor

    def sealed_size(self) -> int:
        """Entries of the past (dict rows and sealed entries)."""
        return len(self.past) + len(self.sealed_past)

    def to_dicts(self) -> ZSetTrace:
        """The same entries as a plain :class:`~engine.trace.ZSetTrace`."""
        trace = ZSetTrace(nested=True)
        trace.past, trace.cur, trace.epoch = self.past, self.cur, self.epoch
        self.sealed_past.into(trace.past)
        self.sealed_cur.into(trace.cur)
        return trace

    def size(self) -> int:
        return super().size() + len(self.sealed_past) + len(self.sealed_cur)
