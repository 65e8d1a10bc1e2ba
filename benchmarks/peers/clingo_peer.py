"""clingo: grounding a stratified program computes its fixpoint.

gringo, clingo's grounder, evaluates a stratified program (recursion,
stratified negation, aggregates over lower strata) completely while grounding,
so every derived atom comes out as a fact and no solving is needed. The batch
is a fresh ``clingo.Control``, the program and the input facts added as text,
and ``ground``. clingo keeps no way to retract a fact once grounded, so an
update is a from-scratch batch on the changed input.
"""

from __future__ import annotations

from benchmarks.peers import Peer

PROGRAMS = {
    "tc": """
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
""",
    "sg": """
sg(X, Y) :- par(X, P), par(Y, P), X != Y.
sg(X, Y) :- par(X, A), sg(A, B), par(Y, B).
""",
    "andersen": """
points_to(P, A) :- addr_of(P, A).
points_to(P, A) :- assign(P, Q), points_to(Q, A).
points_to(P, A) :- load_from(P, Q), points_to(Q, R), points_to(R, A).
points_to(R, A) :- store_to(P, Q), points_to(P, R), points_to(Q, A).
""",
    "negagg": """
reach(X, Y) :- edge(X, Y).
reach(X, Z) :- reach(X, Y), edge(Y, Z).
cyclic(X) :- reach(X, X).
acyclic(X) :- node(X), not cyclic(X).
reach_count(X, C) :- reach(X, _), C = #count { Y : reach(X, Y) }.
""",
}


def facts_text(facts: dict[str, list[tuple]]) -> str:
    return "".join(f"{name}({','.join(map(str, row))}).\n"
                   for name, rows in facts.items() for row in rows)


class ClingoPeer(Peer):
    name = "clingo"
    label = "clingo (grounding)"
    families = tuple(PROGRAMS)

    def prepare(self, workload):
        import clingo

        self.clingo = clingo

    def batch(self, workload, facts):
        control = self.clingo.Control(["--warn=none"])
        control.add("base", [], PROGRAMS[workload.family] + facts_text(facts))
        control.ground([("base", [])])
        return control

    def counts(self, state, workload):
        arities = {"path": 2, "sg": 2, "points_to": 2, "reach": 2, "cyclic": 1,
                   "acyclic": 1, "reach_count": 2}
        result = {}
        for name in workload.outputs:
            atoms = list(state.symbolic_atoms.by_signature(name, arities[name]))
            if not all(atom.is_fact for atom in atoms):
                raise AssertionError(f"clingo left {name} atoms that are not facts")
            result[name] = len(atoms)
        return result
