"""The Aggregate operator's changed groups, computed on columns.

For a large batch at epoch ``e`` and a built-in aggregate (a
:class:`~engine.aggregates.Reduce`), the groups of the batch's keys are not
walked row by row: the batch's columns and the past entries under its keys
(read from the trace through its cursor: in one pass of ``searchsorted`` when
the trace is in runs, per key from dicts otherwise) are concatenated and
consolidated; the rows of positive weight are sorted by key, then by value in
the order Python sorts the values, and cut into groups; each group's result
comes from one ``reduceat`` (count, integer sums, min, max) or, for the sums
and means of floats, from Python's own ``sum`` over the group's products in
that order — so the results are exactly the row path's (the same function
applied to the same sorted pairs), not approximately. Integer sums wrap at
64 bits only when the aggregate says its ``finish`` wraps (``modular``), else
they must provably fit ``int64``.

Whatever the columns cannot give exactly as the row path would — rows that do
not fit typed columns (mixed types), a batch and a past of different column
kinds, a flag column of symbols, a NaN or a ``-0.0`` among floats (a dict
conflates ``-0.0`` with ``0.0``; which one it keeps depends on the order of
arrival), an unsigned sum that is not modular, a sum that might leave
``int64`` — returns ``None``, and the operator takes its row path for the
batch. Booleans in a batch of rows become ints in columns (equal as dict
keys, as they are everywhere in the engine's columns).
:data:`engine.colbatch.COUNTS` counts ``aggregate`` (batches done here) and
``aggregate_rows`` (batches past the threshold that went back to rows).

>>> from engine.aggregates import Reduce
>>> from engine.colbatch import ColBatch
>>> batch = ColBatch.from_rows({("a", 1): 1, ("a", 5): 2, ("b", 2): 1, ("c", 7): -1})
>>> sorted(zip(*changed(Reduce("sum", 1, weighted=True), (0,), batch, None)))
[(('a',), 11), (('b',), 2), (('c',), None)]
>>> sorted(zip(*changed(Reduce("max", 1), (0,), batch, None)))
[(('a',), 5), (('b',), 2), (('c',), None)]

(The groups come in the order of their symbols' codes, which depends on the
order in which symbols were first interned in the process.)
"""

from __future__ import annotations

from engine import lazy
from engine.colbatch import COUNTS, INT64, SYMBOLS, ColBatch, consolidate, sort_order

np = lazy.module("numpy", globals())
COUNTS.setdefault("aggregate", 0)
COUNTS.setdefault("aggregate_rows", 0)
#: A dict past holding more than this many entries per row of the batch under
#: its keys sends the batch to the row path: turning Python rows into columns
#: costs more than the row loop over them (sales of 2,000 shops: a 10% update,
#: 10,000 rows against 100,000 past rows, took 311 ms on columns, 114 ms on
#: rows for a float sum; 124/105 ms for an int max; 45/60 ms for an int sum of
#: 50,000; `python -m benchmarks.aggregate_crossover`: ~0.5 past rows a row).
PAST_RATIO = 4
#: Sums whose bound passes this stay in ``int64`` with room to spare (the
#: bound is computed in floats, whose rounding this margin covers).
SAFE_SUM = float(1 << 62)


def values_of(column: np.ndarray, kind: str) -> list:
    """A column as Python values (symbols decoded)."""
    return SYMBOLS.symbols(column) if kind == "s" else column.tolist()


def python_order(column: np.ndarray, kind: str):
    """``(order, ids)``: an ``int64`` array ordering the entries as Python
    orders their values — numbers by value (``ids`` ``None``), symbols by
    their text (the rank of each entry's symbol among the column's distinct
    ones; ``ids[r]`` is the symbol of rank ``r``). Floats must hold no NaN.

    >>> python_order(np.array([-1.5, 2.0, -0.5, 0.0]), "f")[0].argsort().tolist()
    [0, 2, 3, 1]
    """
    if kind == "i":
        return column, None
    if kind == "u":
        return (column ^ np.uint64(1 << 63)).view(INT64), None
    if kind == "f":  # the IEEE bits, negatives' reversed: monotone in the value
        bits = column.view(INT64)
        return np.where(bits < 0, bits ^ np.int64((1 << 63) - 1), bits), None
    ids, inverse = np.unique(column, return_inverse=True)
    names = SYMBOLS.symbols(ids)
    by_name = np.array(sorted(range(len(ids)), key=names.__getitem__), dtype=INT64)
    ranks = np.empty(len(ids), dtype=INT64)
    ranks[by_name] = np.arange(len(ids))
    return ranks[inverse], ids[by_name]


