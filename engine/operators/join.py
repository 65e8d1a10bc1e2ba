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

    a ──index──┬──────────────┐
               └─TraceAppend  ├─ Join ─> a⋈z⁻¹(B) + z⁻¹(A)⋈b + a⋈b
    b ──index──┬──────────────┘
               └─TraceAppend

One :class:`TraceNode` exists per (stream, key): every join reading the same
relation by the same columns shares it. A join's output rows go through the
linear stages fused after it (map/filter/index) inside the join loop.
"""

from __future__ import annotations

import heapq
from typing import Callable, Mapping

from engine.node import Node
from engine.operators.linear import build_functions, emit_lines
from engine.trace import MASK, SHIFT, Trace
from engine.zset import EMPTY


class TraceNode(Node):
    """Trace Append: keeps the trace of an indexed stream for the joins that read it.

    ``evaluate`` does nothing: during a time, readers see the trace *before* it
    (``z^-1``); the batch is appended when the time is over (end of iteration in
    a child circuit, end of epoch in the root).
    """

    iteration_hook = True

    def __init__(self, source: Node, nested: bool, label: str = ""):
        super().__init__([source], label)
        self.trace = Trace(nested=nested)

    def clock_stop(self, scope: int, time: int) -> None:
        trace = self.trace
        if scope == 1:
            trace.append(self.inputs[0].out, time)
        elif trace.nested:
            trace.commit()
        else:
            trace.append(self.inputs[0].out)
            trace.commit()

    def rollback(self) -> None:
        self.trace.rollback()

    def describe_args(self) -> str:
        return "trace"


# ---------------------------------------------------------------------------
# Generated pair loops

def combine_expression(combine) -> str:
    """``combine(k, lv, rv)``, or for a projection spec ``((side, column), ...)``
    (side 0: left row, 1: right row) the tuple written out inline."""
    if callable(combine):
        return "combine(k, lv, rv)"
    return "(" + "".join(f"{('lv', 'rv')[side]}[{column}], " for side, column in combine) + ")"


def _pairs_function(name: str, left_kind: str, right_kind: str, outer: str,
                    stages, index, env: dict) -> list[str]:
    """Source of ``name(target, left, right[, i, future])``: every pair of
    values with equal keys, ``combine(key, left_value, right_value)`` run through
    the fused stages into ``target`` (or ``future(j)`` for a later iteration j).

    ``*_kind``: ``plain`` (value -> weight), ``total`` (value -> history, summed:
    all at the current time), ``timed`` (value -> history of past epochs: the
    pair's time is ``max(i, j)``). ``outer`` names the side that is iterated.
    """
    timed = "timed" in (left_kind, right_kind)
    args = "target, left, right, i, future" if timed else "target, left, right"
    inner = "right" if outer == "left" else "left"
    outer_group, inner_group = ("lg", "rg") if outer == "left" else ("rg", "lg")
    lines = [
        f"def {name}({args}):",
        f"    get = {inner}.get",
        "    target_get = target.get",
        f"    for k, {outer_group} in {outer}.items():",
        f"        {inner_group} = get(k)",
        f"        if {inner_group} is None: continue",
    ]

    def side_loop(side: str, kind: str, ind: str) -> tuple[list[str], str]:
        var, wvar, group = ("lv", "lw", "lg") if side == "left" else ("rv", "rw", "rg")
        if kind == "plain":
            return [f"{ind}for {var}, {wvar} in {group}.items():"], wvar
        if kind == "total":
            return [f"{ind}for {var}, _h in {group}.items():",
                    f"{ind}    {wvar} = _h >> {SHIFT} if type(_h) is int else sum(_h.values())",
                    f"{ind}    if not {wvar}: continue"], wvar
        return [f"{ind}for {var}, _h in {group}.items():"], "_h"

    ind = "        "
    first, lw = side_loop("left", left_kind, ind)
    second, rw = side_loop("right", right_kind, ind + "    ")
    lines += first + second
    ind += "        "
    lines.append(f"{ind}row = {combine_expression(env['combine'])}")
    if not timed:
        lines.append(f"{ind}w = {lw} * {rw}")
        lines += emit_lines(stages, index, "row", "w", "target", env, ind, "target_get")
        return lines
    plain_w = rw if left_kind == "timed" else lw
    lines += [
        f"{ind}if type(_h) is int:",
        f"{ind}    _j = _h & {MASK}",
        f"{ind}    w = {plain_w} * (_h >> {SHIFT})",
        f"{ind}    _tg = target if _j <= i else future(_j)",
    ]
    lines += emit_lines(stages, index, "row", "w", "_tg", env, ind + "    ")
    lines += [
        f"{ind}else:",
        f"{ind}    for _j, _hw in _h.items():",
        f"{ind}        w = {plain_w} * _hw",
        f"{ind}        _tg = target if _j <= i else future(_j)",
    ]
    lines += emit_lines(stages, index, "row", "w", "_tg", env, ind + "        ")
    return lines


def compile_join(combine: Callable, stages, index, nested: bool) -> dict[str, Callable]:
    """The pair loops a join needs, compiled with its fused stages."""
    env: dict = {"combine": combine}
    lines: list[str] = []
    specs = {"plain_left": ("plain", "plain", "left"),
             "plain_right": ("plain", "plain", "right")}
    if nested:
        specs.update({
            "delta_cur_left": ("plain", "total", "left"),
            "delta_cur_right": ("plain", "total", "right"),
            "cur_delta_left": ("total", "plain", "left"),
            "cur_delta_right": ("total", "plain", "right"),
            "delta_past": ("plain", "timed", "left"),
            "past_delta": ("timed", "plain", "right"),
        })
    for name, (lk, rk, outer) in specs.items():
        lines += _pairs_function(name, lk, rk, outer, stages, index, env)
    return build_functions(list(specs), lines, env)


def _smaller_outer(functions: dict, prefix: str, left: Mapping, right: Mapping):
    """The variant of a plain/total pair loop that iterates the smaller side."""
    return functions[prefix + ("_left" if len(left) <= len(right) else "_right")]


class JoinNode(Node):
    """Join (incremental, bilinear; module docstring). Root scope: times are epochs,
    so every pair lands at the current epoch::

        out = a ⋈ B_past + a ⋈ b + A_past ⋈ b
    """

    def __init__(self, left: Node, right: Node, left_trace: TraceNode,
                 right_trace: TraceNode, combine: Callable, label: str = ""):
        super().__init__([left, right], label, reads=[left_trace, right_trace])
        self.combine = combine
        self.stages: list = []
        self.index = None
        self.functions: dict = {}

    @property
    def indexed(self) -> bool:
        return self.index is not None

    @property
    def left_trace(self) -> Trace:
        return self.reads[0].trace

    @property
    def right_trace(self) -> Trace:
        return self.reads[1].trace

    def absorb(self, consumer) -> None:
        self.stages += consumer.stages
        self.index = consumer.index

    def prepare(self) -> None:
        self.functions = compile_join(self.combine, self.stages, self.index,
                                      nested=self.circuit is not None and self.circuit.nested)

    def finish(self, out: dict) -> None:
        self.out = out or EMPTY

    def evaluate(self, i: int) -> None:
        a, b = self.inputs[0].out, self.inputs[1].out
        if not a and not b:
            self.out = EMPTY
            return
        fns = self.functions
        out: dict = {}
        if a:
            past = self.right_trace.past
            _smaller_outer(fns, "plain", a, past)(out, a, past)
            if b:
                _smaller_outer(fns, "plain", a, b)(out, a, b)
        if b:
            past = self.left_trace.past
            _smaller_outer(fns, "plain", past, b)(out, past, b)
        self.finish(out)

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
            if out is None:
                self.out = EMPTY
            else:
                self.finish(out)
            return
        if out is None:
            out = {}
        fns = self.functions
        bucket = self.bucket
        left, right = self.left_trace, self.right_trace
        if a:
            if right.cur:
                _smaller_outer(fns, "delta_cur", a, right.cur)(out, a, right.cur)
            if right.past:
                fns["delta_past"](out, a, right.past, i, bucket)
            if b:
                _smaller_outer(fns, "plain", a, b)(out, a, b)
        if b:
            if left.cur:
                _smaller_outer(fns, "cur_delta", left.cur, b)(out, left.cur, b)
            if left.past:
                fns["past_delta"](out, left.past, b, i, bucket)
        self.finish(out)


# ---------------------------------------------------------------------------
# The operators of the specification on plain data (used by tests and docs)


def join_stream(combine: Callable, a: Mapping, b: Mapping) -> dict:
    """Join Stream: ``combine(k, va, vb)`` for every pair with equal keys, weights
    multiplied (``a``, ``b``: indexed Z-sets at one time).

    >>> join_stream(lambda k, x, y: (k, x, y), {"a": {1: 1}}, {"a": {1: 1, 2: -1}})
    {('a', 1, 1): 1, ('a', 1, 2): -1}
    """
    fns = compile_join(combine, [], None, nested=False)
    out: dict = {}
    fns["plain_left"](out, a, b)
    return out


def join_trace(combine: Callable, a: Mapping, trace_entries) -> dict:
    """Join Trace: the indexed Z-set ``a`` joined with every entry
    ``(key, value, time, weight)`` of a trace (times summed away).

    >>> join_trace(lambda k, x, y: (k, x, y), {"b": {2: 2}}, [("b", 3, 0, 1), ("b", 3, 1, 1)])
    {('b', 2, 3): 4}
    """
    collected: dict = {}
    for key, value, _time, weight in trace_entries:
        group = collected.setdefault(key, {})
        total = group.get(value, 0) + weight
        if total:
            group[value] = total
        else:
            del group[value]
    return join_stream(combine, a, collected)

