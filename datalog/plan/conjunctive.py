"""Conjunctive queries: what :meth:`datalog.Session.ask` and the REPL's
``?- path(1, x), edge(x, y), y > 3.`` ask.

A conjunctive query is a rule's body without its head: atoms, negated atoms,
comparisons, arithmetic, functors, aggregates and ``;`` alternatives, over the
program's relations. Its answers are the bindings of its named variables
(outside aggregates, not starting with ``_``, in order of first appearance)
that make the body true. It is read and checked as the body of a rule
``__query(x, y) :- ...`` is (by the program's parser and the front end's checks:
known relations, arities, types, every variable bound), so a bad query gets
the located diagnostic a bad rule gets, placed in the query's own text; then
it is planned as that rule is (:func:`datalog.plan.lower.plan_clause`), and a
session evaluates its pipelines over the current rows.

``values`` bind variables to Python values before anything is checked, so a
query's constants need no quoting or escaping (``ask("name(p, n)", n='a "b"')``).

>>> from datalog.analysis.frontend import load
>>> checked = load(".decl e(x: number, y: number)")
>>> query = Conjunction.parse("e(1, x), e(x, y), y > 3", checked)
>>> query.variables, query.types
(('x', 'y'), ('number', 'number'))
>>> Conjunction.parse("e(1, x), z > 3", checked)  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
datalog.errors.CheckError: <query>:1:10: error: ...`z`...
    e(1, x), z > 3
             ^
...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from datalog.analysis.check import check
from datalog.analysis.context import Context
from datalog.analysis.transforms.inline import InlineError
from datalog.analysis.transforms.patterns import counted
from datalog.analysis.typecheck import variable_types
from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.errors import CheckError, DataError, Diagnostic, ParseError
from datalog.plan.ir import RulePlan
from datalog.plan.lower import plan_clause
from datalog.syntax import ast
from datalog.syntax.parser import parse
from datalog.syntax.terms import direct_variables, literal_terms

if TYPE_CHECKING:
    from datalog.analysis.frontend import CheckedProgram

#: The relation a query's answers are the head of (a name no program can declare).
HEAD = "__query"
_HEAD_LINE = HEAD + "() :-\n"


@dataclass(frozen=True)
class Conjunction:
    """A checked, planned conjunctive query: the names and primitive types of
    its answer ``variables``, and one :class:`~datalog.plan.ir.RulePlan` per
    ``;`` alternative, whose head row is an answer (a value per variable).
    ``sources`` is its text by path, for errors raised while evaluating."""

    variables: tuple[str, ...]
    types: tuple[str, ...]
    rules: tuple[RulePlan, ...]
    sources: dict[str, str]

    @classmethod
    def parse(cls, text: str, checked: CheckedProgram, path: str = "<query>", *,
              values: dict[str, Any] | None = None,
              macros: dict[str, object] | None = None) -> Conjunction:
        """The query ``text`` over the relations of ``checked``, its variables
        in ``values`` replaced by those values. Raises
        :class:`~datalog.errors.ParseError` (not a body),
        :class:`~datalog.errors.CheckError` (as for a rule: unknown relation,
        arity, types, an unbound variable) or :class:`~datalog.errors.DataError`
        (a value that is no constant of the dialect, a name that is no
        variable of the query)."""
        if not isinstance(text, str):
            raise ParseError(f"a query must be a string, not {type(text).__name__}")
        sources = {path: text}
        rule = _parse_body(text, path, sources, macros)
        if values:
            rule = _bind(rule, values)
        body = rule.body
        names: list[str] = []
        for conjunction in body:
            found = sorted((v for literal in conjunction
                            for v in direct_variables(literal_terms(literal))),
                           key=lambda v: (v.span.line, v.span.column))
            for v in found:
                if not v.name.startswith("_") and v.name not in names:
                    names.append(v.name)
        program = checked.program
        inlined = checked.inlined
        declaration = ast.RelationDecl(HEAD, (), (), rule.span)
        relations = (*program.relations, *inlined.decls.values(), declaration)
        headless = dataclasses.replace(rule, heads=(ast.Atom(HEAD, (), rule.span),))
        # inline relations are checked with their clauses (a negated one must allow it)
        own = tuple(ast.Rule((head,), (body,), head.span)
                    for clauses in inlined.clauses.values() for head, body in clauses)
        probe = ast.Module(types=program.types, relations=relations, rules=(headless, *own),
                           sources=tuple(program.sources) + tuple(sources.items()))
        errors = [d for d in check(probe) if d.severity == "error"
                  and d.span is not None and d.span.path == path]
        if errors:
            raise CheckError(errors, sources)
        context = Context(probe)
        types: dict[str, str] = {}
        for conjunction in body:
            found = variable_types(context, probe.rules[0].heads[0], conjunction)
            for name, type_ in found.items():
                types.setdefault(name, context.table.primitive(type_))
        column_types = tuple(types.get(name) or "number" for name in names)
        relation_types = {**checked.types, HEAD: column_types}
        rules = []
        try:        # inline relations are evaluated on demand: their rules substituted
            body = tuple(counted(alt) for conjunction in body
                         for alt in inlined.expand(conjunction, names))
        except InlineError as error:
            raise CheckError([Diagnostic("error", str(error), error.span)], sources) from None
        for conjunction in body:
            spans = {}
            for literal in conjunction:
                for v in direct_variables(literal_terms(literal)):
                    spans.setdefault(v.name, v.span)
            head = ast.Atom(HEAD, tuple(ast.Variable(n, spans.get(n, rule.span))
                                        for n in names), rule.span)
            rules.append(plan_clause(head, conjunction, relation_types, sources))
        return cls(tuple(names), column_types, tuple(rules), sources)


def _parse_body(text: str, path: str, sources: dict[str, str],
                macros: dict[str, object] | None) -> ast.Rule:
    """``text`` parsed as the body of a rule, its spans placed in ``text``."""
    stripped = text.rstrip()
    clause = _HEAD_LINE + (stripped if stripped.endswith(".") else text + "\n.")
    try:
        module = parse(clause, path, macros=macros)
    except ParseError as error:
        raise ParseError([_shift(d, text) for d in error.diagnostics], sources) from None
    items = [*module.rules, *module.facts, *module.relations, *module.directives,
             *module.types]
    if len(items) != 1 or not module.rules or not module.rules[0].body or \
            not any(module.rules[0].body):
        place = items[1].span if len(items) > 1 else module.rules[0].span if module.rules \
            else None
        span = _shift_span(place, text) if place is not None else ast.Span(path, 1, 1, 1, 2)
        raise ParseError([Diagnostic(
            "error", "a query is the body of a rule: atoms and comparisons joined by `,`",
            span, "such as `path(1, x), edge(x, y), y > 3`")], sources)
    return _shift_tree(module.rules[0], text)


def _shift_span(span: ast.Span, text: str) -> ast.Span:
    """A span of the parsed clause as a span of the query's own text (the
    clause has the head's line before it, and perhaps a final `.` after it)."""
    lines = text.split("\n")
    line, end_line = max(span.line - 1, 1), max(span.end_line - 1, 1)
    column, end_column = span.column, span.end_column
    if line > len(lines):           # on the `.` added at the end
        line, end_line = len(lines), len(lines)
        column = len(lines[-1].rstrip()) + 1
        end_column = column + 1
    elif end_line > len(lines):
        end_line, end_column = len(lines), len(lines[-1]) + 1
    if span.line == 1:              # on the head's line: the whole text
        line, column, end_line, end_column = 1, 1, 1, len(lines[0]) + 1
    return ast.Span(span.path, line, column, end_line, max(end_column, column + 1)
                    if end_line == line else end_column)


