"""``choice-domain`` relations in the circuit (what is chosen: :mod:`datalog.plan.choice`).

**Outside recursion** the chosen rows are an aggregate of the candidates (the
union of the relation's source and rules), recomputed for each group that
changed at an epoch (``engine.operators.aggregate``)::

    candidates --> index by domain --> aggregate min --> unpack --> r

With one domain a group is one domain value and its result the least candidate.
With several, the greedy matching reaches across domain values: it is kept by
``engine.operators.matching`` (a change re-decides the candidates it can
affect, in order, not the whole relation).

**In recursion** (one domain; several are refused by the checks) the relation
after round ``i`` is ``R_i = R_{i-1} + least(C_i ▷ keys(R_{i-1}))``: the rows
chosen before stay, and each domain value without one takes the least of its
candidates of this round. ``C_i`` (the rules over ``R_{i-1}``, plus what enters
from outside) and ``R_{i-1}`` (the Feedback) are streams of the child circuit;
``least`` is the candidates no candidate of the same domain value beats, an
antijoin against a self-join::

    feedback R ------------------+------------------------------+
       |                         | keys                         v
    rules --> plus C --> antijoin by domain --> A --> distinct --+--> plus --> distinct --> R
                                                 |                ^
                                                 +-> A ⋈ A on domain, r < l: beaten
                                                     (A minus beaten is what joins R)

Every operator here is a function of its inputs' collections at each time
``(e, i)``, so the nested-time operators (Distinct Trace, the bilinear join)
maintain it across epochs like any recursive rule, including retractions; within
an epoch ``R_i`` only grows, so the loop ends.
"""

from __future__ import annotations

from engine.operators.matching import MatchingNode
from engine.stream import Stream


def _least(items):
    """The least row of a group (its items are ``(row, weight)``, weight > 0)."""
    return min(row for row, _ in items)


def _unpack(row):
    """The result of an aggregate row ``key + (result,)``: the chosen row."""
    return row[-1]


def choose_root(candidates, domains: tuple[tuple[int, ...], ...], name: str):
    """The chosen rows of ``candidates`` (a root stream of rows), ``domains`` the
    column numbers of each domain of relation ``name``."""
    if len(domains) == 1:
        return candidates.index_by(domains[0]).aggregate(_least, label=f"choice {name}")\
            .map(_unpack, label=f"{name} (chosen)")

    keys = [_columns(cols) for cols in domains]
    node = candidates.circuit.add(MatchingNode(candidates.node, keys, label=f"choice {name}"))
    return Stream(candidates.circuit, node)


def _columns(cols: tuple[int, ...]):
    """The value of a domain in a row."""
    def key(row):
        return tuple(row[c] for c in cols)
    return key


def choose_in_recursion(feedback, candidates, domain: tuple[int, ...], arity: int,
                        name: str):
    """``R_i`` from ``R_{i-1}`` (``feedback``, the relation's Feedback stream) and
    the round's ``candidates`` (module docstring); the result feeds the Feedback."""
    open_ = candidates.index_by(domain).antijoin(feedback.index_by(domain),
                                                  label=f"choice {name}: open values")\
        .distinct(label=f"choice {name}: candidates")
    other = open_.map(_same, label=f"choice {name}: candidates (copy)")
    beaten = open_.index_by(domain).join(other.index_by(domain), _pair,
                                         label=f"choice {name}: pairs")\
        .flat_map(_beaten, label=f"choice {name}: beaten")
    every = tuple(range(arity))
    least = open_.index_by(every).antijoin(beaten.index_by(every),
                                           label=f"choice {name}: least")
    return feedback.plus(least).distinct(label=name)


def _same(row):
    return row


def _pair(key, left, right):
    return (left, right)


def _beaten(pair):
    """``(left,)`` when ``right`` is less: a candidate that is not the least."""
    left, right = pair
    return (left,) if right < left else ()
