"""A session's resident memory per derived tuple, on one bigger workload.

    python -m benchmarks.session_memory                # a chain of 1,000 nodes
    python -m benchmarks.session_memory --nodes 300    # a quick look

Transitive closure of a chain ``0 -> 1 -> ... -> n-1`` (``n (n - 1) / 2``
paths), loaded through the public API as a user would: ``Program(...).session()``
and one ``insert`` of every edge. Prints the batch time and the process's RSS
growth over the batch per derived tuple, measured right after the batch
(``steady``) and after a garbage collection and glibc's ``malloc_trim(0)``
(``trim``), as the table of ``python -m benchmarks`` does; then one query of a
relation (``session.size``) to show that the session still answers.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.measure import peak_rss_bytes, rss_bytes, trimmed_rss_bytes

PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="nodes of the chain")
    args = parser.parse_args(argv)
    import datalog

    program = datalog.Program(PROGRAM)
    edges = [(i, i + 1) for i in range(args.nodes - 1)]
    base = trimmed_rss_bytes()
    start = time.perf_counter()
    session = program.session()
    session.insert("edge", edges)
    elapsed = time.perf_counter() - start
    steady = rss_bytes()
    trimmed = trimmed_rss_bytes()
    derived = session.size("path")
    print(f"tc chain of {args.nodes} nodes: {derived:,} paths in {elapsed:.1f} s")
    print(f"RSS per derived tuple: peak {(peak_rss_bytes() - base) / derived:.0f} B, "
          f"steady {(steady - base) / derived:.0f} B, trim {(trimmed - base) / derived:.0f} B "
          f"(peak RSS {peak_rss_bytes() / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
