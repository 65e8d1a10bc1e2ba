"""Joins: Trace Append (the shared arrangement), Join Stream, Join Trace, and the
incremental join built from them.

The join is bilinear, so its incremental form is (DBSP)::

    delta(A ⋈ B) = a ⋈ z^-1(B) + z^-1(A) ⋈ b + a ⋈ b

with ``a``, ``b`` the input differences at the current time and ``z^-1(X)`` the
trace of ``X`` before it. With times: the output at ``t`` is the sum of
``a(t1) ⋈ b(t2)`` over all pairs with ``lub(t1, t2) = t``. Processing time
``t = (e, i)``, a pair of the new ``a(t)`` with an old entry of ``B`` at
``(e', j)`` (``e' < e``) belongs to ``(e, max(i, j))``: when ``j > i`` that is a
**future iteration** of this epoch, kept in a per-iteration buffer and emitted
when the clock gets there.

::

    a ──┬──────────────────────────┐
        └─> TraceAppend(key_a) ....├─> Join ─> a⋈z⁻¹(B) + z⁻¹(A)⋈b + a⋈b
    b ──┬──────────────────────────┤
        └─> TraceAppend(key_b) ....┘   (.... : the join reads the trace state)

The join iterates the rows of each difference, computes their keys inline and
looks them up in the other side's trace; a ⋈ b indexes the smaller difference
on the fly. One :class:`TraceNode` exists per (stream, key): every join reading
the same relation by the same columns shares it. A join's output rows go
through the linear stages fused after it (map/project/filter/flat_map) inside
the join loop.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from engine import colbatch
from engine.codegen import (
    build_functions,
    built_later,
    key_expression,
    one_row_append,
    split_naming,
)
from engine.colbatch import ColBatch
from engine.columnar import ColumnarTrace, Unfit, fits
from engine.logtrace import LOG_ROWS, LogTrace, keyless
from engine.node import Node
from engine.operators import columns as col
from engine.operators import rootcols
from engine.operators.linear import ColumnChain, emit_lines
from engine.trace import DELTA_SOURCE, Trace, delta_cursor
from engine.zset import EMPTY, add_into

colbatch.COUNTS.setdefault("join_view", 0)  # joins on columns reading a view


class TraceNode(Node):
    """Trace Append: keeps the trace of a stream by a key for the joins (and
    aggregates) that read it; one per (stream, key).

    ``evaluate`` does nothing: during a time, readers see the trace *before* it
    (``z^-1``); the batch is appended when the time is over (end of iteration in
    a child circuit, end of epoch in the root).
    """

    iteration_hook = True
    quiet = True

    def __init__(self, source: Node, index, nested: bool, label: str = ""):
        super().__init__([source], label)
        self.index = index
        self.trace = Trace(nested=nested, index=index)
        self.columnar: int | None = None  # rows past which the trace goes columnar
        self.appended = 0   # rows appended, this epoch's included
        self.committed = 0  # rows appended until the last committed epoch
        # A join reading this trace works on columns (engine.operators.columns):
        # the trace goes columnar with the first columnar batch of
        # colbatch.THRESHOLD rows; no_columns: its rows do not fit int64 columns.
        self.wants_columns = False
        self.no_columns = False
        # A child's key-less trace (a join sharing no variable) goes into a log of
        # typed arrays (engine.logtrace) in a long loop once this epoch brought it
        # this many rows (None: never, or its rows do not fit int64 columns).
        self.log_from = colbatch.LOG_FROM if nested and keyless(index) else None
        # A small dict trace read by a join on columns stays dicts (for the
        # small deltas); the join reads this copy of it in runs (columns_view),
        # made when first asked for, its past kept up to date at commit.
        self.view: ColumnarTrace | None = None
        self.viewed = -1   # ``appended`` when the view was made
        self.viewing = -1  # the last epoch a join read the view
        self.large = -1    # the last epoch it was found too large for one
        self.late = False  # appended to after iteration 0 in this epoch

    def columns_view(self, rows: int = 0) -> ColumnarTrace | None:
        """The trace in runs for a join on columns, without moving it: itself
        if in runs; for a child's dict trace of fewer than
        :data:`~engine.colbatch.VIEW_STATE` rows, a copy in runs (``None``
        when its rows do not fit, or a larger trace: it would cost too much
        to copy), made again from this epoch's entries when some were
        appended since (the past's runs are kept: they change at commit
        only, with the view). A new copy is made only for a delta of
        ``rows`` at least a :data:`~engine.colbatch.VIEW_COPY` th of the trace's entries.
        None either for a trace appended to after iteration 0 of this epoch
        (a loop's own stream, not a lower stratum's): its view would be made
        again at every iteration (Andersen's bulk load, 0.41 -> 0.56 s)."""
        trace = self.trace
        if type(trace) is ColumnarTrace:
            return trace
        if (type(trace) is not Trace or not trace.nested or self.no_columns
                or not fits(self.index) or self.late):
            return None
        view = self.view
        if view is not None and view.epoch == trace.epoch and self.viewed == self.appended:
            self.viewing = trace.epoch
            return view
        if view is None or view.epoch != trace.epoch:
            if self.large == trace.epoch or (self.appended >= colbatch.VIEW_STATE and sum(
                    map(len, trace.past.values())) + len(trace.cur) >= colbatch.VIEW_STATE):
                self.large = trace.epoch  # (entries never outnumber the rows appended)
                return None
            if rows * colbatch.VIEW_COPY < min(self.appended, sum(map(len, trace.past.values()))):
                return None   # a copy to make for a few rows: the row loop is cheaper
        try:
            if view is not None and view.epoch == trace.epoch:
                view = view.with_epoch_of(trace)  # this epoch's appends, read again
            else:
                view = ColumnarTrace.from_trace(trace)
        except Unfit:
            self.no_columns = True
            self.view = None
            return None
        self.view, self.viewed, self.viewing = view, self.appended, trace.epoch
        return view

    def _commit_view(self) -> None:
        """The view commits with the trace (this epoch's appends read again
        if some came after the join last read it) when a join read it in
        this epoch; else it is dropped (made again if asked for)."""
        view, trace = self.view, self.trace
        if (view.epoch != trace.epoch or self.viewing != trace.epoch
                or type(trace) is not Trace):
            self.view = None
            return
        if self.viewed != self.appended:
            try:
                view = self.view = view.with_epoch_of(trace)
            except Unfit:
                self.view = None
                return
            self.viewed = self.appended
        view.commit()
        if sum(map(len, view.past)) >= colbatch.VIEW_STATE:
            self.view = None

    def columns_ready(self) -> bool:
        """Whether the trace is in runs (turning it columnar now if it can be)."""
        if type(self.trace) is ColumnarTrace:
            return True
        if self.no_columns or not fits(self.index) or type(self.trace) is not Trace:
            return False
        try:
            self.trace = ColumnarTrace.from_trace(self.trace)
        except Unfit:
            self.no_columns = True
            return False
        return True

    def use_columnar(self, threshold: int | None) -> None:
        """Keep the trace in sorted numpy runs (``engine.columnar``) once
        ``threshold`` rows were appended, if its key and rows allow it."""
        self.columnar = threshold if threshold is not None and fits(self.index) else None
        self._maybe_columnar()

    def _maybe_columnar(self) -> None:
        if (self.columnar is not None and self.appended >= self.columnar
                and type(self.trace) is Trace):
            try:
                self.trace = ColumnarTrace.from_trace(self.trace)
            except Unfit:
                self.columnar = None

    def bulk_to_runs(self, batch, iteration: int = 0) -> bool:
        """Whether a batch of rows for the dict trace goes into runs instead
        (the trace moved there first, :meth:`columns_ready`): one of
        :data:`~engine.colbatch.COMMIT_ROWS` rows or more takes the trace to
        runs at this epoch's commit anyway (:meth:`clock_stop`), so the dicts
        are never built for it (a bulk load's input: their small objects,
        freed at the move, left pymalloc's arenas pinned by a few live ones).
        In a child, only at iteration 0 (the epoch's input): a loop's own
        trace keeps the loop's rules (``columns_of``); moved at the first
        large row delta, negagg-1000-1500's reach by ``y`` (4,662 rows at an
        iteration) left its batch 5 MiB more RSS before a trim."""
        return (len(batch) >= colbatch.COMMIT_ROWS and not iteration and self.wants_columns
                and self.columnar is None and self.columns_ready())

    def _append(self, batch, iteration: int) -> None:
        self.appended += len(batch)
        columnar = type(batch) is ColBatch
        if (not columnar and type(self.trace) is Trace
                and not self.bulk_to_runs(batch, iteration)):
            # rows into dicts: the common case
            self.trace.append_rows(batch, iteration)
            if self.columnar is not None:
                self._maybe_columnar()
            return
        if (columnar and self.wants_columns and len(batch) >= colbatch.THRESHOLD
                and batch.int_only):
            self.columns_ready()
        if not isinstance(self.trace, ColumnarTrace):  # dicts (or a spilling trace)
            self.trace.append_rows(batch, iteration)
            self._maybe_columnar()
            return

        try:
            if columnar:
                self.trace.append_columns(batch, iteration)
            else:
                self.trace.append_rows(batch, iteration)
        except Unfit:  # rows the columns cannot hold: back to dicts, for good
            self.columnar = self.log_from = None
            self.no_columns = True
            self.trace = self.trace.to_trace()
            self.trace.append_rows(batch, iteration)

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 1:
            self.append_at(self.inputs[0].out, time)
            return
        self.fold_epoch()

    def append_at(self, batch, time: int) -> None:
        """The end of iteration ``time``: the trace appends its input's batch
        (``clock_stop(1, time)``; a generated iteration, :mod:`engine.schedule`,
        calls it directly with the batch)."""
        trace = self.trace
        if time and batch:
            self.late = True  # (a loop's own stream: no view this epoch)
        if type(trace) is LogTrace and type(batch) is not ColBatch:  # a long thin loop
            self.appended += len(batch)
            try:
                trace.append_rows(batch, time)
            except Unfit:  # rows the columns cannot hold: back to dicts, for good
                self.log_from = None
                self.trace = trace.to_trace()
                self.trace.append_rows(batch, time)
            return
        if (type(trace) is Trace and self.columnar is None and type(batch) is not ColBatch
                and not self.bulk_to_runs(batch, time)):
            self.appended += len(batch)  # rows into dicts (_append's common case)
            trace.append_rows(batch, time)
            if (self.log_from is not None and time >= colbatch.LONG_LOOP
                    and self.appended - self.committed >= self.log_from):
                self._to_log()
        else:
            self._append(batch, time)

    def append_lines(self, name, env: dict, call: str, setup: list[str]) -> list[str] | None:
        """The lines of a generated iteration (:mod:`engine.schedule`) doing
        :meth:`append_at` (named ``call``) for a one-row batch of a one-column
        row into a :class:`LogTrace`'s arrays themselves, their ``append``
        bound once a log; any other batch, or a value the arrays cannot hold
        (nothing appended yet), goes to ``call``. Counter-1000000's batch CPU
        (``python -m benchmarks.profile_engine counter-1000000 --cpu``), ten
        rounds alternated with ``append_at`` called: median 1,922 ms against
        1,972, lower in every round."""
        if (type(self) is not TraceNode or not self.trace.nested
                or not keyless(self.index)):
            return None  # (a trace that never becomes a LogTrace: no lines to skip)
        env["LogTrace"], env["LOG_ROWS"] = LogTrace, LOG_ROWS
        node, batch = name(self), f"{name(self.inputs[0])}.out"
        setup.append(f"{node}_log = None")
        return [f"_bt, _tt = {batch}, {node}.trace",
                "_lg = _tt.log if type(_tt) is LogTrace else None",
                "if _lg is not None and _tt.arity == 1 and len(_bt) == 1 and type(_bt) is dict:",
                f"    if _lg is not {node}_log:",
                f"        {node}_log, {node}_weights = _lg, _lg[2]",
                f"        {node}_ca, {node}_ia, {node}_wa = _lg[0].append, _lg[1].append, "
                "_lg[2].append",
                *("    " + text for text in one_row_append(
                    "_bt", f"{node}_ca", f"{call}(_bt, i)",
                    [f"{node}_ia(i)", f"{node}_wa(_w)", f"{node}.late = True",
                     f"{node}.appended += 1",
                     f"if len({node}_weights) >= LOG_ROWS: _tt._seal()"])),
                "else:",
                f"    {call}(_bt, i)"]

    def fold_epoch(self) -> None:
        """The epoch succeeded: the trace folds it into its past."""
        if not self.trace.nested:
            self._append(self.inputs[0].out, 0)
        if self.view is not None:
            self._commit_view()
        self.late = False
        self.trace.commit()
        grew = self.appended - self.committed
        self.committed = self.appended
        if type(self.trace) is LogTrace and self.trace.past_entries() < colbatch.SMALL_STATE:
            self.trace = self.trace.to_trace()  # small updates are cheaper on dicts
        if self.columnar is not None or not self.wants_columns:
            return
        if grew >= colbatch.COMMIT_ROWS:  # a bulk epoch: the state stays in runs
            if type(self.trace) is Trace and not self.no_columns and fits(self.index):
                self.columns_ready()
        elif (type(self.trace) is ColumnarTrace
              and self.trace.past_entries() < colbatch.SMALL_STATE):
            # small updates are cheaper on dicts, a bulk load's trace too from
            # the first small epoch on (colbatch.SMALL_STATE)
            self.trace = self.trace.to_trace()

    def _to_log(self) -> None:
        """Move the (dict, key-less) trace into a :class:`~engine.logtrace.LogTrace`."""
        try:
            self.trace = LogTrace.from_trace(self.trace)
        except Unfit:
            self.log_from = None

    def rollback(self) -> None:
        self.trace.rollback()
        self.appended = self.committed
        self.late = False
        if self.view is not None and self.view.epoch == self.trace.epoch:
            self.view.rollback()
            self.viewed = self.committed

    def describe_args(self) -> str:
        kind, spec = self.index
        return f"trace index_by{tuple(spec)}" if kind == "cols" else "trace index_with"


# ---------------------------------------------------------------------------
# Generated pair loops


def combine_expression(combine) -> str:
    """``combine(k, lv, rv)``, or for a projection spec ``((side, column), ...)``
    (side 0: left row, 1: right row) the tuple written out inline."""
    if callable(combine):
        return "combine(k, lv, rv)"
    return "(" + "".join(f"{('lv', 'rv')[side]}[{column}], " for side, column in combine) + ")"


def _delta_function(name: str, delta_side: str, kind: str, source, key_index,
                    stages, env: dict, cursor: str = "cursor",
                    prefix: str = "_c") -> tuple[list[str], list[str]]:
    """Source of ``name(target, rows, cursor[, i, future])`` (the cursor
    parameter named ``cursor``) as ``(header and binds, loop)``: each row of
    the delta (the ``delta_side`` input) joined with the values the ``cursor``
    (a part of the other side's trace, or an indexed delta) holds under the
    row's key, through ``combine`` and the fused stages, into ``target`` (or
    ``future(j)``). The cursor is read through ``source``, its fragments,
    with the locals named from ``prefix``; the binds are at function level,
    the loop's lines (binding ``target_get`` first) likewise.

    ``kind``: ``plain`` (every entry at the current time: a root trace's past
    or an indexed delta), ``total`` (this epoch's earlier iterations: summed,
    all at the current time), ``timed`` (past epochs: a pair's time is
    ``(e, max(i, j))``, a later iteration ``j`` going to ``future(j)``).
    """
    timed = kind == "timed"
    args = f"target, rows, {cursor}, i, future" if timed else f"target, rows, {cursor}"
    dv, dw, sv = ("lv", "lw", "rv") if delta_side == "left" else ("rv", "rw", "lv")
    key = key_expression(key_index, dv, env)
    ind = "            "
    head = [f"def {name}({args}):"] + source.bind(cursor, prefix, f"[{key} for {dv} in rows]")
    lines = ["    target_get = target.get", f"    for {dv}, {dw} in rows.items():"]
    if callable(env["combine"]):  # it receives the key
        lines.append(f"        k = {key}")
        key = "k"
    lines += source.seek(prefix, key, "sg", "        ")
    lines.append(f"        {source.values('sg', sv, '_h')}")
    row = f"{ind}row = {combine_expression(env['combine'])}"
    if kind == "plain":
        lines += [row, f"{ind}w = {dw} * {source.weight('_h')}"]
        lines += emit_lines(stages, None, "row", "w", "target", env, ind, "target_get")
        return head, lines
    if kind == "total":
        lines += [
            f"{ind}sw = {source.weight('_h')}",
            f"{ind}if not sw: continue",
            row,
            f"{ind}w = {dw} * sw",
        ]
        lines += emit_lines(stages, None, "row", "w", "target", env, ind, "target_get")
        return head, lines

    def body(indent: str) -> list[str]:
        return ([f"{indent}w = {dw} * _hw",
                 f"{indent}_tg = target if _j <= i else future(_j)"]
                + emit_lines(stages, None, "row", "w", "_tg", env, indent))

    lines.append(row)
    lines += source.walk_times("_h", "_j", "_hw", body, ind)
    return head, lines


#: The part of each side's trace a nested join reads: (kind, cursor's name,
#: prefix of its locals); distinct prefixes, so one function binds both.
NESTED_PARTS = (("total", "now", "_c"), ("timed", "before", "_d"))


def compile_join(combine: Callable, stages, left_index, right_index,
                 left_sources: dict, right_sources: dict) -> dict[str, Callable]:
    """The loops a join needs, compiled with its key specs, fused stages and
    the sources of the cursors it reads: ``left_<kind>`` iterates a left delta
    against a cursor of the right side (read with ``left_sources[kind]``),
    ``right_<kind>`` a right delta against the left side. Kinds: ``delta``
    (an indexed delta, read as ``plain``), ``plain``, ``total``, ``timed``;
    in a child also ``nested`` (``total`` and ``timed`` in one call, given
    the other side's trace) and ``left_thin`` (:func:`_thin_function`,
    compiled at its first call: :func:`~engine.codegen.built_later`)."""
    env: dict = {"combine": combine}
    lines: list[str] = []
    names = []
    thin = None
    parts = {kind: (cursor, prefix) for kind, cursor, prefix in NESTED_PARTS}
    for side, index, sources in (("left", left_index, left_sources),
                                 ("right", right_index, right_sources)):
        bodies = {}
        for kind, source in sources.items():
            name = f"{side}_{kind}"
            names.append(name)
            env.update(source.names())
            bodies[kind] = _delta_function(name, side, "plain" if kind == "delta" else kind,
                                           source, index, stages, env,
                                           *parts.get(kind, ("cursor", "_c")))
            lines += bodies[kind][0] + bodies[kind][1]
        if "timed" in bodies:
            names.append(f"{side}_nested")
            lines += _nested_function(f"{side}_nested", bodies, sources)
        if "timed" in bodies and side == "left":
            thin = _thin_function("left_thin", bodies, sources)
    functions = build_functions(names, lines, env)
    if thin is not None:
        functions["left_thin"] = built_later("left_thin", thin, env)
    return functions


def _nested_function(name: str, bodies: dict, sources: dict) -> list[str]:
    """Source of ``name(target, rows, now, before, i, future)``: the ``total``
    and ``timed`` loops (:func:`_delta_function`) of one side in one call,
    against the other side's trace's cursors (its current epoch ``now``,
    then its past ``before``): a few rows per iteration pay one call for
    both."""
    lines = [f"def {name}(target, rows, now, before, i, future):"]
    for kind, cursor, _ in NESTED_PARTS:
        head, loop = bodies[kind]
        lines += [f"    if {sources[kind].nonempty(cursor)}:"]
        lines += ["    " + line for line in head[1:] + loop]
    return lines


def _thin_function(name: str, bodies: dict, sources: dict) -> list[str]:
    """Source of ``name(now, before, future)``, made once for cursors that
    take no appends while it is used (a loop's right trace when the right
    input is an Import): it gives ``one(rows, i)``, the ``nested`` loops'
    output for ``rows`` at iteration ``i`` (a new dict), with whether each
    part holds anything and the binds that do not read ``rows`` evaluated
    once, not each call."""
    lines = [f"def {name}(now, before, future):"]
    inner = ["    def one(rows, i):", "        target = {}"]
    for kind, cursor, prefix in NESTED_PARTS:
        head, loop = bodies[kind]
        held = f"{prefix}held"
        once, each = split_naming(head[1:], "rows")
        lines.append(f"    {held} = bool({sources[kind].nonempty(cursor)})")
        if once:
            lines += [f"    if {held}:", *("    " + text for text in once)]
        inner += [f"        if {held}:", *("        " + text for text in each + loop)]
    return lines + inner + ["        return target", "    return one"]


def read_sources(trace: Trace, nested: bool) -> dict:
    """kind -> the source of the cursor a join reads for it, of ``trace``."""
    if nested:
        return {"delta": DELTA_SOURCE, "total": trace.epoch_cursor().source,
                "timed": trace.past_cursor().source}
    return {"delta": DELTA_SOURCE, "plain": trace.past_cursor().source}


class JoinNode(Node):
    """Join (incremental, bilinear; module docstring). Root scope: times are epochs,
    so every pair lands at the current epoch::

        out = a ⋈ B_past + a ⋈ b + A_past ⋈ b

    Its inputs are the row streams; the keys are those of its two TraceNodes.
    """

    indexed = False  # its output is rows; linear stages after it are fused in
    quiet = True
    spilled = False  # True when a trace it reads may hold entries in Spark

    def __init__(self, left: Node, right: Node, left_trace: TraceNode,
                 right_trace: TraceNode, combine: Callable, label: str = ""):
        super().__init__([left, right], label, reads=[left_trace, right_trace])
        self.combine = combine
        self.stages: list = []
        self.vectors: list = []   # per stage, its columnar form or None (engine.vector)
        self.functions: dict = {}
        self.compiled_for: tuple = ()
        #: (left trace type, right trace type) -> compiled loops, for dict and
        #: columnar traces (their cursors' sources are fixed by the type): a trace
        #: that changes kind and back (dict <-> runs, every epoch in a chain's
        #: closure) costs one compile per kind, not one per change (3 ms each; each
        #: compile left a cycle, functions <-> their namespace, to the gc), and the
        #: columnar trace's epoch part is not merged to read its sources again
        self.compiled: dict = {}
        self.on_columns = False
        self.steady = [0, 0, 0, -1]  # colbatch.steady: the loop's batch sizes
        self.column_stages: ColumnChain | None = None
        self.row_fallbacks = 0  # rows of columnar output run through row stages

    @property
    def left_trace(self) -> Trace:
        return self.reads[0].trace

    @property
    def right_trace(self) -> Trace:
        return self.reads[1].trace

    def absorb(self, consumer) -> None:
        """Take over the linear stages of ``consumer`` (a chain reading only this)."""
        self.stages += consumer.stages
        self.vectors += consumer.vectors
        self.compiled = {}  # (compiled without these stages)

    def prepare(self) -> None:
        """Compile the loops for the kinds of the traces read (again when a
        trace changes kind, e.g. goes columnar)."""
        nested = self.circuit is not None and self.circuit.nested
        left, right = self.left_trace, self.right_trace
        self.compiled_for = kinds = (type(left), type(right))
        cached = all(kind in (Trace, ColumnarTrace) for kind in kinds)
        functions = self.compiled.get(kinds) if cached else None
        if functions is None:
            functions = compile_join(
                self.combine, self.stages, self.reads[0].index, self.reads[1].index,
                read_sources(right, nested), read_sources(left, nested))
            if cached:
                self.compiled[kinds] = functions
        self.functions = functions
        # the columnar path: a projection, keys of one column, traces in memory
        self.on_columns = (not callable(self.combine) and not self.spilled
                           and fits(self.reads[0].index) and fits(self.reads[1].index))
        if self.on_columns and self.column_stages is None:
            for trace in self.reads:
                trace.wants_columns = True
            self.column_stages = ColumnChain(self.stages, self.vectors)

    def columns_of(self, a, b, i: int = 0):
        """``(a, b)`` as int64 column batches (``None`` for an empty side) when
        this time's work goes the columnar way: a projection join, one of the
        deltas of at least ``colbatch.THRESHOLD`` rows, both traces in runs."""
        if not self.on_columns or self.spilled:
            return None
        size = max(len(a), len(b))
        steady = colbatch.steady(self.steady, size, i)
        long = steady or i >= colbatch.LONG_LOOP
        if type(a) is ColBatch or type(b) is ColBatch:
            found = self.on_views(a, b)
            if found is not None:
                return found
        if size < colbatch.LOOP_ROWS and (size < colbatch.JOIN_ON_RUNS or i < colbatch.LONG_LOOP
                                          or any(type(t.trace) is Trace
                                                 and t.appended >= colbatch.SMALL_STATE
                                                 for t in self.reads)):
            return None     # (in a long loop a small dict trace goes to runs, cheaply)
        left, right = self.reads
        if not steady and max(left.appended + len(a),
                              right.appended + len(b)) < colbatch.SMALL_STATE:
            return None     # small state: dicts are cheaper (and it would go back at commit),
            # but not in a steady loop (colbatch.STEADY_SPAN): its state grows past it
            # (counted with this time's deltas: a trace they take past SMALL_STATE
            # stays in runs, and a large columnar delta takes it there at its append)
        if size < colbatch.THRESHOLD and not long and any(
                type(t.trace) is Trace and t.appended > size for t in self.reads):
            return None     # a short loop's dict traces larger than its deltas stay
            # dicts (LONG_LOOP, STEADY_SPAN); a smaller one goes to runs, cheaply
        if not (left.columns_ready() and right.columns_ready()):
            return None
        return self.deltas_in_columns(a, b, (left.trace, right.trace))

    def on_views(self, a, b):
        """:meth:`columns_of` for a delta in columns already (a Distinct's
        output on packed state) of :data:`~engine.colbatch.VIEW_ROWS` rows or more, when each
        trace is in runs or is a small dict with a view in runs
        (:meth:`TraceNode.columns_view`): the row loop would make the
        delta's rows and the next Distinct its columns again."""
        size = max(len(a) if type(a) is ColBatch else 0, len(b) if type(b) is ColBatch else 0)
        if size < colbatch.VIEW_ROWS:
            return None
        left, right = self.reads[0].columns_view(size), self.reads[1].columns_view(size)
        if left is None or right is None:
            return None
        found = self.deltas_in_columns(a, b, (left, right))
        if found is not None and (left is not self.left_trace or right is not self.right_trace):
            colbatch.COUNTS["join_view"] += 1
        return found

    @staticmethod
    def deltas_in_columns(a, b, traces):
        """``[a, b, traces]``: the deltas as int64 column batches (``None`` for
        an empty side), and the traces in runs to join them with; ``None``
        when a delta does not fit."""
        out = []
        for batch in (a, b):
            if not batch:
                out.append(None)
                continue
            found = ColBatch.from_rows(batch)
            if found is None or not found.int_only:
                return None
            out.append(found)
        return [*out, traces]

    def finish_columns(self, pieces: list, kinds: tuple | None = None,
                       known: list | None = None):
        """The consolidated pairs (columns of ``kinds``, ints by default;
        ``known``: the pieces' bounds, :func:`~engine.operators.columns.finish`)
        through the fused stages: on columns while they have a columnar form,
        then per row (counted; ``ColumnChain``)."""
        out = col.finish(pieces, kinds or ("i",) * len(self.combine), known)
        if not self.stages or not out:
            return out
        if self.column_stages is None:
            self.column_stages = ColumnChain(self.stages, self.vectors)
        before = colbatch.COUNTS["row_stages"]
        out = self.column_stages(out)
        self.row_fallbacks += colbatch.COUNTS["row_stages"] - before
        return out

    def join_columns(self, pieces: list, a, b, i: int | None, traces=None,
                     known: list | None = None) -> None:
        """The join of the deltas ``a`` and ``b`` (column batches or ``None``)
        with the traces (``traces``: the ``(left, right)`` traces in runs to
        read, if not the nodes' own), as pieces: at ``i`` (a child circuit) the trace's
        earlier iterations of this epoch count as now and past epochs at
        ``max(i, j)``; in the root only past epochs, all now. ``known``: a
        list given each piece's bounds (:func:`~engine.operators.columns.join_part`)."""
        colbatch.COUNTS["join"] += 1
        projection = self.combine
        left_key = self.reads[0].index[1][0]
        right_key = self.reads[1].index[1][0]
        future = self.future_columns if i is not None else None
        left_trace, right_trace = traces or (self.left_trace, self.right_trace)
        for delta, key, other, left in ((a, left_key, right_trace, True),
                                        (b, right_key, left_trace, False)):
            if delta is None:
                continue
            if i is not None:
                col.join_part(delta, key, other.cur, projection, left, pieces, known=known)
            col.join_part(delta, key, other.past, projection, left, pieces, i, future, known)
        if a is not None and b is not None:  # a ⋈ b, the smaller side sorted
            if len(a) >= len(b):
                col.join_part(a, left_key, [col.DeltaRun(b, right_key)], projection, True,
                              pieces, known=known)
            else:
                col.join_part(b, right_key, [col.DeltaRun(a, left_key)], projection, False,
                              pieces, known=known)

    def join_spilled(self, out: dict, a: dict, b: dict, i: int) -> None:
        """``a ⋈ B_spark + A_spark ⋈ b``: the parts of the traces moved to Spark
        (``engine.spark.spill``), looked up for the keys of the other side's
        difference and paired by the same loops as the in-memory parts (the
        matches come as a trace in memory, read through its cursors). Both
        sides' keys are announced (``prefetch``) before either is read, so
        the lookups that miss the cache go to Spark as one request. Called
        before the in-memory parts are read: a lookup may first move them
        to Spark."""
        fns, nested = self.functions, "left_timed" in self.functions
        lookups = [(side, delta, other, own.index_rows(delta).keys())
                   for side, delta, own, other in (
                       ("left", a, self.left_trace, self.right_trace),
                       ("right", b, self.right_trace, self.left_trace))
                   if delta and hasattr(other, "spilled_matches")]
        for _, _, other, keys in lookups:
            if hasattr(other, "prefetch"):
                other.prefetch(keys)
        for side, delta, other, keys in lookups:
            matches = other.spilled_matches(keys)
            if matches is None:
                continue
            past = matches.past_cursor()
            if not nested:
                if past:
                    fns[f"{side}_plain"](out, delta, past)
                continue
            cur = matches.epoch_cursor()
            if cur:
                fns[f"{side}_total"](out, delta, cur)
            if past:
                fns[f"{side}_timed"](out, delta, past, i, self.bucket)

    def both_deltas(self, out: dict, a: dict, b: dict) -> None:
        """``a ⋈ b``: the smaller delta is indexed on the fly, the other iterated."""
        if len(a) >= len(b):
            self.functions["left_delta"](out, a, delta_cursor(self.right_trace.index_rows(b)))
        else:
            self.functions["right_delta"](out, b, delta_cursor(self.left_trace.index_rows(a)))

    def evaluate(self, i: int) -> None:
        a, b = self.inputs[0].out, self.inputs[1].out
        if not a and not b:
            self.out = EMPTY
            return
        if self.compiled_for != (type(self.left_trace), type(self.right_trace)):
            self.prepare()
        if max(len(a), len(b)) >= colbatch.JOIN_ON_RUNS:
            found = rootcols.root_join(self, a, b)  # large deltas on columns
            if found is not None:
                self.out = found or EMPTY
                return
        fns = self.functions
        out: dict = {}
        if self.spilled:
            self.join_spilled(out, a, b, 0)
        if a:
            past = self.right_trace.past_cursor()
            if past:
                fns["left_plain"](out, a, past)
            if b:
                self.both_deltas(out, a, b)
        if b:
            past = self.left_trace.past_cursor()
            if past:
                fns["right_plain"](out, b, past)
        self.out = out or EMPTY

    def describe_args(self) -> str:
        return "join"


def add_batches(first, second):
    """The sum of two batches (either may be ``None``, a dict or columnar)."""
    if not first:
        return second
    if not second:
        return first
    found = col.plus([first, second])
    return found if found is not None else add_into(dict(first.items()), second)


class NestedJoinNode(JoinNode):
    """Join in a child circuit, at time ``(e, i)``::

        out(e, i) = a ⋈ (B_cur + b) + A_cur ⋈ b          (all at (e, i))
                  + a ⋈ B_past + A_past ⋈ b              (at (e, max(i, j)))

    ``*_cur``: this epoch's earlier iterations; ``*_past``: compacted earlier
    epochs with their iterations ``j``. Pairs with ``j > i`` wait in
    ``future[j]``.
    """

    may_hold_work = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.future: dict = {}
        self.columns_later: dict = {}  # iteration -> pieces of columnar future output
        self.heap: list = []
        # (left trace, right trace, left_nested, left_thin): evaluate's thin path
        self.thin: tuple | None = None

    def bucket(self, iteration: int) -> dict:
        """The buffer of output for a later iteration of this epoch."""
        found = self.future.get(iteration)
        if found is None:
            found = self.future[iteration] = {}
            if iteration not in self.columns_later:
                heapq.heappush(self.heap, iteration)
        return found

    def future_columns(self, iteration: int) -> list:
        """The columnar buffer (pieces) of output for a later iteration."""
        found = self.columns_later.get(iteration)
        if found is None:
            found = self.columns_later[iteration] = []
            if iteration not in self.future:
                heapq.heappush(self.heap, iteration)
        return found

    def pending(self) -> int | None:
        return self.heap[0] if self.heap else None

    def prepare(self) -> None:
        super().prepare()
        self.thin = None

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.future, self.columns_later, self.heap = {}, {}, []

    def rollback(self) -> None:
        self.future, self.columns_later, self.heap = {}, {}, []

    def evaluate(self, i: int) -> None:
        a, b = self.inputs[0].out, self.inputs[1].out
        if not b and not self.heap and len(a) < colbatch.JOIN_ON_RUNS:
            # the left side only, a few rows, nothing due (a loop's fed-back
            # rows, one per iteration): straight to its row loop, compiled for
            # the traces it was last called with (``thin``: left and right
            # trace, the loop)
            if not a:
                self.out = EMPTY
                return
            thin = self.thin
            right = self.reads[1].trace
            if thin is None or thin[1] is not right or thin[0] is not self.reads[0].trace:
                thin = self._thin()
            if thin is not None:
                out: dict = {}
                thin[2](out, a, right.epoch_cursor(), right.past_cursor(), i, self.bucket)
                self.out = out or EMPTY
                return
        heap = self.heap
        if ((heap and heap[0] == i) or self.spilled or len(a) >= colbatch.JOIN_ON_RUNS
                or len(b) >= colbatch.JOIN_ON_RUNS):
            self.evaluate_general(i, a, b)
            return
        # a few rows and nothing due now: never columns (columns_of), so
        # straight to the row loops
        if not a and not b:
            self.out = EMPTY
            return
        out = {}
        self.join_rows(out, a, b, i)
        self.out = out or EMPTY

    def loop_lines(self, name, env: dict, empty: set, ind: str, fallback: list[str],
                   setup: list[str]):
        """The lines of a generated iteration (:mod:`engine.schedule`) that
        take ``evaluate``'s first path themselves, calling ``thin``'s loop
        (no right delta, nothing due, a few left rows; the traces it was
        made for), else ``fallback``; ``setup``: what they bind once a call.
        When the right input is an Import (empty in the loop), the right trace
        takes no appends while the loop runs: its cursors are read once for
        each ``thin`` the loop meets, not every iteration, into
        ``left_thin``'s closure (:func:`_thin_function`: the parts'
        emptiness and the binds evaluated once, the output dict made
        inside). Counter-1000000's batch CPU (``python -m
        benchmarks.profile_engine counter-1000000 --cpu``), five rounds
        alternated with ``left_nested`` called: median 1,980 ms against 2,062,
        lower in every round."""
        if type(self) is not NestedJoinNode:
            return None
        env["colbatch"] = colbatch
        node, left, right = name(self), name(self.inputs[0]), name(self.inputs[1])
        setup += ["join_on_runs = colbatch.JOIN_ON_RUNS", f"{node}_bucket = {node}.bucket"]
        guard = [] if id(self.inputs[1]) in empty else [f"not {right}.out"]
        guard += [f"not {node}.heap", "len(_a) < join_on_runs", "_th is not None",
                  f"_th[0] is {name(self.reads[0])}.trace",
                  f"_th[1] is {name(self.reads[1])}.trace"]
        if id(self.inputs[1]) in empty:
            setup.append(f"{node}_th = None")
            cursors = [f"{ind}        if _th is not {node}_th:",
                       f"{ind}            {node}_th = _th",
                       f"{ind}            {node}_one = _th[3](_th[1].epoch_cursor(), "
                       f"_th[1].past_cursor(), {node}_bucket)",
                       f"{ind}        _o = {node}_one(_a, i)"]
        else:
            cursors = [f"{ind}        _o = {{}}",
                       f"{ind}        _th[2](_o, _a, _th[1].epoch_cursor(), "
                       f"_th[1].past_cursor(), i, {node}_bucket)"]
        return [f"{ind}_a = {left}.out", f"{ind}_th = {node}.thin",
                f"{ind}if {' and '.join(guard)}:",
                f"{ind}    if _a:",
                *cursors,
                f"{ind}        {node}.out = _o or EMPTY",
                f"{ind}    else:",
                f"{ind}        {node}.out = EMPTY",
                f"{ind}else:", *fallback]

    def _thin(self) -> tuple | None:
        """``thin`` for the traces read now (``None``: the join is spilled)."""
        self.thin = None
        if self.spilled:
            return None
        left, right = self.reads[0].trace, self.reads[1].trace
        if self.compiled_for != (type(left), type(right)):
            self.prepare()
        self.thin = (left, right, self.functions["left_nested"], self.functions["left_thin"])
        return self.thin

    def evaluate_general(self, i: int, a, b) -> None:
        """``evaluate`` with output due now, large deltas or spilled traces."""
        heap = self.heap
        out = None
        pieces: list = []
        if heap and heap[0] == i:
            heapq.heappop(heap)
            out = self.future.pop(i, None)
            pieces = self.columns_later.pop(i, [])
        found = self.columns_of(a, b, i) if self.on_columns and (a or b) else None
        known = None if pieces else []  # (pieces due from before: bounds not known)
        if found is not None:
            self.join_columns(pieces, found[0], found[1], i, found[2], known)
        staged = self.finish_columns(pieces, None, known) if pieces else None  # the stages
        if found is not None:
            self.out = add_batches(staged, out) or EMPTY
            return
        if staged:
            out = add_into(out if out is not None else {}, staged)
        if not a and not b:
            self.out = out or EMPTY
            return
        if out is None:
            out = {}
        self.join_rows(out, a, b, i)
        self.out = out or EMPTY

    def join_rows(self, out: dict, a, b, i: int) -> None:
        """The pairs of the row deltas ``a`` and ``b`` at ``(e, i)`` into ``out``
        (those of later iterations into ``future``)."""
        left, right = self.reads[0].trace, self.reads[1].trace
        if self.compiled_for != (type(left), type(right)):
            self.prepare()
        if self.spilled:
            self.join_spilled(out, a, b, i)
        fns = self.functions
        if a:
            fns["left_nested"](out, a, right.epoch_cursor(), right.past_cursor(), i,
                               self.bucket)
            if b:
                self.both_deltas(out, a, b)
        if b:
            fns["right_nested"](out, b, left.epoch_cursor(), left.past_cursor(), i,
                                self.bucket)
