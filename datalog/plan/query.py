"""Query patterns: what :meth:`datalog.Session.query` and the REPL's ``?-`` ask.

A query is one atom, read by the program's parser
(:func:`datalog.syntax.parser.parse_query`): ``path(1, x)``, or a bare ``path``
for every row. Each argument is a constant that the column must equal, written
as in a fact and evaluated as a fact's (:func:`datalog.plan.lower.fact_value`:
``7u``, ``0x1f``, ``"a\\.b"``, ``1 + 2``, ``2`` in a ``float`` column is
``2.0``), a variable (one used in several columns asks for equal columns) or
``_`` (anything). The front end checks the atom as it checks a fact (known
relation, arity, constants of the columns' types), so a bad query gets the
located diagnostic a bad fact gets.

>>> from datalog.analysis.frontend import load
>>> checked = load(".decl path(x: number, y: number)")
>>> Pattern.parse("path(1, x)", checked)
Pattern(relation='path', constants=((0, 1),), equal=())
>>> pattern = Pattern.parse("path(x, x)", checked)
>>> pattern.equal, pattern.select({(1, 1), (1, 2)})
(((0, 1),), frozenset({(1, 1)}))
>>> Pattern.parse("path", checked)
Pattern(relation='path', constants=(), equal=())
>>> Pattern.parse("pth(1, x)", checked)  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
datalog.errors.CheckError: <query>:1:1: error: undefined relation `pth`
    pth(1, x)
    ^~~~~~~~~
hint: did you mean `path`?
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from datalog.analysis.check import check
from datalog.dialect.records import ADTType, RecordType
from datalog.errors import CheckError, Diagnostic
from datalog.plan.lower import fact_value
from datalog.syntax import ast
from datalog.syntax.parser import parse_query

if TYPE_CHECKING:
    from datalog.analysis.frontend import CheckedProgram

#: A constant of each column type, standing in for a query's variables when the
#: front end checks the query's atom as a fact.
_PLACEHOLDERS = {"number": 0, "unsigned": 0, "float": 0.0, "symbol": ""}


@dataclass(frozen=True)
class Pattern:
    """What a query asks of each row of ``relation``: ``constants`` are the
    ``(column, value)`` pairs a row must hold, ``equal`` the groups of columns
    (a variable's) that must hold one value."""

    relation: str
    constants: tuple[tuple[int, Any], ...]
    equal: tuple[tuple[int, ...], ...]

    @classmethod
    def parse(cls, text: str, checked: CheckedProgram, path: str = "<query>",
              example: str = "path(1, x)") -> Pattern:
        """The pattern of the query ``text`` over the relations of ``checked``;
        diagnostics name ``path`` and show ``example`` where a hint needs one.
        Raises :class:`~datalog.errors.ParseError` (not one atom) or
        :class:`~datalog.errors.CheckError` (unknown relation, wrong arity, a
        constant of another type, an argument that is not a constant, a
        variable or ``_``)."""
        types = checked.types
        inlined = checked.inlined
        columns = {**types, **{name: tuple(a.type for a in decl.attributes)
                               for name, decl in inlined.decls.items()}}
        atom = parse_query(text, path, columns, example)
        sources = {path: text}
        if atom.relation in inlined:
            raise CheckError([Diagnostic(
                "error", f"`{atom.relation}` is an inline relation: it is not stored, so it "
                "has no rows to list", atom.span,
                "ask for its rows as a conjunctive query, evaluated on demand: " + (
                    f"`?- {_bound_atom(atom.relation, len(atom.args))}.`"
                    if example.startswith("?-") else
                    f"`session.ask(\"{_bound_atom(atom.relation, len(atom.args))}\")`"))],
                sources)
        if not (atom.relation in types and len(atom.args) == len(types[atom.relation])
                and all(isinstance(arg, (ast.Variable, ast.Wildcard)) for arg in atom.args)):
            _check(atom, checked, sources)    # (nothing to check in `path` or `path(x, _)`)
        return cls.of(atom, types[atom.relation], sources)

    @classmethod
    def of(cls, atom: ast.Atom, types: tuple[str, ...],
           sources: dict[str, str] | None = None) -> Pattern:
        """The pattern of a checked query atom whose columns have ``types``."""
        constants: list[tuple[int, Any]] = []
        variables: dict[str, list[int]] = {}
        for column, (arg, column_type) in enumerate(zip(atom.args, types)):
            if isinstance(arg, ast.Wildcard):
                continue
            if isinstance(arg, ast.Variable):
                variables.setdefault(arg.name, []).append(column)
                continue
            constants.append((column, fact_value(arg, column_type, sources or {})))
        equal = tuple(tuple(cols) for cols in variables.values() if len(cols) > 1)
        return cls(atom.relation, tuple(constants), equal)

    def matches(self, row: tuple) -> bool:
        if any(row[column] != value for column, value in self.constants):
            return False
        return all(all(row[c] == row[cols[0]] for c in cols[1:]) for cols in self.equal)

    def select(self, rows: Iterable[tuple]) -> frozenset:
        """The rows that match."""
        if not self.constants and not self.equal:
            return frozenset(rows)
        return frozenset(row for row in rows if self.matches(row))


def _bound_atom(relation: str, arity: int) -> str:
    """``r(x0, x1, ..)``: an atom of ``relation`` with a variable per column."""
    return f"{relation}({', '.join(f'x{i}' for i in range(arity))})"


def _check(atom: ast.Atom, checked: CheckedProgram, sources: dict[str, str]) -> None:
    """The front end's checks of a fact, applied to the query's atom with its
    variables and wildcards standing in as constants of their columns' types
    (so they judge the constants alone)."""
    for arg in atom.args:
        inner = None if isinstance(arg, (ast.Variable, ast.Wildcard)) else _unknown(arg)
        if inner is not None:
            name = "`_`" if isinstance(inner, ast.Wildcard) else f"the variable `{inner.name}`"
            raise CheckError([Diagnostic(
                "error", f"{name} is inside an expression; a query's argument is a "
                "constant, a variable or `_`", inner.span)], sources)
    types = tuple(checked.types.get(atom.relation, ()))
    types += ("number",) * (len(atom.args) - len(types))
    ground = tuple(_placeholder(column_type, arg.span)
                   if isinstance(arg, (ast.Variable, ast.Wildcard)) else arg
                   for arg, column_type in zip(atom.args, types))
    program = checked.program
    relations = program.relations       # all of them for a did-you-mean, else the one
    if atom.relation in checked.types:
        relations = tuple(decl for decl in relations if decl.name == atom.relation)
    probe = ast.Module(types=program.types, relations=relations,
                       facts=(ast.Fact(ast.Atom(atom.relation, ground, atom.span), atom.span),),
                       sources=tuple(program.sources) + tuple(sources.items()))
    errors = [d for d in check(probe) if d.severity == "error"
              and d.span is not None and d.span.path in sources]
    if errors:
        raise CheckError(errors, sources)


def _placeholder(type_: str, span, depth: int = 0) -> ast.Term:
    """A constant term of ``type_`` (``nil`` for a record type, the branch with
    fewest fields for an ADT)."""
    if isinstance(type_, RecordType) or depth > 20:
        return ast.Nil(span)
    if isinstance(type_, ADTType):
        name, fields = min(type_.branches.items(), key=lambda item: len(item[1]))
        return ast.Branch(name, tuple(_placeholder(t, span, depth + 1) for _, t in fields),
                          span)
    return ast.Constant(_PLACEHOLDERS[type_], type_, span)


def _unknown(term: ast.Term) -> ast.Variable | ast.Wildcard | None:
    """The first variable or wildcard inside the expression ``term``."""
    if isinstance(term, (ast.Variable, ast.Wildcard)):
        return term
    parts = ((term.left, term.right) if isinstance(term, ast.BinaryOp)
             else (term.operand,) if isinstance(term, ast.UnaryOp)
             else term.args if isinstance(term, (ast.Functor, ast.Record, ast.Branch))
             else (term.term,) if isinstance(term, ast.Cast) else ())
    return next(filter(None, map(_unknown, parts)), None)
