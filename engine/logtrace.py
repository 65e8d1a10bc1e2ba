"""Key-less traces of long thin loops: appends to typed arrays, reads from runs.

A join whose two sides share no variable keeps each side's trace under the
one key ``()``: in ``c(n + 1) :- c(n), bound(b), n < b.`` the trace of ``c``
gets one row per iteration, a million iterations long. As a dict
:class:`~engine.trace.Trace` each of those rows costs its tuple, its int, a
history int and a dict entry (~150 bytes); and a
:class:`~engine.columnar.ColumnarTrace` needs a key column and makes a run
(tens of µs of numpy calls) per append.

A :class:`LogTrace` is a :class:`~engine.columnar.ColumnarTrace` of a child
circuit whose index has no key column. Its appends go to a **log**: one
``array('q')`` per column of the row, one for the iteration, one for the
weight, each append a few C-level ``append`` calls (no numpy call, no object
kept per row). Every :data:`LOG_ROWS` entries the log becomes a run of the
epoch's spine (sorted by row, then iteration; iterations and weights narrowed:
8 + 4 + 1 bytes an entry for a counter), as does what is left of it when
something reads the epoch or the epoch commits. Rows the columns cannot hold
raise :class:`~engine.columnar.Unfit` with the log as it was; the owner
goes back to a dict trace.

:class:`RowLog` is the same log without iterations, for a Z-set that is only
summed at the end: an Export's epoch difference in such a loop
(:class:`~engine.node.Export`).

Reads go through :class:`KeylessCursor`: the one key ``()`` holds every entry
of the part, listed as ``(value, (iteration, weight))`` (a value once per run
and iteration it has weight at), which the generated join loops read with the
columnar trace's source fragments. A key-less join reads every entry of the
other side anyway, from dicts as from runs.

>>> t = LogTrace(nested=True, index=("cols", ()))
>>> t.append_rows({(5,): 1}, iteration=0); t.append_rows({(6,): 1, (5,): -1}, iteration=1)
>>> cursor = t.epoch_cursor(); cursor.seek(()), sorted(cursor.values())
(True, [(5,), (6,)])
>>> cursor.times((5,)), cursor.split((5,), 1)
([((0, 0), 1), ((0, 1), -1)], (1, -1, None))
>>> t.commit(); t.append_rows({(7,): 2}, iteration=3)
>>> list(t.entries())
[((), (5,), (0, 0), 1), ((), (5,), (0, 1), -1), ((), (6,), (0, 1), 1), ((), (7,), (1, 3), 2)]
>>> t.append_rows({("x",): 1}, iteration=4)
Traceback (most recent call last):
engine.columnar.Unfit
>>> t.to_trace().collection(())
{(6,): 1, (7,): 2}
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping

from engine import colbatch, lazy
from engine.colbatch import consolidate
from engine.columnar import (
    INT64,
    ColumnarCursor,
    ColumnarTrace,
    Unfit,
    make_run,
    merge_runs,
    narrow,
)
from engine.trace import Trace
from engine.tracearrays import histories_of

np = lazy.module("numpy", globals())

#: The log becomes a run at this many entries (make_run of 4,096 one-column
#: entries costs ~100 µs: 25 ns an entry, against ~1 µs an entry of a dict
#: trace's append; a run keeps 13 bytes an entry, the log 24).
LOG_ROWS = 4096


def keyless(index) -> bool:
    """Whether a trace kept by ``index`` has no key column (one key, ``()``)."""
    return index is not None and index[0] == "cols" and not len(index[1])


class RowLog:
    """A Z-set in the making: rows and weights appended to ``array('q')``
    columns, summed only when it is read (:meth:`batch`): an Export's epoch
    difference in a long thin loop, one row an iteration, kept without a tuple,
    an int and a dict entry per row.

    >>> log = RowLog(); log.append({(1, 5): 1, (2, 6): 1}); log.append({(1, 5): -1})
    >>> len(log), dict(log.batch())
    (3, {(2, 6): 1})
    >>> log.append({(3, "x"): 1})
    Traceback (most recent call last):
    engine.columnar.Unfit
    >>> len(log), RowLog().batch() is None
    (3, True)
    """

    __slots__ = ("arity", "parts")

    def __init__(self):
        self.arity: int | None = None
        self.parts: list = []   # arity columns, then the weights: array('q')

    def __len__(self) -> int:
        return len(self.parts[-1]) if self.parts else 0

    def append(self, batch: Mapping) -> None:
        """Add a Z-set; :class:`~engine.columnar.Unfit` (the log as it was)
        when a row is not ints of ``int64`` of the log's arity."""
        if not batch:
            return
        parts = self.parts
        if not parts:
            arity = len(next(iter(batch)))
            if not arity:
                raise Unfit()
            self.arity = arity
            parts = self.parts = [array("q") for _ in range(arity + 1)]
        weights = parts[-1]
        start = len(weights)
        try:
            if self.arity == 1:
                column = parts[0]
                for (value,), weight in batch.items():
                    column.append(value)
                    weights.append(weight)
            else:
                arity, columns = self.arity, parts[:-1]
                for row, weight in batch.items():
                    if len(row) != arity:
                        raise Unfit()
                    for column, value in zip(columns, row):
                        column.append(value)
                    weights.append(weight)
        except (TypeError, ValueError, OverflowError, Unfit):
            for part in parts:
                del part[start:]
            raise Unfit() from None

    def batch(self):
        """The log's rows summed (zeros dropped), as a
        :class:`~engine.colbatch.ColBatch` of ``int64`` columns; ``None``
        when the log is empty."""
        if not len(self):
            return None
        *columns, weights = (np.frombuffer(part, dtype=INT64).copy() for part in self.parts)
        return consolidate(columns, ("i",) * self.arity, weights)


