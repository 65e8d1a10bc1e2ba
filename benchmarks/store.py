"""Durable sessions: commit latency with the write-ahead log (fsync) and
without, and the time to reopen a store of many transactions.

The workload is programs/andersen (points-to analysis) over its facts; each
commit inserts one fact ``address_of("v<i>", "o<i>")``, which derives one new
``points_to`` row. The same commits run on an in-memory session and on a
durable one (``store=DIR`` in a temporary directory on the same disk as
``--dir``). Then a store of ``--replay`` such transactions is reopened: once
with snapshots (every 1,000 transactions, the default: reopening reads the
last snapshot) and once with a single snapshot at transaction 0 (reopening
replays every record of the log); each reopening is timed as a whole (read,
fold, evaluate the program once from scratch).

    python -m benchmarks.store [--commits 1000 --replay 10000 --dir /tmp]

It prints a table of commit latencies (median, 90th percentile, max) and one of
reopening times, with the message the session gives.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ANDERSEN = Path(__file__).resolve().parents[1] / "programs" / "andersen"


def program():
    import datalog

    return datalog.Program.from_file(ANDERSEN / "andersen.dl")


def commit_times(session, count: int, start: int = 0) -> list[float]:
    """Seconds per one-fact commit, ``count`` commits."""
    times = []
    for i in range(start, start + count):
        began = time.perf_counter()
        session.insert("address_of", (f"v{i}", f"o{i}"))
        times.append(time.perf_counter() - began)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def reopen(directory: str, repeats: int = 3) -> tuple[float, str]:
    """The median time to reopen the store at ``directory``, and its message."""
    times, message = [], ""
    for _ in range(repeats):
        began = time.perf_counter()
        session = program().session(store=directory)
        times.append(time.perf_counter() - began)
        message = session.messages[0]
        session.close()
    return statistics.median(times), message


def main(argv=None) -> None:
    from datalog import store as store_module

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--replay", type=int, default=10000)
    parser.add_argument("--dir", default=tempfile.gettempdir(),
                        help="where the stores are made (its disk is measured)")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="datalog-store-bench-", dir=args.dir)
    try:
        memory = program().session(ANDERSEN / "facts")
        in_memory = commit_times(memory, args.commits)
        durable = program().session(ANDERSEN / "facts", store=os.path.join(work, "commits"))
        logged = commit_times(durable, args.commits)
        durable.close()
        print(f"programs/andersen, {args.commits} commits of one fact each; stores in "
              f"{args.dir}")
        print(f"{'session':<24}{'median ms':>10}{'p90 ms':>9}{'max ms':>9}")
        for name, times in (("in memory", in_memory), ("store (log + fsync)", logged)):
            print(f"{name:<24}{statistics.median(times) * 1000:>10.3f}"
                  f"{percentile(times, 0.9) * 1000:>9.3f}{max(times) * 1000:>9.3f}")
        added = statistics.median(logged) - statistics.median(in_memory)
        print(f"the log adds {1000 * added:.3f} ms per commit (median)")

        print(f"\nreopening a store of {args.replay} transactions")
        rows = []
        for name, every in (("snapshots every 1000", 1000),
                            ("log only", args.replay + 1)):
            directory = os.path.join(work, f"replay-{every}")
            store_module.SNAPSHOT_EVERY = every
            try:
                session = program().session(ANDERSEN / "facts", store=directory)
                commit_times(session, args.replay)
                session.close()
            finally:
                store_module.SNAPSHOT_EVERY = 1000
            seconds, message = reopen(directory)
            rows.append((name, seconds, message))
        print(f"{'store':<24}{'reopen s':>10}  message")
        for name, seconds, message in rows:
            print(f"{name:<24}{seconds:>10.3f}  {message}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
