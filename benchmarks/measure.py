"""Measurement helpers: time, memory, percentiles, and one cell in a subprocess.

Each cell of the table runs in its own process so that its peak RSS
(``resource.getrusage(...).ru_maxrss``) is its own. The child reports progress
as JSON lines on standard output (:mod:`benchmarks.cell`); the parent reads them
as they come, so a cell stopped by its timeout or its memory cap still reports
what it finished (for example the batch time but only some updates).

>>> percentile([1, 2, 3, 4], 50)
2.5
>>> percentile([5.0], 95)
5.0
>>> round(percentile(list(range(1, 21)), 95), 2)
19.05
"""

from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """This process's resident set size now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def trimmed_rss_bytes() -> int:
    """This process's resident set size after a garbage collection and after
    asking the C allocator to return its free memory to the system
    (glibc's ``malloc_trim``; without glibc, only the collection)."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return rss_bytes()


def peak_rss_bytes() -> int:
    """This process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def percentile(values, q: float) -> float:
    """The ``q``-th percentile by linear interpolation between closest ranks
    (numpy's default), so the p95 of 20 values lies between the 19th and 20th."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _process_rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return 0


@dataclass
class CellRun:
    """What one subprocess reported: its JSON events in order, how it ended
    (``ok``, ``timeout``, ``memory`` or ``error``), its wall time, and the
    tail of its standard error when it failed."""

    events: list[dict] = field(default_factory=list)
    status: str = "ok"
    seconds: float = 0.0
    detail: str = ""
    observed_rss: int = 0

    def event(self, name: str) -> dict | None:
        return next((e for e in self.events if e.get("event") == name), None)

    def all(self, name: str) -> list[dict]:
        return [e for e in self.events if e.get("event") == name]


def run_cell(command: list[str], timeout: float, memory_limit: int, after_batch: float,
             env: dict | None = None, cwd: str | None = None) -> CellRun:
    """Run ``command``, reading JSON lines from its standard output, and kill it
    when it exceeds ``timeout`` seconds before its ``batch`` event, or
    ``after_batch`` seconds after it, or ``memory_limit`` bytes of RSS (polled
    every 50 ms). Standard error goes to a temporary file, kept for the last
    lines when the child fails."""
    import tempfile

    run = CellRun()
    with tempfile.TemporaryFile(mode="w+") as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors,
                                 env=env, cwd=cwd)
        output = child.stdout.fileno()
        pending = b""
        batch_seen = None
        while True:
            readable, _, _ = select.select([output], [], [], 0.05)
            chunk = os.read(output, 1 << 16) if readable else b""
            pending += chunk
            *lines, pending = pending.split(b"\n")
            run.events.extend(json.loads(line) for line in lines if line.startswith(b"{"))
            if readable and not chunk:          # end of file: the child is exiting
                child.wait()
                break
            run.observed_rss = max(run.observed_rss, _process_rss(child.pid))
            now = time.perf_counter()
            if batch_seen is None and run.event("batch") is not None:
                batch_seen = now
            late = (now - start > timeout if batch_seen is None
                    else now - batch_seen > after_batch)
            if late or run.observed_rss > memory_limit:
                run.status = "timeout" if late else "memory"
                child.kill()
                child.wait()
                break
        child.stdout.close()
        run.seconds = time.perf_counter() - start
        if run.status == "ok" and child.returncode != 0:
            run.status = "error"
            errors.seek(0)
            tail = [line for line in errors.read().splitlines() if line.strip()]
            run.detail = tail[-1] if tail else f"exit code {child.returncode}"
    return run


def emit(event: str, **fields) -> None:
    """Print one JSON event line for the parent (the child side of run_cell)."""
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()
