"""Run the table: every peer on every workload, each cell in its own process.

>>> c = Cell("w", "python", "ok", batch=1.0, peak_rss=300 << 20, base_rss=100 << 20,
...          steady_rss=250 << 20, trimmed_rss=200 << 20, counts={"path": 1 << 20})
>>> c.derived, c.bytes_per_tuple, c.per_tuple("steady_rss"), c.per_tuple("trimmed_rss")
(1048576, 200.0, 150.0, 100.0)
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field

from benchmarks import venvs
from benchmarks.measure import percentile, run_cell
from benchmarks.peers import PEERS, environment, load
from benchmarks.workloads import updates

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The packages whose bytecode is compiled before the cells (:func:`compile_bytecode`).
PACKAGES = ("datalog", "engine")


def compile_bytecode() -> None:
    """Write the bytecode of the engine's packages (``__pycache__``), as installing
    them or their first import does for a user, so that the compile time a cell
    reports is the program's, not Python's compiling ~1.3 MB of source, which it
    would do in every cell where ``PYTHONDONTWRITEBYTECODE`` is set (``import
    datalog`` and compiling andersen-200x50, CPU: 271-284 ms without bytecode,
    161-166 ms with it, five runs each in turn). Bytecode older than its source is
    rewritten; Python itself ignores it (it checks the source's time and size)."""
    import compileall

    for package in PACKAGES:
        compileall.compile_dir(os.path.join(ROOT, package), quiet=2)


@dataclass
class Settings:
    """How long and how much a cell may take, and how many updates it times.

    ``timeout``: seconds until the batch must have finished (the cell is then
    reported as a timeout); ``update_budget``: seconds of from-scratch updates
    after the batch (such peers usually do fewer than ``updates`` within it);
    ``incremental_budget``: the same for incremental peers, whose updates are
    the point of the table; at least one update pair runs, killed at the
    budget plus ``grace``;
    ``memory_limit``: bytes of RSS past which the cell is killed.
    """

    timeout: float = 60.0
    update_budget: float = 20.0
    incremental_budget: float = 150.0
    grace: float = 60.0
    updates: int = 20
    memory_limit: int = 8 << 30
    verify: bool = False


@dataclass
class Cell:
    """What one peer did on one workload. ``status``: ``ok``; ``timeout`` and
    ``memory`` (killed before its batch finished); ``error``; ``n/a`` (the peer
    cannot express the program); ``skipped`` (it already timed out on a
    smaller workload of the same kind); ``unavailable`` (it cannot run here)."""

    workload: str
    peer: str
    status: str
    note: str = ""
    prepare: float | None = None
    batch: float | None = None
    peak_rss: int | None = None
    base_rss: int | None = None
    steady_rss: int | None = None
    trimmed_rss: int | None = None
    counts: dict | None = None
    final_counts: dict | None = None
    retract: list[float] = field(default_factory=list)
    insert: list[float] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    update_counts: list[dict] = field(default_factory=list)
    planned: int = 0
    incremental: bool = False
    wall: float = 0.0

    @property
    def derived(self) -> int | None:
        return sum(self.counts.values()) if self.counts else None

    @property
    def bytes_per_tuple(self) -> float | None:
        """Peak RSS over the RSS before the batch, per derived tuple."""
        return self.per_tuple("peak_rss")

    def per_tuple(self, rss: str) -> float | None:
        """RSS field ``rss`` (``peak_rss``, ``steady_rss`` or ``trimmed_rss``)
        over the RSS before the batch, per derived tuple."""
        value = getattr(self, rss)
        if value is None or self.base_rss is None or not self.derived:
            return None
        return (value - self.base_rss) / self.derived

    def median(self, op: str) -> float | None:
        values = getattr(self, op)
        return percentile(values, 50) if values else None

    def p95(self, op: str) -> float | None:
        values = getattr(self, op)
        return percentile(values, 95) if values else None


def _cell_from_run(workload, peer, run) -> Cell:
    cell = Cell(workload.name, peer.name, run.status, incremental=peer.incremental,
                wall=run.seconds)
    unsupported = run.event("unsupported")
    if unsupported:
        cell.status, cell.note = "n/a", unsupported["reason"]
        return cell
    ready, batch = run.event("ready"), run.event("batch")
    if ready:
        cell.prepare = ready["prepare"]
    if batch:
        cell.batch, cell.counts = batch["seconds"], batch["counts"]
        cell.peak_rss, cell.base_rss = batch["peak_rss"], ready["rss"]
        cell.steady_rss, cell.trimmed_rss = batch["rss"], batch.get("trimmed_rss")
    for update in run.all("update"):
        getattr(cell, update["op"]).append(update["seconds"])
        if update["changed"] is not None:
            cell.changed.append(update["changed"])
        if update["counts"] is not None:
            cell.update_counts.append(update["counts"])
    final = run.event("final")
    cell.final_counts = final["counts"] if final else None
    stopped = run.event("stopped")
    if run.status in ("timeout", "memory") and batch:
        cell.status = "ok"
        cell.note = f"killed during updates ({run.status})"
    elif run.status == "timeout":
        cell.note = f"batch not done in {run.seconds:.0f} s"
    elif run.status == "memory":
        cell.note = f"RSS over {run.observed_rss / 2**30:.1f} GiB"
    elif run.status == "error":
        cell.note = run.detail
    elif stopped and stopped["done"] == 0:
        cell.note = "updates not timed: from scratch, each costs about one batch"
    elif stopped:
        cell.note = f"update budget: {stopped['done']} of {stopped['planned']} updates"
    return cell


class Runner:
    """Runs cells in order; remembers which peers timed out on which kind of
    workload (so a larger one of the same kind is skipped) and which peer
    environments (:mod:`benchmarks.venvs`) could be had."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.failed: dict[tuple[str, str], str] = {}
        self._pythons: dict[str, str | venvs.Unavailable] = {}

    def python_for(self, peer: str) -> str:
        """The interpreter of the peer's cells; raises :class:`venvs.Unavailable`."""
        name = environment(peer)
        if name is None:
            return sys.executable
        if name not in self._pythons:
            try:
                self._pythons[name] = venvs.python_for(name)
            except venvs.Unavailable as error:
                self._pythons[name] = error
        python = self._pythons[name]
        if isinstance(python, venvs.Unavailable):
            raise python
        return python

    def cell(self, workload, name: str) -> Cell:
        peer = load(name)
        reason = peer.unsupported(workload)
        if reason:
            return Cell(workload.name, name, "n/a", note=reason)
        kind = workload.spec["kind"]
        if (name, kind) in self.failed:
            return Cell(workload.name, name, "skipped",
                        note=f"timed out on {self.failed[name, kind]}")
        try:
            python = self.python_for(name)
        except venvs.Unavailable as error:
            return Cell(workload.name, name, "unavailable", note=str(error))
        s = self.settings
        budget = s.incremental_budget if peer.incremental else s.update_budget
        config = {"spec": workload.spec, "peer": name, "updates": s.updates,
                  "update_budget": budget, "verify": s.verify}
        env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
        run = run_cell([python, "-m", "benchmarks.cell", json.dumps(config)], s.timeout,
                       s.memory_limit, budget + s.grace, env=env, cwd=ROOT)
        cell = _cell_from_run(workload, peer, run)
        cell.planned = len(updates(workload, s.updates))
        if cell.status in ("timeout", "memory"):
            self.failed[name, kind] = workload.name
        return cell

    def run(self, workloads, peers=tuple(PEERS), progress=None) -> list[Cell]:
        cells = []
        for workload in workloads:
            for name in peers:
                cell = self.cell(workload, name)
                cells.append(cell)
                if progress:
                    progress(workload, cell)
        return cells
