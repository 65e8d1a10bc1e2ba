"""Packed Distinct state: small batches and reads without leaving the runs.

A Distinct whose state went into packed runs (:mod:`engine.operators.columns`,
:mod:`engine.operators.rootcols`: each row one ``int64``, the runs sorted by
it) keeps it there while it is large. Two things read it besides the
vectorised step, and neither makes the whole state into rows again:

**Small batches** (under :data:`engine.colbatch.SMALL_ROWS` rows, with the rows due at the
iteration): numpy's per-call costs (tens of µs for each probe of each run,
whatever the batch) made a one-row update of a packed Distinct Trace several
times dearer than on dicts. :class:`OverlaidTrace` is the packed trace with
two dict **overlays** of packed row -> history (the encoded histories of
:mod:`engine.trace`): ``recent``, this epoch's appends of small batches (read
with the epoch's runs, ``w3``), and ``older``, those of earlier epochs (read
with the past runs; at commit ``recent`` is added to it). ``older`` becomes a
run of the past when it reaches :data:`OVERLAY_ROWS` entries, and both
overlays do before a vectorised step (which reads runs only). A small batch
(:func:`small_step`) packs each row in Python and finds the rows' histories
with one ``searchsorted`` of them all per run (:func:`probe`; a single row
by a binary search of the run's keys, no array made): the formula of
Distinct Trace row by row, as the dict loop computes it.

**Reads** (:class:`PackedCollection`): a session's ``size``, ``query``,
``frame`` and ``to_arrow`` read a Distinct's collection
(:meth:`engine.circuit.Circuit.contents`); on packed state they count the
rows of positive weight on the runs' arrays (one sort of the keys, a
``reduceat``: ~14 ms on Andersen's 188,000 rows in four runs; the count is
kept by the state's owner until its past changes), give the collection as
sorted ``int64`` columns (the packing keeps the rows' order), and look
single rows up by ``searchsorted``.

>>> import numpy as np
>>> from engine.operators.columns import Packing, key_run
>>> packing = Packing(2)
>>> keys = packing.pack([np.array([1, 1, 2]), np.array([5, 6, 7])])
>>> trace = OverlaidTrace()
>>> trace.past.append(key_run(keys, np.array([0, 0, 0]), np.array([1, 1, -1])))
>>> view = PackedCollection(packing, trace)
>>> view.count(), [c.tolist() for c in view.columns()], view.weight((1, 6))
(2, [[1, 1], [5, 6]], 1)
>>> small_step(trace, packing, {(2, 7): 1, (3, 3): 1}, 0, (), print)  # (2, 7): -1 + 1
{(3, 3): 1}
>>> [history_items(h) for h in trace.recent.values()]  # this epoch's appends, in dicts
[[(0, 1)], [(0, 1)]]
"""

from __future__ import annotations

from functools import partial

from engine import colbatch, lazy
from engine.codegen import build_function
from engine.colbatch import COUNTS, INT64
from engine.columnar import PAST_FLOOR, narrow, push_run
from engine.operators.columns import PackedTrace, key_run
from engine.trace import MASK, SHIFT, history_add, history_items, history_total

np = lazy.module("numpy", globals())
COUNTS.setdefault("small_distinct", 0)  # small batches taken row by row on packed state

