"""Spilling traces to Spark: time per update with and without spilling.

The workload is transitive closure on a random graph; the updates retract one
random edge and insert it back (two transactions each), so every update
changes many paths. The same session runs twice: in memory, and with a
``spill_threshold`` under which the ``path`` trace (the big one) lives in Spark
while the small ``edge`` trace stays in memory. Spark's start-up is timed
apart from the load.

    python -m benchmarks.spill [--nodes 300 --edges 420 --updates 15 --threshold 2000]

It prints one table row per mode (load, then per-transaction median, mean and
max, and where the join traces' rows are: Python dicts or Spark) and a bar per
mode for the median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def graph(nodes: int, edges: int, seed: int = 2026) -> list[tuple[int, int]]:
    """``edges`` distinct random edges between ``nodes`` nodes, no self loops."""
    rng, result = random.Random(seed), set()
    while len(result) < edges:
        x, y = rng.randrange(nodes), rng.randrange(nodes)
        if x != y:
            result.add((x, y))
    return sorted(result)


def run(edges, changes, spill_threshold=None) -> dict:
    """Load ``edges``, then retract and re-insert each edge of ``changes``;
    returns the load time, the per-transaction times and the path count."""
    import datalog

    program = datalog.Program(PROGRAM)
    started = time.perf_counter()
    session = program.session(spill_threshold=spill_threshold)
    with session.transaction() as tx:
        tx.insert("edge", *edges)
    load = time.perf_counter() - started
    paths = len(session.query("path"))
    times = []
    for edge in changes:
        for op in ("retract", "insert"):
            started = time.perf_counter()
            getattr(session, op)("edge", edge)
            times.append(time.perf_counter() - started)
    assert len(session.query("path")) == paths
    return {"load": load, "times": times, "paths": paths, "session": session}


def trace_rows(session) -> tuple[int, int]:
    """Entries of the join traces held in Python dicts, and rows in Spark."""
    from engine.operators.join import TraceNode
    from engine.trace import Trace

    in_python = in_spark = 0
    for node in session._circuit.all_nodes:
        if not isinstance(node, TraceNode):
            continue
        in_python += sum(1 for _ in Trace.entries(node.trace))
        part = getattr(node.trace, "part", None)
        if part is not None:
            in_spark += len(part.entries())
    return in_python, in_spark


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--edges", type=int, default=420)
    parser.add_argument("--updates", type=int, default=15)
    parser.add_argument("--threshold", type=int, default=2000)
    args = parser.parse_args(argv)
    edges = graph(args.nodes, args.edges)
    changes = random.Random(7).sample(edges, args.updates)

    started = time.perf_counter()
    from engine.spark.session import get_session

    get_session()
    spark_start = time.perf_counter() - started

    rows = []
    for mode, threshold in (("in memory", None), (f"spill > {args.threshold}", args.threshold)):
        result = run(edges, changes, threshold)
        times = result["times"]
        rows.append((mode, result["load"], statistics.median(times), statistics.mean(times),
                     max(times), result["paths"], trace_rows(result["session"])))
    print(f"transitive closure, {args.nodes} nodes, {len(edges)} edges, "
          f"{rows[0][5]} paths; {2 * len(changes)} transactions (retract + insert of "
          f"{len(changes)} edges); Spark start {spark_start:.1f} s (not counted)")
    print(f"{'mode':<16}{'load s':>9}{'median s':>10}{'mean s':>9}{'max s':>8}"
          f"{'trace rows in Python':>22}{'in Spark':>10}")
    for mode, load, median, mean, top, _, (in_python, in_spark) in rows:
        print(f"{mode:<16}{load:>9.2f}{median:>10.3f}{mean:>9.3f}{top:>8.3f}"
              f"{in_python:>22}{in_spark:>10}")
    scale = max(r[2] for r in rows)
    print("\nmedian time per transaction")
    for mode, _, median, *_ in rows:
        print(f"{mode:<16}|{'#' * max(1, round(50 * median / scale))} {median * 1000:.0f} ms")


if __name__ == "__main__":
    main()
