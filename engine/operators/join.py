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

from engine.codegen import build_functions, key_expression
from engine.node import Node
from engine.operators.linear import emit_lines
from engine.trace import MASK, SHIFT, Trace
from engine.zset import EMPTY


class TraceNode(Node):
    """Trace Append: keeps the trace of a stream by a key for the joins (and
    aggregates) that read it; one per (stream, key).

    ``evaluate`` does nothing: during a time, readers see the trace *before* it
    (``z^-1``); the batch is appended when the time is over (end of iteration in
    a child circuit, end of epoch in the root).
    """

    iteration_hook = True

    def __init__(self, source: Node, index, nested: bool, label: str = ""):
        super().__init__([source], label)
        self.index = index
        self.trace = Trace(nested=nested, index=index)

    def clock_stop(self, scope: int, time: int) -> None:
        trace = self.trace
        if scope == 1:
            trace.append_rows(self.inputs[0].out, time)
        elif trace.nested:
            trace.commit()
        else:
            trace.append_rows(self.inputs[0].out)
            trace.commit()

    def rollback(self) -> None:
        self.trace.rollback()

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


def _delta_function(name: str, delta_side: str, store_kind: str, key_index,
                    stages, env: dict) -> list[str]:
    """Source of ``name(target, rows, store[, i, future])``: each row of the
    delta (the ``delta_side`` input) joined with the values of the ``store``
    (an indexed store of the other side) under the row's key, through
    ``combine`` and the fused stages, into ``target`` (or ``future(j)``).

    ``store_kind``: ``plain`` (value -> weight, all at the current time),
    ``total`` (value -> history of this epoch: summed, all at the current time),
    ``timed`` (value -> history of past epochs: a pair's time is ``max(i, j)``).
    """
    timed = store_kind == "timed"
    args = "target, rows, store, i, future" if timed else "target, rows, store"
    dv, dw, sv = ("lv", "lw", "rv") if delta_side == "left" else ("rv", "rw", "lv")
    key = key_expression(key_index, dv, env)
    ind = "            "
    lines = [
        f"def {name}({args}):",
        "    get = store.get",
        "    target_get = target.get",
        f"    for {dv}, {dw} in rows.items():",
    ]
    if callable(env["combine"]):  # it receives the key
        lines += [f"        k = {key}", "        sg = get(k)"]
    else:
        lines.append(f"        sg = get({key})")
    lines.append("        if sg is None: continue")
    if store_kind == "plain":
        lines.append(f"        for {sv}, sw in sg.items():")
        weight = f"{dw} * sw"
    else:
        lines.append(f"        for {sv}, _h in sg.items():")
    row = f"{ind}row = {combine_expression(env['combine'])}"
    if store_kind == "plain":
        lines += [row, f"{ind}w = {weight}"]
        lines += emit_lines(stages, None, "row", "w", "target", env, ind, "target_get")
        return lines
    if store_kind == "total":
        lines += [
            f"{ind}sw = _h >> {SHIFT} if type(_h) is int else sum(_h.values())",
            f"{ind}if not sw: continue",
            row,
            f"{ind}w = {dw} * sw",
        ]
        lines += emit_lines(stages, None, "row", "w", "target", env, ind, "target_get")
        return lines
    lines += [
        row,
        f"{ind}if type(_h) is int:",
        f"{ind}    _j = _h & {MASK}",
        f"{ind}    w = {dw} * (_h >> {SHIFT})",
        f"{ind}    _tg = target if _j <= i else future(_j)",
    ]
    lines += emit_lines(stages, None, "row", "w", "_tg", env, ind + "    ")
    lines += [
        f"{ind}else:",
        f"{ind}    for _j, _hw in _h.items():",
        f"{ind}        w = {dw} * _hw",
        f"{ind}        _tg = target if _j <= i else future(_j)",
    ]
    lines += emit_lines(stages, None, "row", "w", "_tg", env, ind + "        ")
    return lines


def compile_join(combine: Callable, stages, left_index, right_index,
                 nested: bool) -> dict[str, Callable]:
    """The loops a join needs, compiled with its key specs and fused stages:
    ``left_<kind>`` iterates a left delta against a right store, ``right_<kind>``
    a right delta against a left store."""
    env: dict = {"combine": combine}
    lines: list[str] = []
    kinds = ("plain", "total", "timed") if nested else ("plain",)
    names = []
    for side, index in (("left", left_index), ("right", right_index)):
        for kind in kinds:
            name = f"{side}_{kind}"
            names.append(name)
            lines += _delta_function(name, side, kind, index, stages, env)
    return build_functions(names, lines, env)


