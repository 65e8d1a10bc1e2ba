"""Distinct: Distinct (plain), Distinct Incremental (root), Distinct Trace (child).

``distinct(x)`` has weight 1 for each row of positive weight. It is not linear,
so its incremental forms read the history of the input.

**Distinct Incremental** (root circuit, times are epochs)::

    out(e) = [I(e) > 0] - [I(e-1) > 0]        for each row of the batch at e

**Distinct Trace** (child circuit, time ``(e, i)``). For a row with new weight
``w``, let ``w1`` be its weight at times ``(e' < e, i' < i)``, ``w2`` at
``(e' < e, i)``, ``w3`` at ``(e, i' < i)``. Then::

    out = ([w1+w2+w3+w > 0] - [w1+w3 > 0]) - ([w1+w2 > 0] - [w1 > 0])

(the second bracket is what older epochs already emitted at iteration ``i``).
A row must be evaluated at ``(e, i)`` when it has input there, **or** when it
had input earlier in this epoch and older epochs hold weight for it at exactly
iteration ``i``. So after evaluating a row, it is scheduled at the next
iteration ``j > i`` at which the past holds weight for it, if its weight in
this epoch is not zero (otherwise every later output is zero).
"""

from __future__ import annotations

import heapq

from engine import colbatch, lazy
from engine.codegen import build_functions, split_naming
from engine.colbatch import INT64, ColBatch
from engine.columnar import PAST_FLOOR, push_run
from engine.node import Node
from engine.operators import densesums, rootcols, sealed
from engine.operators.columns import Packing, distinct_columns, distinct_step, key_run
from engine.operators.packedsmall import (
    OverlaidTrace,
    PackedCollection,
    packer,
    packs_one,
    small_rows,
    small_step,
)
from engine.operators.sealed import SealedTrace
from engine.trace import (
    MAX_PACKED,
    WIDE_ROW_SOURCE,
    ZSetTrace,
    history_add,
    history_total,
)
from engine.tracearrays import entries_of
from engine.zset import EMPTY, ZSet

np = lazy.module("numpy", globals())


class DistinctNode(Node):
    """Distinct Incremental (root scope): ``out(e) = [I(e) > 0] - [I(e-1) > 0]``;
    large batches on packed rows (:mod:`engine.operators.rootcols`)."""

    quiet = True

    def __init__(self, source: Node, label: str = ""):
        super().__init__([source], label)
        self.trace = ZSetTrace(nested=False)
        self.packed: rootcols.PackedRows | None = None  # the trace in packed runs
        self.no_columns = False  # a batch did not pack: rows for good

    def _to_rows(self, for_good: bool) -> None:
        self.packed.to_trace(self.trace)
        self.packed = None
        self.no_columns = for_good

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if not batch:
            self.out = EMPTY
            return
        if (self.packed is None and not self.no_columns and type(batch) is ColBatch
                and len(batch) >= colbatch.DISTINCT_ROWS):  # rows in a dict stay rows
            self.packed = rootcols.to_packed(self, batch)
            self.no_columns = self.packed is None
        if self.packed is not None:
            out = rootcols.root_distinct(self.packed, batch)
            if out is not None:
                self.out = out or EMPTY
                return
            self._to_rows(for_good=True)
        out = {}
        # I(e-1) of each row of the batch, looked up in one pass
        for (row, w), old in zip(batch.items(), self.trace.past_cursor().weights_of(batch)):
            delta = (old + w > 0) - (old > 0)
            if delta:
                out[row] = delta
        self.out = out or EMPTY

    def clock_stop(self, scope: int, time: int) -> None:
        if scope != 0:
            return
        if self.packed is None:
            self.trace.append(self.inputs[0].out)
            self.trace.commit()
            return
        self.packed.commit()  # the batch was staged by root_distinct
        self.trace.epoch += 1
        if len(self.packed) < colbatch.SMALL_STATE:
            self._to_rows(for_good=False)  # small updates are cheaper on dicts

    def rollback(self) -> None:
        self.trace.rollback()
        if self.packed is not None:
            self.packed.staged = []

    def collection_cursor(self):
        # I(e-1): its rows of weight > 0 are out; packed state is read where it
        # is (engine.operators.packedsmall.PackedCollection) and stays packed
        if self.packed is not None:
            return PackedCollection(self.packed.packing, self.packed)
        return self.trace.past_cursor()

    def describe_args(self) -> str:
        return "distinct"


