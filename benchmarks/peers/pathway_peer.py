"""Pathway: a Python API on a Rust differential-dataflow engine, run as a stream.

Every input fact is a row ``(rel, a, b)`` of one input table fed by a Python
connector (unary facts have ``b = 0``; all three columns form the primary key,
so a delete names the row it removes). Each workload's program is written
with Pathway's table operators; recursion is ``pw.iterate`` to a fixpoint,
with a ``groupby().reduce()`` as the distinct of each iteration. The derived
relations are concatenated into one subscribed table, counted as its changes
arrive.

Time is measured honestly for a streaming system: an update (one fact deleted
or inserted, then a commit) is timed from the moment it is handed to the
connector to the moment the subscription has seen that commit's time close.
Each commit also replaces a marker row of the subscribed table, so every
commit closes a time there, even one that changes no derived fact. The batch is
the same: from starting the computation with every fact in one commit to the
close of that commit. Pathway runs with its default number of threads.
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections import Counter

from benchmarks.peers import Peer

TICK = "#tick"


def derive(pw, family: str, relation):
    """The workload's derived tables, by name; ``relation(name)`` is an input
    relation as a table of ``x`` (and ``y`` for binary ones)."""
    left, right, this = pw.left, pw.right, pw.this

    def distinct(table):
        return table.groupby(this.x, this.y).reduce(this.x, this.y)

    def closure(edge):
        def step(path, edge):
            longer = path.join(edge, left.y == right.x).select(x=left.x, y=right.y)
            return {"path": distinct(path.concat_reindex(longer)), "edge": edge}
        start = pw.iterate_universe(edge.select(this.x, this.y))
        return pw.iterate(step, path=start, edge=edge)["path"]

    if family == "tc":
        return {"path": closure(relation("edge"))}
    if family == "sg":
        par = relation("par")

        def step(sg, par):
            up = par.join(sg, left.y == right.x).select(x=left.x, b=right.y)
            down = up.join(par, left.b == right.y).select(x=left.x, y=right.x)
            return {"sg": distinct(sg.concat_reindex(down)), "par": par}
        siblings = par.join(par.copy(), left.y == right.y).select(x=left.x, y=right.x) \
            .filter(this.x != this.y)
        start = pw.iterate_universe(distinct(siblings))
        return {"sg": pw.iterate(step, sg=start, par=par)["sg"]}
    if family == "andersen":
        addr_of, assign = relation("addr_of"), relation("assign")
        load_from, store_to = relation("load_from"), relation("store_to")

        def step(pt, assign, load_from, store_to):
            copied = assign.join(pt, left.y == right.x).select(x=left.x, y=right.y)
            loaded = load_from.join(pt, left.y == right.x).select(x=left.x, r=right.y) \
                .join(pt, left.r == right.x).select(x=left.x, y=right.y)
            stored = store_to.join(pt, left.x == right.x).select(q=left.y, r=right.y) \
                .join(pt, left.q == right.x).select(x=left.r, y=right.y)
            grown = pt.concat_reindex(copied, loaded, stored)
            return {"pt": distinct(grown), "assign": assign, "load_from": load_from,
                    "store_to": store_to}
        start = pw.iterate_universe(addr_of.select(this.x, this.y))
        return {"points_to": pw.iterate(step, pt=start, assign=assign, load_from=load_from,
                                        store_to=store_to)["pt"]}
    if family == "negagg":
        reach = closure(relation("edge"))
        cyclic = reach.filter(this.x == this.y).groupby(this.x).reduce(this.x)
        acyclic = relation("node").join_left(cyclic, left.x == right.x) \
            .select(x=left.x, seen=right.x).filter(this.seen.is_none()).select(this.x)
        reach_count = reach.groupby(this.x).reduce(this.x, y=pw.reducers.count())
        return {"reach": reach, "cyclic": cyclic, "acyclic": acyclic,
                "reach_count": reach_count}
    raise ValueError(family)


class Stream:
    """A running Pathway computation: the connector's command queue, the
    derived relations' counts, and the last marker whose time has closed."""

    def __init__(self, pw, family: str, facts: dict[str, list[tuple]]):
        self.commands: queue.Queue = queue.Queue()
        self.counts: Counter = Counter()
        self.closed = threading.Condition()
        self.last_tick = self.closed_tick = -1
        self.tick = 0
        stream = self

        class Schema(pw.Schema):
            rel: str = pw.column_definition(primary_key=True)
            a: int = pw.column_definition(primary_key=True)
            b: int = pw.column_definition(primary_key=True)

        class Subject(pw.io.python.ConnectorSubject):
            _deletions_enabled = True   # Pathway's guess, from reading run(), misses getattr

            def run(self):
                for name, rows in facts.items():
                    for row in rows:
                        self.next(**stream.fields(name, row))
                self.next(rel=TICK, a=0, b=0)
                self.commit()
                while (command := stream.commands.get()) is not None:
                    for op, name, row in command:
                        getattr(self, op)(**stream.fields(name, row))
                    self.commit()

        table = pw.io.python.read(Subject(), schema=Schema, autocommit_duration_ms=None)

        def relation(name):
            rows = table.filter(pw.this.rel == name)
            if facts.get(name) and len(facts[name][0]) == 1:
                return rows.select(x=pw.this.a)
            return rows.select(x=pw.this.a, y=pw.this.b)

        parts = [table.filter(pw.this.rel == TICK)]
        for name, derived in derive(pw, family, relation).items():
            y = derived.y if "y" in derived.column_names() else 0
            parts.append(derived.select(rel=name, a=derived.x, b=y))
        summary = parts[0].concat_reindex(*parts[1:])
        pw.io.subscribe(summary, on_change=self.on_change, on_time_end=self.on_time_end)
        self.thread = threading.Thread(
            target=lambda: pw.run(monitoring_level=pw.MonitoringLevel.NONE), daemon=True)
        self.thread.start()
        atexit.register(self.stop)
        self.wait(0)

    @staticmethod
    def fields(name: str, row: tuple) -> dict:
        return {"rel": name, "a": row[0], "b": row[1] if len(row) > 1 else 0}

    def on_change(self, key, row, time, is_addition):
        if row["rel"] == TICK:
            if is_addition:
                self.last_tick = row["a"]
        else:
            self.counts[row["rel"]] += 1 if is_addition else -1

    def on_time_end(self, time):
        with self.closed:
            self.closed_tick = self.last_tick
            self.closed.notify_all()

    def wait(self, tick: int) -> None:
        with self.closed:
            self.closed.wait_for(lambda: self.closed_tick >= tick)

    def change(self, op: str, relation: str, row: tuple) -> None:
        """Apply one change with a new marker, and return once its time closed."""
        self.tick += 1
        self.commands.put([(op, relation, row), ("delete", TICK, (self.tick - 1,)),
                           ("next", TICK, (self.tick,))])
        self.wait(self.tick)

    def stop(self) -> None:
        self.commands.put(None)
        self.thread.join(timeout=30)


class PathwayPeer(Peer):
    name = "pathway"
    label = "Pathway (incremental, streaming)"
    incremental = True
    families = ("tc", "sg", "andersen", "negagg")

    def prepare(self, workload):
        import logging

        import pathway as pw

        logging.getLogger("pathway").setLevel(logging.WARNING)
        logging.getLogger("pathway_engine").setLevel(logging.WARNING)
        self.pw = pw

    def batch(self, workload, facts):
        return Stream(self.pw, workload.family, facts)

    def counts(self, state, workload):
        return {name: state.counts[name] for name in workload.outputs}

    def retract(self, state, relation, row):
        state.change("delete", relation, row)

    def insert(self, state, relation, row):
        state.change("next", relation, row)
