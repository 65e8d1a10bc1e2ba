"""Linear operators: Map, FlatMap, Filter, Negate, Index With, Plus, Minus, Inspect.

A linear operator ``L`` commutes with time: ``L(x)(t) = L(x(t))``, so the
incremental form is the operator itself applied to each difference::

    delta(L(x)) = L(delta(x))

A chain of them (``map -> filter -> flat_map -> ... -> index``) is **fused** into
one pass: the circuit hands the stages of a chain to the node that produces its
input (another chain, or a join, which then applies them to each joined row), and
the stages are compiled into a single Python loop over the batch, so a row is
one tuple from the source to the next non-linear operator.

>>> run = compile_chain([("map", lambda r: (r[1], r[0])), ("filter", lambda r: r[0] > 1)],
...                     index=("cols", (0,)))
>>> run({(1, 2): 1, (5, 0): 1, (7, 3): -2})
{(2,): {(2, 1): 1}, (3,): {(3, 7): -2}}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine import colbatch
from engine.codegen import build_function, key_expression, tuple_expression
from engine.colbatch import ColBatch
from engine.node import Node
from engine.operators import columns
from engine.zset import EMPTY, sum_zsets

# ---------------------------------------------------------------------------
# Code generation for fused chains


def emit_lines(stages, index, row: str, weight: str, target: str, env: dict,
               indent: str, getter: str | None = None) -> list[str]:
    """Lines that push ``(row, weight)`` through ``stages`` and add the result
    into the dict named ``target`` (indexed when ``index`` is given).

    The lines must sit inside a ``for`` loop (a filter ``continue``s it).
    ``getter`` names a local bound to ``target.get``, if there is one.
    """
    getter = getter or f"{target}.get"
    lines = []
    current = row
    sign = 1
    for kind, fn in stages:
        name = f"_f{len(env)}"
        env[name] = fn
        if kind == "map":
            var = f"_r{len(env)}"
            lines.append(f"{indent}{var} = {name}({current})")
            current = var
        elif kind == "project":
            var = f"_r{len(env)}"
            lines.append(f"{indent}{var} = {tuple_expression(fn, current)}")
            current = var
        elif kind == "filter":
            lines.append(f"{indent}if not {name}({current}): continue")
        elif kind == "flat_map":
            var = f"_r{len(env)}"
            lines.append(f"{indent}for {var} in {name}({current}):")
            indent += "    "
            current = var
        elif kind == "negate":
            sign = -sign
        else:
            raise ValueError(f"unknown linear stage {kind!r}")
    w = weight if sign == 1 else f"(-{weight})"
    if index is None:
        lines += [
            f"{indent}_t = {getter}({current}, 0) + {w}",
            f"{indent}if _t: {target}[{current}] = _t",
            f"{indent}else: del {target}[{current}]",
        ]
    else:
        key = key_expression(index, current, env)
        lines += [
            f"{indent}_k = {key}",
            f"{indent}_g = {getter}(_k)",
            f"{indent}if _g is None: {target}[_k] = {{{current}: {w}}}",
            f"{indent}else:",
            f"{indent}    _t = _g.get({current}, 0) + {w}",
            f"{indent}    if _t: _g[{current}] = _t",
            f"{indent}    else:",
            f"{indent}        del _g[{current}]",
            f"{indent}        if not _g: del {target}[_k]",
        ]
    return lines


def compile_chain(stages, index=None) -> Callable[[Mapping], dict]:
    """One function running a Z-set batch through every stage in one pass."""
    env: dict = {}
    lines = ["def run(batch):", "    out = {}", "    out_get = out.get",
             "    for row, w in batch.items():"]
    lines += emit_lines(stages, index, "row", "w", "out", env, "        ", "out_get")
    lines.append("    return out")
    return build_function("run", lines, env)


# ---------------------------------------------------------------------------
# Nodes


class LinearNode(Node):
    """A fused chain of Map / FlatMap / Filter / Negate stages, optionally ending
    with an Index stage (then the output is an indexed Z-set).

    ``delta(out) = chain(delta(in))``, at each time.
    """

    quiet = True

    def __init__(self, source: Node, stages, index=None, label: str = ""):
        super().__init__([source], label)
        self.own_stages = list(stages)
        self.own_index = index
        self.stages = list(stages)
        self.index = index
        self.run = None

    @property
    def indexed(self) -> bool:
        return self.index is not None

    def absorb(self, consumer: LinearNode) -> None:
        """Take over the stages of ``consumer``, whose only input is this node."""
        self.stages += consumer.stages
        self.index = consumer.index

    def prepare(self) -> None:
        self.run = compile_chain(self.stages, self.index)

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        self.out = self.run(batch) if batch else EMPTY

    def describe_args(self) -> str:
        parts = [f"project{fn!r}" if kind == "project" else kind
                 for kind, fn in self.own_stages]
        if self.own_index is not None:
            kind, spec = self.own_index
            parts.append(f"index_by{tuple(spec)}" if kind == "cols" else "index_with")
        return " ".join(parts)


class PlusNode(Node):
    """Plus (and Minus, built as plus of a negation): the sum of its inputs.

    ``delta(a + b) = delta(a) + delta(b)``.
    """

    quiet = True

    def evaluate(self, i: int) -> None:
        batches = [n.out for n in self.inputs if n.out]
        if not batches:
            self.out = EMPTY
        elif len(batches) == 1:
            self.out = batches[0]
        else:
            found = None
            if (any(isinstance(b, ColBatch) for b in batches)
                    and sum(map(len, batches)) >= colbatch.PLUS_ROWS):
                found = columns.plus(batches)  # None: rows that do not fit columns
            self.out = (found if found is not None else sum_zsets(batches)) or EMPTY

    def describe_args(self) -> str:
        return "plus"


class InspectNode(Node):
    """Inspect: passes its input through and calls ``callback(batch, time)`` for
    every non-empty batch (``time`` is the epoch, or ``(epoch, iteration)``)."""

    observable = True  # kept even when nothing reads its output
    quiet = True

    def __init__(self, source: Node, callback: Callable, label: str = ""):
        super().__init__([source], label)
        self.callback = callback
        self.epoch = 0

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.epoch = time

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        self.out = batch
        if batch:
            nested = self.circuit is not None and self.circuit.nested
            self.callback(batch, (self.epoch, i) if nested else self.epoch)

    def describe_args(self) -> str:
        return "inspect"
