"""Semantic checks: pure functions from a parsed program to diagnostics.

:func:`check` computes the :class:`~datalog.analysis.context.Context` once (the
type table, the declarations, the groundedness of every clause), runs every pass
of :data:`CHECKS` on the program and returns all errors and warnings, sorted by
place; nothing stops at the first error. The passes, in order, each
``(module, context) -> diagnostics`` in a module of its own:

- :func:`~datalog.analysis.checks.types.check_types`: duplicate, unknown, cyclic
  and mixed types;
- :func:`~datalog.analysis.checks.declarations.check_declarations`: duplicate
  relations, unknown attribute types, ``eqrel`` and storage qualifiers,
  ``.plan`` (a warning), relations with no facts, rules or input (a warning);
- :func:`~datalog.analysis.checks.choice.check_choice`: ``choice-domain``
  attributes, ``eqrel`` with a choice, recursion through several domains;
- :func:`~datalog.analysis.checks.io_directives.check_io_directives`: directives
  naming undeclared relations, I/O parameters (values the engine does not
  support are errors, parameters it does not read warnings);
- :func:`~datalog.analysis.checks.clauses.check_clauses`: undefined relations,
  arity mismatches, unknown functors, number literals beyond 64 bits, facts with
  non-constant arguments;
- :func:`~datalog.analysis.checks.range.check_range_restriction`: range
  restriction, ``_`` misplaced, singleton variables (a warning);
- :func:`~datalog.analysis.typecheck.check_clause_types`: type mismatches across
  declarations, facts and rule bodies;
- :func:`~datalog.analysis.checks.inline.check_inline`: what Soufflé refuses of
  ``inline`` relations; ``magic`` ignored (a warning).
- :func:`~datalog.analysis.checks.subsumption.check_subsumptions`: subsumption
  rules (one relation in both heads, then checked as the clause they read like).

>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number, y: number)\\n.decl p(x: number)\\np(x) :- e(y, y).')
>>> for d in check(p): print(f"{d.severity}: {d.message}")
warning: relation `e` has no facts, rules or input
error: variable `x` in the head is not bound in the body
"""

from __future__ import annotations

from collections.abc import Callable

from datalog.analysis.checks.choice import check_choice
from datalog.analysis.checks.clauses import check_clauses
from datalog.analysis.checks.declarations import check_declarations
from datalog.analysis.checks.functors import check_functors
from datalog.analysis.checks.inline import check_inline
from datalog.analysis.checks.io_directives import check_io_directives
from datalog.analysis.checks.limitsize import check_limitsize
from datalog.analysis.checks.range import check_range_restriction
from datalog.analysis.checks.subsumption import check_subsumptions
from datalog.analysis.checks.types import check_types
from datalog.analysis.context import Context
from datalog.analysis.typecheck import check_clause_types
from datalog.analysis.types import relation_types  # part of this module's API
from datalog.errors import Diagnostic
from datalog.syntax.ast import Module

#: The passes :func:`check` runs, in order.
CHECKS: tuple[Callable[[Module, Context], list[Diagnostic]], ...] = (
    check_types,
    check_declarations,
    check_choice,
    check_io_directives,
    check_limitsize,
    check_clauses,
    check_functors,
    check_range_restriction,
    check_clause_types,
    check_inline,
    check_subsumptions,
)


def check(program: Module) -> list[Diagnostic]:
    """Every error and warning of ``program``, sorted by place."""
    context = Context(program)
    diagnostics: list[Diagnostic] = []
    for run in CHECKS:
        diagnostics += run(program, context)
    return merge_repeats(sort_diagnostics(diagnostics))


#: Errors about one name, wherever it is used: reported once, at the first use.
_ABOUT_A_NAME = ("undefined relation `", "unknown functor `", "unknown type `")


def merge_repeats(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One error per undefined relation, unknown functor or unknown type: the
    first use, its hint naming the other places (diagnostics in place order).

    >>> from datalog.syntax.parser import parse
    >>> p = parse('.decl p(x: number)\\np(x) :- q(x), !q(x).\\np(x) :- q(x).')
    >>> [(d.message, d.hint) for d in check(p)]
    [('undefined relation `q`', 'declare it with `.decl q(...)`; also used at 2:16, 3:9')]
    """
    first: dict[str, int] = {}
    others: dict[str, list[Diagnostic]] = {}
    kept: list[Diagnostic] = []
    for d in diagnostics:
        if d.severity == "error" and d.message.startswith(_ABOUT_A_NAME) \
                and d.span is not None:
            if d.message in first:
                others[d.message].append(d)
                continue
            first[d.message], others[d.message] = len(kept), []
        kept.append(d)
    for message, repeats in others.items():
        if not repeats:
            continue
        d = kept[first[message]]
        places = [f"{r.span.line}:{r.span.column}" if r.span.path == d.span.path
                  else str(r.span) for r in repeats]
        shown = ", ".join(places[:6]) + (f" and {len(places) - 6} more"
                                         if len(places) > 6 else "")
        hint = f"{d.hint}; also used at {shown}" if d.hint else f"also used at {shown}"
        kept[first[message]] = Diagnostic(d.severity, d.message, d.span, hint)
    return kept


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


__all__ = [
    "CHECKS",
    "check",
    "errors",
    "relation_types",
    "sort_diagnostics",
]