class KeylessCursor(ColumnarCursor):
    """A cursor over one part of a :class:`LogTrace`: its one key ``()``
    holds every entry of the part's runs."""

    __slots__ = ()

    def gather(self, keys) -> dict:
        """``{(): [(value, (iteration, weight)), ...]}`` of every entry if
        ``()`` is among ``keys`` and the part holds any."""
        if not self.spine or () not in keys:
            return {}
        entries: list = []
        for run in self.spine:
            values = zip(*(c.tolist() for c in run.columns))
            weights = run.weights.tolist()
            if self.nested:
                entries += zip(values, zip(run.iterations.tolist(), weights))
            else:
                entries += zip(values, weights)
        return {(): entries}

    def gather_columns(self, sought):
        raise TypeError("a key-less trace has no int64 keys to gather by")

    def keys(self) -> Iterator:
        return iter([()] if self.seek(()) else [])


class LogTrace(ColumnarTrace):
    """A key-less trace of a child circuit, appended to typed arrays (module
    docstring); the interface of :class:`~engine.trace.Trace`."""

    __slots__ = ("log",)

    def __init__(self, nested: bool = True, index=("cols", ())):
        if not nested or not keyless(index):
            raise ValueError(f"a log trace is a child's key-less trace, got {index!r}")
        self._empty(True, index, 0)  # runs sort by the row: the key column of a Run
        self.functions = None
        self.log: list | None = None  # arity columns, iterations, weights: array('q')

    def append_rows(self, batch: Mapping, iteration: int = 0) -> None:
        """Add a Z-set of rows at ``(self.epoch, iteration)`` to the log;
        :class:`~engine.columnar.Unfit` (the log as it was) when a row is not
        ints of ``int64`` of the trace's arity."""
        log = self.log
        if log is None:
            if not batch:
                return
            arity = self.arity if self.arity is not None else len(next(iter(batch)))
            if not arity:
                raise Unfit()
            self.arity = arity
            log = self.log = [array("q") for _ in range(arity + 2)]
        weights = log[-1]
        start = len(weights)
        try:
            if self.arity == 1:
                column, iterations = log[0], log[1]
                for (value,), weight in batch.items():
                    column.append(value)
                    iterations.append(iteration)
                    weights.append(weight)
            else:
                arity, columns, iterations = self.arity, log[:-2], log[-2]
                for row, weight in batch.items():
                    if len(row) != arity:
                        raise Unfit()
                    for column, value in zip(columns, row):
                        column.append(value)
                    iterations.append(iteration)
                    weights.append(weight)
        except (TypeError, ValueError, OverflowError, Unfit):
            for part in log:
                del part[start:]
            raise Unfit() from None
        if len(weights) >= LOG_ROWS:
            self._seal()

    def append_columns(self, batch, iteration: int = 0) -> None:
        self._seal()  # the log's entries first: appends stay in order of time
        super().append_columns(batch, iteration)

    def _seal(self) -> None:
        """The log's entries as a run of the epoch (waiting in ``tail``)."""
        log = self.log
        if log is None or not len(log[-1]):
            return
        self.log = [array("q") for _ in log]
        *columns, iterations, weights = (np.frombuffer(part, dtype=INT64) for part in log)
        run = make_run(columns, iterations, weights, 0)
        if run is not None:
            self.tail.append(run)

    @property
    def cur(self) -> list:
        self._seal()
        return super().cur

    def commit(self) -> None:
        """The epoch's runs join the past, in their least memory: iterations
        and weights narrowed (a merge by interleaving leaves them ``int64``)."""
        self._seal()
        super().commit()
        for run in self.past:
            if len(run) >= colbatch.NARROW_ROWS and run.iterations.dtype == INT64:
                run.iterations = narrow(run.iterations)
            if len(run) >= colbatch.NARROW_ROWS and run.weights.dtype == INT64:
                run.weights = narrow(run.weights)

    def rollback(self) -> None:
        super().rollback()
        self.log = None

    def past_cursor(self) -> KeylessCursor:
        return KeylessCursor(self.past, True, self.epoch - 1)

    def epoch_cursor(self) -> KeylessCursor:
        return KeylessCursor(self.cur, True, self.epoch)

    def index_rows(self, batch: Mapping) -> dict:
        return {(): dict(batch)} if batch else {}

    def to_trace(self) -> Trace:
        """The same entries as a dict :class:`~engine.trace.Trace`."""
        trace = Trace(True, self.index)
        trace.epoch = self.epoch
        for spine, store in ((self.past, trace.past), (self.cur, trace.cur)):
            run = spine[0] if len(spine) == 1 else merge_runs(spine, 0) if spine else None
            if run is None:
                continue
            rows, histories = histories_of(run.columns, run.iterations, run.weights, True)
            if rows:
                store[()] = dict(zip(rows, histories))
        return trace

    def log_size(self) -> int:
        """Entries waiting in the log (inspection)."""
        return len(self.log[-1]) if self.log is not None else 0
