"""A memory budget for a circuit: the process's resident memory, checked while
a step runs.

A :class:`MemoryBudget` reads the resident set size (RSS) of this process from
``/proc/self/statm`` (Linux; elsewhere the peak RSS of ``getrusage``, which
never goes down) in two places: between node evaluations and iterations, at
most once every ``interval`` seconds (a check costs a clock read almost always,
about 0.1 µs, and a file read, about 5 µs, otherwise); and, while a step runs
(:meth:`MemoryBudget.watching`), from a watchdog thread every ``interval``, which
raises the error in the evaluating thread (``PyThreadState_SetAsyncExc``) when
one operator's own loop (a join's) allocates past the limit. Past the limit,
:class:`~engine.errors.MemoryLimitError`; the circuit's step then rolls back as
for any error (as for Ctrl-C, which also arrives between any two bytecodes),
and the budget asks the allocator to return what the rolled back epoch freed
(``gc.collect()`` and glibc's ``malloc_trim``). Python keeps some freed memory
for reuse all the same, so a step fails only when it makes the process grow
past the limit: the bound is the larger of the limit and the resident memory
when the step began.

>>> budget = MemoryBudget(2**50)
>>> budget.check()
>>> budget.resident() > 0
True
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import resource
import sys
import threading
import time
import weakref
from collections.abc import Iterator

from engine.errors import MemoryLimitError


class MemoryBudget:
    """At most ``limit`` bytes of resident memory while a step runs."""

    def __init__(self, limit: int, interval: float = 0.002):
        if limit <= 0:
            raise ValueError("a memory limit must be positive")
        self.limit = limit
        #: The bound of the step running: ``max(limit, resident memory at its start)``.
        self.bound = limit
        self.interval = interval
        self._next = 0.0
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        try:
            self._statm: int | None = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            self._statm = None

    def resident(self) -> int:
        """This process's resident memory in bytes."""
        if self._statm is not None:
            return int(os.pread(self._statm, 64, 0).split()[1]) * self._page
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def check(self) -> None:
        """Raise :class:`MemoryLimitError` when the resident memory exceeds the
        limit (read at most once per ``interval``)."""
        now = time.perf_counter()
        if now < self._next:
            return
        self._next = now + self.interval
        used = self.resident()
        if used > self.bound:
            raise MemoryLimitError(used, self.limit)

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """While the block runs, a watchdog raises :class:`MemoryLimitError` in
        this thread as soon as the limit is passed."""
        self.bound = max(self.limit, self.resident())
        _quiet_unraisable()
        watchdog = self._watchdog
        if watchdog is None or not watchdog.is_alive():
            watchdog = self._watchdog = _Watchdog(self)
        watchdog.arm(threading.get_ident())
        try:
            yield
        finally:
            watchdog.disarm()

    _watchdog = None

    def release(self) -> None:
        """After a rolled back step: collect garbage and hand freed memory back
        to the system, so the next check sees what the state needs."""
        gc.collect()
        trim()
        self._next = 0.0

    def __del__(self) -> None:
        if getattr(self, "_statm", None) is not None:
            os.close(self._statm)


class _Watchdog(threading.Thread):
    """Checks a budget every ``interval`` while armed; past the limit, raises
    :class:`MemoryLimitError` in the armed thread."""

    def __init__(self, budget: MemoryBudget):
        super().__init__(name="datalog-memory-watchdog", daemon=True)
        self.budget = weakref.ref(budget)  # the thread ends once its budget is gone
        self.lock = threading.Lock()
        self.armed = threading.Event()
        self.target: int | None = None
        self.start()

    def arm(self, thread: int) -> None:
        with self.lock:
            self.target = thread
        self.armed.set()

    def disarm(self) -> None:
        self.armed.clear()
        with self.lock:
            if self.target is not None:
                # an exception sent but not yet delivered is withdrawn
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.target), None)
            self.target = None

    def run(self) -> None:
        while True:
            armed = self.armed.wait(timeout=1.0)
            budget = self.budget()
            if budget is None:
                return
            if armed:
                self.watch(budget)
            del budget

    def watch(self, budget: MemoryBudget) -> None:
        """One look, ``interval`` after the last."""
        time.sleep(budget.interval)
        used = budget.resident()
        if used <= budget.bound:
            return
        with self.lock:
            if self.target is None:
                return
            MemoryLimitError.pending = (used, budget.limit)
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self.target), ctypes.py_object(_AsyncMemoryLimit))
            self.target = None
        self.armed.clear()


class _AsyncMemoryLimit(MemoryLimitError):
    """What the watchdog raises (an exception class is all it can send): the
    sizes it saw, from :attr:`MemoryLimitError.pending`."""

    def __init__(self):
        used, limit = MemoryLimitError.pending
        super().__init__(used, limit)