#: The past runs' entries of the rows a small batch probed are kept (``known``,
#: up to this many rows): a row is probed again at each iteration it is due
#: at in an epoch, and often in the next epochs. They are kept while the past
#: changes only by the ``older`` overlay (added to them at its flush), and
#: forgotten at the commit of an epoch that wrote runs
#: (:meth:`OverlaidTrace.commit`).
KNOWN_ROWS = 1 << 16
#: The ``older`` overlay becomes a run of the past at this many rows (a run
#: of that many is what the past's small runs merge up to anyway).
OVERLAY_ROWS = PAST_FLOOR
#: :func:`probe` seeks each key in each run by itself (:func:`probe_few`)
#: only for this few keys times runs: the vectorised probe of packed rows is
#: lean (an array of the keys, two ``searchsorted`` and two ``tolist`` a
#: run), and random packed rows miss the cache in a binary search either
#: way. Runs of 417,000, 78,000, 17,000 and 1,900 random packed rows, half
#: the keys present, µs per probe scalar/vectorised: 1 run, 2 keys 2.1/2.0,
#: 4 keys 4.6/2.5, 8 keys 9.9-20/3.6-4.0; 2 runs, 2 keys 3.8/3.3, 4 keys
#: 8.0/4.0; 4 runs, 2 keys 6.8/6.5, 4 keys 21/10 (it was
#: :data:`~engine.colbatch.GATHER_FEW`, 16, the join's crossover).
PROBE_FEW = 2
#: A packed state none of whose past runs has a box directory
#: (engine.operators.densesums.BoxDirectory: its vectorised step's probes of
#: the past are then binary searches) takes batches under this many times
#: :data:`~engine.colbatch.SMALL_ROWS` row by row. Single-fact updates, CPU
#: ms, mean and median, SMALL_ROWS 64 / 128 for every state, five runs
#: alternated (loaded machine): negagg-1000-1500 (no box) medians 4.9, 6.4,
#: 6.1, 6.2, 5.0 / 4.6, 4.0, 4.1, 5.1, 4.3, means equal (10.9-12.3 /
#: 11.1-12.1); andersen-200x50 (no box) medians 1.22-1.27 / 1.08-1.21, means
#: equal; tc-random-1000-2000 (its 1.2 million entries boxed) medians 7.3,
#: 8.5, 7.8, 7.3, 7.4 / 7.9, 8.9, 7.9, 8.1, 8.0 and means 9.7-11.4 /
#: 10.2-11.1: it keeps SMALL_ROWS.
UNBOXED_FACTOR = 2
#: Rows due from a vectorised step (an array of packed rows) are unpacked
#: into tuples one by one (:func:`unpacker`, ~1 µs a row) up to this many,
#: in bulk (``Packing.unpack``, a few numpy calls) past it.
UNPACK_FEW = 8


def small_rows(trace: OverlaidTrace) -> int:
    """The rows (with those due) under which a batch of the packed ``trace``
    is taken row by row (:func:`small_step`): :data:`~engine.colbatch.SMALL_ROWS`,
    :data:`UNBOXED_FACTOR` times that when no past run has a box directory.

    >>> from engine.operators.columns import Packing
    >>> from engine.operators.densesums import BoxDirectory
    >>> packing = Packing(2)
    >>> keys = packing.pack([np.array([0, 1]), np.array([1, 0])])
    >>> trace = OverlaidTrace()
    >>> trace.past.append(key_run(keys, np.zeros(2, dtype=INT64), np.ones(2, dtype=INT64)))
    >>> small_rows(trace) == UNBOXED_FACTOR * colbatch.SMALL_ROWS
    True
    >>> trace.past[0].directory = BoxDirectory(packing, trace.past[0], [(0, 1), (0, 1)])
    >>> small_rows(trace) == colbatch.SMALL_ROWS
    True
    """
    for run in trace.past:
        if run.directory:  # (a BoxDirectory; False or None: none)
            return colbatch.SMALL_ROWS
    cells = trace.past_cells  # (its large runs read through their cells: as boxed)
    if cells is not None and cells.rest(trace.past) is not None:
        return colbatch.SMALL_ROWS
    return UNBOXED_FACTOR * colbatch.SMALL_ROWS


