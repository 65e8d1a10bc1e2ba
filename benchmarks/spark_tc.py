"""Transitive closure on Spark next to the in-memory engine, growing the graph
until Spark wins (or the in-memory engine gives up), measured in one run.

    python -m benchmarks.spark_tc                       # the default ladder
    python -m benchmarks.spark_tc --nodes 250 500 --local-timeout 60

The graphs are random directed graphs with ``--degree`` edges per node on
average (seeded): their closure is close to ``nodes**2`` pairs (a giant
strongly connected component) reached in few iterations (its diameter grows like
``log(nodes)``), the shape where Spark's per-iteration cost is paid back by
width. For each size the edges are written to ``edge.facts`` and both engines
evaluate ``path`` from that file and count it (``.printsize path``):

- ``local``: ``datalog.Program(...).session(fact_dir=...)`` in a child process
  (its own memory; killed after ``--local-timeout`` seconds); wall time and the
  child's peak RSS;
- ``spark``: :func:`datalog.backends.spark.run.run_on_spark` on one local session
  (``local[*]``; its start-up time is printed once, apart), wall time and the
  number of semi-naive iterations.

The last line names the smallest size at which Spark was faster, if any.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time

PROGRAM = """
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def write_graph(directory: str, nodes: int, degree: float, seed: int) -> int:
    """Writes ``edge.facts``: ``nodes * degree`` distinct random edges."""
    rng = random.Random(seed)
    edges: set = set()
    target = int(nodes * degree)
    while len(edges) < target:
        x, y = rng.randrange(nodes), rng.randrange(nodes)
        if x != y:
            edges.add((x, y))
    with open(os.path.join(directory, "edge.facts"), "w") as handle:
        handle.writelines(f"{x}\t{y}\n" for x, y in sorted(edges))
    return len(edges)


def _local_child(directory: str, queue) -> None:
    import datalog

    start = time.perf_counter()
    session = datalog.Program(PROGRAM).session(fact_dir=directory)
    size = session.size("path")
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((elapsed, size, peak))


def run_local(directory: str, timeout: float):
    """(seconds, paths, peak MiB) of the in-memory engine, or None on timeout."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_local_child, args=(directory, queue))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return queue.get() if not queue.empty() else None


def run_spark(spark, directory: str):
    """(seconds, paths, iterations) of the Spark engine."""
    import datalog
    from datalog.backends.spark.run import run_on_spark

    plan = datalog.Program(PROGRAM).plan
    start = time.perf_counter()
    result = run_on_spark(plan, directory, "-", spark=spark)
    elapsed = time.perf_counter() - start
    size = int(result.stdout.split("\t")[1])
    return elapsed, size, sum(result.iterations.values())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[250, 500, 1000, 2000, 3000])
    parser.add_argument("--degree", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--local-timeout", type=float, default=900.0)
    parser.add_argument("--master", default=None)
    args = parser.parse_args(argv)

    from engine.spark.session import get_session

    start = time.perf_counter()
    spark = get_session(args.master)
    print(f"spark session start: {time.perf_counter() - start:.1f} s "
          f"(master {spark.sparkContext.master}, {os.cpu_count()} cores)", flush=True)
    header = (f"{'nodes':>6} {'edges':>7} {'paths':>10} {'local s':>8} {'local MiB':>9} "
              f"{'spark s':>8} {'iters':>5}  faster")
    print(header, flush=True)
    crossover = None
    local_gave_up = False
    for nodes in args.nodes:
        with tempfile.TemporaryDirectory() as directory:
            edges = write_graph(directory, nodes, args.degree, args.seed)
            local = None if local_gave_up else run_local(directory, args.local_timeout)
            local_gave_up = local is None
            spark_s, paths, iterations = run_spark(spark, directory)
        if local is not None:
            assert local[1] == paths, (local, paths)
            local_text = f"{local[0]:>8.1f} {local[2]:>9.0f}"
            faster = "spark" if spark_s < local[0] else "local"
        else:
            local_text = f"{'>' + format(args.local_timeout, '.0f'):>8} {'-':>9}"
            faster = "spark"
        if faster == "spark" and crossover is None:
            crossover = (nodes, paths)
        print(f"{nodes:>6} {edges:>7} {paths:>10} {local_text} {spark_s:>8.1f} "
              f"{iterations:>5}  {faster}", flush=True)
    if crossover:
        print(f"Spark is faster from {crossover[0]} nodes ({crossover[1]:,} paths) on.")
    else:
        print("The in-memory engine was faster at every size measured.")
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
