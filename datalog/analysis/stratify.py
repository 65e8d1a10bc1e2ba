"""Stratification: the relation dependency graph and its strata.

The *dependency graph* has a node per relation and an edge ``q -> p`` when a rule
for ``p`` reads ``q`` (the direction data flows). An edge's ``kind`` is
``negative`` when ``q`` is read under ``!``, ``aggregate`` when it is read in an
aggregate body, ``positive`` otherwise (the strongest kind wins when a relation is
read in several ways: negative, then aggregate, then positive); its ``span`` is
where it is read.

The *strata* are the strongly connected components of that graph, in dependency
order (every stratum comes after the strata it reads). A stratum is *recursive*
when its relations read each other (or one reads itself). Negation and
aggregation must not go through recursion: a negative or aggregate edge inside a
component is an error naming the cycle, as ``p -> !q -> p`` (read "p depends on
not q, which depends on p").

A subsumption rule for ``p`` (``p(a) <= p(b) :- body.``) removes tuples of ``p``
when its body holds: every relation its body reads is an edge of kind
``negative`` into ``p`` (more of it can mean less of ``p``), so that body is
computed before ``p``; its two heads read ``p``'s own candidates, no edge.

>>> from datalog.syntax.parser import parse
>>> p = parse('''.decl e(x: number, y: number)
... .decl t(x: number, y: number)
... .decl u(x: number)
... t(x, y) :- e(x, y).
... t(x, z) :- t(x, y), e(y, z).
... u(x) :- e(x, _), !t(x, x).''')
>>> [(s.relations, s.recursive, len(s.clauses)) for s in stratify(p)]
[(('e',), False, 0), (('t',), True, 2), (('u',), False, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from datalog.errors import CheckError, Diagnostic
from datalog.syntax.ast import Aggregate, Atom, Literal, Module, Negation, Subsumption
from datalog.syntax.terms import aggregates_in, literal_terms
from engine.graphs import lexicographic_order, strongly_connected

if TYPE_CHECKING:  # networkx is imported where used: `import datalog` stays quick
    import networkx as nx

_STRENGTH = {"positive": 0, "aggregate": 1, "negative": 2}


@dataclass(frozen=True)
class Stratum:
    """One strongly connected component of the dependency graph: its relations
    (sorted by name), whether it is recursive, and the clauses (head, body) whose
    head is one of its relations, in source order."""

    relations: tuple[str, ...]
    recursive: bool
    clauses: tuple[tuple[Atom, tuple[Literal, ...]], ...]
    #: the subsumption rules of its relations, in source order
    subsumptions: tuple[Subsumption, ...] = ()


def _reads(body: tuple[Literal, ...], kind: str = "positive"):
    """(relation, kind, span) for every relation ``body`` reads."""
    for literal in body:
        if isinstance(literal, Atom):
            yield literal.relation, kind, literal.span
        elif isinstance(literal, Negation):
            yield literal.atom.relation, "negative", literal.span
        for agg in aggregates_in(literal_terms(literal)):
            yield from _aggregate_reads(agg)


def _aggregate_reads(agg: Aggregate):
    for relation, kind, span in _reads(agg.body, "aggregate"):
        yield relation, ("negative" if kind == "negative" else "aggregate"), span


class Dependencies:
    """The dependency graph on plain dicts (what stratifying needs, without
    importing networkx: see :mod:`engine.graphs`): ``nodes``, the relations in the
    order they were met, and ``edges``, ``(q, p)`` -> that edge's data (``kind``,
    ``span``, and ``via`` for a subsumption body's). :func:`dependency_graph` is
    the same as a networkx graph."""

    def __init__(self) -> None:
        self.nodes: dict[str, None] = {}
        self.edges: dict[tuple[str, str], dict] = {}
        self.successors: dict[str, list[str]] = {}

    def add_node(self, name: str) -> None:
        self.nodes.setdefault(name)

    def add_edge(self, source: str, target: str, **data) -> None:
        """As networkx's: adds the nodes, and updates the data of an edge given
        before."""
        self.add_node(source)
        self.add_node(target)
        if (source, target) not in self.edges:
            self.edges[source, target] = {}
            self.successors.setdefault(source, []).append(target)
        self.edges[source, target].update(data)

    def has_edge(self, source: str, target: str) -> bool:
        return (source, target) in self.edges


def dependencies(program: Module) -> Dependencies:
    """Relations as nodes, ``q -> p`` when a rule for ``p`` reads ``q``."""
    graph = Dependencies()
    for decl in program.relations:
        graph.add_node(decl.name)
    for fact in program.facts:
        graph.add_node(fact.atom.relation)
    for rule in program.rules:
        for head, body in rule.clauses():
            graph.add_node(head.relation)
            reads = list(_reads(body))
            for term in aggregates_in(head.args):
                reads += _aggregate_reads(term)
            for relation, kind, span in reads:
                old = graph.edges.get((relation, head.relation))
                if old is None or _STRENGTH[kind] > _STRENGTH[old["kind"]]:
                    graph.add_edge(relation, head.relation, kind=kind, span=span)
    for rule in program.subsumptions:
        target = rule.dominated.relation
        graph.add_node(target)
        for conjunction in rule.body:
            for relation, _, span in _reads(conjunction):
                graph.add_edge(relation, target, kind="negative", span=span,
                               via="subsumption")
    return graph


def dependency_graph(program: Module) -> nx.DiGraph:
    """:func:`dependencies` as a networkx graph."""
    return _as_networkx(dependencies(program))


def _as_networkx(graph: Dependencies) -> nx.DiGraph:
    import networkx as nx
    out = nx.DiGraph()
    out.add_nodes_from(graph.nodes)
    out.add_edges_from((source, target, data) for (source, target), data in graph.edges.items())
    return out


def stratify(program: Module) -> list[Stratum]:
    """The strata of ``program`` in dependency order. Raises :class:`CheckError`
    when a negative or aggregate edge lies inside a component (one diagnostic per
    such edge)."""
    graph = dependencies(program)
    found = _components(graph)
    members = found[1]
    problems: list[Diagnostic] = []
    for (source, target), data in graph.edges.items():
        if data["kind"] != "positive" and members[source] == members[target]:
            problems.append(_cycle_error(graph, members, source, target, data))
    if problems:
        problems.sort(key=lambda d: (d.span.path, d.span.line, d.span.column))
        raise CheckError(problems, dict(program.sources))
    # Clauses in source order, numbered, grouped by head relation.
    by_head: dict[str, list] = {}
    for number, clause in enumerate(c for rule in program.rules for c in rule.clauses()):
        by_head.setdefault(clause[0].relation, []).append((number, clause))
    strata = []
    for names, recursive in components(graph, found):
        numbered = sorted((item for name in names for item in by_head.get(name, ())),
                          key=lambda item: item[0])
        pruning = tuple(s for s in program.subsumptions if s.dominated.relation in names)
        strata.append(Stratum(names, recursive, tuple(c for _, c in numbered), pruning))
    return strata


def _components(graph: Dependencies) -> tuple[list[list[str]], dict[str, int]]:
    """The strongly connected components, and each relation's index among them."""
    sets = strongly_connected(graph.nodes, graph.successors)
    return sets, {name: index for index, names in enumerate(sets) for name in names}


