"""A columnar trace: sorted numpy runs behind the read API of :mod:`engine.cursor`.

A :class:`ColumnarTrace` holds the same history as a :class:`~engine.trace.Trace`
(key -> value -> time -> weight) for traces keyed by one column whose rows are
tuples of ints that fit ``int64``. Entries live in **runs**: each run is a set of
``int64`` columns (the row's columns, the iteration, the weight) sorted by key,
then row, then iteration, with equal entries consolidated and zero weights
dropped. As in differential dataflow's spine:

* an append (one iteration of a child circuit; the root's epoch at commit)
  becomes a new small run of the current epoch; runs merge geometrically (a
  run merges into the one before it while that one is less than ``FACTOR``
  times larger), so an entry is merged ``O(log n)`` times;
* a lookup is a ``searchsorted`` of the sought keys in each run;
* commit moves the current epoch's runs to the past (their epoch is
  forgotten: compaction) and merges by the same rule; rollback drops them.

**Small appends** (under :data:`~engine.colbatch.OVERLAY_APPEND` rows: a
single-fact update's) do not become runs: a run costs a sort and numpy calls
(~50 µs) and its merges, a dict append about a microsecond a row. They go into
dict **overlays** keyed like the trace, key -> ``[(row, time part), ...]``:
``recent`` (this epoch's; a root trace stages them until the commit) and
``older`` (earlier epochs', where ``recent`` goes at commit). The cursors
read an overlay with its spine; an overlay becomes a run (of the past, of
the epoch) once it lists :data:`OVERLAY_ROWS` entries, and both are sorted
into the runs when a reader of runs (a columnar operator) asks for
:attr:`ColumnarTrace.past` or :attr:`ColumnarTrace.cur`.

Readers use cursors. Generated loops (the join's) **gather** first: one
vectorised lookup of all the keys of a delta, giving key -> ``[(value, time
part), ...]``, a value listed once per run and iteration it has weight at (the
weights add); a few keys (:data:`~engine.colbatch.GATHER_FEW`, counting
each run) are sought one by one (:func:`gather_few`). Rows the columns
cannot hold (floats, strings, ints beyond ``int64``) raise :class:`Unfit`
before anything changes; the owner then goes back to a dict trace
(:meth:`ColumnarTrace.to_trace`).

Two ways in: the columnar operators (:mod:`engine.operators.columns`) turn the
traces of a projection join columnar with its first large columnar batch and
append arrays (:meth:`ColumnarTrace.append_columns`); and, for the row loops,
``Circuit(columnar_threshold=rows)`` turns a join's or aggregate's trace
columnar once that many rows were appended (which measured slower than the
dict trace at every size tried: the figures are in the README).

>>> t = ColumnarTrace(nested=True, index=("cols", (0,)))
>>> t.append_rows({(1, 10): 1, (2, 20): 1}, iteration=0)
>>> t.append_rows({(1, 10): 1, (1, 11): 1}, iteration=2)
>>> t.commit()
>>> for entry in t.entries(): print(entry)
((1,), (1, 10), (0, 0), 1)
((1,), (1, 10), (0, 2), 1)
((1,), (1, 11), (0, 2), 1)
((2,), (2, 20), (0, 0), 1)
>>> t.runs()
[4]
>>> past = t.past_cursor(); past.seek((1,)), past.split((1, 10), 1)
(True, (1, 0, 2))
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping

from engine import colbatch, lazy
from engine.codegen import build_function
from engine.colbatch import ColBatch, bounds_of, pack_into, packed_key, sum_packed, unpack_key
from engine.cursor import Cursor, CursorSource
from engine.errors import EpochError
from engine.trace import Trace, compile_row_functions, split_pairs
from engine.tracearrays import entries_of, groups_of

FACTOR = 4  # a run merges into the previous one while that is under FACTOR times its size
#: At commit, a past run also merges into the previous one while that holds
#: fewer entries than this: the past is read by every iteration of the next
#: epochs (a probe of each run, ~10 µs even when nothing matches) and written
#: once per epoch, so it keeps fewer small runs than an epoch's spine (a
#: 1,000-node chain's past went from 6-7 runs to 3; merging costs at most this
#: many entries more per commit).
PAST_FLOOR = 4096
#: At commit an epoch's run merges into a past run only while that is under
#: this many times its size (FACTOR within an epoch): an epoch of a chain's
#: update writes up to half as many entries as its past holds (a 1,000-node
#: chain's retraction of a middle edge, 250,000 of 500,000), and merging them
#: sorted and consolidated the whole past at each commit (~40 ms an update);
#: left beside it, the next epoch's run merges with it alone (the
#: reinsertion's cancels it).
PAST_FACTOR = 2
#: ... for an epoch's run of this many entries or more (a smaller one merges
#: by FACTOR: negagg-1000-1500's updates, whose epochs write a few thousand
#: entries, read their past runs at every iteration, 5% slower with
#: PAST_FACTOR for all).
PAST_LARGE = 1 << 15


def push_past(spine: list, run, key_column: int) -> None:
    """An epoch's ``run`` into the past ``spine`` at commit (:func:`push_run`
    by :data:`PAST_FLOOR`, and :data:`PAST_FACTOR` for a run of
    :data:`PAST_LARGE` entries or more). Such a large run goes in before the
    small runs (under :data:`PAST_FLOOR` entries) at the spine's end, which
    stay last: merged into it, they would leave it no longer the exact
    opposite of the next epoch's run that undoes it (a chain's retraction,
    then reinsertion), whose merge then sorted both runs instead of finding
    them cancel (2 x 880,000 entries of tc-chain-2000's join trace, ~100 ms,
    because of the 120 entries of a flushed overlay).

    >>> big = Run([np.arange(PAST_LARGE)], np.zeros(PAST_LARGE, dtype=int),
    ...           np.ones(PAST_LARGE, dtype=int), 0)
    >>> small = Run([np.array([7])], np.array([3]), np.array([1]), 0)
    >>> spine = [small]
    >>> push_past(spine, big, 0)
    >>> [len(r) for r in spine]
    [32768, 1]
    >>> push_past(spine, Run([big.keys], big.iterations, -big.weights, 0), 0)
    >>> spine == [small]
    True
    """
    if run is None:
        return
    if len(run) < PAST_LARGE:
        push_run(spine, run, key_column, PAST_FLOOR, FACTOR)
        return
    small = []
    while spine and len(spine[-1]) < PAST_FLOOR:
        small.append(spine.pop())
    push_run(spine, run, key_column, PAST_FLOOR, PAST_FACTOR)
    spine.extend(reversed(small))
#: The widest window :meth:`Run.find_window` looks at after a key's first
#: entry: a Distinct's past holds a row at up to a few iterations (the
#: closure of the 1,000-node random graph: at most 6 entries a row).
WINDOW = 8
#: A run of this many entries or more that :meth:`Run.span` searched
#: ``len / SEEK_SHARE`` times gets a directory of its keys (when they are
#: dense enough), read with no search at all: a single-fact update seeks a
#: few keys in each run of a trace at each iteration, and the large runs of
#: the past stay for many updates. Per key sought (both ends), µs: numpy's
#: scalar ``searchsorted`` 1.9, ``bisect`` of a memoryview 0.8, directory
#: 0.09; making the directory of 152,000 entries over 10,000 keys 265 µs
#: (~1.7 ns an entry, repaid after ~n/400 searches).
SEEK_DIRECTORY = 4096
SEEK_SHARE = 256
#: The ``older`` overlay of small appends becomes a run of the past at commit
#: once it lists this many entries: it is read entry by entry (each gathered
#: key's list), and its entries take ~100 bytes each against ~20 in a run.
OVERLAY_ROWS = 1024
#: A trace's memo of the keys sought in its past (ColumnarTrace.past_memo)
#: starts again once it holds this many: it lives for an epoch, and a large
#: epoch's probes (a bulk load's) would only fill it.
MEMO_KEYS = 4096
#: ... and is kept from one epoch to the next (ColumnarTrace.commit) while
#: it lists at most this many entries: an update's keys, sought again by the
#: next update (a fact retracted, then inserted; Andersen's points_to by its
#: first column, ~19 entries a key: single-fact insert CPU median ~8% lower,
#: retraction 0-6% higher: engine.colbatch), not a memory that grows with
#: every update. Counted in keys it took same generation's updates 4-6%
#: slower: its keys list ~1,400 entries each, millions of live tuples kept
#: for the garbage collector to walk.
MEMO_KEPT = 8192
INT64 = "int64"
np = lazy.module("numpy", globals())


class Unfit(Exception):
    """A batch holds a row the int64 columns cannot hold."""


def fits(index) -> bool:
    """Whether a trace kept by ``index`` can be columnar: one key column."""
    return index is not None and index[0] == "cols" and len(index[1]) == 1


def key_starts(keys: np.ndarray, low: int, span: int) -> np.ndarray:
    """``starts[k - low]``: the position of sorted ``keys``' first entry of
    key ``k`` (``starts[k - low + 1]`` past its last), for the ``span`` keys
    from ``low``, and two slots past them holding ``len(keys)`` (a key outside
    the span finds nothing there); ``int32`` while positions fit.

    >>> key_starts(np.array([3, 3, 5, 6]), 3, 4).tolist()
    [0, 2, 2, 3, 4, 4]
    """
    n = len(keys)
    starts = np.zeros(span + 2, dtype=np.int32 if n < 1 << 31 else INT64)
    # summed in the type of ``starts``: with ``out`` alone numpy sums in
    # int64 and casts each buffer (4 million cells, 2 million keys: 8.1 vs
    # 2.2 ms; a 2,000-node chain's Distinct past indexes 4 million cells)
    np.cumsum(np.bincount(keys - low if low else keys, minlength=span),
              out=starts[1:span + 1], dtype=starts.dtype)
    starts[span + 1] = n
    return starts


class Run:
    """Sorted, consolidated entries: ``columns`` (one int64 array per column of
    the row), ``iterations``, ``weights`` (each in a type as narrow as its
    values allow: :func:`narrow`); ``keys`` is the key column;
    ``bounds``: ``(low, high)`` of the key, the other columns and the
    iteration (``None`` if not known), so that a merge packs its sort key
    without scanning the runs; ``sums``: the running sums of the weights
    (a leading 0), made when a few keys are first sought (:meth:`weight_sums`);
    ``unique``: whether no key repeats (``None`` until known:
    :meth:`is_unique`); ``spread``: how many entries a key has at most, as
    :meth:`window` measures it (``None`` until asked); ``ones``: whether
    every weight is 1 (``None`` until asked: :meth:`all_ones`)."""

    __slots__ = ("bounds", "columns", "directory", "iterations", "keys", "ones", "seeks",
                 "spread", "sums", "unique", "view", "weights")

    def __init__(self, columns: list, iterations, weights, key_column: int, bounds=None,
                 unique: bool | None = None):
        self.columns = columns
        self.iterations = iterations
        self.weights = weights
        self.keys = columns[key_column]
        self.bounds = bounds
        self.sums = None
        self.unique = unique
        self.spread = None
        self.directory = None  # (low, key_starts): directory_of, make_view (False: none)
        self.view = None  # what span() seeks in: the keys' memoryview, or a directory
        self.seeks = 0    # span()'s searches left before it makes a directory
        self.ones = None

    def all_ones(self) -> bool:
        """Whether every weight is 1 (a relation's facts, a chain's edges):
        a join's pairs with this run then weigh what the delta's entries
        do, no gather and product (found once a run).

        >>> Run([np.array([1, 2])], np.zeros(2), np.array([1, 1], dtype=np.int8), 0).all_ones()
        True
        """
        if self.ones is None:
            self.ones = bool((self.weights == 1).all())
        return self.ones

    def is_unique(self) -> bool:
        """Whether each key is in one entry (a Distinct's rows at one iteration,
        a chain's edges by source): then a probe is one ``searchsorted``."""
        if self.unique is None:
            keys, head = self.keys, self.keys[:1024]  # (a repeat shows early, mostly)
            self.unique = bool((head[1:] != head[:-1]).all()
                               and (keys[1:] != keys[:-1]).all())
        return self.unique

    def window(self) -> int:
        """The fewest entries from a key's first that hold all of its
        entries, of 1 (unique keys), 2, 3, 4, 6 and :data:`WINDOW`; 0 when a
        key has more (:meth:`find_window` then does not apply). Measured once
        per run: a comparison of the keys with themselves shifted per width
        tried (0.4 ms on a million entries).

        >>> Run([np.array([1, 1, 2, 3, 3, 3])], np.arange(6), np.ones(6), 0).window()
        3
        """
        if self.spread is None:
            keys = self.keys
            self.spread = 0
            if self.is_unique():
                self.spread = 1
            else:
                for width in (2, 3, 4, 6, WINDOW):
                    if len(keys) <= width or bool((keys[width:] != keys[:-width]).all()):
                        self.spread = width
                        break
        return self.spread

    def find_window(self, sought: np.ndarray, width: int):
        """``(positions in sought, positions in the run)`` of every entry
        under each sought key, when no key has more than ``width`` entries
        (:meth:`window`): one ``searchsorted`` for each key's first entry
        and a look at the ``width`` entries from there (a second search for
        the last entry, on a large run, cost as much again as the first,
        and the expansion of the ranges half that; pairs come out in
        order of ``sought``).

        >>> run = Run([np.array([1, 1, 2, 3, 3, 3])], np.arange(6), np.ones(6), 0)
        >>> [x.tolist() for x in run.find_window(np.array([0, 1, 3, 4]), run.window())]
        [[1, 1, 2, 2, 2], [0, 1, 3, 4, 5]]
        """
        keys = self.keys
        at = keys.searchsorted(sought, "left")
        where = at[:, None] + np.arange(width)
        hit = keys.take(where, mode="clip") == sought[:, None]
        hit &= where < len(keys)  # (clipped positions repeat the last entry)
        return hit.nonzero()[0], where[hit]

    def span(self, key: int) -> tuple[int, int] | None:
        """``(first, past the last)`` position of ``key``'s entries, ``None``
        when it has none, skipped when ``key`` is outside the run's key
        bounds; no numpy call (a scalar ``searchsorted`` costs ~1 µs for the
        call alone): a binary search (``bisect``) of a ``memoryview`` of the
        keys, a second only when keys repeat; on a large run searched often,
        two reads of a directory (:meth:`make_view`).

        >>> run = Run([np.array([1, 3, 3, 7])], np.arange(4), np.ones(4), 0)
        >>> run.span(3), run.span(4), run.span(7), run.span(9), run.span(-1)
        ((1, 3), None, (3, 4), None, None)
        """
        bounds = self.bounds
        if bounds is not None and not bounds[0][0] <= key <= bounds[0][1]:
            return None
        view = self.view
        if view is None:
            view = self.make_view()
        if type(view) is tuple:  # (low, starts, width): starts[key - low]
            at = key - view[0]
            if not 0 <= at < view[2]:
                return None
            starts = view[1]
            lo, hi = starts[at], starts[at + 1]
            return (lo, hi) if hi > lo else None
        lo = bisect_left(view, key)
        if lo == len(view) or view[lo] != key:
            return None
        self.seeks -= 1
        if not self.seeks:
            self.make_view(directory=True)
        return lo, lo + 1 if self.unique else bisect_right(view, key, lo)

    def make_view(self, directory: bool = False):
        """What :meth:`span` seeks in: the keys' ``memoryview`` (items read as
        Python ints), after :data:`SEEK_SHARE` searches per entry of a run of
        :data:`SEEK_DIRECTORY` entries (``directory``) a directory of the
        keys' first positions, when the keys span at most as many values as
        the run has entries (``int32``: at most 4 bytes an entry).

        >>> run = Run([np.arange(10000) // 2], np.zeros(10000), np.ones(10000), 0)
        >>> run.make_view(directory=True)[0], run.span(17), run.span(5000)
        (0, (34, 36), None)
        """
        keys = self.keys
        n = len(keys)
        view = None
        if directory and n and keys.dtype == INT64:
            if self.directory is None:  # (one directory a run: a join's probes read it too)
                low = int(keys[0])
                width = int(keys[-1]) - low + 1
                if width <= n:
                    self.directory = (low, key_starts(keys, low, width))
            if type(self.directory) is tuple:
                low, starts = self.directory
                view = (low, memoryview(starts), len(starts) - 2)
        if view is None:
            view = memoryview(keys)
            self.seeks = -1  # (never zero: no directory)
            if not directory and n >= SEEK_DIRECTORY:
                self.seeks = max(1, n // SEEK_SHARE)
        self.view = view
        return view

    def find(self, sought: np.ndarray):
        """``(positions in sought, positions in the run)`` of the sought keys
        present, for a run of unique keys: one ``searchsorted``, a check (a
        run of one entry: one comparison; a one-fact update's epoch probes
        its one-entry run at every iteration).

        >>> one = Run([np.array([4])], np.zeros(1), np.ones(1), 0)
        >>> [x.tolist() for x in one.find(np.array([4, 2, 4]))]
        [[0, 2], [0, 0]]
        """
        if len(self.keys) == 1:
            mine = (sought == self.keys[0]).nonzero()[0]
            return mine, np.zeros(len(mine), dtype=np.intp) if len(mine) else mine
        at = self.keys.searchsorted(sought, "left")
        mine = (self.keys.take(at, mode="clip") == sought).nonzero()[0]
        return mine, at if len(mine) == len(at) else at[mine]  # (all found: as they are)

    def weight_sums(self, sought: np.ndarray, after: np.ndarray | None = None) -> np.ndarray:
        """The total weight of each of the ``sought`` keys in this run, every
        iteration together. Many keys (a large batch): one ``searchsorted``
        for the first entry of each, then the entries after it while they
        hold the same key (a few: one per iteration the key changed at), no
        pass over the whole run. Few keys: two ``searchsorted`` and the
        running sums, made once per run (an update's small batches read the
        same current runs at every iteration). Unique keys: one search
        (:meth:`find`). ``after``:
        ``searchsorted(sought, "right")`` already made (for a merge,
        :func:`interleave`): used instead of searching again.

        >>> run = Run([np.array([1, 1, 1, 4])], np.array([0, 2, 3, 0]), np.array([1, 2, 5, -1]), 0)
        >>> run.weight_sums(np.array([0, 1, 4, 9])).tolist()
        [0, 8, -1, 0]
        >>> sought = np.array([0, 1, 4, 9])
        >>> run.weight_sums(sought, run.keys.searchsorted(sought, "right")).tolist()
        [0, 8, -1, 0]
        >>> long = Run([np.arange(40) // 2], np.zeros(40), np.ones(40), 0)
        >>> long.weight_sums(np.array([3])).tolist(), long.sums[:4].tolist()   # few: sums
        ([2], [0, 1, 2, 3])
        """
        if self.is_unique():
            out = np.zeros(len(sought), dtype=INT64)
            mine, theirs = self.find(sought)
            out[mine] = self.weights[theirs]
            return out
        keys, weights = self.keys, self.weights
        sums = self.sums
        if sums is not None or len(sought) * 16 < len(keys):  # few sought: running sums
            if sums is None:   # (made once: a current run is read by later iterations)
                sums = self.sums = np.concatenate(([0], np.cumsum(weights, dtype=INT64)))
            right = keys.searchsorted(sought, "right") if after is None else after
            return sums[right] - sums[keys.searchsorted(sought, "left")]
        last = len(keys) - 1
        if after is None:
            at, step = keys.searchsorted(sought), 1
        else:
            at, step = after - 1, -1
        out = np.where(keys.take(at, mode="clip") == sought, weights.take(at, mode="clip"),
                       0).astype(INT64, copy=False)
        follow = out.nonzero()[0]   # found (a run's weights are never 0)
        at = at[follow]
        while len(follow):
            at += step
            same = keys.take(at, mode="clip") == sought[follow]
            same &= (at <= last) if step > 0 else (at >= 0)
            follow, at = follow[same], at[same]
            out[follow] += weights[at]
        return out

    def __len__(self) -> int:
        return len(self.weights)


#: A run keeps its iterations and its weights in the first of these types that
#: holds them all (any other arithmetic on them is done in ``int64``): most runs
#: have iterations below 128 and weights below 128, so an entry of a trace of
#: pairs takes 8 + 8 + 1 + 1 bytes instead of 32 (a Distinct's packed entry 10
#: instead of 24).
NARROW = ("int8", "int16", "int32")
#: ``(type, least, greatest)`` of each type of :data:`NARROW`, as Python ints:
#: ``np.iinfo`` costs ~2 µs a call, and a long loop's Distinct narrows each
#: iteration's run (tc-chain-1000: 920 calls, ~5 ms under line_profiler).
NARROW_LIMITS = tuple((kind, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                      for kind, bits in zip(NARROW, (8, 16, 32)))


def narrow(values: np.ndarray) -> np.ndarray:
    """``values`` (not empty) in the first type of :data:`NARROW` holding
    them, else as they are (found from the values, not from a run's bounds,
    which may include entries since summed away).

    >>> narrow(np.array([0, 127])).dtype, narrow(np.array([-129, 0])).dtype
    (dtype('int8'), dtype('int16'))
    >>> narrow(np.array([1 << 40])).dtype
    dtype('int64')
    """
    kind = narrow_kind(int(values.min()), int(values.max()))
    return values if kind == INT64 else values.astype(kind)


def filled(n: int, value: int, dtype=INT64) -> np.ndarray:
    """``np.full(n, value, dtype)`` without its Python wrapper: an empty
    array filled (500 entries: 0.47 vs 1.24 µs; a long loop's iteration
    makes two, its runs' iterations).

    >>> filled(3, 7, "int8").tolist()
    [7, 7, 7]
    """
    out = np.empty(n, dtype=dtype)
    out.fill(value)
    return out


def narrow_kind(low: int, high: int) -> str:
    """The first type of :data:`NARROW` holding ``low`` to ``high`` (else int64).

    >>> narrow_kind(0, 127), narrow_kind(-129, 0), narrow_kind(0, 1 << 40)
    ('int8', 'int16', 'int64')
    """
    for kind, least, greatest in NARROW_LIMITS:
        if least <= low and high <= greatest:
            return kind
    return INT64


def unpack_in_place(key: np.ndarray, bounds: list, widths: list, kinds: list) -> list:
    """:func:`unpack_key`'s columns, the first ``key`` itself, shifted down in
    place (``key`` is the caller's to overwrite), the others peeled off its
    low bits, each into a new array of its kind in ``kinds`` (``None``: the
    narrowest holding the column's ``bounds``): a large merge's columns
    without an ``int64`` temporary each. (A join trace's commit merging a
    2,000-node chain update's 1,953 tail runs, 427,848 entries, captured and
    merged alone, best of 7, alternated: :func:`merge_packed` 15.6-16.3 ->
    12.1-12.6 ms CPU with this and :func:`~engine.colbatch.sorted_with`'s
    ``own``.)

    >>> key = np.array([(3 << 5) | (9 << 1) | 1, (2 << 5) | (0 << 1) | 0])
    >>> out = unpack_in_place(key, [(1, 3), (-4, 11), (5, 6)], [2, 4, 1], [INT64, None, None])
    >>> [c.tolist() for c in out], out[0] is key, [c.dtype.name for c in out]
    ([[4, 3], [5, -4], [6, 5]], True, ['int64', 'int8', 'int8'])
    """
    out = []
    for (low, high), width, kind in zip(bounds[:0:-1], widths[:0:-1], kinds[:0:-1]):
        values = np.empty(len(key), dtype=kind or narrow_kind(min(low, 0), max(high, high - low)))
        if width:  # (cast to the column's kind as it is masked off)
            np.bitwise_and(key, (1 << width) - 1, out=values, casting="unsafe")
            key >>= width
            if low:
                values += low
        else:
            values.fill(low)
        out.append(values)
    if bounds[0][0]:
        key += bounds[0][0]
    out.append(key)
    return out[::-1]


def make_run(columns: list, iterations, weights, key_column: int,
             bounds: list | None = None) -> Run | None:
    """A run of the entries (any order, repeats allowed): sorted by key, then
    the other columns, then iteration; equal entries summed; zeros dropped;
    the iterations and weights :func:`narrow` (from
    :data:`~engine.colbatch.NARROW_ROWS` entries). ``None`` when empty.

    When the ranges allow, the entries are packed into one ``int64`` each,
    only that key is sorted (:func:`~engine.colbatch.order_packed`: radix,
    or a merge of the sorted runs concatenated) and the columns are read back
    from the consolidated keys, with no gather of each column."""
    if iterations.dtype != INT64:  # sums and sort keys in int64
        iterations = iterations.astype(INT64)
    if weights.dtype != INT64:
        weights = weights.astype(INT64)
    ordered = [columns[key_column], *(c for at, c in enumerate(columns) if at != key_column),
               iterations]
    if bounds is None:
        bounds = bounds_of(ordered)
    packed = packed_key(ordered, bounds) if bounds is not None else None
    if packed is not None:
        key, widths = packed
        few = len(key) < colbatch.RADIX_ROWS
        key, weights, order = sum_packed(key, sum(widths), weights, order=few)
        if not len(weights):
            return None
        if few:  # a few gathers: fewer numpy calls
            columns = [c[order] for c in columns]
            iterations = iterations[order]
        else:   # read back from the keys: no random access
            unpacked = unpack_key(key, bounds, widths)
            iterations = unpacked.pop()
            columns = unpacked[1:]
            columns.insert(key_column, unpacked[0])
    else:
        order = np.lexsort(ordered[::-1])
        columns = [c[order] for c in columns]
        iterations, weights = iterations[order], weights[order]
        n = len(weights)
        if n > 1:
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(iterations[1:], iterations[:-1], out=new[1:])
            for column in columns:
                new[1:] |= column[1:] != column[:-1]
            if not new.all():
                starts = np.flatnonzero(new)
                weights = np.add.reduceat(weights, starts)
                columns = [c[starts] for c in columns]
                iterations = iterations[starts]
        keep = weights != 0
        if not keep.all():
            columns = [c[keep] for c in columns]
            iterations, weights = iterations[keep], weights[keep]
        if not len(weights):
            return None
    if len(weights) >= colbatch.NARROW_ROWS:
        iterations = narrow(iterations)
        weights = narrow(weights)
    return Run(columns, iterations, weights, key_column, bounds)


def interleave(first: Run, second: Run, bounds: list, at: np.ndarray | None = None) -> Run:
    """The merge of two runs of one column whose entries are all at
    different iterations, the first's earlier: no two entries are equal, and
    of equal keys the first's come first, so the merge is where each of the
    second's keys goes among the first's (one ``searchsorted``), no sort.
    Each array is written by two integer scatters (a boolean mask's was 2.5x
    slower), in the narrowest type holding both runs' values (:func:`narrow`).
    Under :data:`~engine.colbatch.RADIX_ROWS` entries, one stable sort of the
    keys concatenated (a merge of two sorted stretches) does it in half the
    numpy calls (an update loop of a chain merges such runs at every
    iteration).

    >>> a = Run([np.array([1, 3])], np.array([0, 0]), np.array([1, 1]), 0, [(1, 3), (0, 0)])
    >>> b = Run([np.array([0, 3])], np.array([2, 2]), np.array([1, -1]), 0, [(0, 3), (2, 2)])
    >>> run = interleave(a, b, [(0, 3), (0, 2)])
    >>> run.keys.tolist(), run.iterations.tolist(), run.weights.tolist()
    ([0, 1, 3, 3], [2, 0, 0, 2], [1, 1, 1, -1])
    """
    n = len(first) + len(second)
    if n < colbatch.RADIX_ROWS:  # short: one stable sort of the two (a merge), fewer calls
        keys = np.concatenate((first.keys, second.keys))
        order = keys.argsort(kind="stable")
        keys = keys[order]
        unique = None
        if first.unique and second.unique:
            unique = not np.count_nonzero(keys[1:] == keys[:-1])
        iterations = np.concatenate((first.iterations, second.iterations))[order]
        weights = np.concatenate((first.weights, second.weights))[order]
        if n >= colbatch.NARROW_ROWS:
            iterations = narrow(iterations)
            weights = narrow(weights)
        return Run([keys], iterations, weights, 0, bounds, unique)
    if at is None:  # (else given: the same search, made by the caller)
        at = first.keys.searchsorted(second.keys, "right")
    unique = None
    if first.unique and second.unique:  # and no key of the second in the first
        unique = not np.count_nonzero(
            (first.keys.take(at - 1, mode="clip") == second.keys)[at > 0])
    at = at + np.arange(len(second))
    rest = np.ones(n, dtype=bool)
    rest[at] = False
    others = rest.nonzero()[0]
    wide = n >= colbatch.NARROW_ROWS

    def mix(x, y, small=True):
        if wide and small:
            y = narrow(y)
        out = np.empty(n, dtype=np.result_type(x.dtype, y.dtype))
        out[at] = y
        out[others] = x
        return out
    return Run([mix(first.keys, second.keys, small=False)],
               mix(first.iterations, second.iterations),
               mix(first.weights, second.weights), 0, bounds, unique)


def merge_runs(runs: list, key_column: int, consume: bool = False) -> Run | None:
    """The runs merged into one (``None`` when their entries cancel out).
    With ``consume``, the list is the caller's no more: a large merge empties
    it as it packs each run (:func:`merge_packed`)."""
    if len(runs) == 2 and cancels(*runs):
        return None
    bounds = None
    if all(r.bounds is not None for r in runs):
        bounds = [(min(b[0] for b in column), max(b[1] for b in column))
                  for column in zip(*(r.bounds for r in runs))]
        if (len(runs) == 2 and len(runs[0].columns) == 1
                and runs[0].bounds[-1][1] < runs[1].bounds[-1][0]):
            return interleave(runs[0], runs[1], bounds)
    if sum(map(len, runs)) >= colbatch.RADIX_ROWS:
        return merge_packed(runs, key_column, consume)
    return make_run([np.concatenate([r.columns[c] for r in runs])
                     for c in range(len(runs[0].columns))],
                    np.concatenate([r.iterations for r in runs], dtype=INT64),
                    np.concatenate([r.weights for r in runs], dtype=INT64), key_column, bounds)


def cancels(first: Run, second: Run) -> bool:
    """Whether ``second`` holds ``first``'s entries, position by position,
    with the opposite weights (their sum is empty): the past's run of an epoch
    and the next epoch's that undoes it (a fact retracted, then inserted
    again), merged at commit. A comparison of the arrays instead of a sort:
    a 1,000-node chain's pair of single-fact updates merged 2 x 250,000
    entries of its join trace and of its Distinct's to nothing.

    >>> a = Run([np.array([1, 2]), np.array([5, 6])], np.array([0, 3]), np.array([1, 2]), 0)
    >>> b = Run(a.columns, a.iterations, np.array([-1, -2]), 0)
    >>> cancels(a, b), cancels(a, Run(a.columns, np.array([0, 2]), b.weights, 0))
    (True, False)
    """
    n = len(first)
    if (not n or len(second) != n or len(first.columns) != len(second.columns)
            or int(first.weights[0]) != -int(second.weights[0])
            or first.keys[-1] != second.keys[-1]):
        return False
    return (bool((first.weights == -second.weights.astype(INT64)).all())
            and np.array_equal(first.iterations, second.iterations)
            and all(np.array_equal(a, b) for a, b in zip(first.columns, second.columns)))


def merge_packed(runs: list, key_column: int, consume: bool = False):
    """:func:`make_run` of the runs' entries together, each run packed
    straight into its stretch of one key array: no column of all the entries
    is made before the sort; entries that do not pack into 63 bits (values
    of more than 63 bits of spread together, or not ints) are made into a
    run as they are (:func:`unpacked_run`). With ``consume``, each run leaves
    the list once packed, its arrays freed before the sort when nothing else
    holds them (a child circuit's appends at its commit). Consecutive runs
    of fewer than :data:`MERGE_CHUNK` entries together are first
    concatenated and packed as one (:func:`_chunks`).

    Same generation on the depth-10 tree: its commit merges 1.4 million
    entries of 3 columns and was the load's peak; peak RSS 312 -> 255 MB
    packed run by run, -> 233 MB consumed (page faults of the load 48,000 ->
    41,000)."""
    chunks = list(_chunks(_consumed(runs) if consume else runs, key_column))
    if not chunks:  # (no entries)
        return None
    if any(chunk[2] is None for chunk in chunks):
        return unpacked_run(chunks, key_column)
    bounds = [(min(b[0] for b in column), max(b[1] for b in column))
              for column in zip(*(chunk[2] for chunk in chunks))]
    widths = [(high - low).bit_length() for low, high in bounds]
    bits = sum(widths)
    if bits > 63:  # (the runs are consumed already: made from the chunks)
        return unpacked_run(chunks, key_column)
    total = sum(len(chunk[1]) for chunk in chunks)
    key = np.empty(total, dtype=INT64)
    weights = np.empty(total, dtype=INT64)
    scratch = np.empty(max(len(chunk[1]) for chunk in chunks), dtype=INT64)
    start = 0
    chunks.reverse()
    while chunks:
        ordered, chunk_weights, _ = chunks.pop()
        n = len(chunk_weights)
        pack_into(key[start:start + n], ordered, bounds, widths, scratch)
        weights[start:start + n] = chunk_weights
        start += n
        del ordered, chunk_weights
    del scratch
    key, weights, _ = sum_packed(key, bits, weights, own=True)
    if not len(weights):
        return None
    wide = len(weights) < colbatch.NARROW_ROWS  # (a short run's iterations in int64)
    columns = unpack_in_place(key, bounds, widths,
                              [INT64] * (len(bounds) - 1) + [INT64 if wide else None])
    iterations = columns.pop()
    columns.insert(key_column, columns.pop(0))
    if not wide:
        weights = narrow(weights)
    return Run(columns, iterations, weights, key_column, bounds)


def unpacked_run(chunks: list, key_column: int) -> Run | None:
    """:func:`make_run` of the entries of :func:`merge_packed`'s chunks,
    whose rows do not pack (a closure of node ids 2^40 apart: two columns
    of 47 bits each).

    >>> big = 1 << 60
    >>> chunk = ([np.array([big, -big]), np.array([-big, big]), np.array([0, 1])],
    ...          np.array([1, 1]), None)
    >>> run = unpacked_run([chunk], 0)
    >>> [[v // big for v in c.tolist()] for c in run.columns], run.iterations.tolist()
    ([[-1, 1], [1, -1]], [1, 0])
    """
    ordered = [np.concatenate(parts) for parts in zip(*(chunk[0] for chunk in chunks))]
    iterations = ordered.pop()
    ordered.insert(key_column, ordered.pop(0))
    return make_run(ordered, iterations.astype(INT64),
                    np.concatenate([chunk[1] for chunk in chunks], dtype=INT64), key_column)


#: :func:`merge_packed` concatenates consecutive runs of fewer entries than
#: this together (up to this many entries) and packs each such chunk as one:
#: a long loop's appends wait in its trace's tail as one small unsorted run
#: an iteration, and packing them one by one cost ~15 numpy calls a run (its
#: bounds, then its stretch of the key): a 1,000-node chain's commit packed
#: 936 runs of ~500 entries.
MERGE_CHUNK = 1 << 16


def _chunks(runs, key_column: int) -> Iterator:
    """``(ordered columns, weights, bounds)`` of the runs, the key column
    first and the iterations last (:func:`merge_packed`): a run of
    :data:`MERGE_CHUNK` entries or more as it is, smaller consecutive ones
    concatenated; bounds ``None`` for one whose entries are not all ints."""
    pending: list = []
    size = 0
    for run in runs:
        if not len(run):
            continue
        if len(run) >= MERGE_CHUNK:
            if pending:
                yield _chunk(pending, key_column)
                pending, size = [], 0
            yield _chunk([run], key_column)
        else:
            if size + len(run) > MERGE_CHUNK:
                yield _chunk(pending, key_column)
                pending, size = [], 0
            pending.append(run)
            size += len(run)
        del run
    if pending:
        yield _chunk(pending, key_column)


def _chunk(runs: list, key_column: int):
    """One chunk of :func:`_chunks` (``runs`` not empty, emptied)."""
    if len(runs) == 1:
        run = runs.pop()
        ordered = [run.keys, *(c for at, c in enumerate(run.columns) if at != key_column),
                   run.iterations]
        weights, bounds = run.weights, run.bounds
    else:
        ordered = [np.concatenate([r.keys for r in runs])]
        ordered += [np.concatenate([r.columns[at] for r in runs])
                    for at in range(len(runs[0].columns)) if at != key_column]
        ordered.append(np.concatenate([r.iterations for r in runs], dtype=INT64))
        weights = np.concatenate([r.weights for r in runs], dtype=INT64)
        bounds = None
        if all(r.bounds is not None for r in runs):
            bounds = [(min(b[0] for b in column), max(b[1] for b in column))
                      for column in zip(*(r.bounds for r in runs))]
        runs.clear()
    if bounds is None and all(c.dtype.kind == "i" for c in ordered):
        bounds = [(int(c.min()), int(c.max())) for c in ordered]
    return ordered, weights, bounds


def _consumed(runs: list) -> Iterator:
    """The runs, each taken out of the list as it is given."""
    runs.reverse()
    while runs:
        yield runs.pop()


def push_run(spine: list, run: Run | None, key_column: int, floor: int = 0,
             factor: int = FACTOR) -> None:
    """Add ``run`` to ``spine`` and merge geometrically (while the run before
    the last is under ``factor`` times its size, or holds fewer than
    ``floor`` entries), until a merge leaves nothing: the runs before were
    settled before this push (by the factor they were pushed with: a past's
    large run beside a larger one, :data:`PAST_FACTOR`), and a small run
    that cancelled the last one (an overlay's rows retracted, then
    inserted) must not merge them (tc-chain-2000's Distinct then merged its
    past's 2,000,000 entries with an update's 880,000, ~200 ms).

    >>> def ones(n, weight=1):
    ...     return Run([np.arange(n)], np.zeros(n, dtype=int), np.full(n, weight), 0)
    >>> spine = [ones(10), ones(6)]   # (unsettled, as a past's runs by PAST_FACTOR)
    >>> push_run(spine, ones(6, -1), 0)
    >>> [len(r) for r in spine]
    [10]
    >>> push_run(spine, ones(4), 0)
    >>> [len(r) for r in spine], spine[0].weights.tolist()
    ([10], [2, 2, 2, 2, 1, 1, 1, 1, 1, 1])
    """
    if run is None:
        return
    spine.append(run)
    while len(spine) > 1 and (len(spine[-2]) < factor * len(spine[-1])
                              or len(spine[-2]) < floor):
        last = spine.pop()
        merged = merge_runs([spine.pop(), last], key_column)
        if merged is None:
            break
        spine.append(merged)


def rows_run(batch: Mapping, iteration: int, arity: int, key_column: int) -> Run | None:
    """The rows of a Z-set batch as a run at ``iteration``; :class:`Unfit`
    when a row is not ``arity`` ints of int64."""
    columns = ColBatch.from_rows(batch)
    if columns is None or not columns.int_only or len(columns.columns) != arity:
        raise Unfit()
    return make_run(list(columns.columns), np.full(len(batch), iteration, dtype=INT64),
                    columns.weights, key_column)


def gather_few(spine: list, keys, nested: bool) -> dict:
    """:func:`gather` for a few keys: each sought in each run by scalar
    ``searchsorted`` (skipped when out of the run's key bounds), the entries
    read with ``item``/``tolist``: no array made for the keys, no sort.

    >>> run = Run([np.array([1, 1, 4]), np.array([7, 8, 9])], np.array([0, 2, 1]),
    ...           np.array([1, 1, -1]), 0, [(1, 4), (7, 9), (0, 2)])
    >>> gather_few([run], [(1,), (4,), (5,), (1,), ("a",)], True)
    {(1,): [((1, 7), (0, 1)), ((1, 8), (2, 1))], (4,): [((4, 9), (1, -1))]}
    >>> gather_few([run], [(4,)], False) == gather([run], [(4,)], False)
    True
    """
    found: dict = {}
    for sought in dict.fromkeys(keys):
        key = sought[0]
        if type(key) not in (int, bool) or not -(1 << 63) <= key < (1 << 63):
            continue
        entries: list = []
        for run in spine:
            span = run.span(key)
            if span is None:
                continue
            lo, hi = span
            if hi == lo + 1:
                value = tuple([c.item(lo) for c in run.columns])
                weight = run.weights.item(lo)
                entries.append((value, (run.iterations.item(lo), weight) if nested else weight))
                continue
            values = zip(*(c[lo:hi].tolist() for c in run.columns))
            weights = run.weights[lo:hi].tolist()
            entries.extend(zip(values, zip(run.iterations[lo:hi].tolist(), weights)
                               if nested else weights))
        if entries:
            found[sought] = entries
    return found


class PastMemo(dict):
    """key -> the entries :func:`gather` found under it in a past's runs
    (:meth:`ColumnarTrace.past_memo`), and how many entries it lists
    (``entries``: it is kept from one epoch to the next while they are at
    most :data:`MEMO_KEPT`)."""

    __slots__ = ("entries",)

    def __init__(self):
        super().__init__()
        self.entries = 0


def consolidated(entries: list, nested: bool) -> list:
    """Gathered entries (``(value, (iteration, weight))``, ``(value,
    weight)`` when not ``nested``) with the weights of each value and
    iteration added up, zeros left out: what a merge of the runs holding
    them leaves.

    >>> consolidated([((1, 2), (0, 1)), ((1, 3), (0, 1)), ((1, 2), (0, -1)),
    ...               ((1, 3), (2, 1)), ((1, 3), (0, 1))], True)
    [((1, 3), (0, 2)), ((1, 3), (2, 1))]
    """
    total: dict = {}
    get = total.get
    if nested:
        for value, (j, w) in entries:
            at = (value, j)
            total[at] = get(at, 0) + w
        return [(value, (j, w)) for (value, j), w in total.items() if w]
    for value, w in entries:
        total[value] = get(value, 0) + w
    return [(value, w) for value, w in total.items() if w]


FITTING: dict = {}  # arity -> the check of a batch's rows (fitting)


def fitting(batch: Mapping, arity: int) -> bool:
    """Whether every row of ``batch`` is ``arity`` ints of ``int64``: a
    loop written out for the arity (a small append to a trace in runs is
    checked so at every iteration of an update: the list, sets, ``min``
    and ``max`` of the values took ~2.5 µs a batch of a few rows).

    >>> fitting({(1, 2): 1}, 2), fitting({(1, 2.5): 1}, 2), fitting({(1 << 63, 0): 1}, 2)
    (True, False, False)
    >>> fitting({(1, 2): 1, (3,): 1}, 2), fitting({(True, -(1 << 63)): 1}, 2), fitting({}, 1)
    (False, True, True)
    """
    check = FITTING.get(arity)
    if check is None:
        if not arity:  # (no key column: never a columnar trace's rows)
            return False
        names = [f"v{c}" for c in range(arity)]
        test = " and ".join(f"type({v}) in kinds and low <= {v} < high" for v in names)
        check = FITTING[arity] = build_function("check", [
            "def check(batch):",
            "    for row in batch:",
            f"        if len(row) != {arity}: return False",
            f"        {', '.join(names)}, = row",
            f"        if not ({test}): return False",
            "    return True"], {"kinds": (int, bool), "low": -(1 << 63), "high": 1 << 63})
    return check(batch)


def overlay_add(overlay: dict, batch: Mapping, iteration: int, key_column: int,
                nested: bool) -> None:
    """Add a batch of rows to an overlay: key -> ``[(row, (iteration,
    weight))]`` (``[(row, weight)]`` when not ``nested``), as
    :func:`gather` gives entries (a row may be listed more than once: the
    weights add)."""
    for row, w in batch.items():
        entry = (row, (iteration, w) if nested else w)
        key = (row[key_column],)
        found = overlay.get(key)
        if found is None:
            overlay[key] = [entry]
        else:
            found.append(entry)


def overlay_run(overlay: dict, key_column: int, nested: bool) -> Run | None:
    """The entries of an overlay (:func:`overlay_add`) as a run."""
    entries = [entry for found in overlay.values() for entry in found]
    n = len(entries)
    columns = [np.fromiter((row[c] for row, _ in entries), dtype=INT64, count=n)
               for c in range(len(entries[0][0]))]
    if nested:
        iterations = np.fromiter((part[0] for _, part in entries), dtype=INT64, count=n)
        weights = np.fromiter((part[1] for _, part in entries), dtype=INT64, count=n)
    else:
        iterations = np.zeros(n, dtype=INT64)
        weights = np.fromiter((w for _, w in entries), dtype=INT64, count=n)
    return make_run(columns, iterations, weights, key_column)


def matches(spine: list, sought: np.ndarray) -> list:
    """``(run, positions)`` of each run of ``spine`` holding some of the keys
    ``sought`` (distinct): the positions of all their entries, in key order."""
    found = []
    for run in spine:
        lo = run.keys.searchsorted(sought, "left")
        counts = run.keys.searchsorted(sought, "right") - lo
        hit = counts > 0
        if not hit.any():
            continue
        lo, counts = lo[hit], counts[hit]
        offsets = np.cumsum(counts) - counts
        found.append((run, np.repeat(lo - offsets, counts) + np.arange(int(counts.sum()))))
    return found


def gather(spine: list, keys, nested: bool) -> dict:
    """key -> ``[(value, (iteration, weight))]`` (``[(value, weight)]`` when not
    ``nested``) of the entries of ``spine`` under ``keys`` (1-tuples): one
    ``searchsorted`` per run, then the matches of all runs put in key order
    and cut into one list per key."""
    if not spine:
        return {}
    if type(keys) is not list:
        keys = list(keys)
    if len(keys) * len(spine) <= colbatch.GATHER_FEW:
        return gather_few(spine, keys, nested)
    try:
        sought = np.fromiter((k[0] for k in keys), dtype=INT64)
    except (OverflowError, TypeError, ValueError):
        sought = np.fromiter((k[0] for k in keys if type(k[0]) is int
                              and -(1 << 63) <= k[0] < (1 << 63)), dtype=INT64)
    if not len(sought):
        return {}
    sought.sort()
    if len(sought) > 1:
        sought = sought[np.concatenate(([True], sought[1:] != sought[:-1]))]
    found = matches(spine, sought)
    if not found:
        return {}
    if len(found) == 1:
        run, index = found[0]
        columns = [c[index] for c in run.columns]
        parts = [run.iterations[index], run.weights[index]]
        matched = run.keys[index]
    else:
        matched = np.concatenate([run.keys[index] for run, index in found])
        order = np.argsort(matched, kind="stable")
        matched = matched[order]
        columns = [np.concatenate([run.columns[c][index] for run, index in found])[order]
                   for c in range(len(found[0][0].columns))]
        parts = [np.concatenate([run.iterations[index] for run, index in found])[order],
                 np.concatenate([run.weights[index] for run, index in found])[order]]
    values = list(zip(*(c.tolist() for c in columns)))
    weights = parts[1].tolist()
    entries = list(zip(values, zip(parts[0].tolist(), weights) if nested else weights))
    cuts = np.flatnonzero(matched[1:] != matched[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(entries)]
    return {(key,): entries[start:end] for key, start, end
            in zip(matched[bounds[:-1]].tolist(), bounds, bounds[1:])}


def gather_columns(spine: list, sought: np.ndarray) -> tuple[list, np.ndarray]:
    """``(columns, weights)`` (``int64`` arrays) of the entries of ``spine``
    under the ``int64`` keys ``sought``, every time together (an entry once
    per run and iteration it is in: the weights add), in no order: one pair
    of ``searchsorted`` per run, no rows made (the aggregate's columnar path).

    >>> ones = np.ones(3, dtype=INT64)
    >>> run = Run([np.array([1, 1, 4]), np.array([7, 8, 9])], ones - 1, ones, 0)
    >>> columns, weights = gather_columns([run], np.array([1, 5]))
    >>> [c.tolist() for c in columns], weights.tolist()
    ([[1, 1], [7, 8]], [1, 1])
    """
    found = matches(spine, sought)
    if not found:
        return [], np.zeros(0, dtype=INT64)
    width = len(found[0][0].columns)
    return ([np.concatenate([run.columns[c][index] for run, index in found])
             for c in range(width)],
            np.concatenate([run.weights[index] for run, index in found], dtype=INT64))


class ColumnarSource(CursorSource):
    """Fragments reading a :class:`ColumnarCursor` in generated loops: the
    delta's keys are gathered first; a group lists ``(value, time part)``."""

    def __init__(self, nested: bool):
        self.nested = nested

    def bind(self, cursor: str, prefix: str, keys: str = "()") -> list[str]:
        return [f"    {prefix}get = {cursor}.gather({keys}).get"]

    def seek(self, prefix: str, key: str, group: str, indent: str) -> list[str]:
        return [f"{indent}{group} = {prefix}get({key})",
                f"{indent}if {group} is None: continue"]

    def values(self, group: str, value: str, history: str) -> str:
        return f"for {value}, {history} in {group}:"

    def weight(self, history: str) -> str:
        return f"{history}[1]" if self.nested else history

    def walk_times(self, history: str, iteration: str, weight: str, body, indent: str):
        return [f"{indent}{iteration}, {weight} = {history}"] + body(indent)

    def nonempty(self, cursor: str) -> str:
        return f"({cursor}.spine or {cursor}.overlay is not None)"  # (no call of __bool__)


SOURCES = {False: ColumnarSource(False), True: ColumnarSource(True)}


class ColumnarCursor(Cursor):
    """A cursor over one part of a :class:`ColumnarTrace`: a spine of runs and
    an overlay of small appends (:func:`overlay_add`; ``None`` or empty)."""

    __slots__ = ("epoch", "group", "memo", "nested", "overlay", "spine")

    def __init__(self, spine: list, nested: bool, epoch: int, overlay: dict | None = None,
                 memo: dict | None = None):
        self.spine = spine
        self.nested = nested
        self.epoch = epoch
        self.overlay = overlay or None
        self.memo = memo  # the trace's past_memo (a past cursor's), else None
        self.group: dict = {}

    @property
    def source(self) -> ColumnarSource:
        return SOURCES[self.nested]

    def __bool__(self) -> bool:
        return bool(self.spine) or self.overlay is not None

    def gather(self, keys) -> dict:
        """key -> ``[(value, time part), ...]`` of the sought ``keys``
        (1-tuples; those with no entry left out): the runs' (:func:`gather`,
        through ``memo`` when given: the lists it holds are shared, never
        changed) and the overlay's. The caller reads the lists only.

        >>> zeros = np.zeros(2, dtype=INT64)
        >>> run = Run([np.array([1, 4]), np.array([7, 9])], zeros, zeros + 1, 0)
        >>> memo = PastMemo()
        >>> cursor = ColumnarCursor([run], True, 0, {(4,): [((4, 8), (0, 1))]}, memo)
        >>> cursor.gather([(4,), (2,)])
        {(4,): [((4, 9), (0, 1)), ((4, 8), (0, 1))]}
        >>> memo, memo.entries, cursor.gather([(4,)]) == cursor.gather([(4,)])
        ({(4,): [((4, 9), (0, 1))], (2,): ()}, 1, True)
        """
        if type(keys) is not list:
            keys = list(keys)
        memo = self.memo
        if memo is None:
            found = gather(self.spine, keys, self.nested)
        else:
            found = {}
            missing = None
            known = memo.get
            for key in keys:
                entries = known(key)
                if entries is None:
                    if missing is None:
                        missing = [key]
                    else:
                        missing.append(key)
                elif entries:
                    found[key] = entries
            if missing is not None:
                new = gather(self.spine, missing, self.nested)
                get = new.get
                for key in missing:
                    if key in memo:  # (sought twice in this call)
                        continue
                    entries = memo[key] = get(key, ())
                    memo.entries += len(entries)
                    if entries:
                        found[key] = entries
        overlay = self.overlay
        if overlay is None:
            return found
        if len(overlay) < len(keys):  # the overlay's keys sought (each key once)
            sought = set(keys)
            pairs = [(key, extra) for key, extra in overlay.items() if key in sought]
        else:
            get = overlay.get
            pairs = [(key, get(key)) for key in dict.fromkeys(keys)]
        for key, extra in pairs:
            if extra is not None:
                entries = found.get(key)
                found[key] = list(extra) if entries is None else entries + extra
        return found

    def gather_columns(self, sought: np.ndarray) -> tuple[list, np.ndarray]:
        """The part's entries under the ``int64`` keys ``sought``, as arrays
        (:func:`gather_columns`, the overlay's added)."""
        columns, weights = gather_columns(self.spine, sought)
        overlay = self.overlay
        if overlay is None:
            return columns, weights
        extra = [entry for key in set(sought.tolist()) for entry in overlay.get((key,), ())]
        if not extra:
            return columns, weights
        n = len(extra)
        more = [np.fromiter((row[c] for row, _ in extra), dtype=INT64, count=n)
                for c in range(len(extra[0][0]))]
        more_weights = np.fromiter(((p[1] if self.nested else p) for _, p in extra),
                                   dtype=INT64, count=n)
        if not columns:
            return more, more_weights
        return ([np.concatenate([c, m]) for c, m in zip(columns, more)],
                np.concatenate([weights, more_weights]))

    def _group(self, entries) -> dict:
        """value -> {iteration: weight} of gathered entries, zeros dropped."""
        group: dict = {}
        for value, part in entries:
            j, w = part if self.nested else (0, part)
            history = group.setdefault(value, {})
            total = history.get(j, 0) + w
            if total:
                history[j] = total
            else:
                del history[j]
        return {value: history for value, history in group.items() if history}

    def seek(self, key) -> bool:
        self.group = self._group(self.gather([key]).get(key, ()))
        return bool(self.group)

    def seek_many(self, keys) -> Iterator:
        found = self.gather(list(keys))
        for key in sorted(found):
            self.group = self._group(found[key])
            if self.group:
                yield key

    def keys(self) -> Iterator:
        parts = [run.keys for run in self.spine]
        if self.overlay is not None:
            parts.append(np.array([key[0] for key in self.overlay], dtype=INT64))
        if not parts:
            return iter(())
        keys = np.concatenate(parts)
        keys.sort()
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        return iter([(k,) for k in keys.tolist() if self.seek((k,))])

    def values(self) -> Iterator:
        return iter(self.group)

    def times(self, value) -> list[tuple[tuple, int]]:
        history = self.group.get(value, {})
        if not self.nested:
            return [((self.epoch,), w) for w in history.values()]
        return [((self.epoch, j), w) for j, w in sorted(history.items())]

    def weight(self, value, until: int | None = None) -> int:
        history = self.group.get(value, {})
        return sum(w for j, w in history.items() if until is None or j <= until)

    def split(self, value, i: int) -> tuple[int, int, int | None]:
        return split_pairs(self.group.get(value, {}).items(), i)


class ColumnarTrace:
    """A trace of int rows keyed by one column, in sorted numpy runs (module
    docstring); the interface of :class:`~engine.trace.Trace`."""

    __slots__ = ("_cur", "_past", "arity", "epoch", "functions", "index", "key_column",
                 "memo", "nested", "older", "older_size", "recent", "recent_size", "staged",
                 "staged_runs", "staged_small", "tail")

    def __init__(self, nested: bool = False, index=None):
        if not fits(index):
            raise ValueError(f"a columnar trace needs a one-column key, got {index!r}")
        self._empty(nested, index, index[1][0])
        self.functions = compile_row_functions(index)

    def _empty(self, nested: bool, index, key_column: int) -> None:
        """No entries yet, runs sorted by ``key_column``."""
        self.nested = nested
        self.index = index
        self.key_column = key_column
        self.arity: int | None = None
        self._past: list = []    # spine of finished epochs
        self._cur: list = []     # spine of this epoch's appends (child scope),
        self.tail: list = []     # and those not sorted into it yet (cur)
        self.staged: list = []   # root scope: the epoch's row batches,
        self.staged_runs: list = []  # the large ones as runs, folded in at commit,
        self.staged_small: list = []  # the small ones, into ``older`` at commit
        # the overlays of small appends (overlay_add): this epoch's (child
        # scope), earlier epochs' (entries listed: recent_size, older_size)
        self.recent: dict = {}
        self.older: dict = {}
        self.recent_size = self.older_size = 0
        self.epoch = 0
        self.memo: tuple | None = None  # (past runs, key -> entries): past_memo

    @property
    def past(self) -> list:
        """The spine of finished epochs, the ``older`` overlay sorted into it
        first (for readers of runs only: the columnar operators)."""
        if self.older:
            self._flush_older()
        return self._past

    def _flush_older(self) -> None:
        memo = self.kept_memo()
        if memo is not None:  # the keys it answers learn the overlay's entries
            found, nested = memo[1], self.nested
            for key, extra in self.older.items():
                entries = found.get(key)
                if entries is not None:
                    learnt = found[key] = consolidated([*entries, *extra], nested)
                    found.entries += len(learnt) - len(entries)
        push_run(self._past, overlay_run(self.older, self.key_column, self.nested),
                 self.key_column, PAST_FLOOR)
        self.older, self.older_size = {}, 0
        if memo is not None:
            self.memo = (list(self._past), memo[1])

    def kept_memo(self) -> tuple | None:
        """The memo (``(past runs, key -> entries)``) if it answers for the
        past as it is now, else ``None``."""
        memo = self.memo
        # (runs compare by identity: the list comparison is that check, in C)
        return memo if memo is not None and memo[0] == self._past else None

    def past_entries(self) -> int:
        """How many entries the finished epochs hold (the overlay's counted
        as listed), without sorting the overlay into runs."""
        return sum(map(len, self._past)) + self.older_size

    @classmethod
    def from_trace(cls, trace: Trace) -> ColumnarTrace:
        """The same entries as the dict ``trace`` (read from its dicts in bulk:
        :mod:`engine.tracearrays`); :class:`Unfit` if they do not fit."""
        new = cls(trace.nested, trace.index)
        new.epoch = trace.epoch
        for store, spine in ((trace.past, new._past), (trace.cur, new._cur)):
            if not store:
                continue
            groups = list(store.values())
            arity = len(next(iter(groups[0])))
            new._check_arity(arity)
            found = entries_of(groups, arity, trace.nested)
            if found is None:
                raise Unfit()
            columns, iterations, weights = found
            push_run(spine, make_run(columns, iterations, weights, new.key_column),
                     new.key_column)
        for batch in trace.staged_batches():
            new.append_rows({v: w for values in batch.values() for v, w in values.items()})
        return new

    def with_epoch_of(self, trace: Trace) -> ColumnarTrace:
        """A copy of this trace (its past runs shared) whose current epoch is
        the dict ``trace``'s, read again (a child's trace whose past this one
        holds already: only the epoch's few entries are converted);
        :class:`Unfit` if they do not fit."""
        new = ColumnarTrace(self.nested, self.index)
        new.epoch, new.arity, new._past = trace.epoch, self.arity, list(self.past)
        if trace.cur:
            groups = list(trace.cur.values())
            new._check_arity(len(next(iter(groups[0]))))
            found = entries_of(groups, new.arity, trace.nested)
            if found is None:
                raise Unfit()
            push_run(new._cur, make_run(*found, new.key_column), new.key_column)
        return new

    def to_trace(self) -> Trace:
        """The same entries as a dict :class:`~engine.trace.Trace` (built from
        the runs' arrays in bulk: :mod:`engine.tracearrays`)."""
        trace = Trace(self.nested, self.index)
        trace.epoch = self.epoch
        parts = [self.past, self.cur] if self.nested else [self.past + self.cur]
        for at, spine in enumerate(parts):
            if not spine:
                continue
            run = spine[0] if len(spine) == 1 else merge_runs(spine, self.key_column)
            if run is None:
                continue
            groups = groups_of(run.columns, run.iterations, run.weights, self.key_column,
                               self.nested)
            if at:
                trace.cur = groups
            else:
                trace.past = groups
        for batch in self.staged:
            trace.append_rows(batch)
        return trace

    def _check_arity(self, arity: int) -> None:
        if self.arity is None:
            self.arity = arity
        elif arity != self.arity:
            raise Unfit()

    # -- writing ------------------------------------------------------------

    def append(self, batch: Mapping, iteration: int = 0, epoch: int | None = None) -> None:
        """Add an indexed batch at ``(self.epoch, iteration)`` (its keys must be
        those of this trace's index)."""
        if epoch is not None and epoch != self.epoch:
            raise EpochError(f"trace is at epoch {self.epoch}, got a batch for epoch {epoch}")
        if not batch:
            return
        rows = {value: w for values in batch.values() for value, w in values.items()}
        self.append_rows(rows, iteration)

    def append_rows(self, batch: Mapping, iteration: int = 0) -> None:
        """Add a Z-set of rows at ``(self.epoch, iteration)``; :class:`Unfit`
        (nothing changed) when a row does not fit the columns. A batch of
        fewer than :data:`~engine.colbatch.OVERLAY_APPEND` rows goes into
        an overlay (module docstring)."""
        if not batch:
            return
        arity = len(next(iter(batch)))
        if len(batch) < colbatch.OVERLAY_APPEND:
            if not fitting(batch, arity):
                raise Unfit()
            self._check_arity(arity)
            if self.nested:
                overlay_add(self.recent, batch, iteration, self.key_column, True)
                self.recent_size += len(batch)
                if self.recent_size >= OVERLAY_ROWS:  # a long loop's: into a run
                    self._flush_recent()
            else:  # invisible to readers until the commit
                self.staged.append(batch)
                self.staged_small.append(batch)
            return
        run = rows_run(batch, iteration, arity, self.key_column)
        self._check_arity(arity)
        if not self.nested:  # invisible to readers until the commit
            self.staged.append(batch)
            self.staged_runs.append(run)
            return
        if run is not None:
            self.tail.append(run)

    def append_columns(self, batch, iteration: int = 0) -> None:
        """Add a :class:`~engine.colbatch.ColBatch` of ``int64`` columns at
        ``(self.epoch, iteration)``, as a run (no rows made); :class:`Unfit`
        (nothing changed) when its columns are not all ``int64``."""
        if not len(batch):
            return
        if not batch.int_only:
            raise Unfit()
        arity = len(batch.columns)
        if self.arity is not None and arity != self.arity:
            raise Unfit()
        iterations = filled(len(batch), iteration)
        self._check_arity(arity)
        if not self.nested:
            self.staged.append(batch)
            self.staged_runs.append(make_run(list(batch.columns), iterations, batch.weights,
                                             self.key_column))
            return
        self.tail.append(Run(list(batch.columns), iterations, batch.weights, self.key_column))

    @property
    def cur(self) -> list:
        """The spine of this epoch's appends, the ``recent`` overlay sorted in
        (for readers of runs only: the columnar operators). A child
        circuit's appends wait in ``tail`` unsorted until something reads
        them (often nothing does before the commit: a join reads this epoch's
        part of a trace only for a delta of its other side), then become one
        run: one sort for all of them instead of a sort and geometric merges
        per iteration."""
        if self.recent:
            self._flush_recent()
        return self._spine()

    def _flush_recent(self) -> None:
        self.tail.append(overlay_run(self.recent, self.key_column, True))
        self.recent, self.recent_size = {}, 0

    def _spine(self) -> list:
        """The spine of this epoch's appended runs (``tail`` sorted in)."""
        tail = self.tail
        if tail:
            self.tail = []
            size, spine = sum(map(len, tail)), self._cur
            while spine and len(spine[-1]) < FACTOR * size:  # push_run would merge it
                tail.insert(0, spine.pop())                 # next: one sort for all
                size += len(tail[0])
            push_run(spine, merge_runs(tail, self.key_column, consume=True), self.key_column)
        return self._cur

    def index_rows(self, batch: Mapping) -> dict:
        """A batch of rows as an indexed Z-set under this trace's key."""
        return self.functions["index_rows"](batch)

    def commit(self) -> None:
        """The epoch is over: its runs join the past (compaction), its
        overlay the ``older`` one (a run of the past once it lists
        :data:`OVERLAY_ROWS` entries)."""
        older, kc = self.older, self.key_column
        if self.nested:
            runs, self._cur = self._spine(), []
            for key, entries in self.recent.items():
                found = older.get(key)
                if found is None:
                    older[key] = entries
                else:
                    found.extend(entries)
            self.older_size += self.recent_size
            self.recent, self.recent_size = {}, 0
        else:
            runs, self.staged, self.staged_runs = self.staged_runs, [], []
            for batch in self.staged_small:
                self.older_size += len(batch)
                overlay_add(older, batch, 0, kc, False)
            self.staged_small = []
        if runs or (self.memo is not None and self.memo[1].entries > MEMO_KEPT):
            self.memo = None  # (an epoch of small appends leaves the past's runs as they are)
        for run in runs:
            push_past(self._past, run, kc)
        if self.older_size >= OVERLAY_ROWS:
            self._flush_older()
        self.epoch += 1

    def rollback(self) -> None:
        """Forget everything appended in the current epoch."""
        self._cur, self.tail = [], []
        self.memo = None
        self.recent, self.recent_size = {}, 0
        self.staged = []
        self.staged_runs = []
        self.staged_small = []

    # -- reading ------------------------------------------------------------

    def past_cursor(self) -> ColumnarCursor:
        return ColumnarCursor(self._past, self.nested, self.epoch - 1, self.older,
                              self.past_memo())

    def past_memo(self) -> dict | None:
        """key -> the entries :func:`gather` found under it in the past runs
        (``()``: none), while the runs stay the same (at most
        :data:`MEMO_KEYS` keys): an update's loop seeks the same keys of a
        past again at later iterations (Andersen's analysis: 58% of the
        keys its joins sought in a past had been sought in it earlier in
        the epoch), and the next epoch seeks them again (a fact retracted,
        then inserted). An epoch that only added the ``older`` overlay
        keeps it (up to :data:`MEMO_KEPT` entries); the overlay sorted into
        the runs adds its entries to the keys it holds
        (:meth:`_flush_older`); an epoch's runs joining the past drop it.
        ``None`` while the past is empty."""
        past = self._past
        if not past:
            return None
        memo = self.kept_memo()
        if memo is None or len(memo[1]) >= MEMO_KEYS:
            memo = self.memo = (list(past), PastMemo())
        return memo[1]

    def epoch_cursor(self) -> ColumnarCursor:
        return ColumnarCursor(self._spine(), self.nested, self.epoch, self.recent)

    def staged_batches(self) -> list:
        return list(self.staged)

    def collection(self, key) -> dict:
        """The current value -> weight of ``key``, summed over all times seen."""
        out: dict = {}
        parts = [self.past_cursor(), self.epoch_cursor()]
        for part in parts:
            if part.seek(key):
                for value in part.values():
                    out[value] = out.get(value, 0) + part.weight(value)
        for batch in self.staged:
            for value, weight in batch.items():
                if (value[self.key_column],) == key:
                    out[value] = out.get(value, 0) + weight
        return {value: w for value, w in out.items() if w}

    def entries(self) -> Iterator[tuple]:
        """``(key, value, time, weight)`` in order of key, then value, then time."""
        rows: dict = {}
        for part in (self.past_cursor(), self.epoch_cursor()):
            for key, value, time, weight in part.entries():
                rows[(key, value, time)] = rows.get((key, value, time), 0) + weight
        for batch in self.staged:
            for value, weight in batch.items():
                at = ((value[self.key_column],), value, (self.epoch,))
                rows[at] = rows.get(at, 0) + weight
        return iter(sorted((k, v, t, w) for (k, v, t), w in rows.items() if w))

    def keys(self, minimum=None, maximum=None) -> Iterator:
        """The keys of past epochs in order (inclusive bounds)."""
        found = self.past_cursor().keys()
        return (key for key in found
                if (minimum is None or key >= minimum) and (maximum is None or key <= maximum))

    def size(self) -> int:
        """Number of stored (key, value, time) entries."""
        return sum(1 for _ in self.entries())

    def runs(self) -> list[int]:
        """The sizes of the past runs, then of the current epoch's (inspection)."""
        return [len(run) for run in self.past] + [len(run) for run in self.cur]

