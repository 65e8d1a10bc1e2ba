"""Semantic checks: pure functions from a parsed program to diagnostics.

:func:`check` runs every check and returns all errors and warnings, sorted by
place; nothing stops at the first error. The checks, each its own function:

- :func:`datalog.analysis.types.check_types`: duplicate, unknown, cyclic and mixed types;
- :func:`check_declarations`: duplicate relations, unknown attribute types,
  ``eqrel`` on a relation that is not binary and homogeneous, conflicting storage,
  directives naming undeclared relations, I/O parameters (values the engine does
  not support are errors, parameters it does not read warnings), ``.plan``
  (ignored, a warning), relations with no facts, rules or input (a warning);
- :func:`check_clauses`: in every fact and rule, undefined relations (with "did
  you mean"), arity mismatches, unknown functors and wrong functor arities,
  number literals beyond 64 bits, facts with non-constant arguments;
- :func:`check_range` (per clause): range restriction, ``_`` outside atom
  arguments or in a head, singleton variables (a warning, silenced by a leading
  ``_``);
- :func:`datalog.analysis.typecheck.check_clause_types`: type mismatches (number vs
  symbol vs float, user types with their subtypes and unions) across
  declarations, facts and rule bodies.

Range restriction: a variable is *bound* by a positive atom in which it is an
argument, or by an equality ``x = t`` whose other side has only bound variables.
Every variable of the head, of a negated atom, of a comparison or of a functor
argument must be bound. Inside an aggregate body, the variables that also occur
outside the aggregate are the outer ones; the others are local to it.

>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number, y: number)\\n.decl p(x: number)\\np(x) :- e(y, y).')
>>> for d in check(p): print(f"{d.severity}: {d.message}")
warning: relation `e` has no facts, rules or input
error: variable `x` in the head is not bound in the body
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.grounded import Grounding, Scope
from datalog.analysis.typecheck import check_clause_types
from datalog.analysis.types import (  # relation_types is part of this module's API
    TypeTable,
    check_types,
    relation_types,
    word_span,
)
from datalog.dialect.functors import FUNCTORS
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import (
    AGGREGATES,
    Aggregate,
    Atom,
    Comparison,
    Constant,
    Fact,
    Functor,
    Literal,
    Module,
    Negation,
    RelationDecl,
    Span,
    Variable,
    Wildcard,
)
from datalog.syntax.terms import (
    aggregates_in,
    clause_variables,
    direct_variables,
    literal_terms,
    subterms,
)

#: Parameters of `.input` / `.output` directives that the engine reads
#: (`datalog/dialect/io.py`); others are accepted with a warning that they are ignored.
IO_PARAMETERS = ("IO", "filename", "delimiter", "headers")
IO_KINDS = {"input": ("file", "stdin"), "output": ("file", "stdout"),
            "printsize": ("stdout",)}


_BOOLEANS = ("true", "false", "1", "0", "yes", "no")


def check(program: Module) -> list[Diagnostic]:
    """Every error and warning of ``program``, sorted by place."""
    context = Context(program)
    table = context.table
    diagnostics = check_types(program, table)
    diagnostics += check_declarations(program, table)
    diagnostics += check_clauses(program, context)
    diagnostics += check_clause_types(program, context)
    return sort_diagnostics(diagnostics)


def sort_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Without duplicates (a rule with ``;`` is checked once per alternative),
    ordered by file, line and column; diagnostics without a place first."""
    unique = list(dict.fromkeys(diagnostics))

    def key(d: Diagnostic):
        s = d.span
        return (0, "", 0, 0) if s is None else (1, s.path, s.line, s.column)
    return sorted(unique, key=key)


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


# ---------------------------------------------------------------- declarations