class OverlaidTrace(PackedTrace):
    """A :class:`~engine.operators.columns.PackedTrace` with the dict
    overlays of small batches (module docstring)."""

    __slots__ = ("counted", "known", "older", "recent")

    def __init__(self):
        super().__init__()
        self.recent: dict = {}  # this epoch: packed row -> history
        self.older: dict = {}   # earlier epochs: packed row -> history
        self.known: dict = {}   # packed row -> its entries in the past runs, as probed
        self.counted: int | None = None  # rows of positive weight in past and older

    def flush(self) -> None:
        """Both overlays into runs (``recent`` into the epoch's, ``older``
        into the past's): what the vectorised step and a move back to
        dicts read."""
        self.counted = None
        if self.recent:
            run = overlay_run(self.recent)
            if self.sums is None:
                push_run(self.cur, run, 0)
            elif run is not None:  # (small_step added its weights to the table)
                self.cur.append(run)
            self.recent = {}
        if self.older:
            known = self.known
            for key, history in self.older.items():
                entries = known.get(key)
                if entries is not None:
                    known[key] = entries + tuple(history_items(history))
            run = overlay_run(self.older)  # (added to the past's cells, if it can be)
            self.into_past([] if run is None else [run],
                           partial(push_run, self.past, key_column=0, floor=PAST_FLOOR))
            self.older = {}
            self.past_box = None

    def commit(self) -> None:
        """The epoch into the past: ``recent`` into ``older``, the epoch's
        runs into the past runs. When the epoch wrote runs (a vectorised
        step), the kept entries of probed rows (``known``) are dropped, not
        brought up to date: adding what the runs hold for each kept row read
        every entry of the runs or searched every kept row, 0.4-4.5 ms a
        commit of negagg-1000-1500's updates (runs of 500-55,000 entries,
        7,000-14,000 kept rows), dearer than probing again the rows the next
        epochs meet. CPU ms a retraction/insertion, mean over 60 (150)
        single-fact updates, five runs alternated with the kept rows brought
        up to date (loaded machine): negagg-1000-1500 9.1-9.6/9.3-9.8 ->
        8.4-9.4/8.5-9.4, andersen-200x50 2.25-2.56/2.21-2.40 ->
        2.07-2.63/1.96-2.32; medians unchanged within the noise."""
        self.counted = None
        self.close_epoch()
        older = self.older
        for key, history in self.recent.items():
            found = older.get(key)
            if found is None:  # (the epoch's own history, taken over)
                older[key] = history
                continue
            for j, w in history_items(history):
                found = history_add(found, j, w)
            if found is None:
                older.pop(key, None)
            else:
                older[key] = found
        self.recent = {}
        if self.cur:  # the epoch's runs join the past: the kept entries are forgotten
            self.known = {}
        kept = {id(run) for run in self.past}
        super().commit(closed=True)
        for run in self.past:
            if id(run) not in kept:
                compact(run)
        if len(older) >= OVERLAY_ROWS:
            self.flush()

    def rollback(self) -> None:
        self.recent = {}
        super().rollback()


def compact(run) -> None:
    """A new run of the past in its least memory: its weights' running sums
    dropped (only the epoch's runs are read through them), its iterations
    and weights :func:`~engine.columnar.narrow` (a merge by interleaving
    leaves them ``int64``: 24 bytes an entry instead of 10)."""
    run.sums = None
    if len(run) >= colbatch.NARROW_ROWS:
        if run.iterations.dtype == INT64:
            run.iterations = narrow(run.iterations)
        if run.weights.dtype == INT64:
            run.weights = narrow(run.weights)


def overlay_run(overlay: dict):
    """A run of the entries of an overlay (packed row -> history)."""
    keys, iterations, weights = [], [], []
    for key, history in overlay.items():
        for j, w in history_items(history):
            keys.append(key)
            iterations.append(j)
            weights.append(w)
    return key_run(np.array(keys, dtype=INT64), np.array(iterations, dtype=INT64),
                   np.array(weights, dtype=INT64))


PACKERS: dict = {}  # arity -> the function packing one row


def pack_row(row, packing) -> int | None:
    """One row packed as :meth:`~engine.operators.columns.Packing.pack` packs
    a column of it; ``None`` when it does not pack.

    >>> from engine.operators.columns import Packing
    >>> p = Packing(2); pack_row((-1, 3), p) == int(p.pack([np.array([-1]), np.array([3])])[0])
    True
    >>> pack_row((1, "a"), p), pack_row((1 << 40, 0), p), pack_row((1,), p)
    (None, None, None)
    >>> p3 = Packing(3); columns = [np.array([5]), np.array([-7]), np.array([0])]
    >>> pack_row((5, -7, 0), p3) == int(p3.pack(columns)[0]), pack_row((1 << 62,), Packing(1))
    (True, 4611686018427387904)
    """
    return packer(packing)(row)


