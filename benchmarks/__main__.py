"""``python -m benchmarks [--quick] [--only NAME] [--results FILE]``: the table.

Runs every peer on every workload, each cell in its own subprocess, prints the
table, and with ``--results`` writes it as Markdown with the date, the machine
and the command (``benchmarks/RESULTS.md`` holds the latest full run).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from importlib import metadata

from benchmarks import report, venvs, workloads
from benchmarks.peers import PEERS
from benchmarks.runner import ROOT, Runner, Settings, compile_bytecode

MODES = {
    # suite, Settings
    "full": ("full", Settings(timeout=60, update_budget=20, incremental_budget=150, grace=60)),
    "quick": ("quick", Settings(timeout=5, update_budget=1, incremental_budget=3, grace=5,
                                updates=5)),
}

METHOD = """\
## How to read it

- **batch**: wall-clock time to compute every derived relation from the input
  facts, from scratch (our engine: `program.session()` and one transaction
  inserting every fact; the program is compiled before the clock starts, its
  compile time is in the notes, with the engine's Python bytecode written
  beforehand, as an installed package has it). `×python` divides by the plain Python
  semi-naive loop's batch, `×fastest` by the fastest peer other than the
  engine, both from this run.
- **peak MiB**: the cell process's peak RSS (`ru_maxrss`) right after the
  batch; each cell is its own process. **B/tuple peak / steady / trim**: (RSS
  − RSS before the batch, after imports and input generation) ÷ derived
  tuples, for three RSS figures: the peak; the steady state right after the
  batch (the result held, the batch's temporaries freed); and the same after a
  garbage collection and glibc's `malloc_trim(0)`, which hands the allocator's
  free pages back to the system.
- **retract / insert**: {updates} random input facts (seeded) are each
  retracted and then re-inserted, so each update starts from the batch state;
  median and 95th percentile (linear interpolation) in milliseconds. An
  incremental peer (`incr.`: the engine, pydbsp, Pathway) applies the change to its
  state, for as many updates as fit in {incremental:.0f} s; any other peer
  (`scratch`) recomputes from scratch on the changed input, for as many
  updates as fit in {budget:.0f} s after its batch (at least one, unless its
  batch took more than half that: then each update would cost about one
  batch, and none is timed). `Δ median` is how many derived tuples one update
  changes (the engine's delta).
- Each cell is capped: a batch not finished within {timeout:.0f} s is a
  **timeout**, an RSS over {memory:.0f} GiB is **memory**; a peer that timed
  out on a workload is skipped on the larger one of the same kind. **n/a**: the
  peer cannot express the program. Every finished cell's relation sizes are
  checked against the Python loop's (after the batch; with `--verify`, after
  every update too); a disagreement would be listed under the tables.
- The *speedup* columns divide the fastest other peer's median update time
  by the engine's: for a from-scratch peer that is its full recomputation.

## The peers

- **python**: hand-written semi-naive loops over dicts and sets
  (`benchmarks/peers/python_loop.py`; transitive closure is `benchmarks/tc.py`'s).
- **pydatalog**: pyDatalog installs and runs on Python 3.11. In the textbook
  body order of Andersen's store rule it does not terminate even on five
  statements; the peer uses the order `store_to, points_to(Q, A),
  points_to(P, R)`, with which it finishes only on small inputs.
- **clingo**: the grounder evaluates these stratified programs completely;
  every derived atom is checked to be a fact. No incremental retraction.
- **duckdb**: `WITH RECURSIVE ... UNION` for the linear recursions; Andersen's
  non-linear rules need `USING KEY` and `recurring.points_to` (DuckDB >= 1.3),
  written as the semi-naive step. Default thread count (one per core).
- **networkx**: `transitive_closure(G, reflexive=False)`, transitive closure only.
- **cozo**: CozoDB (`cozo-embedded`, an embedded Datalog database written in
  Rust) in memory: the inputs are stored relations, the program one chained
  query whose results are stored with `:replace`. Its rules are evaluated
  semi-naively; it keeps no derived state between queries, so an update is a
  from-scratch batch on the changed input.
- **pathway**: Pathway, a Python API on a Rust differential-dataflow engine,
  the incremental peer a Python user would weigh against us. Recursion is
  `pw.iterate` to a fixpoint. It runs as a stream: the facts go in through a
  Python connector, and an update (one fact deleted or inserted, then a
  commit) is timed from submitting it to the moment the output subscription
  has seen that commit close (every commit also adds a marker row to the
  subscribed table, so a commit that changes no output still closes there).
  It has its own virtual environment (`benchmarks/venvs.py`: Pathway and its
  ~1.5 GiB of dependencies from the package index), made on first use.
- **pydbsp**: requires Python 3.12; this machine's image carries a pyenv-built
  CPython 3.12, so the harness makes a virtual environment with it and installs
  pydbsp from PyPI (`benchmarks/venvs.py`); nothing else is downloaded. Its
  Datalog has no comparisons and no aggregates, so same generation and the
  aggregate workload are n/a. On a machine without a Python >= 3.12 it is
  reported as not measured, with the reason.
"""


def machine() -> dict:
    with open("/proc/meminfo") as meminfo:
        total = int(meminfo.readline().split()[1]) * 1024
    return {"cores": os.cpu_count(), "memory": total, "load": os.getloadavg(),
            "cpu": _cpu_model(), "python": platform.python_version()}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def versions(runner: Runner) -> list[str]:
    out = []
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        commit = ""
    out.append(f"engine: datalog-circuits {metadata.version('datalog-circuits')}"
               + (f" at commit {commit}" if commit else ""))
    for name, dist in (("pydatalog", "pyDatalog"), ("clingo", "clingo"), ("duckdb", "duckdb"),
                       ("cozo", "cozo-embedded"), ("networkx", "networkx")):
        try:
            out.append(f"{name}: {dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}: {dist} not installed (pip install -e '.[bench]')")
    for peer, env in venvs.ENVIRONMENTS.items():
        try:
            python = runner.python_for(peer)
        except venvs.Unavailable as error:
            out.append(f"{peer}: not measured: {error}")
            continue
        version = subprocess.run([python, "-c",
                                  "import platform; print(platform.python_version())"],
                                 capture_output=True, text=True, check=False).stdout.strip()
        out.append(f"{peer}: {env.requirement} under Python {version} ({python})")
    return out


def named(name: str, given: str) -> bool:
    """Whether ``--only given`` selects the workload ``name``: its full name,
    or the name's leading dash-separated words (``tc``, ``tc-chain``; not
    ``counter-100000`` for ``counter-1000000``)."""
    return name == given or name.startswith(given + "-")


def select(only: list[str], suite: list) -> tuple[list, list[str]]:
    """Workloads and peers named by ``--only`` (a workload's name or its first
    words, :func:`named`; or a peer's name); without it, everything. The engine and the Python loop
    stay in every run: the ratios need them."""
    if not only:
        return suite, list(PEERS)
    chosen_peers = [p for p in PEERS if p in only]
    names = [n for n in only if n not in PEERS]
    chosen = [w for w in suite if any(named(w.name, n) for n in names)] if names \
        else suite
    unknown = [n for n in names if not any(named(w.name, n) for w in suite)]
    if unknown:
        raise SystemExit(f"--only: no workload or peer named {', '.join(unknown)}; workloads: "
                         f"{', '.join(w.name for w in suite)}; peers: {', '.join(PEERS)}")
    peers = [p for p in PEERS if p in {"engine", "python", *chosen_peers}] if chosen_peers \
        else list(PEERS)
    return chosen, peers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run (< 2 min)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="only this workload (name or its first words, as tc-chain) or peer; "
                             "repeatable")
    parser.add_argument("--results", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--timeout", type=float, help="seconds a batch may take")
    parser.add_argument("--update-budget", type=float,
                        help="seconds of from-scratch updates per cell")
    parser.add_argument("--incremental-budget", type=float,
                        help="seconds of incremental updates per cell")
    parser.add_argument("--updates", type=int, help="random updates per cell")
    parser.add_argument("--verify", action="store_true",
                        help="check relation sizes after every update too")
    args = parser.parse_args(argv)
    suite_name, settings = MODES["quick" if args.quick else "full"]
    for option in ("timeout", "update_budget", "incremental_budget", "updates"):
        if getattr(args, option) is not None:
            setattr(settings, option, getattr(args, option))
    settings.verify = args.verify
    chosen, peers = select([n for value in args.only for n in value.split(",")],
                           workloads.suite(suite_name))

    started = datetime.datetime.now(datetime.UTC)
    host = machine()
    command = "python -m benchmarks" + ("".join(f" {a}" for a in sys.argv[1:]) if argv is None
                                        else "".join(f" {a}" for a in argv))
    compile_bytecode()
    runner = Runner(settings)
    header = [f"{started:%Y-%m-%d %H:%M} UTC, {suite_name} run: {command}",
              (f"machine: {host['cores']} cores ({host['cpu']}), "
               f"{host['memory'] / 2**30:.1f} GiB RAM, load average at start "
               f"{' '.join(f'{x:.2f}' for x in host['load'])}; Python {host['python']}"),
              *versions(runner)]
    print("\n".join(header), "", sep="\n", flush=True)

    def progress(workload, cell):
        print(f"  {workload.name:22} {cell.peer:10} {cell.status:11} batch "
              f"{report.seconds(cell.batch):>9}  cell {cell.wall:5.1f} s  {cell.note}",
              file=sys.stderr, flush=True)

    clock = time.perf_counter()
    cells = runner.run(chosen, peers, progress)
    elapsed = time.perf_counter() - clock
    blocks = [(w, [c for c in cells if c.workload == w.name]) for w in chosen]
    end_load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(report.render(blocks, markdown=False))
    print(f"total {elapsed / 60:.1f} min; load average at end {end_load}")
    if args.results:
        method = METHOD.format(updates=settings.updates, budget=settings.update_budget,
                               incremental=settings.incremental_budget,
                               timeout=settings.timeout, memory=settings.memory_limit / 2**30)
        kept = _spark_section(args.results)
        with open(args.results, "w") as out:
            out.write("# Benchmark results\n\n")
            out.write("".join(f"- {line}\n" for line in header))
            out.write(f"- total {elapsed / 60:.1f} min; load average at end {end_load}\n\n")
            out.write(method + "\n")
            out.write(report.render(blocks, markdown=True))
            out.write(kept)
    problems = [p for _, cs in blocks for p in report.disagreements(cs)]
    return 1 if problems else 0


SPARK_SECTION = "\n## Spark, measured apart\n"


def _spark_section(path: str) -> str:
    """The section of ``path`` from :data:`SPARK_SECTION` on (figures of
    ``benchmarks.spill`` and ``benchmarks.bigger_than_memory``, run by hand),
    kept when the file is written again; empty when there is none."""
    try:
        with open(path, encoding="utf-8") as old:
            text = old.read()
    except OSError:
        return ""
    return text[text.index(SPARK_SECTION):] if SPARK_SECTION in text else ""


if __name__ == "__main__":
    sys.exit(main())
