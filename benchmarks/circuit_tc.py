"""Transitive closure over a chain, built directly as a circuit, next to a plain
Python semi-naive loop measured in the same run.

    python -m benchmarks.circuit_tc                 # 2,000-node chain: 1,999,000 paths
    python -m benchmarks.circuit_tc --nodes 500     # a quick look
    python -m benchmarks.circuit_tc --profile       # cProfile of the circuit's batch
    python -m benchmarks.circuit_tc --columnar 0    # join traces in numpy runs

For each side it prints:

- ``batch``: computing the whole closure (circuit: epoch 0, which *is*
  semi-naive evaluation; peer: the semi-naive loop);
- ``retract`` / ``reinsert``: removing the edge in the middle of the chain, then
  putting it back (circuit: two epochs, each an incremental update of about a
  quarter of the paths; peer: re-running the loop from scratch on the changed
  graph, which is what a non-incremental engine must do);
- ``peak``: the peak memory growth of the process (``ru_maxrss`` above the
  baseline after imports); each side runs in its own subprocess.

Times are CPU seconds of the measuring process (``time.process_time``), so that
other work on a shared machine does not inflate them.

The circuit (spec 002's construction)::

    path(x, y) :- edge(x, y).
    path(x, z) :- path(x, y), edge(y, z).

    edge ─> Import ─┬──────────────┐
                    └─ index(0) ─┐ ├─> plus ─> distinct ─┬─> Export ─> path
          Feedback ── index(1) ──┴─ join ─┘              │
              ^──────────────────────────────────────────┘
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from benchmarks.tc import seminaive


def build_circuit(columnar: int | None = None):
    from engine import Circuit

    circuit = Circuit(max_iterations=1_000_000, columnar_threshold=columnar)
    edge = circuit.source("edge", arity=2)
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        # path(x, z) :- path(x, y), edge(y, z).   (x from the path, z from the edge)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)), ((0, 0), (1, 1)))
        new = e.plus(step).distinct()
        fb.connect(new)
        path = child.export(new)
    circuit.output("path", path)
    return circuit


def peak_mib(baseline_kib: int) -> float:
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline_kib) / 1024


def run_circuit(nodes: int, columnar: int | None = None) -> dict:
    circuit = build_circuit(columnar)
    edges = {(i, i + 1): 1 for i in range(nodes - 1)}
    middle = (nodes // 2 - 1, nodes // 2)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    paths = len(circuit.step({"edge": edges})["path"])
    batch = time.process_time() - start
    start = time.process_time()
    removed = len(circuit.step({"edge": {middle: -1}})["path"])
    retract = time.process_time() - start
    start = time.process_time()
    added = len(circuit.step({"edge": {middle: 1}})["path"])
    reinsert = time.process_time() - start
    return {"paths": paths, "batch": batch, "retract": retract, "reinsert": reinsert,
            "changed": [removed, added], "peak": peak_mib(baseline),
            "iterations": circuit.children()[0].iterations}


def run_seminaive(nodes: int) -> dict:
    edges = {(i, i + 1) for i in range(nodes - 1)}
    middle = (nodes // 2 - 1, nodes // 2)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    full = seminaive(edges)
    batch = time.process_time() - start
    paths = len(full)
    del full
    start = time.process_time()
    without = seminaive(edges - {middle})
    retract = time.process_time() - start
    removed = paths - len(without)
    del without
    start = time.process_time()
    added = len(seminaive(edges)) - (paths - removed)
    reinsert = time.process_time() - start
    return {"paths": paths, "batch": batch, "retract": retract, "reinsert": reinsert,
            "changed": [removed, added], "peak": peak_mib(baseline), "iterations": None}


def in_subprocess(side: str, nodes: int, columnar: int | None = None) -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    extra = ["--columnar", str(columnar)] if columnar is not None and side == "circuit" else []
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", side,
                           "--nodes", str(nodes), *extra], capture_output=True, text=True,
                          env=env, check=True)
    return json.loads(done.stdout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000, help="chain length in nodes")
    parser.add_argument("--columnar", type=int, metavar="ROWS",
                        help="keep the circuit's join traces columnar past ROWS rows")
    parser.add_argument("--worker", choices=["circuit", "seminaive"], help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile of the circuit's batch epoch instead")
    args = parser.parse_args(argv)
    if args.worker:
        if args.worker == "circuit":
            print(json.dumps(run_circuit(args.nodes, args.columnar)))
        else:
            print(json.dumps(run_seminaive(args.nodes)))
        return
    if args.profile:
        import cProfile
        import pstats

        circuit = build_circuit(args.columnar)
        edges = {(i, i + 1): 1 for i in range(args.nodes - 1)}
        profile = cProfile.Profile()
        profile.runcall(circuit.step, {"edge": edges})
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        return
    results = {side: in_subprocess(side, args.nodes, args.columnar)
               for side in ("circuit", "seminaive")}
    paths = results["circuit"]["paths"]
    assert paths == results["seminaive"]["paths"] == args.nodes * (args.nodes - 1) // 2
    print(f"transitive closure of a {args.nodes}-node chain: {paths:,} paths; "
          f"middle edge retract/re-insert changes {results['circuit']['changed'][0]:,} "
          f"paths each way")
    print(f"{'':12}{'batch s':>10}{'retract s':>11}{'reinsert s':>12}{'peak MiB':>10}")
    for side, name in (("circuit", "circuit"), ("seminaive", "semi-naive")):
        r = results[side]
        print(f"{name:12}{r['batch']:10.2f}{r['retract']:11.2f}{r['reinsert']:12.2f}"
              f"{r['peak']:10.0f}")
    c, s = results["circuit"], results["seminaive"]
    print(f"circuit / semi-naive: batch {c['batch'] / s['batch']:.1f}x, memory "
          f"{c['peak'] / max(s['peak'], 1):.1f}x; circuit iterations per epoch: "
          f"{c['iterations']}; semi-naive retract/re-insert = full re-runs")


if __name__ == "__main__":
    main()