def packs_one(row: str) -> str:
    """Python expression: whether the row named ``row`` packs for one column
    (``Packing(1)``: a tuple of one int within int64). The one-column packer
    tests it, and a generated loop tests a row with it in line, not through a
    call to the packer (:meth:`~engine.operators.distinct.DistinctTraceNode.loop_lines`).

    >>> row = (5,); eval(packs_one("row")), eval(packs_one("(1 << 63,)")), eval(packs_one("('a',)"))
    (True, False, False)
    """
    return (f"len({row}) == 1 and type({row}[0]) is int "
            f"and {-(1 << 63)} <= {row}[0] < {1 << 63}")


def packer(packing):
    """The function packing one row for ``packing`` (:func:`pack_row`),
    written out for its arity: no loop over the columns."""
    arity = packing.arity
    found = PACKERS.get(arity)
    if found is not None:
        return found
    if arity == 1:
        lines = ["def pack(row):", f"    return row[0] if {packs_one('row')} else None"]
        bounds = {}
    else:
        bias, bits = packing.bias, packing.bits
        bounds = {"low": -bias, "high": bias}
        names = [f"v{c}" for c in range(arity)]
        shifted = " | ".join(f"((v{c} + {bias}) << {bits * (arity - 1 - c)})"
                             for c in range(arity))
        lines = ["def pack(row):",
                 f"    if len(row) != {arity}: return None",
                 f"    {', '.join(names)}, = row",
                 "    if " + " and ".join(f"type({v}) is int and low <= {v} < high"
                                         for v in names) + ":",
                 f"        return {shifted}",
                 "    return None"]
    found = PACKERS[arity] = build_function("pack", lines, bounds)
    return found


UNPACKERS: dict = {}  # arity -> the function unpacking one row


def unpacker(packing):
    """A function from a packed row (an int) back to its row (a tuple),
    written out for its arity as :func:`packer` is (a tuple of a generator
    took ~1.2 µs a row, a small step's rows due are unpacked so).

    >>> from engine.operators.columns import Packing
    >>> p = Packing(3); unpacker(p)(pack_row((-5, 0, 7), p)), unpacker(Packing(1))(-9)
    ((-5, 0, 7), (-9,))
    """
    arity = packing.arity
    found = UNPACKERS.get(arity)
    if found is not None:
        return found
    if arity == 1:
        found = UNPACKERS[arity] = lambda key: (key,)
        return found
    mask, bias, bits = (1 << packing.bits) - 1, packing.bias, packing.bits
    parts = ", ".join(f"((key >> {bits * (arity - 1 - c)}) & {mask}) - {bias}"
                      for c in range(arity))
    found = UNPACKERS[arity] = build_function(
        "unpack", ["def unpack(key):", f"    return ({parts},)"], {})
    return found


def probe(spine: list, keys: list) -> dict:
    """packed row -> ``[(iteration, weight), ...]`` of the entries of ``spine``
    under each of ``keys`` (packed rows; those with none left out): one
    ``searchsorted`` of all of them per run (a few µs whatever the run's size;
    numpy's per-call costs are paid per run, not per row), the matches read
    with ``item``/``tolist`` (no array made per row)."""
    found: dict = {}
    if not spine:
        return found
    if len(keys) * len(spine) <= PROBE_FEW:  # each key by a scalar search
        return probe_few(spine, keys)
    sought = np.array(keys, dtype=INT64)
    for run in spine:
        lows = run.keys.searchsorted(sought).tolist()
        highs = run.keys.searchsorted(sought, "right").tolist()
        iterations = weights = None
        for key, lo, hi in zip(keys, lows, highs):
            if hi == lo:
                continue
            if iterations is None:
                iterations, weights = run.iterations, run.weights
            entries = found.get(key)
            if entries is None:
                entries = found[key] = []
            if hi == lo + 1:
                entries.append((iterations.item(lo), weights.item(lo)))
            else:
                entries.extend(zip(iterations[lo:hi].tolist(), weights[lo:hi].tolist()))
    return found


