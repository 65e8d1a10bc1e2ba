"""Aggregates scoped by name: a clause rewritten so that a variable's name says
which scope it belongs to, for the lowering.

Takes one clause (a head atom and a conjunction of literals) that passed the
checks and gives the same clause where the scopes of
:mod:`datalog.analysis.grounded` are spelled out in the names, so that the
lowering (:mod:`datalog.plan.lower`), which knows variables by name, needs no
scoping of its own:

- every variable local to an aggregate is renamed to a name of its own
  (``a@1``; ``@`` cannot occur in a program's names), so a target variable that
  shadows an outer one (``a = max a : r(a, _)``) and the locals of two sibling
  aggregates are distinct variables;
- each witness of a ``min`` or ``max`` at the top of the clause is bound the way
  Soufflé grounds witnesses: the aggregate binds a hidden variable (``@w3``) and
  a copy of its body, with its own locals, selects the rows whose target equals
  the result::

      youngest(p, n) :- n = min x : family(p, x).
      youngest(p, n) :- n = @w3, @w3 = min x@2 : { family(p@1, x@2) },
                        family(p, x@4), x@4 = @w3.

>>> from datalog.syntax.parser import parse
>>> from datalog.syntax.printer import clause_text
>>> rule = parse("m(a) :- a = max a : r(a, _).").rules[0]
>>> clause_text(*scope_aggregates(*next(rule.clauses())))
'm(a) :- a = max a@1 : { r(a@1, _) }.'
>>> rule = parse("youngest(p, n) :- n = min x : family(p, x).").rules[0]
>>> print(clause_text(*scope_aggregates(*next(rule.clauses()))))
youngest(p, n) :- n = @w3, @w3 = min x@2 : { family(p@1, x@2) }, family(p, x@4), x@4 = @w3.
"""

from __future__ import annotations

import dataclasses
import itertools

from datalog.analysis.grounded import SELECTING, Grounding, grounded
from datalog.syntax.ast import Aggregate, Atom, Comparison, Literal, Variable, Wildcard
from datalog.syntax.terms import aggregate_variables, aggregates_in, literal_terms


def scope_aggregates(head: Atom, body: tuple[Literal, ...]
                     ) -> tuple[Atom, tuple[Literal, ...]]:
    """``head :- body`` with the locals of its aggregates renamed and the witnesses
    of its ``min``/``max`` aggregates bound (the same clause when it has no
    aggregate)."""
    body = tuple(body)
    terms = [*head.args, *(t for literal in body for t in literal_terms(literal))]
    if next(aggregates_in(terms), None) is None:
        return head, body
    renamer = _Renamer(grounded(head, body))
    head = renamer.node(head, {})
    body = tuple(renamer.node(literal, {}) for literal in body)
    return head, body + tuple(renamer.extra)


class _Renamer:
    """Rebuilds the nodes of one clause, renaming variables scope by scope."""

    def __init__(self, grounding: Grounding):
        self.grounding = grounding
        self.counter = itertools.count(1)
        self.extra: list[Literal] = []     # the literals that bind witnesses

    def fresh(self, name: str) -> str:
        return f"{name}@{next(self.counter)}"

    def node(self, node, renames: dict[str, str]):
        """``node`` rebuilt with ``renames`` (old name -> new name) applied."""
        if isinstance(node, Variable):
            return Variable(renames.get(node.name, node.name), node.span)
        if isinstance(node, Aggregate):
            return self.aggregate(node, renames)
        if isinstance(node, Comparison) and node.op == "=" and \
                {type(node.left), type(node.right)} == {Wildcard, Aggregate}:
            # _ = max x : f(p, x): the value is ignored, the witnesses are not
            node = Comparison("=", *(Variable(self.fresh("_"), t.span)
                                     if isinstance(t, Wildcard) else t
                                     for t in (node.left, node.right)), node.span)
        if isinstance(node, tuple):
            return tuple(self.node(item, renames) for item in node)
        if not dataclasses.is_dataclass(node):
            return node
        changes = {f.name: self.node(getattr(node, f.name), renames)
                   for f in dataclasses.fields(node) if f.name != "span"}
        return dataclasses.replace(node, **changes)

    def aggregate(self, agg: Aggregate, renames: dict[str, str]):
        scope = self.grounding.scope(agg)
        local = {v.name for v in aggregate_variables(agg)} - scope.outer
        witnesses = self.grounding.witnesses.get(id(agg), frozenset()) \
            if agg.kind in SELECTING else frozenset()
        inner = {**renames, **{n: self.fresh(n) for n in sorted(local | witnesses)}}
        rebuilt = Aggregate(agg.kind, self.node(agg.target, inner),
                            self.node(agg.body, inner), agg.span)
        if not witnesses:
            return rebuilt
        # y(p, n) :- n = min x : f(p, x).   binds p by   @w = min .., f(p, x'), x' = @w.
        result = Variable(f"@w{next(self.counter)}", agg.span)
        copy = {**renames, **{n: self.fresh(n) for n in sorted(local)}}
        self.extra.append(Comparison("=", result, rebuilt, agg.span))
        self.extra += self.node(agg.body, copy)
        self.extra.append(Comparison("=", self.node(agg.target, copy), result, agg.span))
        return result
