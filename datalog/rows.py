"""Rows by relation: the read-only mapping that deltas, verifications and
explanations hand out (relation name -> frozenset of rows).

>>> rows = Rows({"p": frozenset({(1,)}), "q": frozenset()})
>>> rows["p"], rows["r"], list(rows)
(frozenset({(1,)}), frozenset(), ['p'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

EMPTY: frozenset = frozenset()


class Rows(Mapping):
    """relation name -> frozenset of rows; an absent relation reads as empty."""

    def __init__(self, rows: dict[str, frozenset]):
        self._rows = {name: rows_ for name, rows_ in rows.items() if rows_}

    def __getitem__(self, name: str) -> frozenset:
        return self._rows.get(name, EMPTY)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name) -> bool:
        return name in self._rows

    def size(self, name: str) -> int:
        """How many rows ``name`` has (for a transaction's changes, counted
        without making the rows: :mod:`datalog.changes`)."""
        return len(self[name])

    def __repr__(self) -> str:
        return repr({name: sorted(rows) for name, rows in self._rows.items()})


def sorted_rows(rows) -> list:
    """The rows sorted, or as they come when their values do not compare."""
    try:
        return sorted(rows)
    except TypeError:
        return list(rows)