def probe_few(spine: list, keys: list) -> dict:
    """:func:`probe` of a few (distinct) keys: each sought in each run (within the
    run's key bounds) by a scalar ``searchsorted``, as
    :func:`engine.columnar.gather_few` does.

    >>> from engine.operators.columns import key_run
    >>> run = key_run(np.array([3, 5, 5, 9]), np.array([0, 1, 2, 0]), np.array([1, 1, -1, 1]))
    >>> probe_few([run], [5, 4, 9])
    {5: [(1, 1), (2, -1)], 9: [(0, 1)]}
    """
    found: dict = {}
    for key in keys:
        for run in spine:
            span = run.span(key)
            if span is None:
                continue
            lo, hi = span
            entries = found.get(key)
            if entries is None:
                entries = found[key] = []
            if hi == lo + 1:
                entries.append((run.iterations.item(lo), run.weights.item(lo)))
            else:
                entries.extend(zip(run.iterations[lo:hi].tolist(),
                                   run.weights[lo:hi].tolist()))
    return found


def small_step(trace: OverlaidTrace, packing, batch, i: int, due_parts, heap_push) -> dict | None:
    """Distinct Trace at ``(e, i)`` for a small ``batch`` (row -> weight) and
    the packed rows ``due_parts`` (lists or arrays) due at ``i``, row by row
    on the packed state: row -> output weight (zeros kept out), the batch
    appended to ``trace.recent`` and each row with weight in this epoch
    scheduled at the next iteration the past holds weight for it
    (``heap_push(j)`` for an iteration not scheduled yet). ``None``, with
    nothing changed, when a row of the batch does not pack."""
    rows: dict = {}
    pack = packer(packing)
    for row in batch:
        key = pack(row)
        if key is None:
            return None
        rows[key] = row
    unpack = None
    for part in due_parts:
        if type(part) is not list and len(part) > UNPACK_FEW:  # (a vectorised step's)
            for key, row in zip(part.tolist(), zip(*(c.tolist() for c in packing.unpack(part)))):
                if key not in rows:
                    rows[key] = row
            continue
        for key in (part if type(part) is list else part.tolist()):
            if key not in rows:
                if unpack is None:
                    unpack = unpacker(packing)
                rows[key] = unpack(key)
    recent, older, past = trace.recent, trace.older, trace.known
    keys = list(rows)
    sums = trace.sums  # (then w3 is the table's: cur is not read)
    if sums is not None:
        cell = sums.cell
        cells = [cell(key) for key in keys]
        if None in cells:  # a row outside the box: the epoch goes on without it
            trace.drop_sums()
            sums = None
        else:
            sums.add_total(sum(map(abs, batch.values())))
            table, cells = sums.table, dict(zip(keys, cells))
    sought = [key for key in keys if key not in past]
    if sought:
        if len(past) + len(sought) > KNOWN_ROWS:
            past = trace.known = {}
            sought = keys
        found = probe(trace.past, sought)
        for key in sought:
            past[key] = tuple(found.get(key, ()))
    cur = probe(trace.cur, keys) if sums is None and trace.cur else None
    scheduled = trace.scheduled
    bget = batch.get
    ohget = older.get
    out = {}
    packs = i <= MASK  # this epoch's new histories at i are ints (engine.trace.encode)
    for key, row in rows.items():
        w = bget(row, 0)
        history = recent.get(key)
        if sums is not None:
            at = cells[key]
            w3 = table.item(at)
            if w:
                table[at] = w3 + w
        else:
            if history is None:
                w3 = 0
            elif type(history) is int:
                w3 = history >> SHIFT
            else:
                w3 = sum(history.values())
            if cur:
                found = cur.get(key)
                if found is not None:
                    w3 += sum(pw for _, pw in found)
        if w:  # the append to this epoch's overlay (history_add, its common cases inline)
            if history is None and packs:
                recent[key] = (w << SHIFT) | i
            elif type(history) is int and history & MASK == i:
                history += w << SHIFT
                if history >> SHIFT:
                    recent[key] = history
                else:
                    del recent[key]
            else:
                history = history_add(history, i, w)
                if history is None:
                    del recent[key]
                else:
                    recent[key] = history
        entries = past[key]
        found = ohget(key)
        if found is not None:
            entries = ((found & MASK, found >> SHIFT), *entries) if type(found) is int \
                else (*sorted(found.items()), *entries)
        elif not entries:
            delta = (w3 + w > 0) - (w3 > 0)
            if delta:
                out[row] = delta
            continue
        w1 = w2 = 0
        nxt = None
        for j, pw in entries:
            if j < i:
                w1 += pw
            elif j == i:
                w2 += pw
            elif nxt is None or j < nxt:
                nxt = j
        w13 = w1 + w3
        w12 = w1 + w2
        delta = ((w12 + w3 + w > 0) - (w13 > 0)) - ((w12 > 0) - (w1 > 0))
        if delta:
            out[row] = delta
        if nxt is not None and w3 + w:
            waiting = scheduled.get(nxt)
            if waiting is None:
                scheduled[nxt] = [[key]]
                heap_push(nxt)
            elif type(waiting[-1]) is list:
                waiting[-1].append(key)
            else:
                waiting.append([key])
    return out