def _quiet_unraisable() -> None:
    """Install (once) an unraisable-exception hook that drops the watchdog's error.

    The error arrives between any two bytecodes, so it can land in code whose
    exceptions Python cannot propagate -- a ``__del__``, a garbage collector
    callback -- and Python would print it as "Exception ignored in ..." and go on.
    Nothing is lost by dropping it: the step goes on past the bound, and the next
    :meth:`MemoryBudget.check` between node evaluations raises the same error.

    >>> _quiet_unraisable(); sys.unraisablehook.drops_memory_limit
    True
    """
    previous = sys.unraisablehook
    if getattr(previous, "drops_memory_limit", False):
        return

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, _AsyncMemoryLimit):
            previous(unraisable)

    hook.drops_memory_limit = True
    sys.unraisablehook = hook


def trim() -> None:
    """glibc's ``malloc_trim(0)`` where there is glibc (it keeps freed memory
    otherwise)."""
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC(0)


_LIBC = None

#: A step that ran at least this many seconds, and after which the process is
#: TRIM_GROWTH bytes larger than after the last trim, hands what it freed back
#: to the system (:func:`trim`) when it ends. A large epoch frees most of what
#: it allocated (its batches, the rows of its deltas, numpy temporaries) and
#: glibc keeps that memory: right after the bulk load of Andersen's analysis on
#: 200 functions the process held 480 bytes per derived tuple, 250 after a trim
#: (negagg-1000-1500: 278 and 132). The trim took 1.5-2.5 ms on those heaps
#: (100-250 MiB; up to 30 ms after the 2-second load of same generation on a
#: depth-10 tree, 400 MiB, on a loaded machine), so a step of 0.1 s pays about
#: 2% for it, and the small steps of single-fact updates never pay.
TRIM_AFTER = 0.1
#: The growth (bytes of resident memory since the last trim) that makes a long
#: step trim. An update of 0.1-1 s reuses the memory the steps before it freed
#: and grows the process little: trimming after each of them gave the next ones
#: pages to fault in again (60 single-edge retractions and insertions in the
#: closure of the 1,000-node random graph: 28 trims, 15,500 page faults; 1,900
#: without them), while a load grows it by hundreds of MiB.
TRIM_GROWTH = 64 << 20
#: ... and only when the bytes the C allocator has handed out (:func:`allocated`)
#: grew by this share of what they were after the last trim: the state grew (a
#: load: from 14 MiB to 28-120 MiB on the table's workloads). A chain's update
#: frees ~100-150 MiB of temporaries, resident growth that the next update
#: reuses, while its state stays within ~15% (``profile_engine tc-chain-2000
#: --cpu --updates 4``: 5 trims in 8 steps, ~9,700 page faults a step, CPU
#: 197-205 ms a step; 2,200-3,000 faults, 172-175 ms without those trims).
TRIM_SHARE = 0.5
_trimmed_at = 0  # resident memory after the last trim
_allocated_at = 0  # allocated memory after the last trim


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33 and later)."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


_MALLINFO = None


def allocated() -> int:
    """Bytes the C allocator has handed out and not had back (glibc's
    ``mallinfo2``: in use in its heaps, and mapped for large blocks; its
    free pages, resident or not, not counted); 0 where that is unknown.

    >>> allocated() > 0 or _MALLINFO is False
    True
    """
    global _MALLINFO
    if _MALLINFO is None:
        try:
            _MALLINFO = ctypes.CDLL("libc.so.6").mallinfo2
            _MALLINFO.restype = _MallInfo2
        except (OSError, AttributeError):
            _MALLINFO = False
    if not _MALLINFO:
        return 0
    info = _MALLINFO()
    return info.uordblks + info.hblkhd


def resident() -> int:
    """This process's resident memory in bytes (0 where ``/proc`` is missing).

    >>> resident() > 0
    True
    """
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def trim_after(seconds: float) -> bool:
    """After a step that ran ``seconds``: :func:`trim` when that is at least
    :data:`TRIM_AFTER`, the process has grown :data:`TRIM_GROWTH` since the
    last trim and its allocated bytes by :data:`TRIM_SHARE` (where known);
    whether it did.

    >>> trim_after(0.0)
    False
    """
    global _trimmed_at, _allocated_at
    if seconds < TRIM_AFTER:
        return False
    used = resident()
    if used and used - _trimmed_at < TRIM_GROWTH:
        return False
    state = allocated()
    if state and state < (1 + TRIM_SHARE) * _allocated_at:
        return False
    trim()
    _trimmed_at, _allocated_at = resident(), allocated()
    return True
