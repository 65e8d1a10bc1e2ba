"""Workloads: deterministic inputs, the Datalog program, and the updates to time.

A workload is a program (Soufflé dialect, as our engine reads it), its input
facts (relation -> sorted list of rows), the derived relations that count as its
output, and the relations whose facts the random updates pick from. Every
generator is a pure function of its parameters and a fixed seed, so each cell of
the table rebuilds exactly the same input in its own subprocess from the
workload's ``spec``.

Families (the same program on different inputs shares a family; peers implement
one program per family):

- ``tc``: transitive closure, ``path(x, z) :- path(x, y), edge(y, z).``
- ``sg``: same generation, ``sg(x, y) :- par(x, a), sg(a, b), par(y, b).``
- ``andersen``: Andersen's inclusion-based points-to analysis (two rules are
  non-linear: ``points_to`` appears twice in their bodies).
- ``negagg``: reachability with negation and an aggregate over the recursive
  relation (``acyclic(x) :- node(x), !cyclic(x).`` and
  ``reach_count(x, c) :- reach(x, _), c = count : { reach(x, _) }.``).
- ``counter``: ``c(n + 1) :- c(n), bound(b), n < b.`` from ``c(0)``: one new
  tuple per iteration, so the time is the per-iteration overhead of a
  recursive stratum (a million iterations in the full run). No updates.

>>> w = make("chain", nodes=4)
>>> w.name, w.facts["edge"]
('tc-chain-4', [(0, 1), (1, 2), (2, 3)])
>>> make("tree", depth=2).facts["par"]
[(1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 2)]
>>> updates(w, 2, seed=1) == updates(make(**w.spec), 2, seed=1)
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from benchmarks.tc import chain, random_graph

TC_PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""

SG_PROGRAM = """
.decl par(child: number, parent: number)
.decl sg(x: number, y: number)
sg(x, y) :- par(x, p), par(y, p), x != y.
sg(x, y) :- par(x, a), sg(a, b), par(y, b).
"""

ANDERSEN_PROGRAM = """
// p = &a;   p = q;   p = *q;   *p = q
.decl addr_of(p: number, a: number)
.decl assign(p: number, q: number)
.decl load_from(p: number, q: number)
.decl store_to(p: number, q: number)
.decl points_to(p: number, a: number)
points_to(p, a) :- addr_of(p, a).
points_to(p, a) :- assign(p, q), points_to(q, a).
points_to(p, a) :- load_from(p, q), points_to(q, r), points_to(r, a).
points_to(r, a) :- store_to(p, q), points_to(p, r), points_to(q, a).
"""

NEGAGG_PROGRAM = """
.decl edge(x: number, y: number)
.decl node(x: number)
.decl reach(x: number, y: number)
.decl cyclic(x: number)
.decl acyclic(x: number)
.decl reach_count(x: number, c: number)
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
cyclic(x) :- reach(x, x).
acyclic(x) :- node(x), !cyclic(x).
reach_count(x, c) :- reach(x, _), c = count : { reach(x, _) }.
"""

COUNTER_PROGRAM = """
.decl bound(n: number)
.decl c(n: number)
c(0).
c(n + 1) :- c(n), bound(b), n < b.
"""

PROGRAMS = {"tc": TC_PROGRAM, "sg": SG_PROGRAM, "andersen": ANDERSEN_PROGRAM,
            "negagg": NEGAGG_PROGRAM, "counter": COUNTER_PROGRAM}
OUTPUTS = {"tc": ("path",), "sg": ("sg",), "andersen": ("points_to",),
           "negagg": ("reach", "cyclic", "acyclic", "reach_count"), "counter": ("c",)}


@dataclass(frozen=True)
class Workload:
    """One row block of the table: a program, its inputs and its updates.

    ``spec`` rebuilds the workload (``make(**spec)``); ``facts`` maps each input
    relation to its sorted rows; ``outputs`` are the derived relations whose
    sizes are the workload's derived tuples; ``updatable`` are the input
    relations that random updates retract and re-insert facts of.
    """

    name: str
    family: str
    description: str
    spec: dict
    facts: dict[str, list[tuple]]
    updatable: tuple[str, ...]
    outputs: tuple[str, ...] = field(default=())

    @property
    def program(self) -> str:
        return PROGRAMS[self.family]

    def input_size(self) -> int:
        return sum(len(rows) for rows in self.facts.values())


def chain_workload(nodes: int) -> Workload:
    """Transitive closure of the chain ``0 -> 1 -> ... -> nodes-1``:
    ``nodes * (nodes - 1) / 2`` paths; every edge is a cut edge."""
    return Workload(f"tc-chain-{nodes}", "tc", f"transitive closure, chain of {nodes:,} nodes",
                    {"kind": "chain", "nodes": nodes}, {"edge": chain(nodes)}, ("edge",),
                    OUTPUTS["tc"])


def random_workload(nodes: int, edges: int, seed: int = 13) -> Workload:
    """Transitive closure of a random directed graph: ``edges`` distinct edges
    ``(x, y)``, ``x != y``, drawn uniformly by ``random.Random(seed)``
    (``benchmarks.tc.random_graph``). With 1,000 nodes, 2,000 edges and seed
    13 the closure has 654,666 paths."""
    graph = random_graph(nodes, edges, random.Random(seed))
    return Workload(f"tc-random-{nodes}-{edges}", "tc",
                    f"transitive closure, random graph of {nodes:,} nodes and {edges:,} edges "
                    f"(seed {seed})",
                    {"kind": "random", "nodes": nodes, "edges": edges, "seed": seed},
                    {"edge": graph}, ("edge",), OUTPUTS["tc"])


def binary_tree(depth: int) -> list[tuple[int, int]]:
    """``par(child, parent)`` of the complete binary tree of the given depth
    (the root 0 at depth 0, ``2 ** (depth + 1) - 1`` nodes, heap numbering)."""
    return [(child, (child - 1) // 2) for child in range(1, 2 ** (depth + 1) - 1)]


def tree_workload(depth: int) -> Workload:
    """Same generation on a complete binary tree: every ordered pair of distinct
    nodes at the same depth, ``sum(4**d - 2**d for d in 1..depth)`` tuples."""
    return Workload(f"sg-tree-{depth}", "sg",
                    f"same generation, complete binary tree of depth {depth} "
                    f"({2 ** (depth + 1) - 1:,} nodes)",
                    {"kind": "tree", "depth": depth}, {"par": binary_tree(depth)}, ("par",),
                    OUTPUTS["sg"])


def andersen_input(functions: int, variables: int, seed: int = 3) -> dict[str, list[tuple]]:
    """Statements of ``functions`` independent functions of ``variables`` local
    variables each (variable ids are global: function ``f`` owns
    ``f * variables ...``). Per function: ``variables`` address-of statements
    ``p = &a``, ``variables`` copies ``p = q``, and ``variables / 10`` loads
    ``p = *q`` and stores ``*p = q``, all between distinct random locals.

    Functions do not share variables: random cross-function flows through the
    heap make inclusion-based analysis saturate (every pointer pointing to
    almost every object), which measures nothing but that.
    """
    rng = random.Random(seed)
    facts: dict[str, set] = {"addr_of": set(), "assign": set(), "load_from": set(),
                             "store_to": set()}
    for function in range(functions):
        base = function * variables

        def pair(base: int = base) -> tuple[int, int]:
            while True:
                x, y = base + rng.randrange(variables), base + rng.randrange(variables)
                if x != y:
                    return (x, y)

        for _ in range(variables):
            facts["addr_of"].add(pair())
        for _ in range(variables):
            facts["assign"].add(pair())
        for _ in range(variables // 10):
            facts["load_from"].add(pair())
            facts["store_to"].add(pair())
    return {name: sorted(rows) for name, rows in facts.items()}


def andersen_workload(functions: int, variables: int = 50, seed: int = 3) -> Workload:
    """Andersen points-to analysis over :func:`andersen_input`."""
    return Workload(f"andersen-{functions}x{variables}", "andersen",
                    f"Andersen points-to, {functions:,} functions of {variables} variables "
                    f"(seed {seed})",
                    {"kind": "andersen", "functions": functions, "variables": variables,
                     "seed": seed},
                    andersen_input(functions, variables, seed),
                    ("addr_of", "assign", "load_from", "store_to"), OUTPUTS["andersen"])


def negagg_workload(nodes: int, edges: int, seed: int = 7) -> Workload:
    """Reachability on a random graph, the nodes on no cycle (negation of a
    recursive relation) and the number of nodes each node reaches (an aggregate
    over the recursive relation). Updates change edges only."""
    graph = random_graph(nodes, edges, random.Random(seed))
    return Workload(f"negagg-{nodes}-{edges}", "negagg",
                    f"reach + negation + count, random graph of {nodes:,} nodes and "
                    f"{edges:,} edges (seed {seed})",
                    {"kind": "negagg", "nodes": nodes, "edges": edges, "seed": seed},
                    {"edge": graph, "node": [(n,) for n in range(nodes)]}, ("edge",),
                    OUTPUTS["negagg"])


def counter_workload(bound: int) -> Workload:
    """The counter ``c(0) .. c(bound)``: ``bound + 1`` tuples, one per iteration of
    one recursive stratum (``bound + 2`` iterations with the last, empty one).
    Nothing is updated: retracting ``bound`` would only time the same loop again."""
    return Workload(f"counter-{bound}", "counter",
                    f"a counter to {bound:,}: {bound:,} iterations of one recursive rule",
                    {"kind": "counter", "bound": bound}, {"bound": [(bound,)]}, (),
                    OUTPUTS["counter"])


KINDS = {"chain": chain_workload, "random": random_workload, "tree": tree_workload,
         "andersen": andersen_workload, "negagg": negagg_workload, "counter": counter_workload}


def make(kind: str, **params) -> Workload:
    """Build a workload from its ``spec``: ``make(**workload.spec)``."""
    return KINDS[kind](**params)


def suite(size: str) -> list[Workload]:
    """The workloads of one run: ``full`` (the table in RESULTS.md), ``quick``
    (a smoke run) or ``tiny`` (the test's seconds-long run)."""
    if size == "full":
        return [chain_workload(1000), chain_workload(2000), random_workload(1000, 2000),
                tree_workload(10), andersen_workload(200), negagg_workload(1000, 1500),
                counter_workload(1_000_000)]
    if size == "quick":
        return [chain_workload(200), chain_workload(400), random_workload(200, 400),
                tree_workload(6), andersen_workload(20), negagg_workload(200, 300),
                counter_workload(10_000)]
    if size == "tiny":
        return [chain_workload(12), chain_workload(20), random_workload(25, 40),
                tree_workload(3), andersen_workload(2, 10), negagg_workload(25, 35),
                counter_workload(100)]
    raise ValueError(f"unknown suite size {size!r}: full, quick or tiny")


def updates(workload: Workload, count: int, seed: int = 2026) -> list[tuple[str, tuple]]:
    """``count`` distinct input facts, each to be retracted and then re-inserted
    (so the state after each update pair is the batch state again): uniformly
    random among the facts of the workload's ``updatable`` relations."""
    pool = [(name, row) for name in workload.updatable for row in workload.facts[name]]
    return random.Random(seed).sample(pool, min(count, len(pool)))