def components(graph: Dependencies, found: tuple[list, dict] | None = None):
    """``(relations, recursive)`` of each strongly connected component, in a
    dependency order that is stable: among the components ready to come next,
    the one with the alphabetically first relation. ``found``: what
    :func:`_components` gives, when already computed."""
    sets, members = _components(graph) if found is None else found
    following: dict[int, set[int]] = {}
    for source, target in graph.edges:
        if members[source] != members[target]:
            following.setdefault(members[source], set()).add(members[target])
    names = [tuple(sorted(component)) for component in sets]
    for index in lexicographic_order(range(len(sets)), following, key=lambda i: names[i][0]):
        first = names[index][0]
        yield names[index], len(names[index]) > 1 or graph.has_edge(first, first)


def _cycle_error(graph: Dependencies, members: dict, source: str, target: str,
                 data: dict) -> Diagnostic:
    """``target`` reads ``source`` negatively (or in an aggregate) and ``source``
    depends on ``target``: name the cycle from ``target``."""
    import networkx as nx
    component = {n for n, c in members.items() if c == members[source]}
    mark = "!" if data["kind"] == "negative" else "aggregate over "
    if data.get("via") == "subsumption":
        mark = ""
    steps = [target, mark + source]
    if source != target:
        # Data flows target -> ... -> source, so source depends, step by step
        # along the reversed path, on target.
        back = nx.shortest_path(_as_networkx(graph).subgraph(component), target, source)
        chain = list(reversed(back))  # source, ..., target
        steps += [_mark(graph, dependent, dependency) + dependency
                  for dependent, dependency in pairwise(chain)]
    cycle = " -> ".join(steps)
    what = "negation" if data["kind"] == "negative" else "an aggregate"
    hint = "negation and aggregation need their input computed first; break the cycle"
    if data.get("via") == "subsumption":
        what = "the body of a subsumption rule"
        hint = ("the body of a subsumption rule is computed before the relation it "
                "prunes; break the cycle")
    return Diagnostic("error", f"`{target}` depends on itself through {what}: {cycle}",
                      data["span"], hint=hint)


def _mark(graph: Dependencies, dependent: str, dependency: str) -> str:
    kind = graph.edges[dependency, dependent]["kind"]
    return {"negative": "!", "aggregate": "aggregate over "}.get(kind, "")
