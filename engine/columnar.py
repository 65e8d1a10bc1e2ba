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

Readers use cursors. Generated loops (the join's) **gather** first: one
vectorised lookup of all the keys of a delta, giving key -> ``[(value, time
part), ...]``, a value listed once per run and iteration it has weight at (the
weights add). Rows the columns cannot hold (floats, strings, ints beyond
``int64``) raise :class:`Unfit` before anything changes; the owner then goes
back to a dict trace (:meth:`ColumnarTrace.to_trace`).

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

from collections.abc import Iterator, Mapping
from itertools import repeat

from engine import colbatch, lazy
from engine.colbatch import ColBatch, bounds_of, sort_key
from engine.cursor import Cursor, CursorSource
from engine.errors import EpochError
from engine.trace import Trace, compile_row_functions

FACTOR = 4  # a run merges into the previous one while that is under FACTOR times its size
#: At commit, a past run also merges into the previous one while that holds
#: fewer entries than this: the past is read by every iteration of the next
#: epochs (a probe of each run, ~10 µs even when nothing matches) and written
#: once per epoch, so it keeps fewer small runs than an epoch's spine (a
#: 1,000-node chain's past went from 6-7 runs to 3; merging costs at most this
#: many entries more per commit).
PAST_FLOOR = 4096
INT64 = "int64"
np = lazy.module("numpy", globals())


class Unfit(Exception):
    """A batch holds a row the int64 columns cannot hold."""


def fits(index) -> bool:
    """Whether a trace kept by ``index`` can be columnar: one key column."""
    return index is not None and index[0] == "cols" and len(index[1]) == 1


class Run:
    """Sorted, consolidated entries: ``columns`` (one int64 array per column of
    the row), ``iterations``, ``weights`` (each in a type as narrow as its
    values allow: :func:`narrow`); ``keys`` is the key column;
    ``bounds``: ``(low, high)`` of the key, the other columns and the
    iteration (``None`` if not known), so that a merge packs its sort key
    without scanning the runs; ``sums``: the running sums of the weights
    (a leading 0), made when first asked for (:meth:`weight_sums`)."""

    __slots__ = ("bounds", "columns", "iterations", "keys", "sums", "weights")

    def __init__(self, columns: list, iterations, weights, key_column: int, bounds=None):
        self.columns = columns
        self.iterations = iterations
        self.weights = weights
        self.keys = columns[key_column]
        self.bounds = bounds
        self.sums = None

    def weight_sums(self, sought: np.ndarray) -> np.ndarray:
        """The total weight of each of the ``sought`` keys in this run, every
        iteration together: two ``searchsorted`` and the running sums, no
        expansion of the matches.

        >>> run = Run([np.array([1, 1, 4])], np.array([0, 2, 0]), np.array([1, 2, -1]), 0)
        >>> run.weight_sums(np.array([0, 1, 4])).tolist()
        [0, 3, -1]
        """
        sums = self.sums
        if sums is None:
            sums = self.sums = np.concatenate(([0], np.cumsum(self.weights)))
        keys = self.keys
        return sums[keys.searchsorted(sought, "right")] - sums[keys.searchsorted(sought, "left")]

    def __len__(self) -> int:
        return len(self.weights)


#: A run keeps its iterations and its weights in the first of these types that
#: holds them all (any other arithmetic on them is done in ``int64``): most runs
#: have iterations below 128 and weights below 128, so an entry of a trace of
#: pairs takes 8 + 8 + 1 + 1 bytes instead of 32 (a Distinct's packed entry 10
#: instead of 24).
NARROW = ("int8", "int16", "int32")


def narrow(values: np.ndarray, bounds: tuple[int, int] | None = None) -> np.ndarray:
    """``values`` (not empty) in the first type of :data:`NARROW` holding
    them (``bounds``: their ``(low, high)``, if known), else as they are.

    >>> narrow(np.array([0, 127])).dtype, narrow(np.array([-129, 0])).dtype
    (dtype('int8'), dtype('int16'))
    >>> narrow(np.array([1 << 40])).dtype
    dtype('int64')
    """
    low, high = bounds if bounds is not None else (int(values.min()), int(values.max()))
    for kind in NARROW:
        limits = np.iinfo(kind)
        if limits.min <= low and high <= limits.max:
            return values.astype(kind)
    return values


def make_run(columns: list, iterations, weights, key_column: int,
             bounds: list | None = None) -> Run | None:
    """A run of the entries (any order, repeats allowed): sorted by key, then
    the other columns, then iteration; equal entries summed; zeros dropped;
    the iterations and weights :func:`narrow` (from
    :data:`~engine.colbatch.NARROW_ROWS` entries). ``None`` when empty."""
    if iterations.dtype != INT64:  # sums and sort keys in int64
        iterations = iterations.astype(INT64)
    if weights.dtype != INT64:
        weights = weights.astype(INT64)
    ordered = [columns[key_column], *(c for at, c in enumerate(columns) if at != key_column),
               iterations]
    if bounds is None:
        bounds = bounds_of(ordered)
    packed = sort_key(ordered, bounds)  # one int64 when the ranges allow: a stable
    if packed is not None:              # sort of it merges sorted runs in linear time
        order = np.argsort(packed, kind="stable")
    else:
        order = np.lexsort(ordered[::-1])
    columns = [c[order] for c in columns]
    iterations, weights = iterations[order], weights[order]
    n = len(weights)
    if n > 1:
        new = np.empty(n, dtype=bool)
        new[0] = True
        if packed is not None:
            packed = packed[order]
            np.not_equal(packed[1:], packed[:-1], out=new[1:])
        else:
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
        iterations = narrow(iterations, bounds[-1] if bounds is not None else None)
        weights = narrow(weights)
    return Run(columns, iterations, weights, key_column, bounds)


def shared_ints(column: np.ndarray) -> list[int]:
    """The column as Python ints, one object per distinct number: ``tolist``
    makes one per entry (32 bytes each past 256), and the rows a trace's dicts
    keep repeat their numbers (Andersen's analysis on 200 functions: the dict
    traces made from runs at commit took 30% less).

    >>> values = shared_ints(np.array([1000, 2000, 1000]))
    >>> values, values[0] is values[2]
    ([1000, 2000, 1000], True)
    """
    if len(column) < 2:
        return column.tolist()
    ordered = np.sort(column)
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return list(map(distinct.tolist().__getitem__, distinct.searchsorted(column).tolist()))


def interleave(first: Run, second: Run, bounds: list) -> Run:
    """The merge of two runs of one column whose entries are all at
    different iterations, the first's earlier: no two entries are equal, and
    of equal keys the first's come first, so the merge is where each of the
    second's keys goes among the first's (one ``searchsorted``), no sort."""
    at = first.keys.searchsorted(second.keys, "right")
    at += np.arange(len(second))
    rest = np.ones(len(first) + len(second), dtype=bool)
    rest[at] = False

    def mix(x, y):
        out = np.empty(len(rest), dtype=INT64)
        out[at] = y
        out[rest] = x
        return out
    return Run([mix(first.keys, second.keys)], mix(first.iterations, second.iterations),
               mix(first.weights, second.weights), 0, bounds)


def merge_runs(runs: list, key_column: int) -> Run | None:
    bounds = None
    if all(r.bounds is not None for r in runs):
        bounds = [(min(b[0] for b in column), max(b[1] for b in column))
                  for column in zip(*(r.bounds for r in runs))]
        if (len(runs) == 2 and len(runs[0].columns) == 1
                and runs[0].bounds[-1][1] < runs[1].bounds[-1][0]):
            return interleave(runs[0], runs[1], bounds)
    return make_run([np.concatenate([r.columns[c] for r in runs])
                     for c in range(len(runs[0].columns))],
                    np.concatenate([r.iterations for r in runs], dtype=INT64),
                    np.concatenate([r.weights for r in runs], dtype=INT64), key_column, bounds)


def push_run(spine: list, run: Run | None, key_column: int, floor: int = 0) -> None:
    """Add ``run`` to ``spine`` and merge geometrically (and while the run
    before the last holds fewer than ``floor`` entries)."""
    if run is None:
        return
    spine.append(run)
    while len(spine) > 1 and (len(spine[-2]) < FACTOR * len(spine[-1])
                              or len(spine[-2]) < floor):
        last = spine.pop()
        merged = merge_runs([spine.pop(), last], key_column)
        if merged is not None:
            spine.append(merged)


def rows_run(batch: Mapping, iteration: int, arity: int, key_column: int) -> Run | None:
    """The rows of a Z-set batch as a run at ``iteration``; :class:`Unfit`
    when a row is not ``arity`` ints of int64."""
    columns = ColBatch.from_rows(batch)
    if columns is None or not columns.int_only or len(columns.columns) != arity:
        raise Unfit()
    return make_run(list(columns.columns), np.full(len(batch), iteration, dtype=INT64),
                    columns.weights, key_column)


def gather(spine: list, keys, nested: bool) -> dict:
    """key -> ``[(value, (iteration, weight))]`` (``[(value, weight)]`` when not
    ``nested``) of the entries of ``spine`` under ``keys`` (1-tuples): one
    ``searchsorted`` per run, then the matches of all runs put in key order
    and cut into one list per key."""
    if not spine:
        return {}
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


SOURCES = {False: ColumnarSource(False), True: ColumnarSource(True)}


class ColumnarCursor(Cursor):
    """A cursor over one part (a spine of runs) of a :class:`ColumnarTrace`."""

    __slots__ = ("epoch", "group", "nested", "spine")

    def __init__(self, spine: list, nested: bool, epoch: int):
        self.spine = spine
        self.nested = nested
        self.epoch = epoch
        self.group: dict = {}

    @property
    def source(self) -> ColumnarSource:
        return SOURCES[self.nested]

    def __bool__(self) -> bool:
        return bool(self.spine)

    def gather(self, keys) -> dict:
        return gather(self.spine, keys, self.nested)

    def gather_columns(self, sought: np.ndarray) -> tuple[list, np.ndarray]:
        """The part's entries under the ``int64`` keys ``sought``, as arrays
        (:func:`gather_columns`)."""
        return gather_columns(self.spine, sought)

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
        if not self.spine:
            return iter(())
        keys = np.concatenate([run.keys for run in self.spine])
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
        before = at = 0
        later = None
        for j, w in self.group.get(value, {}).items():
            if j < i:
                before += w
            elif j == i:
                at += w
            elif later is None or j < later:
                later = j
        return before, at, later


class ColumnarTrace:
    """A trace of int rows keyed by one column, in sorted numpy runs (module
    docstring); the interface of :class:`~engine.trace.Trace`."""

    __slots__ = ("_cur", "arity", "epoch", "functions", "index", "key_column", "nested",
                 "past", "staged", "staged_runs", "tail")

    def __init__(self, nested: bool = False, index=None):
        if not fits(index):
            raise ValueError(f"a columnar trace needs a one-column key, got {index!r}")
        self.nested = nested
        self.index = index
        self.key_column = index[1][0]
        self.arity: int | None = None
        self.past: list = []     # spine of finished epochs
        self._cur: list = []     # spine of this epoch's appends (child scope),
        self.tail: list = []     # and those not sorted into it yet (cur)
        self.staged: list = []   # root scope: the epoch's row batches,
        self.staged_runs: list = []  # and the same as runs, folded in at commit
        self.epoch = 0
        self.functions = compile_row_functions(index)

    @classmethod
    def from_trace(cls, trace: Trace) -> ColumnarTrace:
        """The same entries as the dict ``trace``; :class:`Unfit` if they do not fit."""
        new = cls(trace.nested, trace.index)
        new.epoch = trace.epoch
        for part, spine in ((trace.past_cursor(), new.past), (trace.epoch_cursor(), new.cur)):
            rows: dict = {}
            for _key, value, time, weight in part.entries():
                at = (value, time[-1] if trace.nested else 0)
                rows[at] = rows.get(at, 0) + weight
            if rows:
                push_run(spine, new._entries_run(rows), new.key_column)
        for batch in trace.staged_batches():
            new.append_rows({v: w for values in batch.values() for v, w in values.items()})
        return new

    def to_trace(self) -> Trace:
        """The same entries as a dict :class:`~engine.trace.Trace` (read from
        the runs' arrays in bulk)."""
        entries: list = []
        for spine, epoch in ((self.past, self.epoch - 1), (self.cur, self.epoch)):
            for run in spine:
                columns = [shared_ints(c) for c in run.columns]
                values = list(zip(*columns))
                keys = [(k,) for k in columns[self.key_column]]
                entries += zip(keys, values, repeat(epoch), run.iterations.tolist(),
                               run.weights.tolist())
        trace = Trace.from_entries(self.nested, self.index, self.epoch, entries)
        for batch in self.staged:
            trace.append_rows(batch)
        return trace

    def _entries_run(self, rows: dict) -> Run | None:
        """A run of ``{(row, iteration): weight}``."""
        arity = len(next(iter(rows))[0])
        self._check_arity(arity)
        try:
            table = np.array([row for row, _ in rows])
        except (OverflowError, ValueError, TypeError):
            raise Unfit() from None
        if table.dtype != INT64 or table.ndim != 2 or table.shape[1] != arity:
            raise Unfit()
        n = len(rows)
        return make_run([np.ascontiguousarray(table[:, c]) for c in range(arity)],
                        np.fromiter((j for _, j in rows), dtype=INT64, count=n),
                        np.fromiter(rows.values(), dtype=INT64, count=n), self.key_column)

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
        (nothing changed) when a row does not fit the columns."""
        if not batch:
            return
        arity = len(next(iter(batch)))
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
        iterations = np.full(len(batch), iteration, dtype=INT64)
        self._check_arity(arity)
        if not self.nested:
            self.staged.append(batch)
            self.staged_runs.append(make_run(list(batch.columns), iterations, batch.weights,
                                             self.key_column))
            return
        self.tail.append(Run(list(batch.columns), iterations, batch.weights, self.key_column))

    @property
    def cur(self) -> list:
        """The spine of this epoch's appends. A child circuit's appends wait
        in ``tail`` unsorted until something reads them (often nothing does
        before the commit: a join reads this epoch's part of a trace only for a
        delta of its other side), then become one run: one sort for all of
        them instead of a sort and geometric merges per iteration."""
        tail = self.tail
        if tail:
            self.tail = []
            push_run(self._cur, merge_runs(tail, self.key_column), self.key_column)
        return self._cur

    def index_rows(self, batch: Mapping) -> dict:
        """A batch of rows as an indexed Z-set under this trace's key."""
        return self.functions["index_rows"](batch)

    def commit(self) -> None:
        """The epoch is over: its runs join the past (compaction)."""
        if self.nested:
            runs, self._cur = self.cur, []
        else:
            runs, self.staged, self.staged_runs = self.staged_runs, [], []
        for run in runs:
            push_run(self.past, run, self.key_column, PAST_FLOOR)
        self.epoch += 1

    def rollback(self) -> None:
        """Forget everything appended in the current epoch."""
        self._cur, self.tail = [], []
        self.staged = []
        self.staged_runs = []

    # -- reading ------------------------------------------------------------

    def past_cursor(self) -> ColumnarCursor:
        return ColumnarCursor(self.past, self.nested, self.epoch - 1)

    def epoch_cursor(self) -> ColumnarCursor:
        return ColumnarCursor(self.cur, self.nested, self.epoch)

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

