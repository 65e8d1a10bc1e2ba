"""Transitive closure: the engine's batch and incremental times next to a plain
Python semi-naive loop and a from-scratch re-run, measured in one run.

    python -m benchmarks.tc                     # 2,000-node chain + random graph
    python -m benchmarks.tc --chain 500 --updates 5      # a quick look

For each graph it prints, in seconds and MiB:

- ``batch``: evaluating the closure of the whole graph (engine: the first
  transaction of a session; peer: the semi-naive loop);
- ``insert`` / ``retract``: the median time of one transaction inserting one
  random new edge, then of the one retracting it again, over ``--updates``
  updates (peer: re-running the semi-naive loop from scratch on the changed
  graph, which is what a non-incremental engine does);
- ``peak``: the peak memory growth of the process while doing it (each
  measurement runs in a forked child process, so they do not add up).

Times are CPU times of the measuring process (``time.process_time``), so that
other work on a shared machine does not inflate them.

The chain's random edges are shortcuts ``(u, v)`` with ``u < v``: the closure
keeps its size, but every pair's derivation depth behind the shortcut changes,
which is the work a differential engine does. On the random graph an update is
any random new edge.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from collections import defaultdict

PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def seminaive(edges) -> set:
    """The closure by a plain semi-naive loop over a successor index."""
    successors = defaultdict(list)
    for x, y in edges:
        successors[x].append(y)
    path = set(edges)
    delta = path
    while delta:
        new = {(x, z) for x, y in delta for z in successors.get(y, ())} - path
        path |= new
        delta = new
    return path


def chain(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)]


def random_graph(nodes: int, edges: int, rng: random.Random) -> list[tuple[int, int]]:
    result: set = set()
    while len(result) < edges:
        x, y = rng.randrange(nodes), rng.randrange(nodes)
        if x != y:
            result.add((x, y))
    return sorted(result)


def updates(graph, count: int, rng: random.Random, forward: bool) -> list:
    present = set(graph)
    nodes = sorted({v for e in graph for v in e})
    chosen = []
    while len(chosen) < count:
        x, y = rng.choice(nodes), rng.choice(nodes)
        if forward and x > y:
            x, y = y, x
        if x != y and (x, y) not in present and (x, y) not in chosen:
            chosen.append((x, y))
    return chosen


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def in_child(fn):
    """Run ``fn()`` in a forked child; returns (its result, peak memory growth
    in MiB)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        base = _rss_kib()
        result = fn()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        os.write(write, repr((result, max(peak, 0) / 1024)).encode())
        os.close(write)
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return eval(data.decode())


def engine_run(graph, changes):
    import datalog

    session = datalog.Program(PROGRAM).session()
    start = time.process_time()
    session.insert("edge", *graph)
    batch = time.process_time() - start
    size = session.size("path")
    inserts, retracts = [], []
    for edge in changes:
        start = time.process_time()
        session.insert("edge", edge)
        inserts.append(time.process_time() - start)
        start = time.process_time()
        session.retract("edge", edge)
        retracts.append(time.process_time() - start)
    assert session.size("path") == size
    return batch, statistics.median(inserts), statistics.median(retracts), size


def seminaive_run(graph, changes):
    start = time.process_time()
    size = len(seminaive(graph))
    batch = time.process_time() - start
    inserts, retracts = [], []
    for edge in changes:
        start = time.process_time()
        seminaive(graph + [edge])
        inserts.append(time.process_time() - start)
        start = time.process_time()
        seminaive(graph)
        retracts.append(time.process_time() - start)
    return batch, statistics.median(inserts), statistics.median(retracts), size


def measure(name: str, graph, changes) -> None:
    print(f"\n{name}: {len(graph)} edges, {len(changes)} updates", flush=True)
    print(f"  {'':28} {'batch s':>9} {'insert s':>9} {'retract s':>9} {'peak MiB':>9}"
          f" {'paths':>9}")
    for label, run in (("engine (incremental)", engine_run),
                       ("semi-naive (from scratch)", seminaive_run)):
        (batch, insert, retract, size), peak = in_child(lambda run=run: run(graph, changes))
        print(f"  {label:28} {batch:9.3f} {insert:9.4f} {retract:9.4f} {peak:9.1f}"
              f" {size:9d}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, default=2000, help="chain nodes")
    parser.add_argument("--nodes", type=int, default=1000, help="random graph nodes")
    parser.add_argument("--edges", type=int, default=1200, help="random graph edges")
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--chain-updates", type=int, default=None,
                        help="updates on the chain (default: --updates)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"python {sys.version.split()[0]}, seed {args.seed}")
    graph = chain(args.chain)
    count = args.updates if args.chain_updates is None else args.chain_updates
    measure(f"chain of {args.chain} nodes", graph, updates(graph, count, rng, True))
    graph = random_graph(args.nodes, args.edges, rng)
    measure(f"random graph, {args.nodes} nodes", graph,
            updates(graph, args.updates, rng, False))


if __name__ == "__main__":
    main()