COMPILED: dict = {}  # (past source, epoch source) -> the generated loops


def compile_distinct_trace(past, current) -> dict:
    """The loops of Distinct Trace, reading the past through the fragments of
    ``past`` and the current epoch (appending to it in the same pass) through
    those of ``current`` (:class:`~engine.cursor.RowCursorSource`):

    * ``step(rows, batch, past, cur, i, scheduled, heap)``: the formula of the
      module docstring for each of ``rows`` (the batch and the rows due at
      ``i``), scheduling each row with weight in this epoch at its next time;
    * ``no_past(batch, cur, i)``: the same when no earlier epoch left anything
      (``w1 = w2 = 0``; e.g. the bulk load), ``[w3 + w > 0] - [w3 > 0]``; also
      returns whether every row was new to the epoch.
    """
    found = COMPILED.get((past, current))
    if found is not None:
        return found
    ind = "            "
    lines = ["def step(rows, batch, past, cur, i, scheduled, heap):"]
    lines += past.bind("past", "_p") + current.bind("cur", "_c", "i")
    lines += ["    bget = batch.get", "    out = {}",
              "    for row in rows:",
              "        w = bget(row, 0)",
              "        if w:  # the trace append, in the same pass as reading w3"]
    lines += current.accumulate("_c", "row", "w", "i", "w3", ind)
    lines += [f"{ind}if w3 is None: w3 = 0",
              "        else:",
              f"{ind}w3 = {current.weight('_c', 'row')}"]
    lines += past.split("_p", "row", "i", "found", "w1", "w2", "nxt", "        ")
    lines += formula_lines("        ", ["if delta: out[row] = delta", "continue"],
                           ["if delta: out[row] = delta"])
    lines += ["    return out",
              "def no_past(batch, cur, i):"]
    lines += current.bind("cur", "_c", "i")
    lines += ["    out = {}", "    fresh = True",
              "    for row, w in batch.items():"]
    lines += current.accumulate("_c", "row", "w", "i", "w3", "        ")
    lines += [
        "        if w3 is None:  # the row had no history in this epoch: now it has",
        "            if w > 0: out[row] = 1",
        "            continue",
        "        fresh = False",
        "        delta = (w3 + w > 0) - (w3 > 0)",
        "        if delta: out[row] = delta",
        "    return out, fresh",
    ]
    lines += one_row_lines(past, current)
    env = {"heappush": heapq.heappush, **past.names(), **current.names()}
    found = COMPILED[(past, current)] = build_functions(
        ["step", "no_past", "one_row", "fresh_row"], lines, env)
    return found


def formula_lines(ind: str, new: list[str], emit: list[str]) -> list[str]:
    """The formula's lines for ``row`` once ``w``, ``w3`` and the past's
    split (``found``, ``w1``, ``w2``, ``nxt``) are bound: ``delta``, then
    ``new`` (statements) for a row the past lacks, else ``emit`` and the row
    scheduled at its next time."""
    return [f"{ind}if not found:",
            f"{ind}    delta = (w3 + w > 0) - (w3 > 0)",
            *(f"{ind}    {text}" for text in new),
            f"{ind}w13 = w1 + w3",
            f"{ind}w12 = w1 + w2",
            f"{ind}delta = ((w12 + w3 + w > 0) - (w13 > 0)) - ((w12 > 0) - (w1 > 0))",
            *(f"{ind}{text}" for text in emit),
            f"{ind}if nxt is not None and w3 + w:",
            f"{ind}    waiting = scheduled.get(nxt)",
            f"{ind}    if waiting is None:",
            f"{ind}        scheduled[nxt] = {{row}}",
            f"{ind}        heappush(heap, nxt)",
            f"{ind}    else:",
            f"{ind}        waiting.add(row)"]


