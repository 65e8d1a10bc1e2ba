"""Where the engine's time goes on one workload of the table.

    python -m benchmarks.profile_engine tc-chain-1000            # pyinstrument tree
    python -m benchmarks.profile_engine tc-random-1000-2000 --updates 10
    python -m benchmarks.profile_engine sg-tree-10 --cprofile    # cProfile, by own time

It profiles the batch (``program.session()`` and the transaction inserting
every fact, exactly as the table's engine cell does), then, with ``--updates
N``, N of the table's updates (each a retraction and a re-insertion). The
workload names are those of the full and the quick suites.
"""

from __future__ import annotations

import argparse
import re

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
        if args.cprofile:
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


if __name__ == "__main__":
    main()
