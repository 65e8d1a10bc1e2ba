"""Clauses: what is wrong in a fact or a rule, literal by literal.

Takes a module and its :class:`~datalog.analysis.context.Context` (for the
declared relations) and gives: undefined relations (with "did you mean"), arity
mismatches, unknown functors and wrong functor arities, number literals beyond
64 bits, facts with non-constant arguments (all errors). Variables are
:mod:`datalog.analysis.checks.range`'s, types :mod:`datalog.analysis.typecheck`'s.

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number)\\ne(x).\\ne(1, 2).\\ne(strln("a")).')
>>> for d in check_clauses(p, Context(p)): print(d.message)
a fact's arguments must be constants; `x` is a variable
relation `e` has 1 attribute, got 2 arguments
unknown functor `strln`
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.dialect.functors import FUNCTORS
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import (
    AGGREGATES,
    Aggregate,
    Atom,
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
from datalog.syntax.terms import subterms


def check_clauses(program: Module, context: Context) -> list[Diagnostic]:
    """Relations, arities, functors, number literals and ground facts in every
    fact and rule."""
    decls = context.decls
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
    return out


def _check_atom(atom: Atom, decls: dict[str, RelationDecl]) -> list[Diagnostic]:
    decl = decls.get(atom.relation)
    if decl is None:
        return [undefined_relation(atom.relation, list(decls), atom.span)]
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
        return []  # checks/functors.py
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


def undefined_relation(name: str, declared: list[str], span: Span) -> Diagnostic:
    """``name`` is not a declared relation (one of ``declared``)."""
    instance, _, relation = name.rpartition(".")
    fix = (f"declare `{relation}` in the component `{instance}` instantiates" if instance
           else f"declare it with `.decl {name}(...)`")
    hint = did_you_mean(name, declared) or fix
    return Diagnostic("error", f"undefined relation `{name}`", span, hint=hint)
