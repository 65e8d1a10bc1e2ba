"""What subsumption costs: least distances on a random weighted graph with cycles
(a subsumption rule keeps one distance per node), from scratch and under
single-edge updates.

For each size it builds a random directed graph (``--nodes`` nodes, ``--degree``
edges per node on average, weights 1 to 10, seeded), evaluates the least distance
from node 0 in one transaction (timed), then times ``--updates`` transactions that
each insert one new random edge and retract it again (median and max of the
inserts and of the retractions), checking the distances against Dijkstra's.

    python -m benchmarks.subsumption [--nodes 200 1000] [--degree 4] [--updates 10]
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import time

PROGRAM = """
.decl edge(x: number, y: number, w: number)
.decl dist(x: number, d: number)
dist(0, 0).
dist(y, d + w) :- dist(x, d), edge(x, y, w).
dist(x, d) <= dist(x, d2) :- d > d2.
"""


def dijkstra(edges, source: int = 0) -> set:
    out: dict[int, list] = {}
    for x, y, w in edges:
        out.setdefault(x, []).append((y, w))
    best = {source: 0}
    queue = [(0, source)]
    while queue:
        d, x = heapq.heappop(queue)
        if d > best[x]:
            continue
        for y, w in out.get(x, ()):
            if d + w < best.get(y, d + w + 1):
                best[y] = d + w
                heapq.heappush(queue, (d + w, y))
    return set(best.items())


def measure(nodes: int, degree: int, updates: int, seed: int = 1) -> dict:
    import datalog

    rng = random.Random(seed)
    edges = {(rng.randrange(nodes), rng.randrange(nodes), rng.randint(1, 10))
             for _ in range(nodes * degree)}
    session = datalog.Program(PROGRAM).session()
    began = time.perf_counter()
    session.insert("edge", list(edges))
    batch = time.perf_counter() - began
    assert session.query("dist") == dijkstra(edges)
    inserts, retracts = [], []
    for _ in range(updates):
        edge = (rng.randrange(nodes), rng.randrange(nodes), rng.randint(1, 3))
        if edge in edges:
            continue
        began = time.perf_counter()
        session.insert("edge", edge)
        inserts.append(time.perf_counter() - began)
        assert session.query("dist") == dijkstra(edges | {edge})
        began = time.perf_counter()
        session.retract("edge", edge)
        retracts.append(time.perf_counter() - began)
    assert session.query("dist") == dijkstra(edges)
    return {"nodes": nodes, "edges": len(edges), "batch": batch,
            "insert": (statistics.median(inserts), max(inserts)),
            "retract": (statistics.median(retracts), max(retracts))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--degree", type=int, default=4)
    parser.add_argument("--updates", type=int, default=10)
    args = parser.parse_args(argv)
    print("| nodes | edges | from scratch | insert an edge (median, max) "
          "| retract it (median, max) |")
    print("|---|---|---|---|---|")
    for nodes in args.nodes:
        r = measure(nodes, args.degree, args.updates)
        print(f"| {r['nodes']:,} | {r['edges']:,} | {r['batch'] * 1000:.0f} ms "
              f"| {r['insert'][0] * 1000:.1f} ms, {r['insert'][1] * 1000:.1f} ms "
              f"| {r['retract'][0] * 1000:.1f} ms, {r['retract'][1] * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
