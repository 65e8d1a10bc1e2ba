"""engine.graphs against networkx, which computes the same: the strongly connected
components as sets, and the same lexicographic topological order (or a cycle) on
random directed graphs with self-loops, repeated edges and several components."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.graphs import CycleError, lexicographic_order, strongly_connected


@st.composite
def graphs(draw, max_nodes: int = 12):
    """(nodes in a shuffled order, edges as (source, target) pairs, repeats allowed)."""
    count = draw(st.integers(0, max_nodes))
    nodes = draw(st.permutations(range(count)))
    pair = st.tuples(st.integers(0, count - 1), st.integers(0, count - 1))
    edges = draw(st.lists(pair, max_size=3 * count)) if count else []
    return list(nodes), edges


def successors_of(edges) -> dict:
    out: dict = {}
    for source, target in edges:
        out.setdefault(source, []).append(target)
    return out


def networkx_graph(nodes, edges) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return graph


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_components_are_networkx_components_in_dependency_order(graph):
    nodes, edges = graph
    found = strongly_connected(nodes, successors_of(edges))
    reference = networkx_graph(nodes, edges)
    expected = {frozenset(c) for c in nx.strongly_connected_components(reference)}
    assert {frozenset(c) for c in found} == expected
    assert sum(len(c) for c in found) == len(nodes)
    position = {node: i for i, component in enumerate(found) for node in component}
    for source, target in edges:
        assert position[source] >= position[target]  # a component after those it reaches


@settings(max_examples=300, deadline=None)
@given(graphs(), st.booleans())
def test_order_is_networkx_lexicographic_order(graph, keyed):
    nodes, edges = graph
    key = (lambda node: -(node // 3)) if keyed else None   # ties: the first in `nodes`
    reference = networkx_graph(nodes, edges)
    try:
        expected = list(nx.lexicographical_topological_sort(reference, key=key))
    except nx.NetworkXUnfeasible:
        with pytest.raises(CycleError):
            lexicographic_order(nodes, successors_of(edges), key)
        return
    assert lexicographic_order(nodes, successors_of(edges), key) == expected


def test_a_deep_chain_does_not_recurse():
    """50,000 nodes in one cycle: one component, no RecursionError."""
    count = 50_000
    successors = {i: [(i + 1) % count] for i in range(count)}
    (component,) = strongly_connected(range(count), successors)
    assert sorted(component) == list(range(count))
