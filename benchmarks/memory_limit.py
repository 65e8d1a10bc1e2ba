"""What a memory limit costs: one-fact commits and a batch evaluation with and
without ``memory_limit=``.

Commits insert one fact each into programs/andersen (as ``benchmarks.store``);
the batch is the transitive closure of a chain of ``--nodes`` nodes. Each case
runs alternately with and without a (never reached) limit of 64 GiB, so the
difference is the cost of the checks: a clock read between node evaluations, a
resident-memory read every 2 ms, the watchdog thread armed and disarmed per
transaction.

    python -m benchmarks.memory_limit [--commits 2000 --nodes 600 --rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ANDERSEN = Path(__file__).resolve().parents[1] / "programs" / "andersen"
TC = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
LIMIT = 64 * 2**30


def commits(limit, count: int) -> float:
    """Median seconds of a one-fact commit."""
    import datalog

    program = datalog.Program.from_file(ANDERSEN / "andersen.dl")
    session = program.session(str(ANDERSEN / "facts"), memory_limit=limit)
    times = []
    for i in range(count):
        start = time.perf_counter()
        session.insert("address_of", (f"v{i}", f"o{i}"))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def batch(limit, nodes: int) -> float:
    import datalog

    session = datalog.Program(TC).session(memory_limit=limit)
    start = time.perf_counter()
    session.insert("edge", *[(i, i + 1) for i in range(nodes)])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--nodes", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {"commit": {None: [], LIMIT: []}, "batch": {None: [], LIMIT: []}}
    for _ in range(args.rounds):
        for limit in (None, LIMIT):
            results["commit"][limit].append(commits(limit, args.commits))
            results["batch"][limit].append(batch(limit, args.nodes))
    print("| case | no limit | memory_limit=64G | ratio |")
    print("|---|---:|---:|---:|")
    for case, unit, scale in (("commit", "ms", 1e3), ("batch", "s", 1)):
        off = min(results[case][None]) * scale
        on = min(results[case][LIMIT]) * scale
        name = (f"one-fact commit (median of {args.commits})" if case == "commit"
                else f"closure of a {args.nodes}-node chain")
        print(f"| {name} | {off:.3f} {unit} | {on:.3f} {unit} | {on / off:.2f} |")


if __name__ == "__main__":
    main()
