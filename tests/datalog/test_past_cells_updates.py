"""A closure's updates with the Distinct's past read through its cells
(engine.operators.densesums.PastCells): retracting and re-inserting edges of
a chain long enough for the past's runs to be summed (every path found once,
at one iteration) and of a chain with shortcuts (paths of several lengths:
the cells refused) give the closure computed from scratch, and the first
reads the cells, kept up over the commits and overlay flushes."""

from __future__ import annotations

import random

import pytest

import datalog
from engine import colbatch

PROGRAM = (".decl edge(x: number, y: number)\n"
           ".decl path(x: number, y: number)\n"
           "path(x, y) :- edge(x, y).\n"
           "path(x, z) :- path(x, y), edge(y, z).\n")


def closure(edges: set) -> set:
    """The pairs joined by a path (a search from each node)."""
    after: dict = {}
    for x, y in edges:
        after.setdefault(x, []).append(y)
    out = set()
    for start in after:
        seen, todo = set(), list(after[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(after.get(node, ()))
        out |= {(start, node) for node in seen}
    return out


@pytest.mark.parametrize("shortcuts", [0, 12])
def test_updates_read_through_the_cells_give_the_closure(shortcuts):
    nodes = 400  # (79,800 paths: a past of BOX_ROWS entries in runs of PAST_LARGE)
    rng = random.Random(5)
    edges = {(k, k + 1) for k in range(nodes - 1)}
    edges |= {(a, a + rng.randrange(2, 9)) for a in rng.sample(range(nodes - 10), shortcuts)}
    session = datalog.Program(PROGRAM).session()
    with session.transaction() as tx:
        tx.insert("edge", *sorted(edges))
    before = colbatch.COUNTS["past_cells"]
    dense = colbatch.COUNTS["past_cells_dense"]
    current = set(edges)
    for edge in [(40, 41), (150, 151), (40, 41), (360, 361), (150, 151), (7, 8)]:
        with session.transaction() as tx:
            if edge in current:
                tx.retract("edge", edge)
                current.discard(edge)
            else:
                tx.insert("edge", edge)
                current.add(edge)
        assert set(session.query("path")) == closure(current)
    if not shortcuts:  # (the long loop's steps read them densely, through its table's cells)
        assert colbatch.COUNTS["past_cells"] > before
        assert colbatch.COUNTS["past_cells_dense"] > dense
