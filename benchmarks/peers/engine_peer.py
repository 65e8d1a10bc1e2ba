"""Our engine, through the public API a user would call.

The program is compiled once (``datalog.Program(text)``, before the clock
starts, reported apart as its compile time); the batch is ``program.session()``
and one transaction inserting every input fact (epoch 1 evaluates the whole fixpoint); an update is
one ``session.retract`` or ``session.insert`` of one fact, whose returned
``Delta`` says how many derived tuples changed (counted without making them).
"""

from __future__ import annotations

from benchmarks.peers import Peer


class EnginePeer(Peer):
    name = "engine"
    label = "this engine (incremental)"
    incremental = True
    families = ("tc", "sg", "andersen", "negagg", "counter")

    def prepare(self, workload):
        # numpy before the clock, as when `import datalog` imported it: the runtime
        # now imports it at its first columnar batch (engine.lazy)
        import numpy  # noqa: F401

        import datalog

        self.program = datalog.Program(workload.program)

    def batch(self, workload, facts):
        session = self.program.session()
        with session.transaction() as tx:
            for relation, rows in facts.items():
                tx.insert(relation, *rows)
        return session

    def counts(self, state, workload):
        return {name: state.size(name) for name in workload.outputs}

    def retract(self, state, relation, row):
        return state.retract(relation, row)

    def insert(self, state, relation, row):
        return state.insert(relation, row)

    def changed(self, delta, workload):
        return sum(delta.count(name) for name in workload.outputs)  # no rows made
