"""Subsumption rules: what they mean, and their plan.

``r(x, y) <= r(x, z) :- y > z.`` says: a tuple of ``r`` matching the first head
(the *dominated* one) is removed from ``r`` when another tuple of ``r`` matching
the second head (the *dominating* one) exists and the body holds for that
binding (Soufflé's "Subsumption": "delete more specific tuples by more general
tuples", the rule declaring a partial order). Written once here, the semantics
every part of the engine keeps:

**Pruning.** For a set ``X`` of tuples of ``r`` (the other relations fixed),
``dominated(X)`` is every ``t`` in ``X`` for which some subsumption rule of
``r`` and some ``u`` in ``X`` *other than* ``t`` match its two heads under one
binding of its variables for which its body holds; ``prune(X) = X -
dominated(X)``. All dominated tuples go at once: a tuple removed still dominates
(so ``y > z`` keeps only the least ``y`` per ``x``), and two different tuples
that dominate each other both go. A tuple never dominates itself, so a
non-strict order (``y >= z``) is fine.

**Candidates.** What ``r``'s facts, inputs and rules give is its *candidates*
``C``; the heads of a subsumption rule read the candidates. The body may read
other relations, computed before ``r`` (a body that reads ``r``, or a relation
depending on ``r``, is a stratification error, as negation would be).

- ``r`` not recursive: ``r = prune(C)``.
- ``r`` in a recursive stratum: the stratum's relations are the limit of
  ``R_0 = {}``, ``R_i+1 = prune(T(R_i))``, where ``T`` applies the facts, inputs
  and every rule to ``R_i``: each round recomputes every relation of the stratum
  from the last round's, so a tuple pruned, or derived only from pruned tuples,
  stays out unless derived again (without pruning, rounds only grow and this is
  the usual fixpoint). It ends when ``R_i+1 = R_i``. For the minimum-distance pattern
  (``d(x, c) <= d(x, c2) :- c > c2.`` with ``d(y, c + w) :- d(x, c), e(x, y,
  w).``) ``R_i`` holds, per node, the least cost of a path of at most ``i``
  edges, so it ends on cyclic graphs with non-negative weights, where without
  pruning the costs would grow for ever. A program whose rounds never settle
  runs until ``--max-iterations``.

**Updates.** After every transaction the relations equal the above on the
current facts and inputs: the answer of a from-scratch run. Retracting a
dominating tuple (or what derives it) brings back the candidates it dominated,
unless another one dominates them; inserting a tuple that dominates others
removes them. A dominated input row stays in the session's inputs (retracting it
is not a no-op), invisible in ``r`` while its dominator is there.

**Plan.** Each conjunction of a subsumption rule's body is planned as the clause
``r(a..) :- r(a..), r(b..), body`` (so the two heads bind their variables and
are joined on the ones they share, ``x`` above) whose output row is the
dominated tuple followed by the dominating one: a
:class:`~datalog.plan.ir.SubsumptionPlan` of the relation's stratum. The circuit
backend builds it from existing operators (:mod:`datalog.backends.circuit.subsumption`).

>>> from datalog.analysis.frontend import load
>>> from datalog.plan.lower import plan_program
>>> plan = plan_program(load('''.decl d(x: number, c: number)
... d(1, 5). d(1, 3).
... d(x, c) <= d(x, c2) :- c > c2.'''))
>>> print(plan.strata[0].subsumptions[0].describe())
d(x, c) <= d(x, c2) :- c > c2.
  scan d -> [0, 1]
  join d on d.0 = #0 -> +[1]
  filter (#1 > #2)
  remove (#0, #1) if (#0, #2) is another candidate
"""

from __future__ import annotations

from dataclasses import replace

from datalog.plan.ir import SubsumptionPlan
from datalog.syntax import ast
from datalog.syntax.printer import clause_text

#: The name the pair clause is planned under (no relation can have it).
PAIR = "$dominated by"


def plan_subsumption(rule: ast.Subsumption, types: dict[str, tuple[str, ...]],
                     sources=None, functors=None, sites=None,
                     named=None) -> tuple[SubsumptionPlan, ...]:
    """The plans of ``rule``, one per conjunction of its body; the other
    arguments as for :func:`datalog.plan.lower.plan_clause`."""
    from datalog.plan.lower import plan_clause

    relation = rule.dominated.relation
    dominated = _named_wildcards(rule.dominated, "$a")
    dominating = _named_wildcards(rule.dominating, "$b")
    pair = ast.Atom(PAIR, dominated.args + dominating.args, rule.span)
    pair_types = {**types, PAIR: tuple(types[relation]) * 2}
    plans = []
    for conjunction in rule.body:
        label = _label(rule, conjunction)
        planned = plan_clause(pair, (dominated, dominating, *conjunction), pair_types,
                              sources, functors, sites, named)
        plans.append(SubsumptionPlan(relation, replace(planned, relation=relation,
                                                       label=label, span=rule.span)))
    return tuple(plans)


def _named_wildcards(atom: ast.Atom, prefix: str) -> ast.Atom:
    """``atom`` with each ``_`` argument a variable of its own (the output row
    needs the value there)."""
    args = tuple(ast.Variable(f"{prefix}{i}", arg.span) if isinstance(arg, ast.Wildcard)
                 else arg for i, arg in enumerate(atom.args))
    return replace(atom, args=args)


def _label(rule: ast.Subsumption, conjunction) -> str:
    """The rule as text: ``d(x, c) <= d(x, c2) :- c > c2.``"""
    dominated = clause_text(rule.dominated, ())[:-1]
    dominating = clause_text(rule.dominating, ())[:-1]
    body = clause_text(rule.dominated, conjunction)[len(dominated):]
    return f"{dominated} <= {dominating}{body}"
