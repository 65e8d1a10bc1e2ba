"""Evaluating plan expressions (:mod:`datalog.plan.ir`) in Python, with Soufflé's
semantics from :mod:`datalog.dialect.functors`.

Two forms: :func:`evaluate` interprets an expression on a row (facts, constant
folding), and :class:`Codegen` turns expressions into Python source text over a
row variable, with the resolved operator implementations bound as names of the
generated code's namespace (or written in place, an overload's ``inline``
expression: ``+``, ``-``, ``*`` on integers, wrapped to 64 bits). The circuit
compiler fuses a rule's filters, assignments and head projection into one
generated function this way.

>>> from datalog.plan.ir import Call, Col, Const
>>> e = Call("+", (Col(0), Const(1)), ("number", "number"))
>>> evaluate(e, (41,))
42
>>> gen = Codegen()
>>> gen.expr(Call("/", (Col(0), Const(2)), ("number", "number")), "r")
'_op0(r[0], 2)'
>>> gen.expr(Call("+", (Col(0), Const(1)), ("unsigned", "unsigned")), "r")
'(((r[0]) + (1)) & 18446744073709551615)'
>>> gen.expr(Call("<", (Col(0), Col(1)), ("number", "number")), "r")
'(r[0] < r[1])'
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any

from datalog.dialect.functors import BINARY_OPS, COMPARISONS, FUNCTORS, UNARY_OPS, Overload
from datalog.dialect.records import ADTValue
from datalog.dialect.user_functors import AUTOINC
from datalog.plan.ir import Call, Col, Const, Expr, Field, Pack

#: Comparisons that Python's own operators compute exactly as Soufflé does on
#: values of one primitive type.
_INLINE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
#: The same comparisons as functions, for :func:`evaluate` (on every type, records
#: and ADT values included, as the generated code does).
_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def resolve(call: Call, functors: Mapping[str, Overload] | None = None) -> Overload:
    """The implementation of ``call`` for its argument types; ``functors`` holds
    those of the program's user-defined functors (``@name``) and of ``autoinc``
    (:mod:`datalog.dialect.user_functors`), bound per program and session."""
    if call.op.startswith("@") or call.op == AUTOINC:
        found = functors.get(call.op) if functors else None
        if found is None:
            raise ValueError(f"no implementation of {call.op} is bound")
        return found
    if call.op in COMPARISONS and len(call.args) == 2:
        table = COMPARISONS
    elif len(call.args) == 1 and call.op in UNARY_OPS:
        table = UNARY_OPS
    elif len(call.args) == 2 and call.op in BINARY_OPS:
        table = BINARY_OPS
    else:
        table = FUNCTORS
    operator = table.get(call.op)
    overload = operator.resolve(call.types) if operator is not None else None
    if overload is None:
        raise ValueError(f"no implementation of {call.op}{call.types}")
    return overload


def evaluate(expr: Expr, row: tuple, functors: Mapping[str, Overload] | None = None) -> Any:
    """The value of ``expr`` on ``row`` (for ``range``: an iterator of values).

    >>> list(evaluate(Call("range", (Const(0), Const(3)), ("number", "number")), ()))
    [0, 1, 2]
    """
    if isinstance(expr, Col):
        return row[expr.index]
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Pack):
        values = tuple(evaluate(a, row, functors) for a in expr.args)
        return values if expr.branch is None else ADTValue((expr.branch, *values))
    if isinstance(expr, Field):
        return evaluate(expr.arg, row, functors)[expr.index]
    if expr.op in _COMPARE and len(expr.args) == 2:
        return _COMPARE[expr.op](*(evaluate(a, row, functors) for a in expr.args))
    return resolve(expr, functors)(*(evaluate(a, row, functors) for a in expr.args))


class Codegen:
    """Collects the names generated code refers to (``namespace``) while
    turning expressions into Python source."""

    def __init__(self, functors: Mapping[str, Overload] | None = None) -> None:
        self.functors = functors
        self.namespace: dict[str, Any] = {}
        self._names: dict[int, str] = {}
        self._constants: dict[tuple, str] = {}

    def bind(self, value: Any, prefix: str = "_v") -> str:
        """A namespace name for ``value`` (one per distinct object)."""
        name = self._names.get(id(value))
        if name is None:
            name = f"{prefix}{len(self.namespace)}"
            self._names[id(value)] = name
            self.namespace[name] = value
        return name

    def const(self, value: Any) -> str:
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                key = ("float", repr(value))
                if key not in self._constants:
                    self._constants[key] = self.bind(value, "_c")
                return self._constants[key]
            return repr(value)
        if isinstance(value, tuple):   # a record or ADT value: bound by name
            return self.bind(value, "_c")
        return repr(value)

    def expr(self, expr: Expr, row: str, columns: list[str] | None = None) -> str:
        """Python source computing ``expr`` over the tuple named ``row`` (or,
        with ``columns``, slot ``i`` read as the source ``columns[i]``)."""
        if isinstance(expr, Col):
            return columns[expr.index] if columns is not None else f"{row}[{expr.index}]"
        if isinstance(expr, Const):
            return self.const(expr.value)
        if isinstance(expr, Field):
            return f"{self.expr(expr.arg, row, columns)}[{expr.index}]"
        args = [self.expr(a, row, columns) for a in expr.args]
        if isinstance(expr, Pack):
            if expr.branch is None:
                return f"({', '.join(args)},)"
            items = ", ".join([repr(expr.branch), *args])
            return f"{self.bind(ADTValue, '_adt')}(({items},))"
        if expr.op in _INLINE and len(args) == 2:
            return f"({args[0]} {_INLINE[expr.op]} {args[1]})"
        overload = resolve(expr, self.functors)
        if getattr(overload, "inline", None) is not None:
            return overload.inline.format(*args)
        return f"{self.bind(overload.function, '_op')}({', '.join(args)})"
