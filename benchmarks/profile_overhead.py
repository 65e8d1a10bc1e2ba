"""What ``datalog run -p`` costs: the batch evaluation of each workload of the
quick suite, with the profile recorded and without, in turns.

    python -m benchmarks.profile_overhead            # the quick suite, 5 runs each
    python -m benchmarks.profile_overhead --runs 9 tc-chain-400

Each run builds a session over the workload's facts (compilation and epoch 0,
as ``datalog run`` does) and, for the profiled one, writes the profile to a
temporary file. Runs alternate (off, on, off, on, ...) so a drifting machine
moves both; the table gives the median seconds to evaluate without and with
the profile being recorded, to build and write the profile, and the median of
the pairwise ratios of the whole (evaluation and profile). Without ``-p`` the
run is the unchanged code path: the profiler's proxies exist only in a profiled
circuit.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time

from benchmarks import workloads


def _once(program, facts: dict, profile: str | None) -> tuple[float, float]:
    """Seconds to evaluate, and to build and write the profile (0 without)."""
    from datalog.api import Session
    from datalog.profile import Recording

    gc.collect()   # the previous run's garbage is not this run's time
    start = time.perf_counter()
    recording = Recording(program) if profile else None
    session = Session(program, _initial=facts, _profile=recording)
    evaluated = time.perf_counter()
    if recording is not None:
        recording.mark("evaluate")
        recording.finish(session)
        recording.write(profile)
    written = time.perf_counter()
    session.close()
    return evaluated - start, written - evaluated


def measure(workload: workloads.Workload, runs: int) -> tuple[float, float, float, float]:
    """Median seconds to evaluate without and with the profile, to write it, and
    the median ratio of the whole runs (evaluation and profile) with and without."""
    from datalog.api import Program

    program = Program(workload.program)
    facts = {name: set(rows) for name, rows in workload.facts.items()}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "prof.json")
        _once(program, facts, None)   # warm-up: imports, generated functions
        off, on = [], []
        for _ in range(runs):
            off.append(_once(program, facts, None))
            on.append(_once(program, facts, path))
    ratios = [sum(b) / sum(a) for a, b in zip(off, on)]
    return (statistics.median(a for a, _ in off), statistics.median(a for a, _ in on),
            statistics.median(b for _, b in on), statistics.median(ratios))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="workloads (default: the quick suite)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    suite = workloads.suite("quick")
    chosen = [w for w in suite if not args.names or w.name in args.names]
    print(f"{'workload':<24} {'off s':>8} {'-p s':>8} {'+ write s':>10} {'-p / off':>9}")
    for workload in chosen:
        off, on, write, ratio = measure(workload, args.runs)
        print(f"{workload.name:<24} {off:>8.3f} {on:>8.3f} {write:>10.3f} {ratio:>9.3f}",
              flush=True)

if __name__ == "__main__":
    main()
