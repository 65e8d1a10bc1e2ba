"""Z-sets and indexed Z-sets.

A **row** is a tuple of values. A **weight** is an int, positive or negative,
never stored as zero. A **Z-set** maps row -> weight: a relation with
multiplicities, or the *difference* between two versions of one. An **indexed
Z-set** maps key -> value -> weight; the runtime indexes rows by some of their
columns, so the value is the whole row.

Both are plain dicts underneath (the classes below only add helpers), and every
operator accepts plain dicts: a batch costs one dict, a row one tuple.

>>> a = ZSet({(1,): 1, (2,): 2})
>>> a.plus({(2,): -2, (3,): 1})
ZSet({(1,): 1, (3,): 1})
>>> a.negate()
ZSet({(1,): -1, (2,): -2})
>>> a.index_by((0,))
IndexedZSet({(1,): {(1,): 1}, (2,): {(2,): 2}})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

EMPTY: dict = {}
"""The shared empty batch. Operators never mutate their inputs, so it is safe."""


def add_into(target: dict, batch: Mapping, sign: int = 1) -> dict:
    """Add ``sign * batch`` into the Z-set ``target`` in place; zeros are removed.

    >>> add_into({"a": 1}, {"a": -1, "b": 2})
    {'b': 2}
    """
    if sign == 1 and target.keys().isdisjoint(batch):
        target.update(batch)  # the common case, done in C
        return target
    get = target.get
    for row, weight in batch.items():
        total = get(row, 0) + sign * weight
        if total:
            target[row] = total
        else:
            del target[row]
    return target


def add_indexed_into(target: dict, batch: Mapping, sign: int = 1) -> dict:
    """Add ``sign * batch`` into the indexed Z-set ``target`` in place.

    The inner dicts of ``batch`` are copied, never shared with ``target``.

    >>> add_indexed_into({1: {"a": 1}}, {1: {"a": -1}, 2: {"b": 1}})
    {2: {'b': 1}}
    """
    for key, values in batch.items():
        group = target.get(key)
        if group is None:
            target[key] = {v: sign * w for v, w in values.items()} if sign != 1 else dict(values)
            continue
        add_into(group, values, sign)
        if not group:
            del target[key]
    return target


def sum_zsets(batches: Iterable[Mapping]) -> dict:
    """The sum of several Z-sets, as a new dict (the largest one is copied first).

    >>> sum_zsets([{1: 1}, {1: 1, 2: -1}, {}])
    {1: 2, 2: -1}
    """
    batches = [b for b in batches if b]
    if not batches:
        return {}
    batches.sort(key=len, reverse=True)
    out = dict(batches[0])
    for batch in batches[1:]:
        add_into(out, batch)
    return out


class ZSet(dict):
    """A Z-set: row -> nonzero weight (see the module docstring)."""

    __slots__ = ()

    @classmethod
    def from_rows(cls, rows: Iterable[tuple], weight: int = 1) -> ZSet:
        """Each row once per occurrence, with ``weight``.

        >>> ZSet.from_rows([(1,), (1,), (2,)])
        ZSet({(1,): 2, (2,): 1})
        """
        out = cls()
        if not weight:
            return out
        for row in rows:
            total = out.get(row, 0) + weight
            if total:
                out[row] = total
            else:
                del out[row]
        return out

    def plus(self, other: Mapping) -> ZSet:
        return ZSet(add_into(dict(self), other))

    def minus(self, other: Mapping) -> ZSet:
        return ZSet(add_into(dict(self), other, -1))

    def negate(self) -> ZSet:
        return ZSet({row: -w for row, w in self.items()})

    def distinct(self) -> ZSet:
        """Rows of positive weight, each with weight 1."""
        return ZSet({row: 1 for row, w in self.items() if w > 0})

    def index_by(self, columns: tuple[int, ...]) -> IndexedZSet:
        out = IndexedZSet()
        for row, w in self.items():
            out.setdefault(tuple(row[c] for c in columns), {})[row] = w
        return out

    def __repr__(self) -> str:
        return f"ZSet({dict.__repr__(self)})"


class IndexedZSet(dict):
    """An indexed Z-set: key -> value -> nonzero weight; no key maps to an empty dict."""

    __slots__ = ()

    def flatten(self) -> ZSet:
        """The Z-set of values (keys dropped).

        >>> IndexedZSet({(1,): {(1, 2): 1}, (2,): {(2, 3): -1}}).flatten()
        ZSet({(1, 2): 1, (2, 3): -1})
        """
        out = ZSet()
        for values in self.values():
            add_into(out, values)
        return out

    def plus(self, other: Mapping) -> IndexedZSet:
        out = IndexedZSet({k: dict(v) for k, v in self.items()})
        return add_indexed_into(out, other)

    def __repr__(self) -> str:
        return f"IndexedZSet({dict.__repr__(self)})"