def past_entries(cursor, index: tuple, keys: list, sought: np.ndarray | None,
                 limit: float = float("inf"), read: list | None = None):
    """``(columns, kinds, weights)`` of the entries of a trace part under
    ``keys`` (``sought``: the same keys as one ``int64`` column, or
    ``None``), or ``()`` for none, or ``None`` when they do not fit columns
    or a dict part holds more than ``limit`` of them. A dict part's groups
    (key -> value -> weight) are appended to ``read``, for a row path."""
    if cursor is None or not cursor:
        return ()
    gather = getattr(cursor, "gather_columns", None)
    if gather is not None and sought is not None:
        found = gather(sought)
        if found is not None:
            columns, weights = found
            return (columns, ("i",) * len(columns), weights) if len(weights) else ()
    groups = {key: cursor.weights() for key in cursor.seek_many(keys)}
    if read is not None:
        read.append(groups)
    if sum(map(len, groups.values())) > limit:
        return None
    rows: dict = {}
    for group in groups.values():
        rows.update(group)
    if not rows:
        return ()
    batch = ColBatch.from_rows(rows)
    if batch is None:
        return None
    return batch.columns, batch.kinds, batch.weights


def changed(reduce, index: tuple, batch, past, read: list | None = None,
            keys: list | None = None):
    """``(keys, results)`` of every key of ``batch`` (the columns ``index`` of
    its rows, as the tuples the trace's keys are): the result of ``reduce``
    over the group's values of positive weight in ``past`` (a cursor over the
    trace's past, or ``None``) plus ``batch``, ``None`` for no row; or
    ``None`` when the columns cannot compute them exactly (module docstring),
    or a past in dicts is much larger (:data:`PAST_RATIO`). ``batch`` is a
    :class:`ColBatch`, or a dict of rows whose ``keys`` are given (then it is
    put in columns only once the past is read and small enough). ``read``
    receives the past's groups when they were read from dicts."""
    if keys is None:
        kinds = batch.kinds
        if index:
            unique = consolidate([batch.columns[c] for c in index],
                                 tuple(kinds[c] for c in index),
                                 np.ones(len(batch), dtype=INT64))
            keys = list(zip(*(values_of(c, kinds[i])
                              for c, i in zip(unique.columns, index))))
            sought = unique.columns[0] if len(index) == 1 and kinds[index[0]] == "i" else None
        else:
            keys, sought = [()], None
    else:
        sought = None
        if len(index) == 1 and getattr(past, "gather_columns", None) is not None:
            try:
                sought = np.fromiter((k[0] for k in keys), dtype=INT64, count=len(keys))
            except (OverflowError, TypeError, ValueError):
                sought = None
    found = past_entries(past, index, keys, sought, PAST_RATIO * len(batch), read)
    if found is None:
        return None
    if type(batch) is not ColBatch:
        batch = ColBatch.from_rows(batch)
        if batch is None:
            return None
    kinds = batch.kinds
    if reduce.flag is not None and kinds[reduce.flag] == "s":
        return None   # a flag is a number: 0 marks a row (the id 0 is a symbol)
    columns, weights = list(batch.columns), batch.weights
    if found:
        if found[1] != kinds:
            return None
        columns = [np.concatenate((a, b)) for a, b in zip(columns, found[0])]
        weights = np.concatenate((weights, found[2]))
    if any(kind == "f" and not _plain_floats(c) for c, kind in zip(columns, kinds)):
        return None
    total = consolidate(columns, kinds, weights)
    positive = total.weights > 0
    columns = [c[positive] for c in total.columns]
    weights = total.weights[positive]
    results = _reduce(reduce, index, columns, kinds, weights)
    if results is None:
        return None
    group_keys, values = results
    found_at = dict(zip(group_keys, values))
    return keys, [found_at.get(key) for key in keys]


def _plain_floats(column: np.ndarray) -> bool:
    """No NaN and no ``-0.0`` (module docstring)."""
    return not (np.isnan(column).any() or (np.signbit(column) & (column == 0)).any())