class JoinNode(Node):
    """Join (incremental, bilinear; module docstring). Root scope: times are epochs,
    so every pair lands at the current epoch::

        out = a ⋈ B_past + a ⋈ b + A_past ⋈ b

    Its inputs are the row streams; the keys are those of its two TraceNodes.
    """

    indexed = False  # its output is rows; linear stages after it are fused in
    spilled = False  # True when a trace it reads may hold entries in Spark

    def __init__(self, left: Node, right: Node, left_trace: TraceNode,
                 right_trace: TraceNode, combine: Callable, label: str = ""):
        super().__init__([left, right], label, reads=[left_trace, right_trace])
        self.combine = combine
        self.stages: list = []
        self.functions: dict = {}

    @property
    def left_trace(self) -> Trace:
        return self.reads[0].trace

    @property
    def right_trace(self) -> Trace:
        return self.reads[1].trace

    def absorb(self, consumer) -> None:
        """Take over the linear stages of ``consumer`` (a chain reading only this)."""
        self.stages += consumer.stages

    def prepare(self) -> None:
        self.functions = compile_join(self.combine, self.stages, self.reads[0].index,
                                      self.reads[1].index,
                                      nested=self.circuit is not None and self.circuit.nested)

    def join_spilled(self, out: dict, a: dict, b: dict, i: int) -> None:
        """``a ⋈ B_spark + A_spark ⋈ b``: the parts of the traces moved to Spark
        (``engine.spark.spill``), looked up for the keys of the other side's
        difference and paired by the same loops as the in-memory parts. Called
        before those are read: a lookup may first move them to Spark."""
        fns, nested = self.functions, "left_timed" in self.functions
        for side, delta, own, other in (("left", a, self.left_trace, self.right_trace),
                                         ("right", b, self.right_trace, self.left_trace)):
            if not delta or not hasattr(other, "spilled_matches"):
                continue
            cur, past = other.spilled_matches(own.index_rows(delta).keys())
            if not nested:
                if past:
                    fns[f"{side}_plain"](out, delta, past)
                continue
            if cur:
                fns[f"{side}_total"](out, delta, cur)
            if past:
                fns[f"{side}_timed"](out, delta, past, i, self.bucket)

    def both_deltas(self, out: dict, a: dict, b: dict) -> None:
        """``a ⋈ b``: the smaller delta is indexed on the fly, the other iterated."""
        if len(a) >= len(b):
            self.functions["left_plain"](out, a, self.right_trace.index_rows(b))
        else:
            self.functions["right_plain"](out, b, self.left_trace.index_rows(a))

    def evaluate(self, i: int) -> None:
        a, b = self.inputs[0].out, self.inputs[1].out
        if not a and not b:
            self.out = EMPTY
            return
        fns = self.functions
        out: dict = {}
        if self.spilled:
            self.join_spilled(out, a, b, 0)
        if a:
            past = self.right_trace.past
            if past:
                fns["left_plain"](out, a, past)
            if b:
                self.both_deltas(out, a, b)
        if b:
            past = self.left_trace.past
            if past:
                fns["right_plain"](out, b, past)
        self.out = out or EMPTY

    def describe_args(self) -> str:
        return "join"


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
        self.heap: list = []

    def bucket(self, iteration: int) -> dict:
        """The buffer of output for a later iteration of this epoch."""
        found = self.future.get(iteration)
        if found is None:
            found = self.future[iteration] = {}
            heapq.heappush(self.heap, iteration)
        return found

    def pending(self) -> int | None:
        return self.heap[0] if self.heap else None

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.future, self.heap = {}, []

    def rollback(self) -> None:
        self.future, self.heap = {}, []

    def evaluate(self, i: int) -> None:
        heap = self.heap
        out = None
        if heap and heap[0] == i:
            heapq.heappop(heap)
            out = self.future.pop(i)
        a, b = self.inputs[0].out, self.inputs[1].out
        if not a and not b:
            self.out = out or EMPTY
            return
        if out is None:
            out = {}
        if self.spilled:
            self.join_spilled(out, a, b, i)
        fns = self.functions
        bucket = self.bucket
        left, right = self.left_trace, self.right_trace
        if a:
            if right.cur:
                fns["left_total"](out, a, right.cur)
            if right.past:
                fns["left_timed"](out, a, right.past, i, bucket)
            if b:
                self.both_deltas(out, a, b)
        if b:
            if left.cur:
                fns["right_total"](out, b, left.cur)
            if left.past:
                fns["right_timed"](out, b, left.past, i, bucket)
        self.out = out or EMPTY
