"""Transitive closure bigger than memory: Spark, a spilling session, DuckDB and
the in-memory engine under a memory budget, one process each.

    python -m benchmarks.bigger_than_memory                 # 10,000 nodes, 20,000 edges
    python -m benchmarks.bigger_than_memory --nodes 1000 --edges 2000 --budget-mib 400
    python -m benchmarks.bigger_than_memory --engines spark --spark-conf KEY=VALUE

The graph is random (``--edges`` distinct edges, no self loops, seeded), its
closure close to ``nodes**2`` paths. Each engine counts ``path`` in a fresh
child process (``python -m benchmarks.bigger_than_memory --cell NAME``):

- ``spark``: ``datalog run --engine spark`` on ``local[*]`` (or ``--master``);
- ``spill``: ``Program(...).session(spill_threshold=...)``, the incremental
  engine with its big traces in Spark;
- ``duckdb``: ``WITH RECURSIVE ... UNION`` over the same file;
- ``memory``: the in-memory engine with its address space capped at
  ``--budget-mib`` (``RLIMIT_AS``): a ``MemoryError`` is its answer when the
  closure does not fit.

Printed per engine: wall time, the peak RSS of its whole process tree (the
child and its JVM, sampled every 0.2 s), the path count or how it failed.
Every cell must count the same paths. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from benchmarks.spark_tc import PROGRAM
from benchmarks.spill import graph

ENGINES = ("spark", "spill", "duckdb", "memory")
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Bytes resident in ``root`` and all its descendants now."""
    parents, rss = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
            parents[int(name)] = int(fields[1])
            rss[int(name)] = int(fields[21]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        tree.update(children)
        frontier.extend(children)
    return sum(rss.get(pid, 0) for pid in tree)


def measure(command: list[str], timeout: float) -> dict:
    """Runs one cell; its JSON answer with ``seconds`` and ``peak_mib``."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, start_new_session=True)
        peak = 0
        while child.poll() is None:
            peak = max(peak, tree_rss(child.pid))
            if time.perf_counter() - start > timeout:
                os.killpg(child.pid, 9)
                child.wait()
                return {"status": f"timeout > {timeout:.0f} s", "seconds": timeout,
                        "peak_mib": peak / 2**20}
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        lines = [line for line in out.read().splitlines() if line.startswith("{")]
        answer = json.loads(lines[-1]) if lines else {
            "status": "error: " + (err.read().strip().splitlines() or ["exit"])[-1]}
    return {**answer, "seconds": seconds, "peak_mib": peak / 2**20}


def cell(name: str, directory: str, args) -> dict:
    """Counts the closure with one engine, in this (child) process."""
    if name == "spark":
        command = ["datalog", "run", os.path.join(directory, "tc.dl"), "-F", directory,
                   "-D", "-", "--engine", "spark"]
        if args.master:
            command += ["--master", args.master]
        for setting in args.spark_conf:
            command += ["--spark-conf", setting]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            return {"status": "error: " + result.stderr.strip()}
        return {"status": "ok", "paths": int(result.stdout.split("\t")[1])}
    if name == "duckdb":
        import duckdb

        edges = os.path.join(directory, "edge.facts")
        count = duckdb.sql(f"""
            WITH RECURSIVE path(x, y) AS (
              SELECT column0, column1 FROM read_csv('{edges}', delim='\t', header=false)
              UNION
              SELECT path.x, e.column1 FROM path
              JOIN read_csv('{edges}', delim='\t', header=false) e ON path.y = e.column0)
            SELECT count(*) FROM path""").fetchall()[0][0]
        return {"status": "ok", "paths": count}
    import datalog

    if name == "memory":
        budget = args.budget_mib * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (budget, budget))
        try:
            session = datalog.Program(PROGRAM).session(fact_dir=directory)
            return {"status": "ok", "paths": session.size("path")}
        except (MemoryError, datalog.DatalogError) as error:
            # the engine reports an operator's MemoryError as an evaluation error
            if not isinstance(error, MemoryError) and "MemoryError" not in str(error):
                raise
            return {"status": f"MemoryError (budget {args.budget_mib} MiB)"}
    if args.master or args.spark_conf:
        from engine.spark.session import configure, parse_conf

        configure(args.master, parse_conf(args.spark_conf))
    session = datalog.Program(PROGRAM).session(fact_dir=directory,
                                               spill_threshold=args.threshold)
    return {"status": "ok", "paths": session.size("path")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=20_000)
    parser.add_argument("--budget-mib", type=int, default=2048,
                        help="address space of the in-memory engine (RLIMIT_AS)")
    parser.add_argument("--threshold", type=int, default=100_000,
                        help="spill threshold (rows) of the spilling session")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--master", help="Spark master for spark and spill (default local[*])")
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for spark and spill (repeatable)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per engine")
    parser.add_argument("--cell", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        print(json.dumps(cell(args.cell, args.dir, args)), flush=True)
        return 0

    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "edge.facts"), "w") as handle:
            handle.writelines(f"{x}\t{y}\n" for x, y in graph(args.nodes, args.edges))
        with open(os.path.join(directory, "tc.dl"), "w") as handle:
            handle.write(PROGRAM)
        print(f"transitive closure: {args.nodes:,} nodes, {args.edges:,} edges; "
              f"{os.cpu_count()} cores; memory budget {args.budget_mib} MiB; "
              f"spill threshold {args.threshold:,}", flush=True)
        print(f"{'engine':<8} {'seconds':>8} {'peak MiB':>9} {'paths':>12}  status", flush=True)
        counts = set()
        for name in args.engines:
            command = [sys.executable, "-m", "benchmarks.bigger_than_memory", "--cell", name,
                       "--dir", directory, "--budget-mib", str(args.budget_mib),
                       "--threshold", str(args.threshold)]
            if args.master:
                command += ["--master", args.master]
            for setting in args.spark_conf:
                command += ["--spark-conf", setting]
            answer = measure(command, args.timeout)
            paths = answer.get("paths")
            if paths is not None:
                counts.add(paths)
            print(f"{name:<8} {answer['seconds']:>8.1f} {answer['peak_mib']:>9.0f} "
                  f"{'-' if paths is None else format(paths, ','):>12}  {answer['status']}",
                  flush=True)
    if len(counts) > 1:
        print(f"engines disagree: {sorted(counts)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
