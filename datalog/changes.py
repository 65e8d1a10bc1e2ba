"""A transaction's changes kept as the engine gave them, made into rows only
when asked.

The engine returns each output's difference for the epoch as a mapping row ->
weight: a dict, or a columnar batch (:class:`~engine.colbatch.ColBatch`: one
numpy array per column and one of weights; a large recursive relation's
difference comes so). Neither changes after the epoch. A
:class:`~datalog.api.Delta` keeps them (:class:`Changes`) and answers from
them: how many rows a relation gained or lost is counted on the weights
(:meth:`Changes.count`), the frozenset of a relation's inserted or retracted
rows is made the first time it is asked for and then kept
(:class:`ChangedRows`), and a frame of the changes is built from the columns
(:meth:`Changes.columns`), with no Python row in between.

>>> from engine.colbatch import ColBatch
>>> changes = Changes({"p": ColBatch.from_rows({(1, "a"): 1, (2, "b"): -1}),
...                    "q": {(7,): -1}})
>>> changes.count("p"), changes.count("q"), changes.count("r")
((1, 1), (0, 1), (0, 0))
>>> inserted = ChangedRows(changes, 1)
>>> list(inserted), inserted["p"], inserted["q"]
(['p'], frozenset({(1, 'a')}), frozenset())
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from datalog.rows import EMPTY, Rows
from engine import lazy
from engine.colbatch import SYMBOLS, ColBatch

np = lazy.module("numpy", globals())


class Changes:
    """relation name -> its difference (row -> nonzero weight, a dict or a
    :class:`~engine.colbatch.ColBatch`), with the counts and row sets made
    from it, each once."""

    def __init__(self, diffs: Mapping[str, Mapping]):
        self.diffs = {name: diff for name, diff in diffs.items() if diff}
        self._counts: dict[str, tuple[int, int]] = {}
        self._rows: dict[tuple[str, int], frozenset] = {}

    def count(self, name: str) -> tuple[int, int]:
        """``(inserted, retracted)``: how many rows of ``name`` have a positive
        weight and how many a negative one (counted on the weights)."""
        found = self._counts.get(name)
        if found is None:
            diff = self.diffs.get(name)
            if diff is None:
                found = (0, 0)
            elif isinstance(diff, ColBatch):
                weights = diff.weights
                found = (int(np.count_nonzero(weights > 0)),
                         int(np.count_nonzero(weights < 0)))
            else:
                inserted = retracted = 0
                for weight in diff.values():
                    if weight > 0:
                        inserted += 1
                    elif weight < 0:
                        retracted += 1
                found = (inserted, retracted)
            self._counts[name] = found
        return found

    def rows(self, name: str, sign: int) -> frozenset:
        """The rows of ``name`` whose weight has ``sign`` (``1``: inserted,
        ``-1``: retracted), made once."""
        found = self._rows.get((name, sign))
        if found is None:
            inserted, retracted = self.count(name)
            if not (inserted if sign > 0 else retracted):
                return EMPTY
            diff = self.diffs[name]
            if isinstance(diff, ColBatch) and diff.kinds:
                found = frozenset(zip(*_part(diff, sign).values()))
            else:
                found = frozenset([row for row, weight in diff.items()
                                   if (weight > 0 if sign > 0 else weight < 0)])
            self._rows[(name, sign)] = found
        return found

    def only(self, name: str) -> Changes:
        """The changes of relation ``name`` alone (what is made of it shared)."""
        part = Changes({name: self.diffs[name]} if name in self.diffs else {})
        for key in ((name, 1), (name, -1)):
            if key in self._rows:
                part._rows[key] = self._rows[key]
        if name in self._counts:
            part._counts[name] = self._counts[name]
        return part

    def columns(self, name: str) -> tuple[list, list] | None:
        """``name``'s changed rows as columns sorted by row, and their signs:
        ``(columns, weights)``, each column a numpy array (symbols decoded to
        ``str`` in an object array) and ``weights`` ``+1`` or ``-1`` per row;
        ``None`` when the difference is not columnar (the caller then sorts
        rows). Vectorised but for one lookup per distinct symbol."""
        diff = self.diffs.get(name)
        if not isinstance(diff, ColBatch) or not diff.kinds:
            return None
        keys, values = [], []
        for kind, column in zip(diff.kinds, diff.columns):
            if kind == "s":  # symbols order by their text, not by their ids
                ids, where = np.unique(column, return_inverse=True)
                text = np.array(SYMBOLS.symbols(ids), dtype=object)
                rank = np.empty(len(ids), dtype=np.int64)
                rank[np.argsort(text, kind="stable")] = np.arange(len(ids))
                keys.append(rank[where])
                values.append(text[where])
            else:
                keys.append(column)
                values.append(column)
        order = np.lexsort(keys[::-1])
        return [v[order] for v in values], np.sign(diff.weights[order])


def _part(diff: ColBatch, sign: int) -> dict[int, list]:
    """Column index -> Python values of the rows of ``diff`` whose weight has
    ``sign``."""
    keep = diff.weights > 0 if sign > 0 else diff.weights < 0
    if not keep.all():
        diff = ColBatch([c[keep] for c in diff.columns], diff.kinds, diff.weights[keep])
    return {c: diff.column_values(c) for c in range(len(diff.kinds))}


class ChangedRows(Rows):
    """relation name -> frozenset of the rows a transaction inserted (``sign``
    ``1``) or retracted (``-1``), read from its :class:`Changes`: a relation
    it did not change reads as empty, as in :class:`~datalog.rows.Rows`."""

    def __init__(self, changes: Changes, sign: int):
        self._changes = changes
        self._sign = sign

    def size(self, name: str) -> int:
        inserted, retracted = self._changes.count(name)
        return inserted if self._sign > 0 else retracted

    def __getitem__(self, name: str) -> frozenset:
        return self._changes.rows(name, self._sign)

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._changes.diffs if self.size(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name) -> bool:
        return name in self._changes.diffs and bool(self.size(name))

    def __repr__(self) -> str:
        return repr({name: sorted(self[name]) for name in self})
