"""Negated atoms that ignore fields of a record or ADT value, as counts.

``!r([x, _])`` holds when no row of ``r`` holds a record whose first field is
``x``, whatever its second. A negation is an antijoin keyed by whole columns, and
no column here is known whole; so such a literal becomes the equivalent
``count : { r([x, _]) } = 0``: the aggregate's body takes the values apart,
grouped by the variables it shares with the rule (``x``, bound elsewhere, as
the negation's variables must be). Only a rule's own body is rewritten (an
aggregate's body cannot ignore fields of a negated atom: the checks say so).
Takes a conjunction, or a module, and gives it rewritten.

>>> from datalog.syntax.parser import parse
>>> from datalog.syntax.printer import clause_text
>>> head, body = next(parse("q(x) :- v(x), !r([x, _], 1).").rules[0].clauses())
>>> clause_text(head, counted(body))
'q(x) :- v(x), count : { r([x, _], 1) } = 0.'
"""

from __future__ import annotations

import dataclasses

from datalog.syntax import ast
from datalog.syntax.terms import has_holes


def counted(body: tuple[ast.Literal, ...]) -> tuple[ast.Literal, ...]:
    """``body`` with every negated atom that has ``_`` inside a record or
    constructor argument replaced by ``count : { atom } = 0``."""
    if not any(isinstance(lit, ast.Negation) and any(map(has_holes, lit.atom.args))
               for lit in body):
        return body
    return tuple(
        ast.Comparison("=", ast.Aggregate("count", None, (lit.atom,), lit.span),
                       ast.Constant(0, "number", lit.span), lit.span)
        if isinstance(lit, ast.Negation) and any(map(has_holes, lit.atom.args)) else lit
        for lit in body)


def count_negated_patterns(program: ast.Module) -> ast.Module:
    """``program`` with :func:`counted` applied to every rule's body."""
    rules = tuple(dataclasses.replace(rule, body=tuple(counted(c) for c in rule.body))
                  for rule in program.rules)
    if all(new.body == old.body for new, old in zip(rules, program.rules)):
        return program
    return dataclasses.replace(program, rules=rules)
