"""Where the engine's time goes on one workload of the table.

    python -m benchmarks.profile_engine tc-chain-1000            # pyinstrument tree
    python -m benchmarks.profile_engine tc-random-1000-2000 --updates 10
    python -m benchmarks.profile_engine sg-tree-10 --cprofile    # cProfile, by own time
    python -m benchmarks.profile_engine tc-random-1000-2000 --cpu --updates 40


It profiles the batch (``program.session()`` and the transaction inserting
every fact, exactly as the table's engine cell does), then, with ``--updates
N``, N of the table's updates (each a retraction and a re-insertion). The
workload names are those of the full and the quick suites.

``--cpu`` profiles nothing: it prints each phase's CPU time (``process_time``,
less disturbed by other processes than wall time; an update's is per
retraction or insertion) and wall time, and how many batches took each
columnar or row path (``engine.colbatch.COUNTS``). It is the measurement the
crossovers in ``engine/colbatch.py`` cite: run it alternately in two trees
(``PYTHONPATH=<tree>``) for a before/after.
"""

from __future__ import annotations

import argparse
import re
import time

from benchmarks import workloads
from benchmarks.peers.engine_peer import EnginePeer


def find(name: str) -> workloads.Workload:
    for size in ("full", "quick", "tiny"):
        for workload in workloads.suite(size):
            if workload.name == name:
                return workload
    sized = re.fullmatch(r"counter-(\d+)", name)  # any size of the counter
    if sized:
        return workloads.counter_workload(int(sized.group(1)))
    names = [w.name for size in ("full", "quick") for w in workloads.suite(size)]
    raise SystemExit(f"no workload named {name}; one of: {', '.join(names)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_engine",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--updates", type=int, default=0)
    parser.add_argument("--cprofile", action="store_true",
                        help="cProfile sorted by own time instead of pyinstrument")
    parser.add_argument("--lines", type=int, default=25, help="cProfile rows to print")
    parser.add_argument("--cpu", action="store_true",
                        help="no profile: each phase's CPU and wall time, and the paths taken")
    args = parser.parse_args(argv)
    workload = find(args.workload)
    peer = EnginePeer()
    peer.prepare(workload)
    changes = workloads.updates(workload, args.updates)
    state = {}

    def batch():
        state["session"] = peer.batch(workload, workload.facts)

    def update():
        for relation, row in changes:
            peer.retract(state["session"], relation, row)
            peer.insert(state["session"], relation, row)

    phases = [("batch", batch)] + ([(f"{len(changes)} updates", update)] if changes else [])
    for title, phase in phases:
        print(f"== {workload.name}: {title}")
        if args.cpu:
            timed(phase, 2 * len(changes) if phase is update else 1)
        elif args.cprofile:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.runcall(phase)
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.lines)
        else:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.002)
            profiler.start()
            phase()
            profiler.stop()
            print(profiler.output_text(unicode=False, color=False))


def timed(phase, steps: int) -> None:
    """Run ``phase``; print its CPU and wall time per step and the paths taken."""
    from engine import colbatch

    before = dict(colbatch.COUNTS)
    cpu, wall = time.process_time(), time.perf_counter()
    phase()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"cpu {cpu / steps * 1000:.2f} ms  wall {wall / steps * 1000:.2f} ms"
          + (f"  (per step, {steps} steps)" if steps > 1 else ""))
    paths = {k: n - before.get(k, 0) for k, n in colbatch.COUNTS.items() if n != before.get(k, 0)}
    print("paths", " ".join(f"{k}={n}" for k, n in sorted(paths.items())) or "none")


if __name__ == "__main__":
    main()
