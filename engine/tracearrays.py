"""A dict trace's entries to and from numpy arrays, in bulk.

A trace changes kind mid-loop: a join's dict :class:`~engine.trace.Trace`
goes into runs (:class:`~engine.columnar.ColumnarTrace`) when its loop turns
columnar, and back to dicts at commit when it is small; a Distinct Trace's
dicts go into packed runs. Walking the entries through a cursor costs 1-2 µs
each (a 1,000-node chain moved 61,000 entries in 97 ms, mid-loop); these
functions read and build the dicts in a few passes of C-level iteration
(``np.fromiter`` over the chained rows and histories, ``dict(zip(...))`` per
key) instead:

* :func:`entries_of`: the entries of one part (``past`` or ``cur``) of a
  trace, as ``int64`` columns, iterations and weights, in any order;
* :func:`histories_of`: from consolidated entries sorted by row, then
  iteration (a run's), the rows and their histories (a child's int code or
  dict, a root's weight);
* :func:`groups_of`: the same grouped by key, a :class:`~engine.trace.Trace`
  part.

The history's encoding is :mod:`engine.trace`'s (``weight << SHIFT |
iteration``); the arrays decode and encode it whole.

>>> store = {(1,): {(1, 5): encode(0, 1), (1, 6): {0: 1, 3: -2}}, (2,): {(2, 5): encode(4, 2)}}
>>> columns, iterations, weights = entries_of(list(store.values()), 2, nested=True)
>>> sorted(zip(*(c.tolist() for c in columns), iterations.tolist(), weights.tolist()))
[(1, 5, 0, 1), (1, 6, 0, 1), (1, 6, 3, -2), (2, 5, 4, 2)]
>>> from engine.columnar import make_run
>>> run = make_run(columns, iterations, weights, 0)
>>> groups_of(run.columns, run.iterations, run.weights, 0, nested=True) == store
True
>>> entries_of([{(1, 2.5): 1}], 2, nested=False) is None    # a float: not int64 columns
True
"""

from __future__ import annotations

from array import array
from itertools import chain, compress

from engine import lazy
from engine.trace import MASK, SHIFT, encode, history_items

np = lazy.module("numpy", globals())
INT64 = "int64"
#: Histories (and root weights) past this magnitude are not read as one int64.
WIDE = 1 << 62


def entries_of(groups: list, arity: int, nested: bool):
    """``(columns, iterations, weights)`` (``int64`` arrays, one entry per row
    and iteration) of the dicts ``groups``, each row -> history (``nested``)
    or row -> weight; ``None`` when a row is not ``arity`` ints of ``int64``
    or a weight does not fit ``int64``."""
    n = sum(map(len, groups))
    if not n:
        return [np.zeros(0, dtype=INT64) for _ in range(arity)], *(
            np.zeros(0, dtype=INT64) for _ in range(2))
    # ``array("q")`` takes ints of int64 only (a float, a str, a wider int raise)
    # at the speed of np.fromiter, which would truncate a float. The rows of a
    # stream have one arity: the count of their numbers is checked (as
    # ColBatch.from_rows does), not each row's.
    try:
        flat = array("q", chain.from_iterable(chain.from_iterable(groups)))
    except (OverflowError, TypeError):
        return None
    if len(flat) != n * arity:
        return None
    table = np.frombuffer(flat, dtype=INT64).reshape(n, arity)
    columns = [table[:, c].copy() for c in range(arity)]
    try:
        codes = np.frombuffer(array("q", chain.from_iterable(g.values() for g in groups)),
                              dtype=INT64)
    except (OverflowError, TypeError):  # a dict history (or a huge weight) among them
        return _wide_entries(groups, columns, nested)
    if not nested:
        return columns, np.zeros(n, dtype=INT64), codes
    return columns, codes & MASK, codes >> SHIFT


