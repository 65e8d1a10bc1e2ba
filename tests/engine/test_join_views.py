"""A child's small dict trace read by a join on columns through a copy in
runs (``TraceNode.columns_view``): the copy holds the trace's entries after
any sequence of appends at random iterations, reads, commits and rollbacks
(its past is kept from epoch to epoch, its current epoch read again when
rows came since), and a closure whose updates take that path equals the
plain loops."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datalog
from datalog import EvaluationError
from engine import colbatch
from engine.colbatch import VIEW_COPY, VIEW_STATE
from engine.node import Node
from engine.operators.join import TraceNode
from tests.datalog.differential import closure

rows = st.dictionaries(st.tuples(st.integers(0, 5), st.integers(0, 5)),
                       st.sampled_from([-1, 1, 2]), max_size=6)
steps = st.lists(st.one_of(st.tuples(st.just("append"), st.sampled_from([0, 0, 0, 2, 5]), rows),
                           st.tuples(st.just("read")), st.tuples(st.just("commit")),
                           st.tuples(st.just("rollback"))), max_size=30)


def entries(trace) -> list:
    return sorted(trace.entries())


@settings(max_examples=300, deadline=None)
@given(steps)
def test_the_view_holds_the_trace_entries_after_any_steps(ops):
    source = Node()
    node = TraceNode(source, ("cols", (0,)), nested=True)
    iteration = 0
    late = False  # appended to after iteration 0 since the last commit or rollback
    for op in ops:
        if op[0] == "append":
            iteration = max(iteration, op[1])  # an epoch's iterations do not go back
            late = late or bool(iteration and op[2])
            source.out = op[2]
            node.clock_stop(1, iteration)
        elif op[0] == "read":
            view = node.columns_view(1 << 20)
            if late:
                assert view is None   # a loop's own stream: no view this epoch
            else:
                assert view is not None and entries(view) == entries(node.trace)
        elif op[0] == "commit":
            node.clock_stop(0, 0)
            iteration, late = 0, False
        else:
            node.rollback()
            iteration, late = 0, False
        if node.view is not None and node.view.epoch == node.trace.epoch and (
                node.viewed == node.appended):
            assert entries(node.view) == entries(node.trace)  # kept, never stale


def test_a_large_trace_has_no_view():
    source = Node()
    node = TraceNode(source, ("cols", (0,)), nested=True)
    source.out = {(k, k): 1 for k in range(VIEW_STATE)}
    node.clock_stop(1, 0)
    node.clock_stop(0, 0)
    assert node.columns_view(1 << 20) is None


def test_a_view_is_made_for_a_delta_worth_the_copy():
    """A new view copies the trace (~0.5 µs an entry): it is made for a delta
    of at least a VIEW_COPY th of its entries; once made, it serves any."""
    source = Node()
    node = TraceNode(source, ("cols", (0,)), nested=True)
    source.out = {(k, k): 1 for k in range(400)}
    node.clock_stop(1, 0)
    node.clock_stop(0, 0)
    assert node.columns_view(400 // VIEW_COPY - 1) is None
    assert node.columns_view(400 // VIEW_COPY) is not None
    assert node.columns_view(1) is node.view


TC = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_updates_of_a_closure_join_the_small_edge_trace_through_its_view():
    """A random graph of 400 nodes and 800 edges (its closure of ~100,000
    paths on packed Distinct state after the bulk load): single-edge
    retractions and re-insertions change hundreds of paths an iteration,
    whose columns the join takes against the edges' view (counted); a
    transaction that fails after reading it (the iteration limit) leaves it
    as it was."""
    rng = random.Random(3)
    edges: set = set()
    while len(edges) < 800:
        x, y = rng.randrange(400), rng.randrange(400)
        if x != y:
            edges.add((x, y))
    session = datalog.Program(TC).session(max_iterations=80)
    chain = [(1000 + k, 1001 + k) for k in range(100)] + [(0, 1000)]  # 100 more iterations
    session.insert("edge", sorted(edges))
    assert session.size("path") >= colbatch.DISTINCT_ROWS
    current = set(edges)
    before = colbatch.COUNTS["join_view"]
    for edge in rng.sample(sorted(edges), 6):
        for retract in (True, False):
            (session.retract if retract else session.insert)("edge", edge)
            current = current - {edge} if retract else current | {edge}
            assert session.query("path") == closure(current)[1]
        read = colbatch.COUNTS["join_view"]
        with pytest.raises(EvaluationError, match="iteration limit"):
            with session.transaction() as tx:   # the view read, then the loop too long
                tx.retract("edge", edge)
                tx.insert("edge", *chain)
        assert colbatch.COUNTS["join_view"] > read
        assert session.query("path") == closure(current)[1]
    assert colbatch.COUNTS["join_view"] > before
