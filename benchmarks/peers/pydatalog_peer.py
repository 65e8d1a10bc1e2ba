"""pyDatalog: a pure-Python Datalog engine (top-down, with memoization).

The batch clears pyDatalog's global state, loads the rules (``pyDatalog.load``),
asserts every input fact (``pyDatalog.assert_fact``) and asks for each output
relation (``pyDatalog.ask``), which is when pyDatalog evaluates. pyDatalog
does not maintain derived relations under changes (a retraction drops its
memoized answers), so an update is a from-scratch batch on the changed input.

The store rule's body is ordered ``store_to(P, Q) & points_to(Q, A) &
points_to(P, R)``: in the textbook order (``points_to(P, R)`` second),
pyDatalog 0.22.4 does not terminate even on five statements.

Its aggregate ``(reach_count[X] == len_(Y)) <= reach(X, Y)`` is a function
from ``X`` to the count, asked as ``reach_count[X] == C``.
"""

from __future__ import annotations

from benchmarks.peers import Peer

RULES = {
    "tc": """
path(X, Y) <= edge(X, Y)
path(X, Z) <= path(X, Y) & edge(Y, Z)
""",
    "sg": """
sg(X, Y) <= par(X, P) & par(Y, P) & (X != Y)
sg(X, Y) <= par(X, A) & sg(A, B) & par(Y, B)
""",
    "andersen": """
points_to(P, A) <= addr_of(P, A)
points_to(P, A) <= assign(P, Q) & points_to(Q, A)
points_to(P, A) <= load_from(P, Q) & points_to(Q, R) & points_to(R, A)
points_to(R, A) <= store_to(P, Q) & points_to(Q, A) & points_to(P, R)
""",
    "negagg": """
reach(X, Y) <= edge(X, Y)
reach(X, Z) <= reach(X, Y) & edge(Y, Z)
cyclic(X) <= reach(X, X)
acyclic(X) <= node(X) & ~cyclic(X)
(reach_count[X] == len_(Y)) <= reach(X, Y)
""",
}

QUERIES = {"path": "path(X, Y)", "sg": "sg(X, Y)", "points_to": "points_to(P, A)",
           "reach": "reach(X, Y)", "cyclic": "cyclic(X)", "acyclic": "acyclic(X)",
           "reach_count": "reach_count[X] == C"}


class PyDatalogPeer(Peer):
    name = "pydatalog"
    label = "pyDatalog"
    families = tuple(RULES)

    def prepare(self, workload):
        from pyDatalog import pyDatalog

        self.pyDatalog = pyDatalog

    def batch(self, workload, facts):
        pyDatalog = self.pyDatalog
        pyDatalog.clear()
        pyDatalog.load(RULES[workload.family])
        for name, rows in facts.items():
            for row in rows:
                pyDatalog.assert_fact(name, *row)
        return {name: pyDatalog.ask(QUERIES[name]) for name in workload.outputs}

    def counts(self, state, workload):
        return {name: len(answer.answers) if answer is not None else 0
                for name, answer in state.items()}
