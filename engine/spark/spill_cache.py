"""The memory side of spilled traces: entries recently fetched from Spark,
and the lookups waiting to be sent there together.

A join against a trace in Spark (:mod:`engine.spark.spill`) needs the
entries under the keys of its difference. Two things keep that from costing
a Spark job per lookup:

* **Batching.** A join first *announces* the keys each of its spilled sides
  will read (:meth:`SpillCache.announce`); the first read then sends every
  announced key of every trace as **one request** (one Spark job), and the
  answers wait in :attr:`SpillCache.answers` for the reads that follow. So a
  join sends at most one request per iteration, whichever of its sides spilled.
* **Caching.** The entries of a key fetched once are kept here, under a
  budget of rows shared by all the traces of a circuit and evicted least
  recently used first, so the keys that small updates touch again and again
  are served from memory. A cached key holds *all* of its trace's spilled
  entries, as a **group**: ``(value, epoch, iteration) -> weight``, where the
  epoch is ``PAST`` (-1) for every finished epoch (their times all read as
  ``epoch - 1``, so they merge) or the current epoch's number. A key without
  spilled entries is cached too, as an empty group: a lookup that finds
  nothing is remembered as well as one that finds something.

The cache stays exact as the trace changes (the spilled part calls these):
entries spilled later are added to the groups of their keys
(:meth:`SpillCache.add`); when the epoch commits, its entries merge into
``PAST`` (:meth:`SpillCache.committed`); when it rolls back, they are dropped
(:meth:`SpillCache.rolled_back`). Compaction in Spark changes no sum, so it
changes nothing here.

>>> cache = SpillCache(budget=6)
>>> cache.store(1, "k", {("v", PAST, 0): 1}); cache.store(1, "absent", {})
>>> cache.add(1, [("k", "v", 3, 2, 1), ("k", "w", 3, 0, 1), ("other", "x", 3, 0, 1)], epoch=3)
>>> sorted(cache.group(1, "k").items()), cache.rows
([(('v', -1, 0), 1), (('v', 3, 2), 1), (('w', 3, 0), 1)], 5)
>>> cache.committed(1); sorted(cache.group(1, "k").items())
[(('v', -1, 0), 1), (('v', -1, 2), 1), (('w', -1, 0), 1)]
>>> cache.store(1, "new", {("y", PAST, 0): 1})    # over budget: the least recent key goes
>>> cache.group(1, "absent") is None, len(cache.group(1, "k")), cache.rows
(True, 3, 6)
"""

from __future__ import annotations

from collections import OrderedDict

from engine.errors import EngineError
from engine.zset import add_into

PAST = -1  # the epoch of a group's entries from finished epochs
DEFAULT_BUDGET = 1_000_000  # rows kept when a session does not say (spill_cache)


class SpillCache:
    """Groups of spilled entries by ``(part, key)`` under ``budget`` rows (a
    key costs its entries plus one), least recently used evicted first; and
    the lookups announced for the next request (module docstring).
    ``budget=0`` caches nothing, but lookups are still batched.

    ``requests`` counts the requests sent to Spark (a test reads it)."""

    def __init__(self, budget: int = DEFAULT_BUDGET):
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise EngineError(f"spill_cache must be a number of rows (0 or more), got {budget!r}")
        self.budget = budget
        self.groups: OrderedDict = OrderedDict()   # (part, key) -> group
        self.rows = 0
        self.current: dict[int, set] = {}   # part -> cached keys with current-epoch entries
        self.announced: dict = {}           # part -> (part object, epoch, set of keys)
        self.answers: dict[int, dict] = {}  # part -> key -> group, from the last request
        self.requests = 0

    # -- reading --------------------------------------------------------------

    def group(self, part: int, key):
        """The cached group of ``key`` in ``part`` (now the most recently
        used), or ``None`` when it is not cached."""
        group = self.groups.get((part, key))
        if group is not None:
            self.groups.move_to_end((part, key))
        return group

    def store(self, part: int, key, group: dict) -> None:
        """Keep the group just fetched for ``key`` (evicting older keys past
        the budget)."""
        old = self.groups.pop((part, key), None)
        if old is not None:
            self.rows -= len(old) + 1
        if len(group) + 1 > self.budget:
            return
        self.groups[(part, key)] = group
        self.rows += len(group) + 1
        if any(epoch != PAST for _, epoch, _ in group):
            self.current.setdefault(part, set()).add(key)
        self._evict()

    def _evict(self) -> None:
        groups = self.groups
        while self.rows > self.budget:
            (_, _), group = groups.popitem(last=False)
            self.rows -= len(group) + 1

    # -- batching -------------------------------------------------------------

    def announce(self, part: int, spilled, epoch: int, keys) -> None:
        """``keys`` of ``spilled`` (a spilled part, at ``epoch``) will be read
        soon: those not cached go into the next request."""
        groups = self.groups
        missing = {key for key in keys if (part, key) not in groups}
        if missing:
            entry = self.announced.setdefault(part, (spilled, epoch, set()))
            entry[2].update(missing)

    def take_announced(self) -> list:
        """The announced lookups, ``[(part object, epoch, keys)]``, now sent."""
        announced, self.announced = list(self.announced.values()), {}
        return announced

    # -- keeping groups exact ---------------------------------------------------

    def add(self, part: int, entries, epoch: int) -> None:
        """``(key, value, epoch, iteration, weight)`` entries were appended to
        ``part`` at ``epoch``: add them to the groups of cached keys."""
        self.answers.pop(part, None)
        groups = self.groups
        touched = self.current.setdefault(part, set())
        for key, value, at, iteration, weight in entries:
            group = groups.get((part, key))
            if group is None:
                continue
            if at < epoch:
                at = PAST
            else:
                touched.add(key)
            before = len(group)
            add_into(group, {(value, at, iteration): weight})
            self.rows += len(group) - before
        self._evict()

    def committed(self, part: int) -> None:
        """``part``'s epoch committed: its entries in the cache are past now."""
        for group, slots in self._current(part):
            before = len(group)
            for slot in slots:
                value, _, iteration = slot
                add_into(group, {(value, PAST, iteration): group.pop(slot)})
            self.rows += len(group) - before

    def rolled_back(self, part: int) -> None:
        """``part``'s epoch failed: forget its entries in the cache."""
        for group, slots in self._current(part):
            for slot in slots:
                del group[slot]
            self.rows -= len(slots)

    def _current(self, part: int):
        """Forget ``part``'s answers and announcements; each cached group with
        entries of ``part``'s open epoch, and those entries' slots."""
        self.answers.pop(part, None)
        self.announced.pop(part, None)
        for key in self.current.pop(part, ()):
            group = self.groups.get((part, key))
            if group is not None:
                yield group, [slot for slot in group if slot[1] != PAST]
