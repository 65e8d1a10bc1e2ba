"""Subsumption rules in the circuit: pruning a relation's candidates.

The semantics are :mod:`datalog.plan.subsumption`'s: ``r = prune(C)``, ``C`` the
candidates. The construction uses existing operators only::

    C --------------------------------------------+-----> antijoin --> r
    |                                             |          ^
    +--> pair pipeline (C as r) --> (t, u) --> t if t != u --+
         one per subsumption rule                 (dominated)

- ``C`` is the distinct union of ``r``'s source and rules (in a child circuit:
  the imported base plus the rules over the Feedback streams);
- each :class:`~datalog.plan.ir.SubsumptionPlan` is compiled like a rule whose
  scans and joins of ``r`` read ``C`` (the scope :class:`Candidates`), giving
  the pairs (dominated tuple, dominating tuple);
- a flat_map keeps the dominated tuple of each pair of two *different* tuples;
- ``r = C - semijoin(C, distinct(dominated))``: the antijoin on all columns.

In a recursive stratum this sits between the Distinct Trace and the Feedback:
what is fed back, and exported, is the pruned relation, so iteration ``i + 1``
reads ``prune(T(R_i))``. Nothing here is specific to recursion or to updates:
every operator is the incremental lifting of its collection operator at
product-order times, so at every time (epoch, iteration) the integrated streams
are exactly the collections of the definition (the round ``R_i`` of the
current facts), and the child circuit runs the rounds to their fixpoint. A
retraction is an epoch like any other: the differences of ``C`` and of the
dominated set flow through the antijoin (a dominated tuple whose dominator goes
comes back at the iteration where it is no longer dominated), and the Distinct
Trace and joins schedule the later iterations that old epochs touched
(DESIGN.md §5). Pruning is non-monotone inside the recursion, which is why the
semi-naive Spark loop cannot run it (the Spark executor refuses such a stratum).

>>> import datalog
>>> s = datalog.Program('''.decl e(x: number, y: number, w: number)
... .decl d(x: number, c: number)
... d(1, 0).
... d(y, c + w) :- d(x, c), e(x, y, w).
... d(x, c) <= d(x, c2) :- c > c2.''').session()
>>> with s.transaction() as t:
...     t.insert("e", [(1, 2, 5), (2, 1, 1), (1, 3, 1), (3, 2, 1)])
>>> sorted(s.query("d"))
[(1, 0), (2, 2), (3, 1)]
>>> with s.transaction() as t:
...     t.retract("e", [(3, 2, 1)])
>>> sorted(s.query("d"))
[(1, 0), (2, 5), (3, 1)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from datalog.plan.ir import SubsumptionPlan


def prune(candidates, subsumptions: Sequence[SubsumptionPlan], arity: int,
          pairs_of: Callable[[SubsumptionPlan], object]):
    """``candidates`` without their dominated tuples; ``pairs_of(plan)`` is the
    stream of (dominated + dominating) rows of one subsumption rule, its scans
    and joins of the relation reading ``candidates``."""
    keep = _different(arity)
    dominated = [pairs_of(plan).flat_map(keep, label=f"dominated [{plan.rule.label}]")
                 for plan in subsumptions]
    removed = dominated[0].plus(*dominated[1:])
    columns = tuple(range(arity))
    relation = subsumptions[0].relation
    return candidates.index_by(columns).antijoin(
        removed.index_by(columns), label=f"{relation} without dominated tuples")


def _different(arity: int):
    """A pair row -> its dominated tuple when the two tuples differ."""
    def dominated(row):
        t = row[:arity]
        return (t,) if t != row[arity:] else ()
    return dominated