def one_row_lines(past, current) -> list[str]:
    """``step`` and ``no_past`` for one row of non-zero weight, as factories
    of closures (a generated loop calls them an iteration, with
    ``ready``): ``one_row(past, cur, scheduled, heap, node)`` and
    ``fresh_row(cur, node)`` bind what ``bind`` reads off the cursors once
    (the lines naming ``i``, the appended history's unit, each call) and
    give ``one(row, w, i)``: the row's delta (``0``: none), ``node.fresh``
    set as the functions' callers set it."""
    def head(bound: list[str]) -> list[str]:
        once, each = split_naming(bound, "i")
        return [*once, "    def one(row, w, i):", *("    " + text for text in each)]

    lines = ["def one_row(past, cur, scheduled, heap, node):",
             *head(past.bind("past", "_p") + current.bind("cur", "_c", "i")),
             "        node.fresh = False"]
    lines += current.accumulate("_c", "row", "w", "i", "w3", "        ")
    lines += ["        if w3 is None: w3 = 0"]
    lines += past.split("_p", "row", "i", "found", "w1", "w2", "nxt", "        ")
    lines += formula_lines("        ", ["return delta"], [])
    lines += ["        return delta",
              "    return one",
              "def fresh_row(cur, node):",
              *head(current.bind("cur", "_c", "i"))]
    lines += current.accumulate("_c", "row", "w", "i", "w3", "        ")
    lines += ["        node.fresh = w3 is None  # (no history in this epoch before)",
              "        if w3 is None: return 1 if w > 0 else 0",
              "        return (w3 + w > 0) - (w3 > 0)",
              "    return one"]
    return lines


