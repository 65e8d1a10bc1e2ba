"""User-defined functors: their ``.functor`` declarations and their ``@f(..)`` calls.

Takes a module and its :class:`~datalog.analysis.context.Context` (the type table)
and gives these errors: a functor declared twice, a parameter or result of unknown
type, a call to an undeclared functor (with "did you mean"), a call with the wrong
number of arguments, and a fact that calls a user-defined functor or ``autoinc()``
(facts are values known before any callable is bound: derive such a row with a
rule). The calls' types are checked by :mod:`datalog.analysis.typecheck`, as
for the built-in functors.

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse(".functor f(x: number): nmber\\n.decl e(x: number)\\ne(1).\\n"
...           "e(y) :- e(x), y = @g(x).\\ne(y) :- e(x), y = @f(x, x).")
>>> for d in check_functors(p, Context(p)): print(d.message)
unknown type `nmber`
undefined functor `@g`
functor `@f` takes 1 argument, got 2
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from datalog.analysis.context import Context
from datalog.analysis.types import word_span
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import Aggregate, Functor, FunctorDecl, Literal, Module, Term
from datalog.syntax.terms import literal_terms, subterms


def check_functors(program: Module, context: Context) -> list[Diagnostic]:
    """Declarations of user-defined functors and every call of one."""
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    declared: dict[str, FunctorDecl] = {}
    for decl in program.functors:
        if decl.name in declared:
            out.append(Diagnostic("error", f"functor `@{decl.name}` is declared twice",
                                  decl.span, hint=f"first declared at {declared[decl.name].span}"))
            continue
        declared[decl.name] = decl
        for type_name in (*decl.params, decl.result):
            if not context.table.known(type_name):
                out.append(Diagnostic("error", f"unknown type `{type_name}`",
                                      word_span(sources, decl.span, type_name),
                                      hint=did_you_mean(type_name, context.table.names())))
    for fact in program.facts:
        for term in subterms(fact.atom.args):
            if isinstance(term, Functor) and (term.name.startswith("@")
                                              or term.name == "autoinc"):
                out.append(Diagnostic(
                    "error", f"a fact cannot call `{term.name}(..)`", term.span,
                    hint=f"derive the row with a rule, e.g. `{fact.atom.relation}(...) :- "
                         f"seed(...).`"))
    for rule in program.rules:
        literals = [head for head in rule.heads] + [lit for alt in rule.body for lit in alt]
        for term in _calls(literals):
            out += _check_call(term, declared)
    return out


def _calls(literals: Iterable[Literal]) -> Iterator[Functor]:
    """The user functor calls in ``literals``, aggregate bodies included."""
    for literal in literals:
        for term in subterms(literal_terms(literal)):
            if isinstance(term, Functor) and term.name.startswith("@"):
                yield term
            elif isinstance(term, Aggregate):
                yield from _calls(term.body)


def _check_call(term: Term, declared: dict[str, FunctorDecl]) -> list[Diagnostic]:
    name = term.name[1:]
    decl = declared.get(name)
    if decl is None:
        hint = did_you_mean(name, declared)
        hint = (hint.replace("`", "`@", 1) if hint else
                f"declare it with `.functor {name}(x: number): number` (its types)")
        return [Diagnostic("error", f"undefined functor `{term.name}`", term.span, hint=hint)]
    if len(term.args) != len(decl.params):
        n = len(decl.params)
        return [Diagnostic("error", f"functor `{term.name}` takes {n} argument"
                           f"{'s' if n != 1 else ''}, got {len(term.args)}", term.span,
                           hint=f"declared at {decl.span}")]
    return []
