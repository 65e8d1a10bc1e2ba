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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from datalog.analysis.check import check
from datalog.dialect.records import ADTType, ADTValue, RecordType
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
    #: ``(column, template)`` for every column when one is a record or ADT
    #: pattern with variables or ``_`` inside (``shape($Rect(1, x))``): the row's
    #: values must match the templates, each variable one value throughout.
    shapes: tuple[tuple[int, tuple], ...] = field(default=(), repr=False)

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
        shapes = tuple((column, _template(arg, column_type, sources or {}))
                       for column, (arg, column_type) in enumerate(zip(atom.args, types)))
        for column, (arg, column_type) in enumerate(zip(atom.args, types)):
            if isinstance(arg, ast.Wildcard):
                continue
            if isinstance(arg, ast.Variable):
                variables.setdefault(arg.name, []).append(column)
                continue
            if _open(arg):
                continue
            constants.append((column, fact_value(arg, column_type, sources or {})))
        equal = tuple(tuple(cols) for cols in variables.values() if len(cols) > 1)
        if not any(_open(arg) for arg in atom.args):
            shapes = ()
        return cls(atom.relation, tuple(constants), equal, shapes)

    def matches(self, row: tuple) -> bool:
        if any(row[column] != value for column, value in self.constants):
            return False
        if not all(all(row[c] == row[cols[0]] for c in cols[1:]) for cols in self.equal):
            return False
        bindings: dict[str, Any] = {}
        return all(_match(template, row[column], bindings)
                   for column, template in self.shapes)

    def select(self, rows: Iterable[tuple]) -> frozenset:
        """The rows that match."""
        if not self.constants and not self.equal and not self.shapes:
            return frozenset(rows)
        return frozenset(row for row in rows if self.matches(row))

    def select_columns(self, columns: list) -> frozenset:
        """:meth:`select` of rows given as ``int64`` numpy columns (a relation
        of numbers kept in columns): the constants and repeated variables
        compared column-wise, rows made only of the rows that match. A
        pattern with record templates is not for columns (``ValueError``).

        >>> import numpy as np
        >>> p = Pattern("r", ((0, 1),), ((1, 2),))
        >>> sorted(p.select_columns([np.array([1, 1, 2]), np.array([5, 6, 7]),
        ...                          np.array([5, 0, 7])]))
        [(1, 5, 5)]
        """
        import numpy as np

        if self.shapes or not columns:
            raise ValueError("a pattern with templates, or no columns: use select")
        keep = np.ones(len(columns[0]), dtype=bool)
        for column, value in self.constants:
            if type(value) is not int or not -(1 << 63) <= value < (1 << 63):
                return frozenset()  # no int64 holds it
            keep &= columns[column] == value
        for cols in self.equal:
            for other in cols[1:]:
                keep &= columns[other] == columns[cols[0]]
        return frozenset(zip(*(column[keep].tolist() for column in columns)))


def _bound_atom(relation: str, arity: int) -> str:
    """``r(x0, x1, ..)``: an atom of ``relation`` with a variable per column."""
    return f"{relation}({', '.join(f'x{i}' for i in range(arity))})"


def _check(atom: ast.Atom, checked: CheckedProgram, sources: dict[str, str]) -> None:
    """The front end's checks of a fact, applied to the query's atom with its
    variables and wildcards standing in as constants of their columns' types
    (so they judge the constants alone)."""
    types = tuple(checked.types.get(atom.relation, ()))
    types += ("number",) * (len(atom.args) - len(types))
    atom = ast.Atom(atom.relation, tuple(_ground(arg, t) for arg, t in zip(atom.args, types)),
                    atom.span)
    for arg in atom.args:
        inner = None if isinstance(arg, (ast.Variable, ast.Wildcard)) else _unknown(arg)
        if inner is not None:
            name = "`_`" if isinstance(inner, ast.Wildcard) else f"the variable `{inner.name}`"
            raise CheckError([Diagnostic(
                "error", f"{name} is inside an expression; a query's argument is a "
                "constant, a variable or `_`", inner.span)], sources)
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


def _open(term: ast.Term) -> bool:
    """Whether ``term`` is a record or constructor pattern with a variable or
    ``_`` inside (at any depth)."""
    if isinstance(term, (ast.Record, ast.Branch)):
        return any(isinstance(a, (ast.Variable, ast.Wildcard)) or _open(a) for a in term.args)
    return False


def _fields(term: ast.Term, type_: str) -> tuple[str, ...] | None:
    """The types of the fields of the pattern ``term`` in a column of ``type_``,
    or None when it is no pattern of that type (the checks say why)."""
    if isinstance(term, ast.Record) and isinstance(type_, RecordType) \
            and len(term.args) == len(type_.fields):
        return tuple(t for _, t in type_.fields)
    if isinstance(term, ast.Branch) and isinstance(type_, ADTType) \
            and len(term.args) == len(type_.branches.get(term.name, ())):
        return tuple(t for _, t in type_.branches[term.name])
    return None


def _ground(term: ast.Term, type_: str) -> ast.Term:
    """``term`` with the variables and ``_`` inside its record and constructor
    patterns replaced by constants of their fields' types (for the checks)."""
    if not _open(term):
        return term
    fields = _fields(term, type_)
    if fields is None:      # no pattern of the column's type: the checks say why
        fields = ("number",) * len(term.args)
    args = tuple(_placeholder(t, a.span) if isinstance(a, (ast.Variable, ast.Wildcard))
                 else _ground(a, t) for a, t in zip(term.args, fields))
    return ast.Record(args, term.span) if isinstance(term, ast.Record) \
        else ast.Branch(term.name, args, term.span)


def _template(term: ast.Term, type_: str, sources: dict[str, str]) -> tuple:
    """What :func:`_match` matches a value of ``type_`` against: ``("_",)``,
    ``("var", name)``, ``("const", value)``, ``("record", parts)``, ``("branch",
    name, parts)``."""
    if isinstance(term, ast.Wildcard):
        return ("_",)
    if isinstance(term, ast.Variable):
        return ("var", term.name)
    fields = _fields(term, type_) if _open(term) else None
    if fields is None:
        return ("const", fact_value(term, type_, sources))
    parts = tuple(_template(a, t, sources) for a, t in zip(term.args, fields))
    return ("record", parts) if isinstance(term, ast.Record) \
        else ("branch", term.name, parts)


def _match(template: tuple, value: Any, bindings: dict[str, Any]) -> bool:
    """Whether ``value`` matches ``template``, each variable taking one value
    (in ``bindings``)."""
    kind = template[0]
    if kind == "_":
        return True
    if kind == "var":
        if template[1] in bindings:
            return bindings[template[1]] == value
        bindings[template[1]] = value
        return True
    if kind == "const":
        return value == template[1]
    if kind == "record":
        parts = template[1]
        return isinstance(value, tuple) and not isinstance(value, ADTValue) \
            and len(value) == len(parts) and all(
                _match(p, v, bindings) for p, v in zip(parts, value))
    parts = template[2]
    return isinstance(value, ADTValue) and value[0] == template[1] \
        and len(value) == len(parts) + 1 and all(
            _match(p, v, bindings) for p, v in zip(parts, value[1:]))


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
