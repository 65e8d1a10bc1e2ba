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

from engine import colbatch, vector
from engine.codegen import build_function, key_expression, tuple_expression
from engine.colbatch import SYMBOLS, ColBatch
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
# Chains on columns


class ColumnChain:
    """A chain run on a :class:`~engine.colbatch.ColBatch`: its longest prefix
    of stages with a columnar form (projections, negations, and maps, filters
    and flat_maps given a :class:`~engine.vector.Program`) on the columns, the
    rest per row (its rows counted in ``colbatch.COUNTS["row_stages"]``). A
    batch the programs cannot compute exactly (``vector.Fallback``: a division
    by zero, a NaN) runs through the whole chain per row, which gives the row
    path's result or error (counted in ``COUNTS["row_batches"]``).

    >>> from engine.vector import Col, Op, Program
    >>> keep = Program((("filter", Op("ne", (Col(0), Col(1)), "i")),))
    >>> chain = ColumnChain([("filter", lambda r: r[0] != r[1]), ("project", (1,))],
    ...                     [keep, None])
    >>> dict(chain(ColBatch.from_rows({(1, 2): 1, (3, 3): 1, (4, 2): -1})))
    {}
    >>> chain.columnar
    2
    """

    def __init__(self, stages, vectors, index=None):
        found = []
        for (kind, spec), program in zip(stages, vectors):
            if kind in ("project", "negate"):
                found.append((kind, spec))
            elif program is not None and kind in ("map", "filter", "flat_map"):
                found.append(("program", program))
            else:
                break
        #: how many leading stages run on columns
        self.columnar = len(found)
        self.steps = found
        self.whole = compile_chain(stages, index)
        rest = stages[len(found):]
        self.rest = (self.whole if not found else compile_chain(rest, index)
                     if rest or index is not None else None)

    def __call__(self, batch: ColBatch):
        """The batch through the chain: a ColBatch, or rows when stages ran
        per row."""
        out = batch
        try:
            for kind, spec in self.steps:
                if not out:
                    return out
                if kind == "negate":
                    out = out.negate()
                elif kind == "project":
                    out = out.project(spec)
                else:
                    out = vector.run(spec, out)
        except vector.Fallback:
            colbatch.COUNTS["row_batches"] += 1
            colbatch.COUNTS["row_stages"] += len(batch)
            return self.whole(_Pairs(batch))
        if self.rest is not None and out:
            colbatch.COUNTS["row_stages"] += len(out)
            return self.rest(_Pairs(out))
        colbatch.COUNTS["linear"] += 1
        return out


class _Pairs:
    """A columnar batch read once as ``(row, weight)`` pairs by the row stages:
    no dict of its rows is kept (the stages make new rows)."""

    __slots__ = ("batch",)

    def __init__(self, batch: ColBatch):
        self.batch = batch

    def items(self):
        batch = self.batch
        values = [SYMBOLS.symbols(c) if kind == "s" else c.tolist()
                  for c, kind in zip(batch.columns, batch.kinds)]
        rows = zip(*values) if values else [()] * len(batch.weights)
        return zip(rows, batch.weights.tolist())


def chain_vectors(stages, vectors) -> list:
    """``vectors`` (one program or ``None`` per stage), ``None`` for each
    stage when not given."""
    return list(vectors) if vectors is not None else [None] * len(stages)


# ---------------------------------------------------------------------------
# Nodes


class LinearNode(Node):
    """A fused chain of Map / FlatMap / Filter / Negate stages, optionally ending
    with an Index stage (then the output is an indexed Z-set).

    ``delta(out) = chain(delta(in))``, at each time.

    ``vectors`` holds, per stage, a :class:`~engine.vector.Program` computing
    it on columns, or ``None``: an input of at least ``colbatch.THRESHOLD``
    rows goes through :class:`ColumnChain` and stays columnar (a dict one,
    such as a bulk load's input, is put in columns first: the fused loop
    would make a row of each, freed with the epoch); smaller batches take the
    one fused loop.
    """

    quiet = True

    def __init__(self, source: Node, stages, index=None, label: str = "", vectors=None):
        super().__init__([source], label)
        self.own_stages = list(stages)
        self.own_index = index
        self.stages = list(stages)
        self.vectors = chain_vectors(stages, vectors)
        self.index = index
        self.run = None
        self.on_columns = None

    @property
    def indexed(self) -> bool:
        return self.index is not None

    def absorb(self, consumer: LinearNode) -> None:
        """Take over the stages of ``consumer``, whose only input is this node."""
        self.stages += consumer.stages
        self.vectors += consumer.vectors
        self.index = consumer.index

    def prepare(self) -> None:
        chain = ColumnChain(self.stages, self.vectors, self.index)
        self.run = chain.whole
        self.on_columns = chain if chain.columnar and self.index is None else None

    def evaluate(self, i: int) -> None:
        batch = self.inputs[0].out
        if not batch:
            self.out = EMPTY
        elif self.on_columns is not None and len(batch) >= colbatch.THRESHOLD:
            columns = batch if type(batch) is ColBatch else ColBatch.from_rows(batch)
            self.out = (self.on_columns(columns) if columns is not None
                        else self.run(batch)) or EMPTY
        else:
            self.out = self.run(batch)

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
    sum_of_inputs = True  # with one non-empty input, its output is that input's

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
