"""Subsumption rules: ``r(a..) <= r(b..) :- body.``

Takes a module and its :class:`~datalog.analysis.context.Context` and gives, for
every subsumption rule: both heads naming one relation (an error otherwise: the
rule compares two tuples of the same relation), no subsumption on an ``eqrel``
relation (its tuples are a closure, which removing one would break) nor on a
``choice-domain`` one (which of the two applies first would be a guess), and then
what an ordinary clause is checked for. For those, the rule is checked as the
clause it reads like, ``r(a..) :- r(a..), r(b..), body.``: its heads are two
atoms of ``r`` that bind their variables, so a variable of the body must be
bound by the heads or the body, arities and types follow the declaration of
``r``, and so on (the passes of :mod:`datalog.analysis.checks.clauses`,
:mod:`~datalog.analysis.checks.range` and :mod:`~datalog.analysis.typecheck`).

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('''.decl r(x: number, y: number)
... .decl q(x: number, y: number)
... r(x, y) <= q(x, z) :- y > z.
... r(x, y) <= r(x, z) :- y > w.''')
>>> for d in check_subsumptions(p, Context(p)): print(f"{d.severity}: {d.message}")
error: a subsumption rule compares two tuples of one relation: `r` is dominated by `q`
error: variable `w` in a comparison is not bound in the body
warning: variable `z` occurs only once
"""

from __future__ import annotations

from dataclasses import replace

from datalog.analysis.checks.clauses import check_clauses
from datalog.analysis.checks.range import check_range_restriction
from datalog.analysis.context import Context
from datalog.analysis.typecheck import check_clause_types
from datalog.errors import Diagnostic
from datalog.syntax.ast import Atom, Module, Rule, Subsumption, Variable, Wildcard


def check_subsumptions(program: Module, context: Context) -> list[Diagnostic]:
    """Every error and warning of the module's subsumption rules."""
    if not program.subsumptions:
        return []
    out: list[Diagnostic] = []
    for rule in program.subsumptions:
        dominated, dominating = rule.dominated, rule.dominating
        if dominated.relation != dominating.relation:
            out.append(Diagnostic(
                "error", f"a subsumption rule compares two tuples of one relation: "
                         f"`{dominated.relation}` is dominated by `{dominating.relation}`",
                dominating.span,
                hint=f"write `{dominated.relation}(...) <= {dominated.relation}(...) :- ...`"))
        decl = context.decls.get(dominated.relation)
        if decl is not None and "eqrel" in decl.qualifiers:
            out.append(Diagnostic(
                "error", f"subsumption on the `eqrel` relation `{decl.name}`", rule.span,
                hint="an `eqrel` relation holds the closure of its tuples; removing one "
                     "would break it"))
        if decl is not None and decl.choice:
            out.append(Diagnostic(
                "error", f"subsumption on the `choice-domain` relation `{decl.name}`",
                rule.span, hint="a relation either keeps one tuple per domain value or "
                "the tuples nothing dominates: derive the candidates into one relation and "
                "apply the other to it in a second"))
    probe = Module(types=program.types, relations=program.relations,
                   functors=program.functors,
                   rules=tuple(as_clause(rule) for rule in program.subsumptions),
                   sources=program.sources)
    probe_context = Context(probe)
    for run in (check_clauses, check_range_restriction, check_clause_types):
        out += run(probe, probe_context)
    return out


def as_clause(rule: Subsumption) -> Rule:
    """The clause ``r(a..) :- r(a..), r(b..), body.`` that ``rule`` is checked as
    (a ``_`` of the dominated head becomes a variable named ``_`` plus its
    place, which no singleton warning names)."""
    head_args = tuple(Variable(f"_{i}", arg.span) if isinstance(arg, Wildcard) else arg
                      for i, arg in enumerate(rule.dominated.args))
    head: Atom = replace(rule.dominated, args=head_args)
    body = tuple((head, rule.dominating, *conjunction) for conjunction in rule.body)
    return Rule((head,), body, rule.span)
