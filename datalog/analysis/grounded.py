"""Groundedness: which variables of a clause are bound, scope by scope.

Takes one clause ``head :- body`` (a fact is a clause with an empty body) and
gives its :class:`Grounding`: the clause's scopes (the clause itself and each
aggregate in it, nested aggregates included) and, per scope, the variables bound
there. Computed once per clause (:func:`groundings` for a whole module) and read
by the range-restriction check (:mod:`datalog.analysis.checks.range`) and the
type checker (:mod:`datalog.analysis.typecheck`).

A variable is *bound* by a positive atom in which it is an argument (also inside
a record or constructor pattern: ``r([x, $Some(y)])`` binds ``x`` and ``y``), or
by an equality ``p = t`` whose side ``t`` has only bound variables and whose
side ``p`` is the variable or a pattern holding it (``[x, y] = pair``). Inside an
aggregate body, the variables that also occur outside the aggregate are the
outer ones (bound where the enclosing scope binds them); the others are local
to it. An aggregate in another's target or body belongs to that aggregate's
scope.

>>> from datalog.syntax.parser import parse
>>> rule = parse("r(x, c) :- e(x, y), z = y + 1, c = count : { f(x, w) }.").rules[0]
>>> g = grounded(*next(rule.clauses()))
>>> sorted(name for _, name in g.bound(g.top))
['c', 'x', 'y', 'z']
>>> inner = g.scope(rule.body[0][2].right)  # count's body: x is outer, w its own
>>> inner.key("x"), inner.key("w") == (inner.ident, "w"), inner.key("w") in g.bound(inner)
((0, 'x'), True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from datalog.syntax.ast import Aggregate, Atom, Literal, Module
from datalog.syntax.terms import (
    aggregate_variables,
    aggregates_in,
    clause_variables,
    direct_variables,
    equality_sides,
    has_holes,
    literal_terms,
    pattern_variables,
)


class Scope:
    """The variables of a clause, or of an aggregate body inside it. ``outer``
    names the variables shared with the enclosing scope (they also occur outside
    the aggregate); the others are local to the aggregate. :meth:`key` names a
    variable uniquely within the clause."""

    def __init__(self, ident: int, outer: set[str] | None = None,
                 parent: Scope | None = None):
        self.ident, self.outer, self.parent = ident, outer or set(), parent

    def key(self, name: str) -> tuple[int, str]:
        scope = self
        while scope.parent is not None and name in scope.outer:
            scope = scope.parent
        return scope.ident, name

    def enter(self, agg: Aggregate, counts: dict[str, int]) -> Scope:
        """The scope of ``agg``'s body; ``counts`` counts each variable name's
        occurrences in the whole clause."""
        inner: dict[str, int] = {}
        for v in aggregate_variables(agg):
            inner[v.name] = inner.get(v.name, 0) + 1
        outer = {n for n, c in inner.items() if counts.get(n, 0) > c}
        return Scope(id(agg), outer, self)


class Grounding:
    """The scopes of one clause and the variables (scope keys) bound in each.

    ``counts`` counts each variable name's occurrences in the whole clause;
    ``top`` is the clause's own scope; :meth:`scope` gives an aggregate's scope
    and :meth:`bound` the keys bound in a scope (those of its enclosing scopes
    included)."""

    def __init__(self, head: Atom, body: tuple[Literal, ...]):
        self.counts: dict[str, int] = {}
        for v in clause_variables(head, body):
            self.counts[v.name] = self.counts.get(v.name, 0) + 1
        self.top = Scope(0)
        self._scopes: dict[int, Scope] = {}
        self._bound: dict[int, frozenset[tuple[int, str]]] = {}
        self._enter(self.top, body, head.args, frozenset())

    def scope(self, agg: Aggregate) -> Scope:
        return self._scopes[id(agg)]

    def bound(self, scope: Scope) -> frozenset[tuple[int, str]]:
        return self._bound[scope.ident]

    def _enter(self, scope: Scope, body: tuple[Literal, ...], terms: Iterable,
               outside: frozenset) -> None:
        """Bind ``scope`` (its ``body``, on top of the keys bound ``outside``),
        then the aggregates in ``terms`` and in ``body``."""
        bound = _bound(body, scope, outside)
        self._bound[scope.ident] = bound
        terms = [*terms, *(t for literal in body for t in literal_terms(literal))]
        for agg in _own_aggregates(terms):
            inner = scope.enter(agg, self.counts)
            self._scopes[id(agg)] = inner
            self._enter(inner, agg.body, () if agg.target is None else (agg.target,), bound)


def grounded(head: Atom, body: tuple[Literal, ...] = ()) -> Grounding:
    """The :class:`Grounding` of the clause ``head :- body`` (a fact: no body)."""
    return Grounding(head, tuple(body))


def groundings(module: Module) -> dict[tuple[int, int], Grounding]:
    """The :class:`Grounding` of every clause of ``module`` (its facts and each
    (head, conjunction) of its rules), keyed by ``(id(head), id(body))``."""
    out: dict[tuple[int, int], Grounding] = {}
    for fact in module.facts:
        out[id(fact.atom), id(())] = grounded(fact.atom)
    for rule in module.rules:
        for head, body in rule.clauses():
            out[id(head), id(body)] = grounded(head, body)
    return out


def _own_aggregates(terms: Iterable) -> Iterator[Aggregate]:
    """The aggregates of ``terms`` that are not inside another aggregate."""
    return aggregates_in(terms, targets=False)


def _bound(body, scope: Scope, bound: frozenset) -> frozenset[tuple[int, str]]:
    """The variables (scope keys) bound in ``body``, on top of ``bound``: the
    arguments of positive atoms, then, until nothing changes, ``x`` in ``x = t``
    when every variable of ``t`` is bound."""
    bound = set(bound)
    for literal in body:
        if isinstance(literal, Atom):
            for arg in literal.args:
                for var in pattern_variables(arg):
                    bound.add(scope.key(var.name))
    changed = True
    while changed:
        changed = False
        for literal in body:
            for side, other in equality_sides(literal):
                new = {scope.key(v.name) for v in pattern_variables(side)} - bound
                if new and not has_holes(other) and \
                        all(scope.key(v.name) in bound for v in direct_variables([other])):
                    bound |= new
                    changed = True
    return frozenset(bound)
