"""Turning the atoms the user types into rows and patterns.

An asserted fact ``edge(1, 2 + 3).`` becomes the row ``(1, 5)``: its arguments are
constants or constant expressions, computed with Soufflé's semantics
(:mod:`datalog.functors`). A query ``?- path(1, x).`` becomes a
:class:`Pattern` that matches the rows of ``path`` whose first column is ``1``;
a variable used twice (``path(x, x)``) asks for equal columns, ``_`` for anything.

>>> from datalog.ast import Atom, Constant, Span, Variable, Wildcard
>>> s = Span("<repl>", 1, 1, 1, 2)
>>> pattern = Pattern.of(Atom("p", (Variable("x", s), Variable("x", s), Wildcard(s)), s),
...                      ("number",) * 3)
>>> [pattern.matches(r) for r in [(1, 1, 5), (1, 2, 5)]]
[True, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datalog.ast import Atom, BinaryOp, Constant, Functor, Span, Term, UnaryOp, Variable, Wildcard
from datalog.errors import CheckError, Diagnostic
from datalog.functors import BINARY_OPS, FUNCTORS, UNARY_OPS, FunctorError

_PYTHON_TYPES = {"number": int, "unsigned": int, "float": float, "symbol": str}


def constant_value(term: Term, sources: dict[str, str]) -> tuple[Any, str]:
    """The value and primitive type of a constant expression.

    >>> s = Span("<repl>", 1, 1, 1, 2)
    >>> constant_value(BinaryOp("+", Constant(2, "number", s), Constant(3, "number", s), s), {})
    (5, 'number')
    """
    if isinstance(term, Constant):
        return term.value, term.type
    if isinstance(term, UnaryOp):
        table, args, name = UNARY_OPS, (term.operand,), term.op
    elif isinstance(term, BinaryOp):
        table, args, name = BINARY_OPS, (term.left, term.right), term.op
    elif isinstance(term, Functor):
        table, args, name = FUNCTORS, term.args, term.name
    else:
        raise _error("a fact's arguments must be constants", term.span, sources,
                     hint="queries are written `?- relation(x, ...)`"
                     if isinstance(term, (Variable, Wildcard)) else None)
    values = [constant_value(arg, sources) for arg in args]
    operator = table.get(name)
    overload = operator.resolve(tuple(t for _, t in values)) if operator else None
    if overload is None:
        raise _error(f"`{name}` cannot be applied to "
                     + ", ".join(t for _, t in values), term.span, sources)
    if name == "range":
        raise _error("`range` yields several values; assert one fact per value",
                     term.span, sources)
    try:
        return overload(*(v for v, _ in values)), overload.result
    except FunctorError as exc:  # division by zero, to_number("x"), ...
        message = exc.diagnostics[0].message if exc.diagnostics else str(exc)
        raise _error(message, term.span, sources) from None


def fact_row(atom: Atom, types: tuple[str, ...], sources: dict[str, str]) -> tuple:
    """The row an asserted fact stands for, each value of its column's Python
    type (a ``number`` literal in a ``float`` column is a float)."""
    row = []
    for arg, column_type in zip(atom.args, types):
        value, _ = constant_value(arg, sources)
        row.append(_convert(value, column_type))
    return tuple(row)


def _convert(value: Any, column_type: str) -> Any:
    wanted = _PYTHON_TYPES.get(column_type)
    if wanted is float and isinstance(value, int):
        return float(value)
    return value


@dataclass(frozen=True)
class Pattern:
    """What a query asks of each row: ``constants`` maps columns to the value they
    must hold, ``equal`` lists groups of columns that must hold one value."""

    relation: str
    constants: tuple[tuple[int, Any], ...]
    equal: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, atom: Atom, types: tuple[str, ...],
           sources: dict[str, str] | None = None) -> Pattern:
        constants: list[tuple[int, Any]] = []
        variables: dict[str, list[int]] = {}
        for column, (arg, column_type) in enumerate(zip(atom.args, types)):
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Variable):
                variables.setdefault(arg.name, []).append(column)
                continue
            value, _ = constant_value(arg, sources or {})
            constants.append((column, _convert(value, column_type)))
        equal = tuple(tuple(cols) for cols in variables.values() if len(cols) > 1)
        return cls(atom.relation, tuple(constants), equal)

    def matches(self, row: tuple) -> bool:
        if any(row[column] != value for column, value in self.constants):
            return False
        return all(all(row[c] == row[cols[0]] for c in cols[1:]) for cols in self.equal)


def _error(message: str, span: Span, sources: dict[str, str],
           hint: str | None = None) -> CheckError:
    return CheckError([Diagnostic("error", message, span, hint)], sources)