def _wide_entries(groups: list, columns: list, nested: bool):
    """:func:`entries_of` when some history is a dict (several iterations) or
    an int past ``int64``: the ints read whole, the others expanded in Python."""
    histories = list(chain.from_iterable(group.values() for group in groups))
    plain = [type(h) is int and -WIDE <= h < WIDE for h in histories]
    codes = np.frombuffer(array("q", compress(histories, plain)), dtype=INT64)
    read = np.array(plain, dtype=bool)
    keep, where = np.flatnonzero(read), np.flatnonzero(~read)
    wide = list(map(histories.__getitem__, where.tolist()))
    if not nested or not all(type(h) is dict for h in wide):
        wide = [dict(history_items(h)) if nested else {0: h} for h in wide]
    try:  # a dict's iterations and weights, all at once
        more_iterations = np.frombuffer(array("q", chain.from_iterable(wide)), dtype=INT64)
        more_weights = np.frombuffer(array("q", chain.from_iterable(map(dict.values, wide))),
                                     dtype=INT64)
    except OverflowError:
        return None
    repeats = list(map(len, wide))
    where = np.repeat(where, repeats)
    if nested:
        iterations, weights = codes & MASK, codes >> SHIFT
    else:
        iterations, weights = np.zeros(len(codes), dtype=INT64), codes
    return ([np.concatenate([c[keep], c[where]]) for c in columns],
            np.concatenate([iterations, more_iterations]),
            np.concatenate([weights, more_weights]))


def shared_ints(column) -> list[int]:
    """The column as Python ints, one object per distinct number (``tolist``
    makes one per entry, 32 bytes each past 256).

    >>> values = shared_ints(np.array([1000, 2000, 1000]))
    >>> values, values[0] is values[2]
    ([1000, 2000, 1000], True)
    """
    if len(column) < 2:
        return column.tolist()
    ordered = np.sort(column)
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return list(map(distinct.tolist().__getitem__, distinct.searchsorted(column).tolist()))


def histories_of(columns: list, iterations, weights, nested: bool) -> tuple[list, list]:
    """``(rows, histories)`` of consolidated entries sorted by row, then
    iteration (no zero weight): each row once, with its history (``nested``:
    the encoded int, or a dict for several iterations or a wide one) or its
    weight summed over the iterations (zeros dropped). Numbers are shared
    (:func:`shared_ints`)."""
    n = len(weights)
    if not n:
        return [], []
    weights = weights.astype(INT64, copy=False)
    new = np.ones(n, dtype=bool)
    new[1:] = False
    for column in columns:
        new[1:] |= column[1:] != column[:-1]
    starts = np.flatnonzero(new)
    if not nested:
        if len(starts) < n:
            weights = np.add.reduceat(weights, starts)
        keep = np.flatnonzero(weights)
        starts, weights = starts[keep], weights[keep]
        return list(zip(*(shared_ints(c[starts]) for c in columns))), weights.tolist()
    iterations = iterations.astype(INT64, copy=False)
    rows = list(zip(*(shared_ints(c[starts]) for c in columns)))
    fits = (iterations[starts] <= MASK) & (np.abs(weights[starts]) < (1 << (62 - SHIFT)))
    if len(starts) == n and fits.all():
        return rows, shared_ints((weights << SHIFT) | iterations)
    ends = [*starts[1:].tolist(), n]
    if len(starts) < n:
        fits &= np.diff(np.append(starts, n)) == 1
    codes = shared_ints(np.where(fits, (weights[starts] << SHIFT) | iterations[starts], 0))
    slow = np.flatnonzero(~fits).tolist()
    if slow:
        at, weight_list = iterations.tolist(), weights.tolist()
        first = starts.tolist()
        for r in slow:
            s, e = first[r], ends[r]
            codes[r] = encode(at[s], weight_list[s]) if e - s == 1 else dict(
                zip(at[s:e], weight_list[s:e]))
    return rows, codes


def groups_of(columns: list, iterations, weights, key_column: int, nested: bool) -> dict:
    """A :class:`~engine.trace.Trace` part, key -> row -> history (or weight),
    of consolidated entries sorted by key, then row, then iteration (a run's);
    the key is the 1-tuple of the row's ``key_column``."""
    rows, histories = histories_of(columns, iterations, weights, nested)
    out: dict = {}
    last = group = None
    for row, history in zip(rows, histories):  # a key's rows are together
        key = row[key_column]
        if key != last:
            group = out[(key,)] = {}
            last = key
        group[row] = history
    return out
