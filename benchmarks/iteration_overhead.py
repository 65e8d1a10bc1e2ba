"""What one iteration of a recursive stratum costs: the counter
``c(n + 1) :- c(n), bound(b), n < b.`` derives one row per iteration, so its
CPU time over the number of iterations is the per-iteration overhead of a
child circuit (the scheduler and each operator's work on a one-row delta).

    python -m benchmarks.iteration_overhead                 # 10^4, 10^5 iterations
    python -m benchmarks.iteration_overhead --sizes 1000000 --runs 1

Each run loads the counter through ``Program(...).session()`` as the table's
engine cell does; the plain Python semi-naive loop of the table runs in turns
with it (engine, loop, engine, ...), so a drifting machine moves both. The
table gives the median CPU (``process_time``) microseconds per iteration of
each and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from benchmarks import workloads
from benchmarks.peers.python_loop import counter


def _engine(program, facts: dict) -> float:
    from datalog.api import Session

    gc.collect()
    start = time.process_time()
    session = Session(program, _initial=facts)
    spent = time.process_time() - start
    session.close()
    return spent


def _loop(facts: dict) -> float:
    gc.collect()
    start = time.process_time()
    counter(facts["bound"])
    return time.process_time() - start


def measure(size: int, runs: int) -> tuple[float, float]:
    """Median CPU seconds per iteration of the engine and of the Python loop."""
    from datalog.api import Program

    workload = workloads.counter_workload(size)
    program = Program(workload.program)
    facts = {name: set(rows) for name, rows in workload.facts.items()}
    small = workloads.counter_workload(10)
    _engine(program, {name: set(rows) for name, rows in small.facts.items()})  # warm-up
    engine, loop = [], []
    for _ in range(runs):
        engine.append(_engine(program, facts))
        loop.append(_loop(facts))
    iterations = size + 2   # c(0) .. c(size), and the last, empty iteration
    return statistics.median(engine) / iterations, statistics.median(loop) / iterations


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'iterations':>10} {'engine us':>10} {'loop us':>8} {'ratio':>6}")
    for size in args.sizes:
        engine, loop = measure(size, args.runs)
        print(f"{size:>10,} {engine * 1e6:>10.2f} {loop * 1e6:>8.2f} {engine / loop:>6.1f}",
              flush=True)


if __name__ == "__main__":
    main()
