"""Turning the queries the user types into patterns.

An asserted fact ``edge(1, 2 + 3).`` becomes the row ``(1, 5)`` exactly as a fact
of the program would (:func:`datalog.plan.lower.fact_row`). A query ``?- path(1, x).``
becomes a :class:`Pattern` that matches the rows of ``path`` whose first column is
``1`` (its constants evaluated the same way); a variable used twice
(``path(x, x)``) asks for equal columns, ``_`` for anything.

>>> from datalog.syntax.ast import Atom, Constant, Span, Variable, Wildcard
>>> s = Span("<repl>", 1, 1, 1, 2)
>>> pattern = Pattern.of(Atom("p", (Variable("x", s), Variable("x", s), Wildcard(s)), s),
...                      ("number",) * 3)
>>> [pattern.matches(r) for r in [(1, 1, 5), (1, 2, 5)]]
[True, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datalog.plan.lower import fact_value
from datalog.syntax.ast import Atom, Variable, Wildcard


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
            constants.append((column, fact_value(arg, column_type, sources or {})))
        equal = tuple(tuple(cols) for cols in variables.values() if len(cols) > 1)
        return cls(atom.relation, tuple(constants), equal)

    def matches(self, row: tuple) -> bool:
        if any(row[column] != value for column, value in self.constants):
            return False
        return all(all(row[c] == row[cols[0]] for c in cols[1:]) for cols in self.equal)

