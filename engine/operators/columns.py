"""The operators of a recursive stratum on columns: join, Distinct Trace, plus.

The nodes of :mod:`engine.operators.join`, :mod:`engine.operators.distinct` and
:mod:`engine.operators.linear` call these when a batch is large (at least
:data:`engine.colbatch.THRESHOLD` rows): the same formulas as their row loops,
computed on :class:`~engine.colbatch.ColBatch` columns and on traces kept in
sorted runs (:mod:`engine.columnar`), with no row made.

**Join** (one side's delta against a part of the other side's trace): each run
of the part is probed with ``searchsorted`` for every key of the delta at once;
the matches are expanded with ``np.repeat`` (delta index) and a ramp (run
index); the output columns are gathered by the join's projection, the weights
multiplied. Against past epochs a pair's time is ``(e, max(i, j))``: pairs of
a later iteration ``j`` are grouped by ``j`` into the node's future buffer.

**Distinct Trace**: a row's int64 columns are packed into one ``int64``
(:class:`Packing`); the trace is runs of (packed row, iteration, weight), and
``w1``, ``w2``, ``w3`` and the next time of every row of the batch (and of the
rows due at this iteration) come from one probe of each run.

>>> from engine.colbatch import ColBatch
>>> delta = ColBatch.from_rows({(1, 2): 1, (5, 2): 1})
>>> run = make_run([np.array([2, 2, 3]), np.array([7, 8, 9])], np.array([0, 0, 0]),
...                np.array([1, 1, 1]), 0)
>>> pieces = []
>>> join_part(delta, 1, [run], ((0, 0), (1, 1)), True, pieces)
>>> dict(finish(pieces, ("i", "i")))
{(1, 7): 1, (1, 8): 1, (5, 7): 1, (5, 8): 1}
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import partial

from engine import colbatch, lazy
from engine.colbatch import (
    COUNTS,
    INT64,
    RADIX_BITS,
    RADIX_ROWS,
    ColBatch,
    bounds_of,
    concat,
    consolidate,
    order_packed,
    pack_rows,
)
from engine.columnar import (
    FACTOR,
    Run,
    filled,
    interleave,
    key_starts,
    make_run,
    merge_runs,
    push_past,
    push_run,
)
from engine.operators.densesums import BoxDirectory, append_run, merge_epoch, union

np = lazy.module("numpy", globals())
COUNTS.setdefault("plus_packed", 0)  # a few rows added to a batch by its packed keys
NO_TIME = (1 << 63) - 1  # the largest int64: no time


def probe(sought: np.ndarray, run: Run):
    """``(delta index, run index)`` of every pair of an entry of ``sought``
    with an equal key of ``run``; ``None`` when there is none. When no key
    matches twice (a run of distinct rows) the pairs are the matching
    positions themselves, with no expansion (and when no key of the run
    repeats, one ``searchsorted``)."""
    if run.is_unique():
        mine, theirs = run.find(sought)
        return (mine, theirs) if len(mine) else None
    keys = run.keys
    lo = keys.searchsorted(sought, "left")
    return probe_expand(lo, keys.searchsorted(sought, "right") - lo)


#: A sorted delta of this many rows probes a run once per distinct key
#: rather than once per row (:func:`probe_sorted`); a join's delta this
#: large is sorted by its key first (:class:`DeltaRun`), a smaller one only
#: against a run of more than :data:`~engine.colbatch.SORTED_PROBE_RUN`.
DISTINCT_PROBE = 1024


def probe_sorted(sought: np.ndarray, run: Run):
    """:func:`probe` of a sorted ``sought``: two ``searchsorted`` of each
    distinct key (a closure's delta of 100,000 rows has a few thousand),
    their results repeated over the rows that share it.

    >>> ones = np.ones(4, dtype=np.int64)
    >>> run = Run([np.array([1, 2, 2, 3])], ones - 1, ones, 0)
    >>> [x.tolist() for x in probe_sorted(np.array([1, 1, 2, 5]), run)]
    [[0, 1, 2, 2], [0, 0, 1, 2]]
    """
    n = len(sought)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(sought[1:], sought[:-1], out=new[1:])
    starts = new.nonzero()[0]
    if len(starts) * 2 > n:
        return probe(sought, run)
    keys = run.keys
    distinct = sought[starts]
    lo = keys.searchsorted(distinct, "left")
    counts = keys.searchsorted(distinct, "right") - lo
    if not np.count_nonzero(counts):
        return None
    sizes = np.diff(starts, append=n)
    return probe_expand(np.repeat(lo, sizes), np.repeat(counts, sizes))


#: A run whose keys span at most this many values per entry (a closure's
#: edges: 1,000 sources for 2,000 edges) gets a directory, the position of
#: each key value's first entry (:func:`directory_of`), when a probe seeks
#: at least an eighth as many keys as the span, and :data:`DISTINCT_PROBE`
#: keys or more (a smaller delta, a chain's update loop's 100-300 rows, pays
#: more for its numpy calls than it saves: ~4% more CPU an update with it,
#: loaded machine, within the noise): then a probe is two gathers
#: instead of two binary searches (the closure of the 1,000-node random
#: graph, 1.16 million sought in 23 probes of its edges: the join's batch CPU
#: 181-199 -> 141-147 ms, three runs alternated, loaded machine).
DIRECTORY_SPAN = 4


def directory_of(run, sought: int):
    """``(low, starts)``: ``starts[k - low]`` the position of the first entry
    of key ``k`` of ``run`` (``starts[k - low + 1]`` past its last), two
    slots past the span for keys outside it; kept on the run. ``None`` when
    the keys span more than :data:`DIRECTORY_SPAN` values an entry, or when
    ``sought`` keys would not repay making it.

    >>> run = Run([np.array([3, 3, 5, 6])], np.zeros(4), np.ones(4), 0)
    >>> low, starts = directory_of(run, 4); low, starts.tolist()
    (3, [0, 2, 2, 3, 4, 4])
    """
    if type(run) is not Run:  # (a DeltaRun: probed once)
        return None
    found = run.directory
    if found is not None:
        return found if type(found) is tuple else None
    keys = run.keys
    n = len(keys)
    if not n:
        return None
    low = int(keys[0])
    span = int(keys[-1]) - low + 1
    if span > DIRECTORY_SPAN * n:
        run.directory = False
        return None
    if sought * 8 < span:
        return None  # (not yet: a larger probe may make it)
    run.directory = (low, key_starts(keys, low, span))
    return run.directory


def probe_directory(sought: np.ndarray, directory):
    """:func:`probe` through a run's directory (:func:`directory_of`).

    >>> run = Run([np.array([3, 3, 5, 6])], np.zeros(4), np.ones(4), 0)
    >>> [x.tolist() for x in probe_directory(np.array([5, 9, 3, 2]), directory_of(run, 4))]
    [[0, 2, 2], [2, 0, 1]]
    """
    low, starts = directory
    span = len(starts) - 2
    at = sought - low
    # keys outside the span (negative: a huge unsigned value) to the empty slot
    np.minimum(at.view(np.uint64), span, out=at.view(np.uint64))
    lo = starts[at]
    at += 1  # (in place: a large delta's temporaries are page faults)
    counts = starts[at]
    counts -= lo
    return probe_expand(lo, counts)


def probe_expand(lo: np.ndarray, counts: np.ndarray):
    """The pairs of :func:`probe` from each sought entry's first match ``lo``
    and number of matches ``counts``."""
    total = int(counts.sum())
    if not total:
        return None
    mine = counts.nonzero()[0]
    if len(mine) == total:
        return mine, lo[mine]
    mine = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts)  # (in place from here: fewer temporaries to fault in)
    first -= counts
    np.subtract(lo, first, out=first)  # each sought entry's first match, less its offset
    theirs = np.repeat(first, counts)
    theirs += np.arange(total)
    return mine, theirs


def group_by(values: np.ndarray):
    """``(value, positions)`` for each distinct value of a small int array."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    for start, end in zip([0, *cuts.tolist()], [*cuts.tolist(), len(order)]):
        yield int(ordered[start]), order[start:end]


class DeltaRun:
    """A delta sorted by a key column, probed like a run (``a ⋈ b``)."""

    __slots__ = ("columns", "iterations", "keys", "weights")

    def __init__(self, batch: ColBatch, key_column: int):
        keys = batch.columns[key_column]
        bounds = bounds_of([keys]) if len(keys) >= RADIX_ROWS else None
        span = bounds[0][1] - bounds[0][0] if bounds is not None else -1
        if 0 <= span < 1 << RADIX_BITS:  # radix on the key shifted to 0
            order = order_packed(keys - bounds[0][0], span.bit_length())
        else:
            order = np.argsort(keys, kind="stable")
        self.columns = [c[order] for c in batch.columns]
        self.weights = batch.weights[order]
        self.keys = self.columns[key_column]
        self.iterations = None

    def is_unique(self) -> bool:
        return False  # (a delta's keys repeat as they may: probed in full)

    def all_ones(self) -> bool:
        return False  # (its weights are multiplied in as they are)


def join_part(delta: ColBatch, key_column: int, spine: list, projection, delta_left: bool,
              pieces: list, i: int | None = None, future=None,
              known: list | None = None) -> None:
    """Pairs of ``delta`` (the left side when ``delta_left``) with the runs of
    ``spine``, through ``projection`` ``((side, column), ...)``, appended to
    ``pieces`` as ``(columns, weights)``. With ``i`` (past epochs of a child
    circuit), pairs with a run entry at iteration ``j > i`` go to
    ``future(j)`` (a list of pieces) instead. ``known``: a list given each
    piece's columns' ``(low, high)`` as the delta's and the run's bounds give
    them (``None`` if not known), for :func:`finish`."""
    mine_side = 0 if delta_left else 1
    sought = delta.columns[key_column]
    found = getattr(delta, "bounds", None)
    if found is not None and spine:  # runs whose keys lie outside the delta's: no pair
        low, high = found[key_column]  # (a chain's update: the edge changed, this
        spine = [run for run in spine  # epoch's, is not where the loop's rows reach)
                 if (ranges := getattr(run, "bounds", None)) is None
                 or not (ranges[0][1] < low or ranges[0][0] > high)]
    if (spine and (len(spine) > 1 or len(spine[0].keys) > 4 * len(sought))
            and (len(sought) >= DISTINCT_PROBE
                 or any(len(run) > colbatch.SORTED_PROBE_RUN for run in spine))):
        delta = DeltaRun(delta, key_column)  # sorted keys: searchsorted walks forward
        sought = delta.keys
    ordered = type(delta) is DeltaRun and len(sought) >= DISTINCT_PROBE
    for run in spine:
        directory = directory_of(run, len(sought)) if len(sought) >= DISTINCT_PROBE else None
        if directory is not None:
            found = probe_directory(sought, directory)
        else:
            found = probe_sorted(sought, run) if ordered else probe(sought, run)
        if found is None:
            continue
        mine, theirs = found
        if len(mine) == len(sought) and run.is_unique():
            # every row of the delta matched once (the matches in its order:
            # a chain's loop, each path extended by its one next edge): its
            # columns as they are, not gathered (2 numpy calls an iteration)
            mine = slice(None)
        columns = [delta.columns[c][mine] if side == mine_side else run.columns[c][theirs]
                   for side, c in projection]
        weights = (delta.weights[mine] if run.all_ones()
                   else delta.weights[mine] * run.weights[theirs])
        if i is not None and (run.bounds is None or run.bounds[-1][1] > i):
            # (a run whose iterations are all at most i, as its bounds show
            # (a relation's facts at 0), has no entry for later)
            at = run.iterations[theirs]
            later = at > i
            if np.count_nonzero(later):
                for j, where in group_by(at[later]):
                    chosen = later.nonzero()[0][where]
                    future(j).append(([c[chosen] for c in columns], weights[chosen]))
                now = ~later
                columns = [c[now] for c in columns]
                weights = weights[now]
        pieces.append((columns, weights))
        if known is not None:
            known.append(piece_bounds(delta, run, projection, mine_side))


def piece_bounds(delta, run, projection, mine_side: int) -> list | None:
    """Each output column's ``(low, high)`` for pairs of ``delta`` and
    ``run`` through ``projection``: the delta's bounds and the run's
    (``Run.bounds``: its key column's, then the others', in order), or
    ``None`` when one is not known.

    >>> run = Run([np.array([7, 9]), np.array([1, 2])], np.zeros(2), np.ones(2), 1,
    ...           [(1, 2), (7, 9), (0, 0)])
    >>> delta = ColBatch([np.array([5]), np.array([2])], ("i", "i"), np.ones(1), [(5, 5), (2, 2)])
    >>> piece_bounds(delta, run, ((0, 0), (1, 0), (1, 1)), 0)
    [(5, 5), (7, 9), (1, 2)]
    """
    found = getattr(delta, "bounds", None)
    ranges = getattr(run, "bounds", None)
    if found is None or ranges is None:
        return None
    key = next(c for c, column in enumerate(run.columns) if column is run.keys)
    return [found[c] if side == mine_side else ranges[0] if c == key else ranges[c + (c < key)]
            for side, c in projection]


def finish(pieces: list, kinds: tuple, known: list | None = None) -> ColBatch:
    """The consolidated sum of ``(columns, weights)`` pieces (``known``: each
    piece's columns' bounds, :func:`join_part`'s, used when every piece has
    them)."""
    if not pieces:
        return ColBatch([np.zeros(0, dtype=INT64) for _ in kinds], kinds,
                        np.zeros(0, dtype=INT64))
    bounds = None
    if known is not None and len(known) == len(pieces) and None not in known:
        bounds = known[0] if len(known) == 1 else [
            (min(b[0] for b in column), max(b[1] for b in column)) for column in zip(*known)]
    if len(pieces) == 1:
        columns, weights = pieces[0]
    else:
        columns = [np.concatenate([p[0][c] for p in pieces]) for c in range(len(kinds))]
        weights = np.concatenate([p[1] for p in pieces])
    return consolidate(columns, kinds, weights, bounds)


def plus(batches: list) -> ColBatch | None:
    """The sum of batches, some columnar, in columns; ``None`` when one does
    not fit or their kinds differ (then they are added as dicts). A few rows
    in a dict added to a batch of ints are found in it one by one
    (:func:`add_few`)."""
    COUNTS["plus"] += 1
    if len(batches) == 2:
        a, b = batches
        if type(a) is not ColBatch:
            a, b = b, a
        if (type(a) is ColBatch and type(b) is not ColBatch and 0 < len(b) <= colbatch.PLUS_FEW
                and len(a) and a.int_only):
            found = add_few(a, b)
            if found is not None:
                return found
    columnar = []
    for batch in batches:
        found = ColBatch.from_rows(batch)
        if found is None:
            return None
        if found is not batch and len(found) >= RADIX_ROWS and len(batches) > 1:
            # a large dict's rows in order: the sum then joins sorted stretches
            # (a merge) instead of sorting all (an Export's epoch: the row-path
            # iterations' dict and the columnar ones' batches)
            found = consolidate(found.columns, found.kinds, found.weights)
        columnar.append(found)
    return concat(columnar)


def inserted(arrays: list, at: int, values: list) -> list:
    """The ``arrays`` (as long as each other) as ``int64``, each with its
    value of ``values`` inserted before position ``at``: rows of one new
    block, each copied around its value (a chain's update adds a row to a
    batch's two columns, its packed rows and its weights at each of ~500
    iterations: 1.9 µs for the four arrays of 450 entries, against 3.3 µs
    copied one by one and 4.4 µs an array for ``np.insert``).

    >>> [a.tolist() for a in inserted([np.array([1, 2, 4]), np.array([7, 8, 9])], 2, [3, 0])]
    [[1, 2, 3, 4], [7, 8, 0, 9]]
    """
    n = len(arrays[0])
    block = np.empty((len(arrays), n + 1), dtype=INT64)
    for row, array in zip(block, arrays):
        if at:
            row[:at] = array[:at]
        if at < n:
            row[at + 1:] = array[at:]
    block[:, at] = values
    return list(block)


def add_few(batch: ColBatch, rows) -> ColBatch | None:
    """``batch`` (``int64`` columns) plus a few ``rows`` (row -> weight) of
    ints: each row found by comparing the columns with it, its weight added
    there (the row dropped at 0) or the row inserted where it goes in row
    order (a sorted batch stays sorted: a Distinct Trace then takes it as it
    is, with no sort and its columns at hand, :func:`distinct_columns`; the
    sum of an unsorted one is consolidated, not sorted); ``None`` when a row
    is not ints of ``int64``. A batch with its rows packed
    (:attr:`~engine.colbatch.ColBatch.packed`: in order) finds each row by a
    binary search of its packed key instead (:func:`packed_keys`, no numpy
    call) and keeps them packed, the row added: the Distinct then neither
    packs nor checks the order (a chain's update adds one row to the join's
    output at each of ~1,000 iterations).

    >>> batch = consolidate([np.array([1, 2]), np.array([5, 6])], ("i", "i"), np.array([1, 1]))
    >>> out = add_few(batch, {(2, 6): -1, (0, 9): 2})
    >>> dict(out), out.bounds
    ({(0, 9): 2, (1, 5): 1}, [(0, 2), (5, 9)])
    """
    columns, weights = batch.columns, batch.weights
    arity = len(columns)
    if not arity:  # (the nullary row: compared by no column)
        return None
    packed = batch.packed
    keys = None if packed is None else packed_keys(rows, arity)
    if keys is None:
        packed = None
    else:
        COUNTS["plus_packed"] += 1
        view = memoryview(packed) if packed.flags.c_contiguous else packed.tolist()
    added, dropped, places = [], [], []  # (places: where each added row goes)
    bounds = batch.bounds
    for row, w in rows.items():
        if packed is not None:
            key = keys[row]
            spot = bisect_left(view, key)
            at = [spot] if spot < len(view) and view[spot] == key else ()
        else:
            if len(row) != arity or any(type(v) is not int or not -1 << 63 <= v < 1 << 63
                                        for v in row):
                return None
            hit = columns[0] == row[0]
            for c in range(1, arity):
                hit &= columns[c] == row[c]
            at = hit.nonzero()[0]
        if len(at):
            if weights is batch.weights:
                weights = weights.copy()
            at = int(at[0])
            weights[at] += w
            if not weights[at]:
                dropped.append(at)
        else:
            added.append((row, w))
            if packed is not None:
                places.append(spot)
            if bounds is not None:
                bounds = [(min(low, v), max(high, v)) for (low, high), v in zip(bounds, row)]
    if dropped:
        keep = np.ones(len(weights), dtype=bool)
        keep[dropped] = False
        columns = [c[keep] for c in columns]
        weights = weights[keep]
        packed = None if packed is None else packed[keep]
    if added:
        if packed is None:
            at = [row_position(columns, row) for row, _ in added]
        else:
            at = places
            if dropped:  # (found before the rows dropped: searched again)
                view = memoryview(packed) if packed.flags.c_contiguous else packed.tolist()
                at = [bisect_left(view, keys[row]) for row, _ in added]
            columns = [*columns, packed]  # (inserted into as a column)
            added = [((*row, keys[row]), w) for row, w in added]
        if len(added) == 1:  # (most often: a chain's update, a row an iteration)
            row, w = added[0]
            *columns, weights = inserted([*columns, weights], at[0], [*row, w])
        else:
            order = sorted(range(len(added)), key=lambda j: (at[j], added[j][0]))
            at = [at[j] for j in order]
            added = [added[j] for j in order]
            columns = [np.insert(c, at, np.array([r[k] for r, _ in added], dtype=INT64))
                       for k, c in enumerate(columns)]
            weights = np.insert(weights, at, np.array([w for _, w in added], dtype=INT64))
        if packed is not None:
            packed = columns.pop()
    out = ColBatch(columns, batch.kinds, weights, bounds)
    out.packed = packed
    return out


def packed_keys(rows, arity: int) -> dict | None:
    """Each row's key as :func:`~engine.colbatch.pack_rows` packs rows of
    ``arity`` columns (each value biased, ``63 // arity`` bits), as a Python
    int; ``None`` when a value is not an int of that range.

    >>> keys = packed_keys({(-1, 7): 1, (3, 0): 1}, 2)
    >>> columns = [np.array([-1, 3]), np.array([7, 0])]
    >>> list(keys.values()) == pack_rows(columns, [(-1, 3), (0, 7)]).tolist()
    True
    >>> packed_keys({(1 << 40, 0): 1}, 2) is None
    True
    """
    bits = 63 // arity
    bias = 1 << (bits - 1)
    keys = {}
    for row in rows:
        if len(row) != arity:
            return None
        key = 0
        for v in row:
            if type(v) is not int or not -bias <= v < bias:
                return None
            key = (key << bits) | (v + bias)
        keys[row] = key
    return keys


def row_position(columns: list, row: tuple) -> int:
    """Where ``row`` goes among the rows of ``columns`` (int64), were they in
    row order: a binary search of each column in turn within the stretch
    of equal values before it (``bisect`` of a memoryview: no numpy call).

    >>> row_position([np.array([1, 2, 2, 5]), np.array([0, 3, 9, 1])], (2, 4))
    2
    """
    lo, hi = 0, len(columns[0])
    for column, value in zip(columns, row):
        view = memoryview(column) if column.flags.c_contiguous else column.tolist()
        lo, hi = bisect_left(view, value, lo, hi), bisect_right(view, value, lo, hi)
        if lo == hi:
            break
    return lo


# ---------------------------------------------------------------------------
# Distinct Trace on packed rows


class Packing:
    """A row of ``arity`` int64 columns as one ``int64``, order-preserving and
    invertible: one column is itself; ``a > 1`` columns take ``63 // a`` bits
    each (values in ``[-2**(b-1), 2**(b-1))``, checked).

    >>> p = Packing(2); keys = p.pack([np.array([-1, 3]), np.array([7, 0])])
    >>> [c.tolist() for c in p.unpack(keys)]
    [[-1, 3], [7, 0]]
    >>> p.pack([np.array([1 << 40]), np.array([0])]) is None
    True
    >>> p.pack([np.array([1]), np.array([0])], [(0, 1 << 40), (0, 0)]) is None  # bounds given
    True
    """

    def __init__(self, arity: int):
        self.arity = arity
        self.bits = 63 // arity
        self.bias = 1 << (self.bits - 1)

    def pack(self, columns: list, bounds: list | None = None) -> np.ndarray | None:
        """The rows' keys; ``None`` when a value is out of range. ``bounds``:
        each column's ``(low, high)``, if known (no range to find then)."""
        if len(columns) != self.arity or any(c.dtype != INT64 for c in columns):
            return None
        if self.arity == 1:
            return columns[0]
        if not len(columns[0]):
            return np.zeros(0, dtype=INT64)
        if bounds is None:
            bounds = [(int(column.min()), int(column.max())) for column in columns]
        return pack_rows(columns, bounds)

    def unpack(self, keys: np.ndarray) -> list:
        if self.arity == 1:
            return [keys]
        return [self.column(keys, c) for c in range(self.arity)]

    def column(self, keys: np.ndarray, c: int, low: int = 0) -> np.ndarray:
        """Column ``c`` of the packed rows ``keys`` (of two columns or
        more), less ``low``: its bits shifted down and masked, the bias and
        ``low`` taken off, in place (one new array, two or three passes: a
        million keys' column 1.5 ms instead of 3 with a temporary a step).

        >>> p = Packing(3); keys = p.pack([np.array([-1, 3]), np.array([7, 0]), np.array([2, 2])])
        >>> p.column(keys, 1).tolist(), p.column(keys, 2, 2).tolist()
        ([7, 0], [0, 0])
        """
        shift = self.bits * (self.arity - 1 - c)
        mask = (1 << self.bits) - 1
        part = keys >> shift if shift else keys & mask
        if shift and c:  # (a middle column: those before it masked off)
            part &= mask
        part -= self.bias + low
        return part


def key_run(keys, iterations, weights) -> Run | None:
    return make_run([keys], iterations, weights, 0)


def gather(spine: list, sought: np.ndarray):
    """``(sought index, iteration, weight)`` of the entries of ``spine`` under
    each of the ``sought`` packed rows (a run whose keys repeat a few times
    at most read by :meth:`~engine.columnar.Run.find_window`), all ``int64``
    (a run's may be narrower:
    ``np.add.at`` into ``int64`` from another type took a path 250x slower)."""
    found = gather_once(spine, sought)
    return None if found is None else found[:3]


def gather_once(spine: list, sought: np.ndarray, columns: list | None = None, cells=None,
                span: tuple | None = None):
    """:func:`gather`, and whether each sought index is in it at most once
    (one run held the matches, and no key repeats in it): then the weights
    can be assigned where they would be added (``np.add.at``). ``columns``:
    the sought rows' columns, if at hand (a box directory's cells then come
    from them); ``cells``: ``(table, index)``, their cells in a
    :class:`~engine.operators.densesums.DenseSums` (:meth:`BoxDirectory.spans`);
    ``span``: the least and the greatest sought key, if known: a run whose
    keys lie outside is not probed (the small run of a flushed overlay, left
    last in the past by :func:`~engine.columnar.push_past`, holds a few
    rows the loop's batches mostly do not reach)."""
    found = []
    unique = True
    for run in spine:
        if span is not None and run.bounds is not None and (
                run.bounds[0][1] < span[0] or run.bounds[0][0] > span[1]):
            continue
        box = run.directory
        if type(box) is BoxDirectory:  # a large past run indexed by cell
            pairs = probe_expand(*box.spans(sought, columns, cells))
        elif (width := run.window()) > 1:  # a few entries a key at most: one
            pairs = run.find_window(sought, width)  # search, a window after it
            if not len(pairs[0]):
                continue
        else:
            pairs = probe(sought, run)
        if pairs is not None:
            mine, theirs = pairs
            unique = not found and run.is_unique()
            found.append((mine, run.iterations[theirs].astype(INT64, copy=False),
                          run.weights[theirs].astype(INT64, copy=False)))
    if not found:
        return None
    if len(found) == 1:
        return (*found[0], unique)
    return (*(np.concatenate([f[k] for f in found]) for k in range(3)), False)


def gather_past(trace, sought: np.ndarray, columns: list | None, cells, span: tuple | None):
    """:func:`gather_once` of ``trace``'s past, its large runs read through
    their cells when they are summed (:class:`~engine.operators.densesums.PastCells`),
    the rest's runs probed."""
    summed = trace.past_cells
    rest = None if summed is None else summed.rest(trace.past)
    if rest is None:
        return gather_once(trace.past, sought, columns, cells, span)
    ours = summed.gather(sought, columns, cells)
    found = gather_once(rest, sought, columns, cells, span) if rest else None
    if ours is None or found is None:
        return found if ours is None else (*ours, True)
    return (*(np.concatenate((ours[k], found[k])) for k in range(3)), False)


def load_runs(runs: list) -> list:
    """The runs of the epoch that loads an empty past, merged into one: left
    as the epoch's merges left them (by FACTOR), they stayed the past's for
    good (the later epochs' small runs merge with the smallest only), and
    each probe of the past searched each of them (andersen-200x50's
    Distinct: 417,000, 78,000, 13,000 and 2,400 entries; negagg-1000-1500's:
    318,000, 22,000 and 4,200). The past read by every later epoch's
    probes is then one search a key instead of three or four, for one
    merge of the load's entries (load CPU ms, five runs alternated:
    andersen-200x50 175-188 -> 193-201, negagg-1000-1500 109-114 ->
    120-123). CPU ms a single-fact update, five runs alternated without /
    with the merge: andersen-200x50 (150 updates) retraction median
    0.741-0.769 -> 0.665-0.740, insertion equal (0.599-0.628 /
    0.592-0.631); negagg-1000-1500 (60) retraction median 3.38-3.60 ->
    3.12-3.35, mean 7.97-8.15 -> 7.01-7.47, insertion equal. Merging the
    runs after the largest only (cheaper: load +5 ms) did as well on
    andersen-200x50 but not on negagg-1000-1500 (its largest run is the
    one probed dearest: 120 µs a vectorised step).

    >>> from engine.operators.columns import key_run
    >>> runs = [key_run(np.array([1, 4]), np.zeros(2, dtype=INT64), np.ones(2, dtype=INT64)),
    ...         key_run(np.array([2]), np.ones(1, dtype=INT64), np.ones(1, dtype=INT64))]
    >>> [run.keys.tolist() for run in load_runs(runs)], load_runs([])
    ([[1, 2, 4]], [])
    """
    if len(runs) < 2:
        return runs
    merged = merge_runs(runs, 0)
    return [] if merged is None else [merged]


class PackedTrace:
    """A child circuit's Z-set trace (Distinct's) in runs of packed rows:
    ``past`` (earlier epochs, compacted, iterations kept) and ``cur`` (this
    epoch); the history of :class:`~engine.trace.ZSetTrace`. ``sums``: the
    epoch's weights by row, when its Distinct keeps them in a table
    (:class:`~engine.operators.densesums.DenseSums`; the epoch's runs are
    then appended unmerged)."""

    __slots__ = ("cur", "past", "past_box", "past_cells", "scheduled", "sums", "sums_at")

    def __init__(self):
        self.past: list = []
        self.cur: list = []
        self.scheduled: dict = {}  # iteration -> [packed rows due then]
        self.sums = None
        # the state's entries when a long loop's table was refused (asked
        # again at twice as many: engine.operators.densesums.prepared)
        self.sums_at = 0
        self.past_box = None  # each column's (low, high) over the past's rows, once asked
        # the past's large runs summed by cell (densesums.PastCells), when made
        self.past_cells = None

    def append(self, keys, iteration: int, weights) -> None:
        push_run(self.cur, key_run(keys, np.full(len(keys), iteration, dtype=INT64),
                                   weights), 0)

    def append_sorted(self, keys, iteration: int, weights, after=None) -> None:
        """:meth:`append` of distinct ``keys`` in order and nonzero weights: a
        run as they are, no sort. ``after``: where each key goes among the
        last current run's (``searchsorted(keys, "right")``), if known: the
        merge with that run, when due, then needs no search."""
        if not len(keys):
            return
        run = Run([keys], filled(len(keys), iteration), weights, 0,
                  [(int(keys[0]), int(keys[-1])), (iteration, iteration)], unique=True)
        cur = self.cur
        if (after is not None and cur and len(cur[-1]) < FACTOR * len(run)
                and cur[-1].bounds is not None and cur[-1].bounds[-1][1] < iteration):
            first = cur.pop()   # what push_run would do first, with the search made
            run = interleave(first, run, [(min(first.bounds[0][0], int(keys[0])),
                                           max(first.bounds[0][1], int(keys[-1]))),
                                          (first.bounds[-1][0], iteration)], after)
        push_run(cur, run, 0)

    def drop_sums(self) -> None:
        """The epoch's weights from its runs again (merged into one)."""
        if self.sums is not None:
            self.sums = None
            merge_epoch(self)

    def close_epoch(self) -> None:
        """First at commit: the past's box grown by the epoch's rows (the
        table's box holds them; unknown without one), the table freed before
        the epoch's runs merge (a 1,000-node chain's batch: 4 MB less at its
        peak)."""
        if self.cur:
            sums = self.sums
            self.past_box = (None if sums is None else sums.bounds() if not self.past
                             else None if self.past_box is None
                             else union(self.past_box, sums.bounds()))
        self.drop_sums()

    def commit(self, closed: bool = False) -> None:
        """The epoch's runs into the past (``closed``: :meth:`close_epoch`
        called already); those of the first epoch to write any (the load)
        merged into one (:func:`load_runs`)."""
        if not closed:
            self.close_epoch()
        runs = self.cur if self.past else load_runs(self.cur)
        self.into_past(runs, partial(push_past, self.past, key_column=0))
        self.cur = []
        self.scheduled = {}
        self.sums_at = 0

    def into_past(self, runs: list, push) -> None:
        """``push(run)`` each of ``runs`` into the past, the past's cells
        (:class:`~engine.operators.densesums.PastCells`) kept up: each run
        added to them if it can be (else left to be probed); a run they did
        not hold that the pushes merged into another (or that cancelled
        out: a chain's update's overlay, undone by the next) is added then,
        the runs the merges made held in full (the cells are dropped if it
        cannot be)."""
        cells = self.past_cells
        rest = None if cells is None else cells.rest(self.past)
        if rest is not None:
            rest = rest + [run for run in runs if not cells.add(run)]
        for run in runs:
            push(run)
        if rest is not None:
            present = {id(run) for run in self.past}
            if not all(cells.add(run) for run in rest if id(run) not in present):
                self.past_cells = None
                return
            kept = {id(run) for run in rest if id(run) in present}
            cells.cover([run for run in self.past if id(run) not in kept])

    def rollback(self) -> None:
        self.cur = []
        self.scheduled = {}
        self.sums, self.sums_at = None, 0

    def entries(self, spine: list):
        """``(packed row, iteration, weight)`` arrays of a spine."""
        if not spine:
            return (np.zeros(0, dtype=INT64),) * 3
        return tuple(np.concatenate([getattr(r, name) for r in spine])
                     for name in ("keys", "iterations", "weights"))


def distinct_step(trace: PackedTrace, keys: np.ndarray, weights: np.ndarray, i: int,
                  due: np.ndarray | None, heap_push, sums=None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct Trace at ``(e, i)``: ``(rows, output weights)`` of the nonzero
    outputs (:func:`step_rows`)."""
    rows, delta, _ = step_rows(trace, keys, weights, i, due, heap_push, sums)
    keep = delta.nonzero()[0]
    return rows[keep], delta[keep].astype(INT64)


def distinct_columns(trace: PackedTrace, columns: list, keys: np.ndarray, weights: np.ndarray,
                     i: int, due: np.ndarray | None, heap_push, sums, unpack,
                     ordered: bool = False):
    """:func:`distinct_step` for a batch at hand in ``columns`` (``keys`` the
    rows they pack to): ``(columns, output weights, theirs)`` of the nonzero
    outputs. When the step took the batch's rows as they are (in order,
    nothing due: ``theirs``), the table's cells come from the columns and
    the output's columns are theirs, gathered (all of them kept: as they
    are), not unpacked from the output's rows (``unpack``, else): a chain's
    loop, whose every row is new, saved ~20 numpy calls an iteration.
    ``ordered``: ``keys`` are known in order and distinct (:func:`step_rows`)."""
    rows, delta, same = step_rows(trace, keys, weights, i, due, heap_push, sums, columns,
                                  ordered)
    if same and np.count_nonzero(delta) == len(rows):  # (a chain's batch: every row new;
        return list(columns), delta.astype(INT64), True  # a count is cheaper than nonzero)
    keep = delta.nonzero()[0]
    if not same:
        return unpack(rows[keep]), delta[keep].astype(INT64), False
    return [c[keep] for c in columns], delta[keep].astype(INT64), True


def step_rows(trace: PackedTrace, keys: np.ndarray, weights: np.ndarray, i: int,
              due: np.ndarray | None, heap_push, sums=None, columns: list | None = None,
              ordered: bool = False):
    """Distinct Trace at ``(e, i)`` for the packed rows ``keys`` (unique) with
    new ``weights``, and the rows ``due`` at ``i`` (new weight 0 unless in the
    batch): ``(rows, output weights, same)``, an output weight (``int8``, 0
    for no output) for each row of ``rows`` (``keys`` themselves when
    ``same``: in order and nothing due); appends the batch to the trace and
    schedules rows at their next time (``heap_push(j)`` for an iteration not
    scheduled yet). ``columns``: the batch's columns, if at hand (a table's
    cells and a past box directory's are then found from them when ``same``);
    ``ordered``: ``keys`` are known in order and their weights nonzero (a
    consolidation packed them, :attr:`~engine.colbatch.ColBatch.packed`:
    neither is checked).

    ``w3`` (this epoch, every entry at an earlier iteration) is the weight
    sums of the current runs (:meth:`~engine.columnar.Run.weight_sums`);
    ``w1``, ``w2`` and the next time come from the matches in the past runs;
    the batch, sorted already, becomes a run without another sort. With
    ``sums`` (a :class:`~engine.operators.densesums.DenseSums` covering the
    rows), ``w3`` is read from its table and the run is appended unmerged."""
    if due is not None and len(due):
        rows = np.concatenate([keys, due])
        rows.sort()
        rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]
        w = np.zeros(len(rows), dtype=INT64)
        w[rows.searchsorted(keys)] = weights
    elif not ordered and len(keys) > 1 and np.count_nonzero(keys[1:] <= keys[:-1]):
        order = np.argsort(keys, kind="stable")
        rows, w = keys[order], weights[order]
    else:  # in order already (a consolidated batch's packed rows are)
        rows, w = keys, weights
    same = rows is keys
    n = len(rows)
    after = None
    cells = dense = found = None
    if sums is not None:  # this epoch's weights by address, the batch's added
        cells = (sums, sums.index(rows, columns if same else None))
        w3, now = sums.take_add(rows, w, index=cells[1], both=True)  # now: w3 + w
        if trace.past_cells is not None:
            dense = trace.past_cells.at_cells(sums, cells[1], trace.past)
    else:
        w3 = np.zeros(n, dtype=INT64)
        for at, run in enumerate(trace.cur):
            if at == len(trace.cur) - 1:  # the last run: its search serves the merge too
                after = run.keys.searchsorted(rows, "right")
            w3 += run.weight_sums(rows, after)
        now = w3 + w
    delta = None
    if dense is None:
        span = (rows.item(0), rows.item(n - 1)) if n else None
        found = gather_past(trace, rows, columns if same else None, cells, span)
    elif np.count_nonzero(dense[0]):  # the past's weights of the rows, in their order
        pw, at = dense
        held = pw != 0
        if not np.count_nonzero(held & (at != i)):  # every past entry at i: w1 = 0, w2 = pw
            delta = (((pw + now > 0).view(np.int8) - (w3 > 0).view(np.int8))  # (a chain's)
                     - (pw > 0).view(np.int8))
        else:  # (the matches, as gather_past finds them: the general formula)
            mine = held.nonzero()[0]
            found = (mine, at[mine].astype(INT64), pw[mine].astype(INT64), True)
    if found is None:
        if delta is None:  # no earlier epoch holds these rows: w1 = w2 = 0
            delta = (now > 0).view(np.int8) - (w3 > 0).view(np.int8)
    else:
        mine, at, pw, unique = found
        w12 = np.zeros(n, dtype=INT64)
        upto = at <= i
        # every match at i or before (mostly): nothing to mask, none later
        none_later = np.count_nonzero(upto) == len(upto)
        if unique:  # (each row once among the matches)
            w12[mine] = pw if none_later else np.where(upto, pw, 0)
        elif none_later:
            np.add.at(w12, mine, pw)
        else:
            np.add.at(w12, mine[upto], pw[upto])
        before = at < i
        if np.count_nonzero(before):
            w1 = np.zeros(n, dtype=INT64)
            if unique:
                w1[mine] = np.where(before, pw, 0)
            else:
                np.add.at(w1, mine[before], pw[before])
            delta = (((w12 + now > 0).view(np.int8) - (w1 + w3 > 0).view(np.int8))
                     - ((w12 > 0).view(np.int8) - (w1 > 0).view(np.int8)))
        else:  # w1 = 0 (a chain's rows: their past entry is at this iteration)
            delta = (((w12 + now > 0).view(np.int8) - (w3 > 0).view(np.int8))
                     - (w12 > 0).view(np.int8))
        if not none_later:
            later = ~upto
            nxt = np.full(n, NO_TIME, dtype=INT64)
            np.minimum.at(nxt, mine[later], at[later])
            wait = (nxt != NO_TIME) & (now != 0)
            if np.count_nonzero(wait):
                for j, where in group_by(nxt[wait]):
                    chosen = rows[wait.nonzero()[0][where]]
                    waiting = trace.scheduled.get(j)
                    if waiting is None:
                        trace.scheduled[j] = [chosen]
                        heap_push(j)
                    else:
                        waiting.append(chosen)
    append = trace.append_sorted if sums is None else partial(append_run, trace)
    if same and ordered or np.count_nonzero(w) == n:  # (a consolidation's: none is 0)
        append(rows, i, w, after)
    else:  # the rows only due now (and any zero weight)
        changed = w != 0
        append(rows[changed], i, w[changed], None if after is None else after[changed])
    return rows, delta, same
