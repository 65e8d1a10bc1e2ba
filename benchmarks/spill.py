"""Spilling traces to Spark: time per update with and without spilling.

The workload is transitive closure on a random graph; the updates retract one
random edge and insert it back (two transactions each), so every update
changes many paths. The same session runs in memory, and with a
``spill_threshold`` under which the ``path`` trace (the big one) lives in Spark
while the small ``edge`` trace stays in memory; the keys of ``path`` that joins
read are cached in Python up to ``--cache`` rows (``spill_cache``). The updates
run several times over: the first pass finds the keys they read cold (fetched
from Spark), the others warm. The same program's batch also runs on ``--engine
spark`` (load only). Spark's start-up is timed apart.

    python -m benchmarks.spill [--nodes 300 --edges 420 --updates 15 --threshold 2000
                                --cache 1000000 --rounds 3]

It prints one table row per mode (load; the first transaction apart; the
median of the rest of the cold pass and of the warm passes (``--rounds``, the
two modes alternating, so both meet the same load of the machine), the warm
maximum; the Spark requests of the cold / warm passes; where the join traces'
rows are: Python dicts or Spark) and a bar per mode for the warm median.
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


def load(edges, spill_threshold=None, spill_cache=None):
    """A session of the program with ``edges`` loaded, and the seconds it took."""
    import datalog

    program = datalog.Program(PROGRAM)
    started = time.perf_counter()
    options = {} if spill_cache is None else {"spill_cache": spill_cache}
    session = program.session(spill_threshold=spill_threshold, **options)
    with session.transaction() as tx:
        tx.insert("edge", *edges)
    return session, time.perf_counter() - started


def one_pass(session, changes) -> tuple[list, int]:
    """Retract and re-insert each edge of ``changes``: the seconds of each
    transaction, and the Spark requests they sent."""
    before, times = requests(session), []
    for edge in changes:
        for op in ("retract", "insert"):
            started = time.perf_counter()
            getattr(session, op)("edge", edge)
            times.append(time.perf_counter() - started)
    return times, requests(session) - before


def run(edges, changes, spill_threshold=None, spill_cache=None) -> dict:
    """Load ``edges``, then retract and re-insert each edge of ``changes``;
    returns the load time, the per-transaction times, the path count and the
    requests sent."""
    session, seconds = load(edges, spill_threshold, spill_cache)
    paths = len(session.query("path"))
    times, sent = one_pass(session, changes)
    assert len(session.query("path")) == paths
    return {"load": seconds, "times": times, "paths": paths, "session": session,
            "requests": sent}


def requests(session) -> int:
    """Lookup requests the session's spilled traces sent to Spark so far."""
    caches = {id(node.trace.cache): node.trace.cache
              for node in session._circuit.all_nodes if hasattr(getattr(node, "trace", None),
                                                                 "cache")}
    return sum(cache.requests for cache in caches.values())


def spark_load(edges) -> float:
    """Seconds ``--engine spark`` takes to evaluate the program on ``edges``."""
    import os
    import tempfile

    import datalog
    from datalog.backends.spark.run import run_on_spark
    from engine.spark.session import get_session

    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "edge.facts"), "w") as handle:
            handle.writelines(f"{x}\t{y}\n" for x, y in edges)
        plan = datalog.Program(PROGRAM + ".input edge\n.printsize path\n").plan
        started = time.perf_counter()
        run_on_spark(plan, directory, "-", spark=get_session())
        return time.perf_counter() - started


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
    parser.add_argument("--cache", type=int, default=None,
                        help="spill_cache: rows of spilled traces cached in Python")
    parser.add_argument("--rounds", type=int, default=3, help="warm passes")
    args = parser.parse_args(argv)
    edges = graph(args.nodes, args.edges)
    changes = random.Random(7).sample(edges, args.updates)

    started = time.perf_counter()
    from engine.spark.session import get_session

    get_session()
    spark_start = time.perf_counter() - started

    modes = {"in memory": None, f"spill > {args.threshold}": args.threshold}
    rows: dict = {}
    for mode, threshold in modes.items():
        session, seconds = load(edges, threshold, args.cache)
        paths = len(session.query("path"))
        (first, *cold), sent = one_pass(session, changes)
        rows[mode] = {"session": session, "load": seconds, "first": first, "cold": cold,
                      "cold requests": sent, "warm": [], "warm requests": 0, "paths": paths}
    for _ in range(args.rounds):   # warm passes, the modes alternating (same load)
        for row in rows.values():
            times, sent = one_pass(row["session"], changes)
            row["warm"] += times
            row["warm requests"] += sent
    for row in rows.values():
        assert len(row["session"].query("path")) == row["paths"]
    on_spark = spark_load(edges)
    print(f"transitive closure, {args.nodes} nodes, {len(edges)} edges, "
          f"{rows['in memory']['paths']} paths; retract + insert of {len(changes)} edges, "
          f"a cold pass then {args.rounds} warm ones; Spark start {spark_start:.1f} s "
          f"(not counted)")
    print(f"{'mode':<16}{'load s':>8}{'first ms':>10}{'cold med ms':>12}{'warm med ms':>12}"
          f"{'warm max ms':>12}{'requests':>10}{'rows in Python':>15}{'in Spark':>9}")
    for mode, row in rows.items():
        in_python, in_spark = trace_rows(row["session"])
        sent = f"{row['cold requests']}/{row['warm requests']}"
        print(f"{mode:<16}{row['load']:>8.2f}{row['first'] * 1e3:>10.1f}"
              f"{statistics.median(row['cold']) * 1e3:>12.2f}"
              f"{statistics.median(row['warm']) * 1e3:>12.2f}{max(row['warm']) * 1e3:>12.1f}"
              f"{sent:>10}{in_python:>15}{in_spark:>9}")
    print(f"{'--engine spark':<16}{on_spark:>8.2f}  (batch only)")
    medians = {mode: statistics.median(row["warm"]) for mode, row in rows.items()}
    scale = max(medians.values())
    print("\nmedian time per transaction, warm passes")
    for mode, median in medians.items():
        print(f"{mode:<16}|{'#' * max(1, round(50 * median / scale))} {median * 1000:.2f} ms")


if __name__ == "__main__":
    main()
