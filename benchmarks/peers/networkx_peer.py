"""networkx: ``transitive_closure`` of a ``DiGraph``, where it applies.

It applies to transitive closure only. ``nx.transitive_closure(G,
reflexive=False)`` adds ``(v, v)`` exactly for the nodes on a cycle, which is
Datalog's ``path`` (a path of length at least one). The batch builds the graph
and its closure; an update is a from-scratch batch on the changed input.
"""

from __future__ import annotations

from typing import ClassVar

from benchmarks.peers import Peer


class NetworkxPeer(Peer):
    name = "networkx"
    label = "networkx transitive_closure"
    families = ("tc",)
    why_not: ClassVar[dict[str, str]] = {"sg": "not a graph closure",
                                          "andersen": "not a graph closure",
                                          "negagg": "not a graph closure"}

    def prepare(self, workload):
        import networkx

        self.nx = networkx

    def batch(self, workload, facts):
        graph = self.nx.DiGraph()
        graph.add_edges_from(facts["edge"])
        return self.nx.transitive_closure(graph, reflexive=False)

    def counts(self, state, workload):
        return {"path": state.number_of_edges()}
