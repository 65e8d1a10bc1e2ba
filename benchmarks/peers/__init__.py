"""The peers: our engine and the tools it is measured against.

Every peer answers the same four questions about a workload
(:class:`benchmarks.workloads.Workload`): can it express the program
(:meth:`Peer.unsupported`), the fixpoint from scratch (:meth:`Peer.batch`), the
size of each derived relation (:meth:`Peer.counts`), and, for a peer that
maintains its answer incrementally, one fact retracted or inserted
(:meth:`Peer.retract`, :meth:`Peer.insert`). A peer without incremental
maintenance is timed on a from-scratch :meth:`Peer.batch` over the changed
input instead, which is what its user would have to do.

Peers are imported lazily by name (:func:`load`), each in the subprocess of
its own cell, so that one peer's imports never weigh on another's memory.
``pydbsp`` and ``pathway`` run in virtual environments of their own
(:mod:`benchmarks.venvs`); the others in the project's.
"""

from __future__ import annotations

import importlib
from typing import ClassVar

# name -> (module, class, environment): the order is the table's row order. The
# environment is None for the project's own, else a name in benchmarks.venvs.
PEERS: dict[str, tuple[str, str, str | None]] = {
    "engine": ("benchmarks.peers.engine_peer", "EnginePeer", None),
    "python": ("benchmarks.peers.python_loop", "PythonLoop", None),
    "pydatalog": ("benchmarks.peers.pydatalog_peer", "PyDatalogPeer", None),
    "clingo": ("benchmarks.peers.clingo_peer", "ClingoPeer", None),
    "duckdb": ("benchmarks.peers.duckdb_peer", "DuckDBPeer", None),
    "cozo": ("benchmarks.peers.cozo_peer", "CozoPeer", None),
    "networkx": ("benchmarks.peers.networkx_peer", "NetworkxPeer", None),
    "pydbsp": ("benchmarks.peers.pydbsp_peer", "PydbspPeer", "pydbsp"),
    "pathway": ("benchmarks.peers.pathway_peer", "PathwayPeer", "pathway"),
}


class Peer:
    """One tool, driven through the workload protocol (see the module doc).

    ``families`` lists the workload families the peer can express; for the
    others :meth:`unsupported` says why, and the table prints that reason.
    """

    name = ""
    label = ""
    incremental = False
    families: tuple[str, ...] = ()
    why_not: ClassVar[dict[str, str]] = {}

    def unsupported(self, workload) -> str | None:
        if workload.family in self.families:
            return None
        return self.why_not.get(workload.family, f"no {workload.family} program")

    def prepare(self, workload) -> None:
        """Import the peer's library and compile what does not depend on the
        facts (our engine: the program), before the batch is timed."""

    def batch(self, workload, facts: dict[str, list[tuple]]):
        """Compute every derived relation from ``facts`` from scratch; returns
        the peer's state, with the result materialized."""
        raise NotImplementedError

    def counts(self, state, workload) -> dict[str, int]:
        """The number of tuples of each of ``workload.outputs``."""
        raise NotImplementedError

    def retract(self, state, relation: str, row: tuple):
        """Retract one input fact (incremental peers only); returns what
        :meth:`changed` reads, outside the timed call."""
        raise NotImplementedError

    def insert(self, state, relation: str, row: tuple):
        """Insert one input fact (incremental peers only); as :meth:`retract`."""
        raise NotImplementedError

    def changed(self, result, workload) -> int | None:
        """How many derived tuples the update returning ``result`` changed, when
        the peer says (``None`` otherwise)."""
        return None


def load(name: str) -> Peer:
    """The peer called ``name``, its module imported now."""
    module, cls, _ = PEERS[name]
    return getattr(importlib.import_module(module), cls)()


def environment(name: str) -> str | None:
    """The virtual environment the peer's cells run in (:mod:`benchmarks.venvs`),
    or None for the project's own."""
    return PEERS[name][2]
