"""The CPython reference: plain semi-naive loops over dicts and sets.

What a competent programmer writes by hand for each program, with no engine:
index the inputs by their join key once, then join only the previous round's
new tuples (``delta``) until no new tuple appears. Transitive closure is
``benchmarks.tc.seminaive``, shared with ``tc.py``; the other programs follow.

>>> sorted(same_generation([(1, 0), (2, 0), (3, 1), (4, 2)]))
[(1, 2), (2, 1), (3, 4), (4, 3)]
>>> facts = {"addr_of": [(1, 10)], "assign": [(2, 1)], "load_from": [], "store_to": []}
>>> sorted(andersen(facts))
[(1, 10), (2, 10)]
"""

from __future__ import annotations

from collections import Counter, defaultdict

from benchmarks.peers import Peer
from benchmarks.tc import seminaive


def same_generation(par) -> set:
    """sg(x, y) :- par(x, p), par(y, p), x != y.
    sg(x, y) :- par(x, a), sg(a, b), par(y, b)."""
    children = defaultdict(list)
    for child, parent in par:
        children[parent].append(child)
    sg = {(x, y) for siblings in children.values() for x in siblings for y in siblings
          if x != y}
    delta = sg
    while delta:
        new = {(x, y) for a, b in delta for x in children.get(a, ()) for y in children.get(b, ())}
        new -= sg
        sg |= new
        delta = new
    return sg


def andersen(facts) -> set:
    """Andersen points-to (see ``benchmarks.workloads.ANDERSEN_PROGRAM``).
    A new ``points_to`` tuple joins with the full relation on either side of
    the two non-linear rules, through the forward index ``targets`` and the
    reverse index ``holders``."""
    assign_into = defaultdict(list)      # q -> [p] for p = q
    load_into = defaultdict(list)        # q -> [p] for p = *q
    store_from_p = defaultdict(list)     # p -> [q] for *p = q
    store_from_q = defaultdict(list)     # q -> [p] for *p = q
    for p, q in facts["assign"]:
        assign_into[q].append(p)
    for p, q in facts["load_from"]:
        load_into[q].append(p)
    for p, q in facts["store_to"]:
        store_from_p[p].append(q)
        store_from_q[q].append(p)
    targets = defaultdict(set)           # p -> {a} with points_to(p, a)
    holders = defaultdict(set)           # a -> {p} with points_to(p, a)
    new: list = []

    def derive(p, a):
        if a not in targets[p]:
            targets[p].add(a)
            holders[a].add(p)
            new.append((p, a))

    # points_to(p, a) :- addr_of(p, a).
    for p, a in facts["addr_of"]:
        derive(p, a)
    while new:
        delta, new = new, []
        for x, y in delta:
            # points_to(p, a) :- assign(p, q), points_to(q, a).      [q = x, a = y]
            for p in assign_into.get(x, ()):
                derive(p, y)
            # points_to(p, a) :- load_from(p, q), points_to(q, r), points_to(r, a).
            for p in load_into.get(x, ()):                           # [q = x, r = y]
                for a in tuple(targets.get(y, ())):
                    derive(p, a)
            for q in tuple(holders.get(x, ())):                      # [r = x, a = y]
                for p in load_into.get(q, ()):
                    derive(p, y)
            # points_to(r, a) :- store_to(p, q), points_to(p, r), points_to(q, a).
            for q in store_from_p.get(x, ()):                        # [p = x, r = y]
                for a in tuple(targets.get(q, ())):
                    derive(y, a)
            for p in store_from_q.get(x, ()):                        # [q = x, a = y]
                for r in tuple(targets.get(p, ())):
                    derive(r, y)
    return {(p, a) for p, pointees in targets.items() for a in pointees}


def reach_negation_count(facts) -> dict[str, set]:
    """reach by the semi-naive closure; then cyclic, acyclic (negation) and
    reach_count (count per source), each a pass over the finished relation."""
    reach = seminaive(facts["edge"])
    cyclic = {(x,) for x, y in reach if x == y}
    acyclic = {row for row in facts["node"] if row not in cyclic}
    counts = Counter(x for x, _ in reach)
    return {"reach": reach, "cyclic": cyclic, "acyclic": acyclic,
            "reach_count": set(counts.items())}


def counter(bound) -> set:
    """``c(0)`` and ``c(n + 1) :- c(n), bound(b), n < b.``: the semi-naive loop,
    one new tuple per round."""
    limits = [b for (b,) in bound]
    total, delta = {(0,)}, {(0,)}
    while delta:
        delta = {(n + 1,) for (n,) in delta for b in limits if n < b} - total
        total |= delta
    return total


class PythonLoop(Peer):
    name = "python"
    label = "Python semi-naive loop"
    families = ("tc", "sg", "andersen", "negagg", "counter")

    def batch(self, workload, facts):
        if workload.family == "tc":
            return {"path": seminaive(facts["edge"])}
        if workload.family == "sg":
            return {"sg": same_generation(facts["par"])}
        if workload.family == "andersen":
            return {"points_to": andersen(facts)}
        if workload.family == "counter":
            return {"c": counter(facts["bound"])}
        return reach_negation_count(facts)

    def counts(self, state, workload):
        return {name: len(state[name]) for name in workload.outputs}
