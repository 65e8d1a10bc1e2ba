"""A loop whose batches keep a steady size (a chain's closure: 599, 598, ...
rows an iteration) is a long one before LONG_LOOP (engine.colbatch.steady):
its join and Distinct Trace go columnar as soon as it is steady, whatever
the size of their state, and the answers, of the batch and of updates after it, are the
closure computed by hand."""

from __future__ import annotations

import datalog
from engine import colbatch
from engine.operators.join import NestedJoinNode

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def closure(edges: set) -> set:
    following: dict = {}
    for x, y in edges:
        following.setdefault(x, set()).add(y)
    out = set()
    for start in following:
        seen, todo = set(), [start]
        while todo:
            for y in following.get(todo.pop(), ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        out |= {(start, y) for y in seen}
    return out


def chain_session(nodes: int):
    """``(edges, session)``: a session holding the chain of ``nodes`` nodes."""
    edges = {(x, x + 1) for x in range(nodes - 1)}
    session = datalog.Program(TC).session()
    with session.transaction() as t:
        for edge in edges:
            t.insert("edge", edge)
    return edges, session


def test_a_chain_goes_columnar_before_long_loop(monkeypatch):
    columnar_at = []
    real = NestedJoinNode.join_columns

    def recording(self, pieces, a, b, i, *args):
        columnar_at.append(i)
        return real(self, pieces, a, b, i, *args)

    monkeypatch.setattr(NestedJoinNode, "join_columns", recording)
    nodes = 600
    edges, session = chain_session(nodes)
    assert session.query("path") == closure(edges)
    first = min(columnar_at)
    # as soon as steady, its state still small (SMALL_STATE rows come later)
    assert colbatch.STEADY_SPAN - 1 <= first <= colbatch.STEADY_SPAN, first
    assert (first + 1) * nodes < colbatch.SMALL_STATE
    for change in (("retract", (300, 301)), ("insert", (300, 301)), ("insert", (10, 500)),
                   ("retract", (0, 1))):
        with session.transaction() as t:
            getattr(t, change[0])("edge", change[1])
        (edges.discard if change[0] == "retract" else edges.add)(change[1])
        assert session.query("path") == closure(edges), change


def test_a_growing_loop_is_not_steady():
    """Sizes that double (a tree's levels) or dip under LOOP_ROWS, or an
    iteration missed, start the count again."""
    state = [0, 0, 0, -1]
    assert not any(colbatch.steady(state, 300 * 2 ** (i % 3), i) for i in range(100))
    state = [0, 0, 0, -1]
    sizes = [1000] * (colbatch.STEADY_SPAN - 1) + [10] + [1000] * (colbatch.STEADY_SPAN - 1)
    assert not any(colbatch.steady(state, n, i) for i, n in enumerate(sizes))
    assert colbatch.steady(state, 1000, len(sizes))
    assert not colbatch.steady(state, 1000, len(sizes) + 2)


def test_an_updates_thin_long_loop_takes_the_vectorised_step(monkeypatch):
    """Retracting an edge near a chain's end: ~40 rows an iteration for
    hundreds of iterations, under the row-by-row path's threshold
    (packedsmall.small_rows). From TABLE_FROM on, the Distinct Trace makes a
    table of the epoch's weights and takes these batches vectorised
    (densesums.table_due) rather than row by row; the answers stay the
    closure's."""
    from engine.operators.distinct import DistinctTraceNode
    from engine.operators.packedsmall import small_rows

    steps = []
    real = DistinctTraceNode._evaluate_columns

    def recording(self, i, batch):
        before = colbatch.COUNTS["distinct"]
        small = small_rows(self.packed)
        done = real(self, i, batch)
        steps.append((i, len(batch), small, colbatch.COUNTS["distinct"] > before,
                      self.packed is not None and self.packed.sums is not None))
        return done

    edges, session = chain_session(600)
    monkeypatch.setattr(DistinctTraceNode, "_evaluate_columns", recording)
    for change in (("retract", (40, 41)), ("insert", (40, 41)), ("retract", (560, 561))):
        steps.clear()
        with session.transaction() as t:
            getattr(t, change[0])("edge", change[1])
        (edges.discard if change[0] == "retract" else edges.add)(change[1])
        assert session.query("path") == closure(edges), change
        thin = [s for s in steps if s[0] >= colbatch.TABLE_FROM
                and colbatch.TABLE_SMALL_ROWS <= s[1] < s[2]]
        assert len(thin) > 300, change
        assert all(vectorised and table for _, _, _, vectorised, table in thin), change
