"""pydbsp: a pure-Python DBSP with an incremental stratified Datalog interpreter.

``pydbsp.datalog_stratified.IncrementalDatalogStratified`` is our closest peer:
rules and facts are Z-sets, and each ``saturate()`` advances one outer tick,
updating the derived facts incrementally. It needs Python 3.12, so its cells
run in the virtual environment :mod:`benchmarks.venvs` makes. Its rules are
tuples of atoms ``(predicate, terms)`` with ``?``-prefixed variables and
``!``-prefixed negated predicates; it has no comparisons and no aggregates,
so same generation (``x != y``) and the aggregate workload are out of reach.

The batch pushes the rules and every input fact and saturates; an update pushes
one fact at weight -1 (retract) or +1 (insert) and saturates.
"""

from __future__ import annotations

from typing import ClassVar

from benchmarks.peers import Peer


def atom(predicate: str, *variables: str):
    return (predicate, tuple(f"?{v}" for v in variables))


RULES = {
    "tc": [
        (atom("path", "x", "y"), atom("edge", "x", "y")),
        (atom("path", "x", "z"), atom("path", "x", "y"), atom("edge", "y", "z")),
    ],
    "andersen": [
        (atom("points_to", "p", "a"), atom("addr_of", "p", "a")),
        (atom("points_to", "p", "a"), atom("assign", "p", "q"), atom("points_to", "q", "a")),
        (atom("points_to", "p", "a"), atom("load_from", "p", "q"),
         atom("points_to", "q", "r"), atom("points_to", "r", "a")),
        (atom("points_to", "r", "a"), atom("store_to", "p", "q"),
         atom("points_to", "p", "r"), atom("points_to", "q", "a")),
    ],
}


class PydbspPeer(Peer):
    name = "pydbsp"
    label = "pydbsp (incremental, Python 3.12)"
    incremental = True
    families = tuple(RULES)
    why_not: ClassVar[dict[str, str]] = {"sg": "no comparisons (x != y)", "negagg": "no aggregates"}

    def prepare(self, workload):
        from pydbsp.datalog_stratified import IncrementalDatalogStratified
        from pydbsp.zset import ZSet

        self.evaluator, self.zset = IncrementalDatalogStratified, ZSet

    def batch(self, workload, facts):
        ZSet = self.zset
        datalog = self.evaluator(max_inner=1 << 20)
        datalog.push_rules(ZSet({rule: 1 for rule in RULES[workload.family]}))
        datalog.push_facts(ZSet({(name, row): 1 for name, rows in facts.items()
                                 for row in rows}))
        return [datalog, datalog.saturate()]

    def counts(self, state, workload):
        counts = dict.fromkeys(workload.outputs, 0)
        for (predicate, _), weight in state[1].inner.items():
            if predicate in counts and weight > 0:
                counts[predicate] += 1
        return counts

    def _update(self, state, relation, row, weight):
        state[0].push_facts(self.zset({(relation, tuple(row)): weight}))
        state[1] = state[0].saturate()

    def retract(self, state, relation, row):
        self._update(state, relation, row, -1)

    def insert(self, state, relation, row):
        self._update(state, relation, row, 1)
