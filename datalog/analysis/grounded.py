"""Groundedness: which variables of a clause are bound, scope by scope.

Takes one clause ``head :- body`` (a fact is a clause with an empty body) and
gives its :class:`Grounding`: the clause's scopes (the clause itself and each
aggregate in it, nested aggregates included) and, per scope, the variables bound
there. Computed once per clause (:func:`groundings` for a whole module) and read
by the range-restriction check (:mod:`datalog.analysis.checks.range`), the type
checker (:mod:`datalog.analysis.typecheck`) and the lowering, through the
aggregate scoping of :mod:`datalog.analysis.transforms.aggregates`.

A variable is *bound* by a positive atom in which it is an argument (also inside
a record or constructor pattern: ``r([x, $Some(y)])`` binds ``x`` and ``y``), or
by an equality ``p = t`` whose side ``t`` has only bound variables and whose
side ``p`` is the variable or a pattern holding it (``[x, y] = pair``).

Aggregates scope their variables as Soufflé does. A variable of an aggregate is
*outer* (shared with the enclosing scope) when its name also occurs there,
outside every aggregate of that scope: an occurrence in a sibling aggregate does
not count, and the enclosing scope of a nested aggregate is the body of the
aggregate around it (with what that one shares in turn). Every other variable is
*local* to the aggregate. A variable of the target that the aggregate's body
binds is local even when its name occurs outside (``a = max a : r(a, _)``: the
inner ``a`` shadows the outer one). An outer variable bound outside is
*injected* (a grouping variable). One that only the body of a ``min`` or ``max``
at the top of the clause binds is a *witness* (``youngest(p, n) :- n = min x :
family(p, x).``: ``p`` is whoever has the least age, one row per such ``p``) and
counts as bound in the clause; a witness of ``count``, ``sum`` or ``mean`` has
no single value, and stays unbound (an error of the range check).

>>> from datalog.syntax.parser import parse
>>> rule = parse("r(x, c) :- e(x, y), z = y + 1, c = count : { f(x, w) }.").rules[0]
>>> g = grounded(*next(rule.clauses()))
>>> sorted(name for _, name in g.bound(g.top))
['c', 'x', 'y', 'z']
>>> inner = g.scope(rule.body[0][2].right)  # count's body: x is outer, w its own
>>> inner.key("x"), inner.key("w") == (inner.ident, "w"), inner.key("w") in g.bound(inner)
((0, 'x'), True, True)
>>> rule = parse("y(p, n, m) :- n = min x : f(p, x), m = max m : f(_, m).").rules[0]
>>> g = grounded(*next(rule.clauses()))
>>> sorted(name for _, name in g.bound(g.top)), sorted(map(sorted, g.witnesses.values()))
(['m', 'n', 'p'], [['p']])
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
    term_variables,
)

#: The aggregates whose witnesses take a value: the row that reaches the result.
SELECTING = ("min", "max")


class Scope:
    """The variables of a clause, or of an aggregate body inside it. ``outer``
    names the variables shared with the enclosing scope; the others are local to
    the aggregate. :meth:`key` names a variable uniquely within the clause."""

    def __init__(self, ident: int, outer: Iterable[str] = (),
                 parent: Scope | None = None):
        self.ident, self.outer, self.parent = ident, frozenset(outer), parent

    def key(self, name: str) -> tuple[int, str]:
        scope = self
        while scope.parent is not None and name in scope.outer:
            scope = scope.parent
        return scope.ident, name

    def enter(self, agg: Aggregate, visible: frozenset[str]) -> Scope:
        """The scope of ``agg``'s body, where ``visible`` are the names that
        occur in this scope outside its aggregates (and those it shares)."""
        names = {v.name for v in aggregate_variables(agg)}
        shared = names & visible
        targets = {v.name for v in term_variables(agg.target)} & shared \
            if agg.target is not None else set()
        if targets:     # a target variable the body binds is the aggregate's own
            probe = Scope(id(agg), shared - targets, self)
            seed = frozenset(probe.key(n) for n in shared - targets)
            bound = _bound(agg.body, probe, seed)
            shared -= {n for n in targets if probe.key(n) in bound}
        return Scope(id(agg), shared, self)


class Grounding:
    """The scopes of one clause and the variables (scope keys) bound in each.

    ``counts`` counts each variable name's occurrences in the whole clause;
    ``top`` is the clause's own scope; :meth:`scope` gives an aggregate's scope
    and :meth:`bound` the keys bound in a scope (those of its enclosing scopes
    included). ``witnesses`` maps ``id(agg)`` of each aggregate at the top of the
    clause that has witnesses to their names (``nested_witnesses`` the same for
    aggregates inside others, which give them no value); :meth:`witness_of` finds
    the aggregate of a witness; ``waiting`` holds the aggregates that never have a
    value (a variable they share is never bound)."""

    def __init__(self, head: Atom, body: tuple[Literal, ...]):
        self.counts: dict[str, int] = {}
        for v in clause_variables(head, body):
            self.counts[v.name] = self.counts.get(v.name, 0) + 1
        self.top = Scope(0)
        self._scopes: dict[int, Scope] = {}
        self._bound: dict[int, frozenset[tuple[int, str]]] = {}
        self._aggregates: dict[int, Aggregate] = {}
        self.witnesses: dict[int, frozenset[str]] = {}
        #: ``id(agg)`` -> (the scope around it, the names it alone binds there)
        self.nested_witnesses: dict[int, tuple[int, frozenset[str]]] = {}
        #: ``id(agg)`` -> (the aggregate, the shared names it waits for in vain)
        self.waiting: dict[int, tuple[Aggregate, tuple[str, ...]]] = {}
        self._enter(self.top, body, head.args, frozenset())

    def scope(self, agg: Aggregate) -> Scope:
        return self._scopes[id(agg)]

    def bound(self, scope: Scope) -> frozenset[tuple[int, str]]:
        return self._bound[scope.ident]

    def witness_of(self, name: str, scope: Scope) -> Aggregate | None:
        """The aggregate directly in ``scope`` that alone binds ``name`` there (a
        witness; only those of the clause's own ``min``/``max`` count as bound)."""
        found = ((i, names) for i, names in self.witnesses.items()) if scope is self.top \
            else ((i, names) for i, (ident, names) in self.nested_witnesses.items()
                  if ident == scope.ident)
        for ident, names in found:
            if name in names:
                return self._aggregates[ident]
        return None

    def _enter(self, scope: Scope, body: tuple[Literal, ...], terms: Iterable,
               outside: frozenset, shared: frozenset[str] = frozenset()) -> None:
        """Bind ``scope`` (its ``body``, on top of the keys bound ``outside``),
        then the aggregates in ``terms`` and in ``body``; ``shared`` are the
        names ``scope`` shares with the scopes around it.

        An aggregate gives its value (and its witnesses) once the variables it
        shares with ``scope`` are bound, so ``n = count : { r(x), x < n }``
        binds nothing: the count needs ``n`` first."""
        terms = [*terms, *(t for literal in body for t in literal_terms(literal))]
        visible = shared | {v.name for v in direct_variables(terms)}
        own = list(_own_aggregates(terms))
        for agg in own:
            self._scopes[id(agg)] = scope.enter(agg, visible)
        gives: dict[int, frozenset] = {}
        anyway = _bound(body, scope, outside)     # every aggregate gives its value
        for agg in own:         # witnesses: shared names bound by the aggregate alone
            inner = self._scopes[id(agg)]
            alone = _bound(agg.body, inner, frozenset())
            found = frozenset(n for n in inner.outer
                              if scope.key(n) not in anyway and scope.key(n) in alone)
            if found:
                self._aggregates[id(agg)] = agg
                if scope is not self.top:   # not taken from a nested aggregate
                    self.nested_witnesses[id(agg)] = (scope.ident, found)
                    continue
                self.witnesses[id(agg)] = found
                if agg.kind in SELECTING:
                    gives[id(agg)] = frozenset((0, n) for n in found)
        needs = {id(agg): frozenset(scope.key(n) for n in self._scopes[id(agg)].outer
                                    - self.witnesses.get(id(agg), frozenset()))
                 for agg in own}
        bound = _bound(body, scope, outside, needs, gives)
        self._bound[scope.ident] = bound
        for agg in own:
            missing = sorted(name for _, name in needs[id(agg)] - bound)
            if missing:
                self.waiting[id(agg)] = (agg, tuple(missing))
        for agg in own:
            inner = self._scopes[id(agg)]
            self._enter(inner, agg.body, () if agg.target is None else (agg.target,), bound,
                        inner.outer)


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


def _bound(body, scope: Scope, bound: frozenset, needs: dict | None = None,
           gives: dict | None = None) -> frozenset[tuple[int, str]]:
    """The variables (scope keys) bound in ``body``, on top of ``bound``: the
    arguments of positive atoms, then, until nothing changes, ``x`` in ``x = t``
    when every variable of ``t`` is bound. With ``needs`` (``id(agg)`` -> the keys
    an aggregate of ``body`` needs bound before it has a value; without it,
    every aggregate has one), ``t`` must also hold only aggregates whose needs
    are met, and an aggregate whose needs are met binds its ``gives`` (the
    witnesses of a ``min``/``max``)."""
    bound = set(bound)
    for literal in body:
        if isinstance(literal, Atom):
            for arg in literal.args:
                for var in pattern_variables(arg):
                    bound.add(scope.key(var.name))

    def ready(term) -> bool:
        if not all(scope.key(v.name) in bound for v in direct_variables([term])):
            return False
        return needs is None or all(needs.get(id(agg), frozenset()) <= bound
                                    for agg in aggregates_in([term], targets=False))

    changed = True
    while changed:
        changed = False
        for ident, keys in (gives or {}).items():
            if keys - bound and needs.get(ident, frozenset()) <= bound:
                bound |= keys
                changed = True
        for literal in body:
            for side, other in equality_sides(literal):
                new = {scope.key(v.name) for v in pattern_variables(side)} - bound
                if new and not has_holes(other) and ready(other):
                    bound |= new
                    changed = True
    return frozenset(bound)