def check_declarations(program: Module, table: TypeTable) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    first: dict[str, RelationDecl] = {}
    for decl in program.relations:
        if decl.name in first:
            out.append(Diagnostic("error", f"relation `{decl.name}` is declared twice",
                                  decl.span, hint=f"first declared at {first[decl.name].span}"))
            continue
        first[decl.name] = decl
        for attr in decl.attributes:
            if not table.known(attr.type):
                out.append(Diagnostic("error", f"unknown type `{attr.type}`",
                                      word_span(sources, attr.span, attr.type),
                                      hint=did_you_mean(attr.type, table.names())))
        if "eqrel" in decl.qualifiers:
            types = {a.type for a in decl.attributes}
            if decl.arity != 2 or len(types) != 1:
                out.append(Diagnostic("error", f"`eqrel` relation `{decl.name}` must have "
                                      "two attributes of the same type", decl.span,
                                      hint="an equivalence relation relates values of "
                                           "one type"))
        if "btree" in decl.qualifiers and "brie" in decl.qualifiers:
            out.append(Diagnostic("error", f"relation `{decl.name}` cannot be both `btree` "
                                  "and `brie`", decl.span, hint="choose one"))
    declared = list(first)
    for directive in program.directives:
        for name in directive.relations:
            if name not in first:
                out.append(_undefined(name, declared, word_span(sources, directive.span,
                                                                  name)))
        allowed = IO_KINDS.get(directive.kind, ())
        for key, value in directive.params:
            if directive.kind == "printsize" or key not in IO_PARAMETERS:
                near = did_you_mean(key, IO_PARAMETERS) if directive.kind != "printsize" \
                    else None
                if key == "rfc4180":
                    near = "fields are split at the delimiter; quotes are not removed"
                out.append(Diagnostic("warning", f"parameter `{key}` of "
                                      f"`.{directive.kind}` is ignored",
                                      word_span(sources, directive.span, key),
                                      hint=near))
            elif key == "IO" and value.lower() not in allowed:
                out.append(Diagnostic("error", f"`.{directive.kind}` does not support "
                                      f"`IO={value}`",
                                      word_span(sources, directive.span, key),
                                      hint="supported: " + ", ".join(f"`IO={a}`"
                                                                     for a in allowed)))
            elif key in ("headers", "rfc4180") and value.strip().lower() not in _BOOLEANS:
                out.append(Diagnostic("error", f"`{key}` must be `true` or `false`",
                                      word_span(sources, directive.span, key)))
    for plan in program.plans:
        out.append(Diagnostic("warning", "`.plan` is ignored", plan.span,
                              hint="the engine chooses the join order itself"))
    defined = {f.atom.relation for f in program.facts}
    defined |= {h.relation for r in program.rules for h in r.heads}
    defined |= set(program.relations_with("input"))
    for name, decl in first.items():
        if name not in defined:
            out.append(Diagnostic("warning", f"relation `{name}` has no facts, rules or "
                                  "input", decl.span, hint=f"add `.input {name}` to read "
                                  "it from a file"))
    return out


def _undefined(name: str, declared: list[str], span: Span) -> Diagnostic:
    hint = did_you_mean(name, declared) or f"declare it with `.decl {name}(...)`"
    return Diagnostic("error", f"undefined relation `{name}`", span, hint=hint)


# ---------------------------------------------------------------- clauses


def check_clauses(program: Module, context: Context) -> list[Diagnostic]:
    """Relations, arities, functors, ground facts, range restriction, singletons."""
    decls: dict[str, RelationDecl] = {}
    for decl in program.relations:
        decls.setdefault(decl.name, decl)
    out: list[Diagnostic] = []
    for fact in program.facts:
        out += _check_atom(fact.atom, decls)
        out += _check_terms(fact.atom.args, decls)
        out += _check_fact(fact)
    for rule in program.rules:
        for head in rule.heads:
            out += _check_atom(head, decls)
            out += _check_terms(head.args, decls)
        for conjunction in rule.body:
            for literal in conjunction:
                out += _check_literal(literal, decls)
        for head, conjunction in rule.clauses():
            out += check_range(head, conjunction, context.grounding(head, conjunction))
    return out


def _check_atom(atom: Atom, decls: dict[str, RelationDecl]) -> list[Diagnostic]:
    decl = decls.get(atom.relation)
    if decl is None:
        return [_undefined(atom.relation, list(decls), atom.span)]
    if decl.arity != len(atom.args):
        return [Diagnostic("error", f"relation `{atom.relation}` has {decl.arity} "
                           f"attribute{'s' if decl.arity != 1 else ''}, got "
                           f"{len(atom.args)} argument{'s' if len(atom.args) != 1 else ''}",
                           atom.span, hint=f"declared at {decl.span}")]
    return []


def _check_literal(literal: Literal, decls: dict[str, RelationDecl]) -> list[Diagnostic]:
    if isinstance(literal, Atom):
        return _check_atom(literal, decls) + _check_terms(literal.args, decls)
    if isinstance(literal, Negation):
        return _check_atom(literal.atom, decls) + _check_terms(literal.atom.args, decls)
    return _check_terms((literal.left, literal.right), decls)


def _check_terms(terms, decls: dict[str, RelationDecl]) -> list[Diagnostic]:
    """Functor names and arities, and the literals of aggregate bodies."""
    out: list[Diagnostic] = []
    for term in subterms(terms):
        if isinstance(term, Constant):
            out += _check_constant(term)
        elif isinstance(term, Functor):
            out += _check_functor(term, decls)
        elif isinstance(term, Aggregate):
            for literal in term.body:
                out += _check_literal(literal, decls)
    return out


def _check_constant(term: Constant) -> list[Diagnostic]:
    """Numbers must fit the engine's 64-bit values."""
    if term.type == "number" and not -(2 ** 63) <= term.value < 2 ** 63:
        return [Diagnostic("error", f"`{term.value}` does not fit in a 64-bit `number`",
                           term.span, hint="numbers range from -2^63 to 2^63 - 1")]
    if term.type == "unsigned" and not 0 <= term.value < 2 ** 64:
        return [Diagnostic("error", f"`{term.value}u` does not fit in a 64-bit `unsigned`",
                           term.span, hint="unsigned numbers range from 0 to 2^64 - 1")]
    if term.type == "float" and term.value in (float("inf"), float("-inf")):
        return [Diagnostic("error", "float literal out of range", term.span)]
    return []