class PackedCollection:
    """The rows of positive weight (over all times) of a packed state's past
    runs and ``older`` overlay (packed row -> history; a root Distinct's
    :class:`~engine.operators.rootcols.PackedRows` has none): a Distinct's
    collection, read as :class:`~engine.contents.Contents` reads a
    :class:`~engine.cursor.RowCursor` (``weight``, ``positive``), plus
    ``count`` and ``columns`` on the arrays. The count is kept in the
    state's ``counted`` (its owner clears it whenever its past or overlay
    changes: at commit, at a flush of the overlays)."""

    __slots__ = ("overlay", "packing", "spine", "state")

    def __init__(self, packing, state):
        self.packing = packing
        self.state = state
        self.spine = state.past  # read as they are now: a reader is asked at once
        self.overlay = getattr(state, "older", None) or None

    def weight(self, row) -> int:
        key = pack_row(row, self.packing)
        if key is None:
            return 0
        total = sum(w for _, w in probe(self.spine, [key]).get(key, ()))
        if self.overlay:
            found = self.overlay.get(key)
            if found is not None:
                total += history_total(found)
        return total

    def weights_of(self, rows) -> list[int]:
        """``[weight(row) for row in rows]``, the runs probed once for all
        (each row once: :func:`probe` lists a key's entries once per time
        it is sought)."""
        rows = list(rows)
        pack = packer(self.packing)
        keys = [pack(row) for row in rows]
        found = probe(self.spine, list(dict.fromkeys(k for k in keys if k is not None)))
        overlay = self.overlay or {}
        return [0 if k is None else sum(w for _, w in found.get(k, ()))
                + (history_total(overlay[k]) if k in overlay else 0) for k in keys]

    def _positive_keys(self):
        """The packed rows of positive total weight, sorted."""
        parts = [(run.keys, run.weights) for run in self.spine]
        if self.overlay:
            keys = np.fromiter(self.overlay, dtype=INT64, count=len(self.overlay))
            totals = np.fromiter(map(history_total, self.overlay.values()), dtype=INT64,
                                 count=len(self.overlay))
            parts.append((keys, totals))
        if not parts:
            return np.zeros(0, dtype=INT64)
        if len(parts) == 1 and not self.overlay:  # one run: sorted already
            keys, weights = parts[0]
        else:
            keys = np.concatenate([k for k, _ in parts])
            weights = np.concatenate([w for _, w in parts], dtype=INT64)
            order = np.argsort(keys, kind="stable")
            keys, weights = keys[order], weights[order]
        if len(keys) > 1:
            starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
            if len(starts) < len(keys):
                weights = np.add.reduceat(weights.astype(INT64, copy=False), starts)
                keys = keys[starts]
        return keys[weights > 0]

    def count(self) -> int:
        """How many rows have positive weight (counted once per state)."""
        counted = self.state.counted
        if counted is None:
            counted = self.state.counted = len(self._positive_keys())
        return counted

    def columns(self) -> list:
        """The rows of positive weight as ``int64`` columns, in row order."""
        return self.packing.unpack(self._positive_keys())

    def positive(self):
        columns = self.columns()
        return zip(*(c.tolist() for c in columns))
