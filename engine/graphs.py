"""The two graph algorithms every program needs at start-up, on plain dicts:
strongly connected components (stratification) and a topological order that
breaks ties by a key (strata, and a circuit's nodes).

networkx computes the same, and is still used where a graph serves more than
these two: naming a cycle in an error (the stratifier's and the inline check's),
``dependency_graph`` for tests. Not here, because importing networkx costs more than all
the rest of compiling a small program: ``python -X importtime -c "import numpy;
import networkx"`` shows 62 ms for networkx, and a program of a few rules is
parsed, checked and planned in 1.5 ms once lark's grammar is loaded.

A graph is given as its nodes (an iterable; their order decides nothing but
ties between equal keys) and ``successors``, a mapping from a node to the nodes
its edges go to (a node missing from it has none).

>>> successors = {"a": ["b"], "b": ["a", "c"], "c": []}
>>> sorted(sorted(c) for c in strongly_connected(["a", "b", "c"], successors))
[['a', 'b'], ['c']]
>>> lexicographic_order(["c", "b", "a"], {"a": ["c"], "b": ["c"]})
['a', 'b', 'c']
>>> lexicographic_order(["a", "b"], {"a": ["b"], "b": ["a"]})
Traceback (most recent call last):
...
engine.graphs.CycleError: the graph has a cycle
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Mapping

__all__ = ["CycleError", "lexicographic_order", "strongly_connected"]


class CycleError(ValueError):
    """The graph has no topological order."""


def strongly_connected(nodes: Iterable[Hashable],
                       successors: Mapping[Hashable, Iterable[Hashable]]
                       ) -> list[list[Hashable]]:
    """The strongly connected components (each a list of its nodes), every node in
    exactly one; a component comes after every component it reaches (Tarjan's
    algorithm, with an explicit stack so deep graphs do not hit the recursion
    limit)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    components: list[list] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(successors.get(root, ())))]
        while work:
            node, rest = work[-1]
            for following in rest:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(successors.get(following, ()))))
                    break
                if following in on_stack:
                    low[node] = min(low[node], index[following])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def lexicographic_order(nodes: Iterable[Hashable],
                        successors: Mapping[Hashable, Iterable[Hashable]],
                        key: Callable | None = None) -> list[Hashable]:
    """Every node after the nodes with an edge to it; among the nodes ready to come
    next, the one with the least ``key(node)`` (the node itself by default), then
    the first in ``nodes`` (as networkx's ``lexicographical_topological_sort``).
    Raises :class:`CycleError` when there is no such order. An edge given twice
    counts once."""
    nodes = list(nodes)
    rank = {node: position for position, node in enumerate(nodes)}
    targets = {node: set(successors.get(node, ())) for node in nodes}
    waiting = dict.fromkeys(nodes, 0)      # node -> how many edges into it are not yet met
    for following in targets.values():
        for node in following:
            waiting[node] += 1
    sort_key = key if key is not None else (lambda node: node)
    ready = [(sort_key(node), rank[node], node) for node in nodes if not waiting[node]]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for following in targets[node]:
            waiting[following] -= 1
            if not waiting[following]:
                heapq.heappush(ready, (sort_key(following), rank[following], following))
    if len(order) < len(nodes):
        raise CycleError("the graph has a cycle")
    return order