def _check_functor(term: Functor, decls: dict[str, RelationDecl]) -> list[Diagnostic]:
    if term.name.startswith("@"):
        return [Diagnostic("error", f"user-defined functor `{term.name}` is not supported",
                           term.span, hint="the built-in functors are "
                           + ", ".join(f"`{n}`" for n in FUNCTORS))]
    operator = FUNCTORS.get(term.name)
    if operator is None:
        if term.name in AGGREGATES:
            hint = f"`{term.name}` is an aggregate: write `{term.name} x : {{ ... }}`" \
                if term.name != "count" else "`count` is an aggregate: write `count : { ... }`"
        elif term.name in decls:
            hint = (f"`{term.name}` is a relation; a relation is not a value (to count "
                    f"its tuples write `count : {term.name}(...)`)")
        else:
            hint = did_you_mean(term.name, FUNCTORS)
        return [Diagnostic("error", f"unknown functor `{term.name}`", term.span, hint=hint)]
    if not operator.accepts_arity(len(term.args)):
        return [Diagnostic("error", f"`{term.name}` takes {operator.arity_text()}, got "
                           f"{len(term.args)}", term.span,
                           hint="; ".join(operator.signatures()[:3]))]
    return []


def _check_fact(fact: Fact) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for term in subterms(fact.atom.args):
        if isinstance(term, Variable):
            out.append(Diagnostic("error", f"a fact's arguments must be constants; `{term.name}` "
                                  "is a variable", term.span,
                                  hint=f"a clause with variables needs a body: "
                                       f"`{fact.atom.relation}(...) :- ...`"))
        elif isinstance(term, Wildcard):
            out.append(Diagnostic("error", "a fact's arguments must be constants, not `_`",
                                  term.span))
        elif isinstance(term, Aggregate):
            out.append(Diagnostic("error", "a fact's arguments must be constants, not an "
                                  "aggregate", term.span, hint="compute it in a rule"))
    return out


# ---------------------------------------------------------------- range restriction


def check_range(head: Atom, body: tuple[Literal, ...], grounding: Grounding) -> list[Diagnostic]:
    """Range restriction and singleton variables of one clause ``head :- body``,
    whose groundedness is ``grounding``."""
    out: list[Diagnostic] = []
    counts = grounding.counts
    unbound: set[tuple[int, str]] = set()
    unbound_names: set[str] = set()

    def need(terms, scope: Scope, bound: set, what: str) -> None:
        for v in direct_variables(terms):
            key = scope.key(v.name)
            if key not in bound and key not in unbound:
                unbound.add(key)
                unbound_names.add(v.name)
                out.append(Diagnostic("error", f"variable `{v.name}` {what} is not bound in "
                                      "the body", v.span, hint="bind it with a positive atom "
                                      f"or an equality such as `{v.name} = ...`"))

    def misplaced_wildcards(terms, as_arguments: bool) -> None:
        """``_`` stands for an ignored argument of an atom, nothing else."""
        for t in terms:
            if isinstance(t, Wildcard) and as_arguments:
                continue
            for w in subterms([t], targets=False):
                if isinstance(w, Wildcard):
                    out.append(Diagnostic("error", "`_` can only be an argument of an atom",
                                          w.span, hint="use a named variable"))

    def check_body(body, scope: Scope, bound: set) -> None:
        for literal in body:
            misplaced_wildcards(literal_terms(literal), not isinstance(literal, Comparison))
            if isinstance(literal, Atom):
                need([a for a in literal.args if not isinstance(a, Variable)], scope, bound,
                     "in an expression")
            elif isinstance(literal, Negation):
                need(literal.atom.args, scope, bound, "in a negated atom")
            else:
                need((literal.left, literal.right), scope, bound,
                     "in an equality" if literal.op == "=" else "in a comparison")
            for agg in aggregates_in(literal_terms(literal)):
                check_aggregate(agg)

    def check_aggregate(agg: Aggregate) -> None:
        inner = grounding.scope(agg)
        inner_bound = grounding.bound(inner)
        if agg.target is not None:
            misplaced_wildcards([agg.target], as_arguments=False)
            need([agg.target], inner, inner_bound, "in the aggregate's target")
        check_body(agg.body, inner, inner_bound)

    top = grounding.top
    bound = grounding.bound(top)
    for arg in head.args:
        if isinstance(arg, Wildcard):
            out.append(Diagnostic("error", "`_` in the head of a rule", arg.span,
                                  hint="a head needs values: use a variable bound in the body"))
    need(head.args, top, bound, "in the head")
    misplaced_wildcards(head.args, as_arguments=True)
    for agg in aggregates_in(head.args):
        check_aggregate(agg)
    check_body(body, top, bound)
    first: dict[str, Variable] = {}
    for v in clause_variables(head, body):
        first.setdefault(v.name, v)
    for name, n in counts.items():
        if n == 1 and not name.startswith("_") and name not in unbound_names:
            out.append(Diagnostic("warning", f"variable `{name}` occurs only once",
                                  first[name].span,
                                  hint=f"replace it with `_`, or name it `_{name}`"))
    return out


__all__ = [
    "check",
    "check_clauses",
    "check_declarations",
    "check_range",
    "errors",
    "relation_types",
    "sort_diagnostics",
]