def _reduce(reduce, index, columns, kinds, weights):
    """``(keys, results)`` of the groups of the consolidated positive entries."""
    n = len(weights)
    if not n:
        return [], []
    # Sort by key, then by the whole value as Python sorts it: only the
    # order of a float sum's terms matters, and consolidation sorted by the
    # columns already, in Python's order unless a column holds symbols (ids)
    # or negative floats (their bits) — then the groups are cut as they are.
    prefix = tuple(index) == tuple(range(len(index)))
    ordered = kinds[reduce.column] != "f" if reduce.kind in ("sum", "mean") else True
    if not ordered:
        ordered = all(kind in "iu" or (kind == "f" and not (c < 0).any())
                      for c, kind in zip(columns, kinds))
    if not (prefix and ordered):
        order = sort_order(([] if prefix else [columns[c] for c in index])
                           + [python_order(c, k)[0] for c, k in zip(columns, kinds)])
        columns = [c[order] for c in columns]
        weights = weights[order]
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in index:
        new[1:] |= columns[c][1:] != columns[c][:-1]
    starts = np.flatnonzero(new)
    keys = list(zip(*(values_of(columns[c][starts], kinds[c]) for c in index))) \
        if index else [()]
    group_of = np.cumsum(new) - 1
    groups = len(starts)
    kind = reduce.kind
    at = group_of if reduce.flag is None else group_of[columns[reduce.flag] != 0]
    counted = None if reduce.flag is None else columns[reduce.flag] != 0
    w = weights if reduce.weighted else np.ones(n, dtype=INT64)
    if counted is not None:
        w = w[counted]
    # cuts: where each group's counted entries start; where: those groups
    cuts = np.flatnonzero(np.concatenate(([True], at[1:] != at[:-1]))) if len(at) else at
    where = at[cuts].tolist()
    out = [None if kind in ("min", "max", "mean") else _zero(reduce)] * groups
    if kind == "count":
        for g, total in zip(where, np.add.reduceat(w, cuts).tolist() if len(at) else ()):
            out[g] = total
        return keys, out
    column, ckind = columns[reduce.column], kinds[reduce.column]
    if counted is not None:
        column = column[counted]
    if kind in ("min", "max"):
        ordered, ids = python_order(column, ckind) if ckind == "s" else (column, None)
        pick = np.minimum if kind == "min" else np.maximum
        best = pick.reduceat(ordered, cuts) if len(at) else ordered[:0]
        if ids is not None:  # back from ranks to the symbols
            best = ids[best]
        for g, value in zip(where, values_of(best, ckind)):
            out[g] = value
        return keys, out
    if ckind == "s":
        return None
    sums, counts = _sums(reduce, column, ckind, w, cuts)
    if sums is None:
        return None
    finish = reduce.finish
    for g, total, count in zip(where, sums, counts):
        result = total / count if kind == "mean" else total
        out[g] = finish(result) if finish is not None else result
    return keys, out


def _zero(reduce):
    """The count or sum of a group of markers only (no counted row)."""
    if reduce.kind == "count":
        return 0
    return reduce.finish(0) if reduce.finish is not None else 0


def _sums(reduce, column, kind, w, cuts):
    """Per group: the sum of ``value * weight`` (or of the values, unweighted)
    as the row path's Python ``sum`` gives it, and the count; ``(None,
    None)`` when not exact."""
    if not len(cuts):
        return [], []
    counts = np.add.reduceat(w, cuts).tolist()
    if kind == "f":   # Python's sum over the same products in the same order
        products = (column * w if reduce.weighted else column).tolist()
        bounds = [*cuts.tolist(), len(products)]
        return [sum(products[a:b]) for a, b in zip(bounds, bounds[1:])], counts
    if kind == "u":
        if not reduce.modular or reduce.kind == "mean":
            return None, None
        products = column * w.astype(np.uint64) if reduce.weighted else column
        return np.add.reduceat(products, cuts).tolist(), counts
    if not (reduce.modular and reduce.kind == "sum"):
        size = np.abs(column.astype(np.float64))
        if float((size * w).sum() if reduce.weighted else size.sum()) >= SAFE_SUM:
            return None, None
    products = column * w if reduce.weighted else column
    return np.add.reduceat(products, cuts).tolist(), counts