def _shift(diagnostic: Diagnostic, text: str) -> Diagnostic:
    if diagnostic.span is None:
        return diagnostic
    return dataclasses.replace(diagnostic, span=_shift_span(diagnostic.span, text))


def _shift_tree(node, text: str):
    """``node`` (an AST node, tuple or value) with every span shifted."""
    if isinstance(node, ast.Span):
        return _shift_span(node, text)
    if isinstance(node, tuple):
        return tuple(_shift_tree(item, text) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: _shift_tree(getattr(node, f.name), text)
                   for f in dataclasses.fields(node)}
        return dataclasses.replace(node, **changes)
    return node


def _bind(node, values: dict[str, Any]):
    """``node`` with each variable named in ``values`` replaced by its value
    as a constant; every name must be a variable of the query."""
    constants = {name: _constant(name, value) for name, value in values.items()}
    used: set[str] = set()

    def walk(item):
        if isinstance(item, ast.Variable) and item.name in constants:
            used.add(item.name)
            value, type_ = constants[item.name]
            return ast.Constant(value, type_, item.span)
        if isinstance(item, tuple):
            return tuple(walk(part) for part in item)
        if dataclasses.is_dataclass(item) and not isinstance(item, (type, ast.Span)):
            return dataclasses.replace(item, **{f.name: walk(getattr(item, f.name))
                                                for f in dataclasses.fields(item)})
        return item

    bound = walk(node)
    unknown = [name for name in values if name not in used]
    if unknown:
        raise DataError(f"the query has no variable `{unknown[0]}` to give a value")
    return bound


def _constant(name: str, value) -> tuple[Any, str]:
    """A Python value as a constant of the dialect and its type."""
    import numbers

    if isinstance(value, str):
        return value, "symbol"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and \
            type(value).__name__ != "bool_":
        value = int(value)
        if NUMBER_MIN <= value <= NUMBER_MAX:
            return value, "number"
        if 0 <= value <= UNSIGNED_MAX:
            return value, "unsigned"
    elif isinstance(value, numbers.Real) and not isinstance(value, bool) and \
            value == value and type(value).__name__ != "bool_":
        return float(value), "float"
    raise DataError(f"`{name}` = {value!r} is not a value of the dialect (a 64-bit "
                    "integer, a float or a str)")


__all__ = ["HEAD", "Conjunction"]