class DistinctTraceNode(Node):
    """Distinct Trace (child scope); formula and scheduling in the module docstring."""

    may_hold_work = True
    quiet = True
    #: Whether to seal (engine.operators.sealed) is asked at the iterations i
    #: with ``i & seal_mask == 0`` (a check per iteration cost the counter 2%).
    seal_mask = 63

    def __init__(self, source: Node, label: str = ""):
        super().__init__([source], label)
        self.trace = ZSetTrace(nested=True)
        self.functions = compile_distinct_trace(self.trace.past_cursor().source,
                                                self.trace.epoch_cursor().source)
        self.scheduled: dict = {}
        self.heap: list = []
        # True when no row of ``out`` was in this epoch's trace before: none was
        # emitted earlier in the epoch, so an Export adds ``out`` without lookups
        self.fresh = False
        # The trace in packed runs (engine.operators.columns), from the first batch
        # of colbatch.THRESHOLD rows on; no_columns: its rows cannot be packed.
        self.packed: OverlaidTrace | None = None
        self.packing: Packing | None = None
        self.no_columns = False
        self.steady = [0, 0, 0, -1]  # colbatch.steady: the loop's batch sizes
        # The trace is a SealedTrace (engine.operators.sealed): a long thin loop's
        # rows sealed into packed runs, SEAL_ROWS at a time.
        self.sealed = False
        self.sealed_at = 0  # the iteration of this epoch's last seal
        # Exports that read the sum of this epoch's outputs off the trace
        # (epoch_sum) instead of adding the outputs up: told before the trace
        # moves into packed runs, where it is not read that way
        self.summing: list = []
        # What few_rows reads this epoch's steps with: (the trace, the step
        # function if an earlier epoch left entries else None, the past and
        # the epoch cursor); dropped when the trace or a part of it changes
        self.ready: tuple | None = None

    def pending(self) -> int | None:
        return self.heap[0] if self.heap else None

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.scheduled, self.heap = {}, []
            self.sealed_at = 0
            self.ready = None

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.trace.commit()
            self.ready = None
            if self.sealed and self.trace.sealed_size() < colbatch.SMALL_STATE:
                self._unseal()  # small updates are cheaper on dicts
            if self.packed is not None:
                self.packed.commit()
                packed = self.packed
                if (sum(len(run) for run in packed.past) + len(packed.older)
                        < colbatch.SMALL_STATE):
                    self._to_rows(for_good=False)  # small updates are cheaper on dicts
            self.fresh = False

    def rollback(self) -> None:
        self.scheduled, self.heap = {}, []
        self.fresh = False
        self.summing = []
        self.trace.rollback()
        self.ready = None
        if self.packed is not None:
            self.packed.rollback()

    # -- the sum of the epoch's outputs, read off the trace (engine.node.Export) --

    def sums_epoch(self) -> bool:
        """Whether :meth:`epoch_sum` is the sum of this epoch's outputs so far,
        from now on until the trace moves into packed runs (``summing``'s
        Exports are told): no earlier epoch left anything (``w1 = w2 = 0``,
        e.g. the bulk load), so each output is ``[w3 + w > 0] - [w3 > 0]``
        and they add up, over the iterations, to ``[W > 0]`` for each row of
        weight ``W`` in this epoch."""
        trace = self.trace
        return (self.packed is None and not trace.past
                and not (self.sealed and trace.sealed_past))

    def epoch_sum(self):
        """This epoch's rows of positive weight, each with weight 1 (see
        :meth:`sums_epoch`): a Z-set, or a columnar batch off sealed runs."""
        trace = self.trace
        if not self.sealed:
            return ZSet.fromkeys(trace.epoch_cursor().positive(), 1)
        sealed = trace.sealed_cur
        if not sealed:
            return ZSet({row: 1 for row, history in trace.cur.items()
                         if history_total(history) > 0})
        extra = trace.cur
        packed = list(map(sealed.pack, extra))
        if None in packed:  # (rows that do not pack never meet the runs: not expected)
            return ZSet({row: 1 for row in trace.epoch_cursor().positive()})
        keys = sealed.positive(np.array(packed, dtype=INT64),
                               np.array(list(map(history_total, extra.values())), dtype=INT64))
        if not len(keys):
            return EMPTY
        return ColBatch(self.packing.unpack(keys), ("i",) * self.packing.arity,
                        np.ones(len(keys), dtype=INT64))

    # -- a long thin loop's rows sealed into runs (engine.operators.sealed) ----

    def _seal(self) -> None:
        """Seal this epoch's dict into runs (the trace becomes a SealedTrace)."""
        self.ready = None
        trace = self.trace
        if not self.sealed:
            arity = len(next(iter(trace.cur)))
            if self.packing is None and arity:
                self.packing = Packing(arity)
            if not arity or self.packing.arity != arity:
                self.no_columns = True
                return
            trace = SealedTrace.adopt(trace, self.packing)
        if not trace.seal_cur():  # a row that does not pack: rows for good
            self.no_columns = True
            return
        if not self.sealed:
            self.trace, self.sealed = trace, True
            self.functions = compile_distinct_trace(trace.past_cursor().source,
                                                    trace.epoch_cursor().source)

    def _unseal(self) -> None:
        """Back to the dict trace (every entry in its dicts)."""
        self.ready = None
        self.trace = self.trace.to_dicts()
        self.sealed = False
        self.functions = compile_distinct_trace(self.trace.past_cursor().source,
                                                self.trace.epoch_cursor().source)

    # -- the columnar path (engine.operators.columns) -------------------------

    def _packed_batch(self, batch):
        """``(packed rows, weights, bounds, columns)`` of a batch (``bounds``:
        each column's ``(low, high)``, if known: its values lie within), or
        ``None`` if it does not pack."""
        columns = ColBatch.from_rows(batch)
        if columns is None or not columns.int_only:
            return None
        if self.packing is None:
            self.packing = Packing(len(columns.columns))
        bounds = columns.bounds
        if columns.packed is not None and len(columns.columns) == self.packing.arity:
            return columns.packed, columns.weights, bounds, columns.columns  # (a join's)
        keys = self.packing.pack(columns.columns, bounds)
        if keys is None and bounds is not None:  # (bounds wider than the values: a
            bounds = None                        # join's from its inputs') found again
            keys = self.packing.pack(columns.columns)
        return None if keys is None else (keys, columns.weights, bounds, columns.columns)

    def _pack_rows(self, rows: list):
        table = np.array(rows) if rows else np.zeros((0, self.packing.arity), dtype=INT64)
        if table.dtype != INT64 or table.shape[1:] != (self.packing.arity,):
            return None
        return self.packing.pack([np.ascontiguousarray(table[:, c])
                                  for c in range(self.packing.arity)])

    def _to_columns(self, batch) -> None:
        """Move the trace (and the schedule) into packed runs, if they pack
        (a sealed trace's runs as they are: the same packing)."""
        for export in self.summing:
            export.add_up()  # (the sum so far read off the dicts first)
        self.summing = []
        self.ready = None
        if self._packed_batch(batch) is None:
            self.no_columns = True
            return
        packed = OverlaidTrace()
        trace = self.trace
        for store, spine in ((trace.past, packed.past), (trace.cur, packed.cur)):
            if not store:
                continue
            found = entries_of([store], self.packing.arity, nested=True)  # in bulk
            keys = None if found is None else self.packing.pack(found[0])
            if keys is None:
                self.no_columns = True
                return
            run = key_run(keys, found[1], found[2])
            if run is not None:
                spine.append(run)
        for j, rows in self.scheduled.items():
            keys = self._pack_rows(list(rows))
            if keys is None:
                self.no_columns = True
                return
            packed.scheduled[j] = [keys]
        if self.sealed:
            for run in trace.sealed_past.spine:
                push_run(packed.past, run, 0, PAST_FLOOR)
            for run in trace.sealed_cur.spine:
                push_run(packed.cur, run, 0)
            self.trace = ZSetTrace(nested=True)
            self.trace.epoch = trace.epoch
            self.sealed = False
            self.functions = compile_distinct_trace(self.trace.past_cursor().source,
                                                    self.trace.epoch_cursor().source)
        else:
            trace.past, trace.cur = {}, {}
        self.packed = packed
        self.scheduled = {}

    def _to_rows(self, for_good: bool = True) -> None:
        """Back to the dict trace; ``for_good``: never columnar again (a batch
        that does not pack)."""
        self.ready = None
        packed, unpack = self.packed, self.packing.unpack
        packed.sums = None  # (its runs are read as they are)
        packed.flush()
        trace = self.trace
        for spine, store in ((packed.past, trace.past), (packed.cur, trace.cur)):
            keys, iterations, weights = packed.entries(spine)
            rows = zip(*(c.tolist() for c in unpack(keys)))
            for row, j, w in zip(rows, iterations.tolist(), weights.tolist()):
                history = history_add(store.get(row), j, w)
                if history is None:
                    del store[row]
                else:
                    store[row] = history
        self.scheduled = {j: set(zip(*(c.tolist() for c in unpack(np.concatenate(parts)))))
                          for j, parts in packed.scheduled.items()}
        self.packed = None
        self.no_columns = for_good

    def _evaluate_columns(self, i: int, batch) -> bool:
        """Distinct Trace on packed rows; ``False`` (nothing done) when the
        batch does not pack. A small batch (with the rows due) is read and
        appended row by row (:mod:`engine.operators.packedsmall`)."""
        packed = self.packed
        parts = packed.scheduled.get(i) if self.heap and self.heap[0] == i else None
        # with a table, or a long loop's step that would make one, the
        # vectorised step is cheap from TABLE_SMALL_ROWS rows on
        small = (colbatch.TABLE_SMALL_ROWS
                 if packed.sums is not None or densesums.table_due(packed, i)
                 else small_rows(packed))
        if len(batch) + (sum(map(len, parts)) if parts else 0) < small:
            heap = self.heap
            out = small_step(packed, self.packing, batch, i, parts or (),
                             lambda j: heapq.heappush(heap, j))
            if out is None:
                return False
            colbatch.COUNTS["small_distinct"] += 1
            if parts is not None:
                heapq.heappop(heap)
                del packed.scheduled[i]
            self.fresh = False
            self.out = out or EMPTY
            return True
        packed.flush()  # the vectorised step reads runs only
        if batch:
            found = self._packed_batch(batch)
            if found is None:
                return False
            keys, weights, bounds, columns = found
        else:
            keys = weights = np.zeros(0, dtype=INT64)
            bounds = columns = None
        due = None
        if self.heap and self.heap[0] == i:
            heapq.heappop(self.heap)
            parts = self.packed.scheduled.pop(i)
            due = np.concatenate(parts)  # arrays, and lists of the small batches'
        if not len(keys) and due is None:
            self.out = EMPTY
            return True
        heap = self.heap
        colbatch.COUNTS["distinct"] += 1
        packed.sums = densesums.prepared(packed.sums, packed, self.packing, bounds, keys, due, i)
        rest = densesums.sum_past(packed, self.packing)  # (the runs not summed: boxed)
        densesums.index_past(packed.past if rest is None else rest, self.packing)
        push = lambda j: heapq.heappush(heap, j)  # noqa: E731
        theirs = False
        if columns is None:
            rows, delta = distinct_step(packed, keys, weights, i, due, push, packed.sums)
            columns = self.packing.unpack(rows)
        else:  # (the batch's columns: its bounds hold the output's values)
            columns, delta, theirs = distinct_columns(
                packed, columns, keys, weights, i, due, push, packed.sums, self.packing.unpack,
                keys is getattr(batch, "packed", None))  # (in order: a consolidation's)
        self.fresh = False
        self.out = (ColBatch(columns, ("i",) * self.packing.arity, delta,
                             bounds if theirs else None) if len(delta) else EMPTY)
        return True

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        heap = self.heap
        if (self.packed is None and len(batch) < colbatch.LOOP_ROWS
                and not (heap and heap[0] == i)):
            self.few_rows(i, batch)
            return
        if (self.packed is None and not self.no_columns and batch
                and (len(batch) >= colbatch.DISTINCT_ROWS
                     or (colbatch.steady(self.steady, len(batch), i)
                         and len(batch) >= colbatch.LOOP_ROWS)
                     or (i >= colbatch.LONG_LOOP
                         and len(batch) >= colbatch.LOOP_ROWS
                         and len(self.trace.cur) >= colbatch.SMALL_STATE))):
            # (mid-size batches: only in a steady loop, colbatch.STEADY_SPAN, or an
            # epoch that already changed many rows, a chain's; the packed state
            # would stay for the small updates after)
            self._to_columns(batch)
        if self.packed is not None:
            if self._evaluate_columns(i, batch):
                return
            self._to_rows()
        rows = batch
        if self.heap and self.heap[0] == i:
            heapq.heappop(self.heap)
            due = self.scheduled.pop(i)
            if batch:
                due.update(batch)
            rows = due
        if not rows:
            self.out = EMPTY
            return
        self.evaluate_rows(i, rows, batch)

    def few_rows(self, i: int, batch) -> None:
        """``evaluate`` for a batch of fewer than
        :data:`~engine.colbatch.LOOP_ROWS` rows with no packed state and no
        rows due at ``i``: a loop of one row per iteration comes here, and
        reads the trace through ``ready`` (made once an epoch and part)."""
        trace = self.trace
        if not batch:
            self.out = EMPTY
        elif i > MAX_PACKED or (self.sealed and not trace.fits(batch)):
            self.evaluate_rows(i, batch, batch)
        else:
            ready = self.ready
            if ready is None or ready[0] is not trace:
                ready = self._ready()
            if ready[1] is not None:  # (evaluate_rows' step, its cursors as they were)
                self.fresh = False
                out = ready[1](batch, batch, ready[2], ready[3], i, self.scheduled, self.heap)
            else:  # no earlier epoch: the formula without w1, w2 (a first load's loop)
                out, self.fresh = ready[4](batch, ready[3], i)
            self.out = out or EMPTY
        if (not i & self.seal_mask and i >= colbatch.LONG_LOOP and not self.no_columns
                and colbatch.SEAL_ROWS <= len(self.trace.cur)
                <= colbatch.THIN_ROWS * (i - self.sealed_at + 1)):
            self._seal()  # a long thin loop: its rows into runs
            self.sealed_at = i

    def _ready(self) -> tuple:
        """``ready`` made anew: ``(trace, step or None, past cursor, epoch
        cursor, no_past, pack or None)``: ``step`` if an earlier epoch left
        entries, ``pack`` the sealed runs' (a row they cannot hold is
        ``None``: it goes to ``evaluate_rows``)."""
        trace, functions = self.trace, self.functions
        past = trace.past_cursor()
        self.ready = (trace, functions["step"] if past else None, past, trace.epoch_cursor(),
                      functions["no_past"], trace.sealed_cur.pack if self.sealed else None)
        return self.ready

    def one_for(self, ready: tuple):
        """The formula for one row (``one_row_lines``) on ``ready``'s
        cursors, made when a generated loop first meets this ``ready``, not
        with every ``ready`` (made so, Andersen's updates measured 1.84 ms
        against 1.78, medians of five rounds alternated with the base; made
        here, 1.76 against 1.73: within the noise)."""
        functions, past, cur = self.functions, ready[2], ready[3]
        if ready[1] is not None:
            return functions["one_row"](past, cur, self.scheduled, self.heap, self)
        return functions["fresh_row"](cur, self)

    def loop_lines(self, name, env: dict, empty: set, ind: str, fallback: list[str],
                   setup: list[str]):
        """The lines of a generated iteration (:mod:`engine.schedule`) that
        run :meth:`few_rows` when ``evaluate`` would, else ``fallback``
        (which may move the state to packed runs: an Export summing this
        epoch off the trace is told, so its additions must have been made);
        ``setup``: what they bind once a call.

        A batch of one row, with ``ready`` made (it is dropped whenever the
        trace or a part of it changes) and no seal to consider at ``i``
        (``i & seal_mask``), goes to :meth:`one_for` ``ready``: the formula with
        the cursors' names bound once, not every iteration, and no output
        dict built and read back. Past ``MAX_PACKED`` iterations (dict
        histories) and for a row a sealed trace's runs cannot hold
        (``pack``), ``few_rows`` as before. Counter-1000000's batch CPU
        (``python -m benchmarks.profile_engine counter-1000000 --cpu``), five
        rounds alternated with the loop calling ``few_rows``: 2,029-2,261 ms
        (median 2,082) against 2,424-2,512 (median 2,471)."""
        if type(self) is not DistinctTraceNode:
            return None
        env["colbatch"] = colbatch
        env["MAX_PACKED"] = MAX_PACKED
        env["ONE_PACKER"] = packer(Packing(1))
        node = name(self)
        setup += ["loop_rows = colbatch.LOOP_ROWS", f"{node}_few = {node}.few_rows",
                  f"{node}_mask = {node}.seal_mask", f"{node}_made = {node}.one_for",
                  f"{node}_rd = None"]
        return [f"{ind}_b = {name(self.inputs[0])}.out",
                f"{ind}_hp = {node}.heap",
                f"{ind}if {node}.packed is None and len(_b) < loop_rows "
                f"and not (_hp and _hp[0] == i):",
                f"{ind}    _rd = {node}.ready",
                f"{ind}    if len(_b) == 1 and i & {node}_mask and i <= MAX_PACKED and _rd:",
                f"{ind}        if _rd is not {node}_rd:",
                f"{ind}            {node}_rd = _rd",
                f"{ind}            {node}_one = {node}_made(_rd)",
                f"{ind}            {node}_pk = _rd[5]",
                f"{ind}            {node}_p1 = {node}_pk is ONE_PACKER",
                f"{ind}        [(_r, _w)] = _b.items()  # (its one row)",
                f"{ind}        if _w and ({node}_pk is None or ({packs_one('_r')} "
                f"if {node}_p1 else {node}_pk(_r) is not None)):",
                f"{ind}            _x = {node}_one(_r, _w, i)",
                f"{ind}            {node}.out = {{_r: _x}} if _x else EMPTY",
                f"{ind}        else:",
                f"{ind}            {node}_few(i, _b)",
                f"{ind}    else:",
                f"{ind}        {node}_few(i, _b)",
                f"{ind}else:", *fallback]

    def evaluate_rows(self, i: int, rows, batch) -> None:
        """The formula for ``rows`` (the batch and the rows due at ``i``) on
        the dict trace."""
        if self.sealed and not self.trace.fits(rows):  # (before a row meets the runs)
            self._unseal()
            self.no_columns = True
        trace = self.trace
        self.fresh = False
        past = trace.past_cursor()
        functions = self.functions
        if i > MAX_PACKED:  # a long loop: this epoch's histories from here on are dicts
            functions = compile_distinct_trace(
                past.source, sealed.WIDE_SOURCE if self.sealed else WIDE_ROW_SOURCE)
        if rows is batch and not past:
            out, self.fresh = functions["no_past"](batch, trace.epoch_cursor(), i)
        else:
            out = functions["step"](rows, batch, past, trace.epoch_cursor(), i,
                                    self.scheduled, self.heap)
        self.out = out or EMPTY

    def collection_cursor(self):
        # every finished epoch, all iterations: the rows of weight > 0 are the
        # output's collection after the last fixed point. Packed state is read
        # where it is (counted, listed, its columns given on the runs' arrays),
        # and stays packed: small batches take the row-by-row path on it.
        if self.packed is not None:
            return PackedCollection(self.packing, self.packed)
        return self.trace.past_cursor()

    def describe_args(self) -> str:
        return "distinct_trace"

