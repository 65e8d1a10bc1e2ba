"""Traces: the history of a stream, with compaction of past epochs.

A **Trace** is the history of an indexed Z-set: key -> value -> time -> weight.
A :class:`ZSetTrace` is the same without the key level (row -> time -> weight),
used by Distinct. Both live in one scope:

* in the root circuit times are epochs. Everything from finished epochs is one
  consolidated collection ``past``: key -> value -> weight. The current epoch's
  batch is staged and folded in when the epoch commits.
* in a child circuit times are ``(epoch, iteration)``. ``past`` keeps, per key and
  value, the weights of all finished epochs by iteration (they are all earlier
  than any future time, so their epochs can be merged: compaction); ``cur`` keeps
  the current epoch the same way. Appends go to ``cur`` only, so a failed epoch
  is undone by dropping ``cur``; commit folds ``cur`` into ``past``.

The per-value history in a child scope is stored compactly, as a **history**:

* an ``int``: one time, encoded as ``weight << 20 | iteration`` (so
  ``h >> 20`` is the weight and ``h & MASK`` the iteration, for negative
  weights too): one small int per stored value in the common case;
* a dict ``{iteration: weight, ...}``: several iterations.

>>> t = Trace(nested=True)
>>> t.append({("a",): {("a", 1): 1}}, iteration=0)
>>> t.append({("a",): {("a", 1): 1, ("a", 2): 1}}, iteration=3)
>>> t.commit()
>>> t.append({("a",): {("a", 1): -1}}, iteration=3)
>>> for entry in t.entries(): print(entry)
(('a',), ('a', 1), (0, 0), 1)
(('a',), ('a', 1), (0, 3), 1)
(('a',), ('a', 1), (1, 3), -1)
(('a',), ('a', 2), (0, 3), 1)
>>> t.commit(); t.size()
2
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping

from sortedcontainers import SortedList

from engine.codegen import build_functions, key_expression
from engine.errors import EpochError

SHIFT = 20  # codes stay one-digit (fast) ints for weights below 2**10
MASK = (1 << SHIFT) - 1
MAX_ITERATION = MASK


def encode(iteration: int, weight: int) -> int:
    """The one-time history: ``weight`` at ``iteration``.

    >>> h = encode(5, -2); h >> SHIFT, h & MASK
    (-2, 5)
    """
    return (weight << SHIFT) | iteration


def history_add(history, iteration: int, weight: int):
    """The history with ``weight`` added at ``iteration``; ``None`` when empty.

    A dict history is updated in place (only private or committing histories are
    passed here).

    >>> h = history_add(None, 0, 2); history_items(h)
    [(0, 2)]
    >>> h = history_add(h, 4, 1); h
    {0: 2, 4: 1}
    >>> history_add(history_add(h, 0, -2), 4, -1) is None
    True
    """
    if history is None:
        return (weight << SHIFT) | iteration
    if type(history) is int:
        at = history & MASK
        if at == iteration:
            history += weight << SHIFT
            return history if history >> SHIFT else None
        return {at: history >> SHIFT, iteration: weight}
    total = history.get(iteration, 0) + weight
    if total:
        history[iteration] = total
    else:
        del history[iteration]
        if len(history) == 1:
            ((at, old),) = history.items()
            return (old << SHIFT) | at
        if not history:
            return None
    return history


def history_items(history) -> list[tuple[int, int]]:
    """``(iteration, weight)`` pairs of a history, by iteration.

    >>> history_items(encode(0, 3)), history_items(encode(2, -1)), history_items({5: 1, 1: 2})
    ([(0, 3)], [(2, -1)], [(1, 2), (5, 1)])
    """
    if type(history) is int:
        return [(history & MASK, history >> SHIFT)]
    return sorted(history.items())


def history_total(history) -> int:
    """The sum of a history's weights over all its iterations."""
    if type(history) is int:
        return history >> SHIFT
    return sum(history.values())


def merge_histories(target: dict, source: dict) -> None:
    """Fold the value -> history dict ``source`` into ``target`` (in place).

    >>> target = {"a": encode(3, 1), "b": encode(0, 1)}
    >>> merge_histories(target, {"a": encode(3, -1), "b": encode(2, 1), "c": encode(1, 1)})
    >>> sorted((v, history_items(h)) for v, h in target.items())
    [('b', [(0, 1), (2, 1)]), ('c', [(1, 1)])]
    """
    get = target.get
    for value, history in source.items():
        old = get(value)
        if old is None:
            target[value] = history
            continue
        if type(old) is int and type(history) is int:
            iteration = history & MASK
            if old & MASK == iteration:  # same iteration: add the weights
                total = old + history - iteration
                if total >> SHIFT:
                    target[value] = total
                else:
                    del target[value]
                continue
            target[value] = {old & MASK: old >> SHIFT, iteration: history >> SHIFT}
            continue
        for iteration, weight in history_items(history):
            old = history_add(old, iteration, weight)
        if old is None:
            del target[value]
        else:
            target[value] = old


def compile_row_functions(index) -> dict:
    """Generated loops of a trace kept by ``index`` (a key spec): ``append_rows``
    (a child's current epoch), ``fold_rows`` (a root's past) and ``index_rows``
    (a batch grouped by key)."""
    env = {"history_add": history_add}
    key = key_expression(index, "row", env)
    lines = [
        "def append_rows(cur, batch, iteration):",
        f"    unit = (1 << {SHIFT}) | iteration",
        "    cur_get = cur.get",
        "    for row, w in batch.items():",
        f"        k = {key}",
        "        g = cur_get(k)",
        "        if g is None:",
        f"            cur[k] = {{row: unit if w == 1 else (w << {SHIFT}) | iteration}}",
        "            continue",
        "        old = g.get(row)",
        "        if old is None:",
        f"            g[row] = unit if w == 1 else (w << {SHIFT}) | iteration",
        "            continue",
        "        h = history_add(old, iteration, w)",
        "        if h is None:",
        "            del g[row]",
        "            if not g: del cur[k]",
        "        else:",
        "            g[row] = h",
        "def fold_rows(past, batch):",
        "    past_get = past.get",
        "    for row, w in batch.items():",
        f"        k = {key}",
        "        g = past_get(k)",
        "        if g is None:",
        "            past[k] = {row: w}",
        "            continue",
        "        t = g.get(row, 0) + w",
        "        if t: g[row] = t",
        "        else:",
        "            del g[row]",
        "            if not g: del past[k]",
        "def index_rows(batch):",
        "    out = {}",
        "    out_get = out.get",
        "    for row, w in batch.items():",
        f"        k = {key}",
        "        g = out_get(k)",
        "        if g is None: out[k] = {row: w}",
        "        else: g[row] = w",
        "    return out",
    ]
    return build_functions(["append_rows", "fold_rows", "index_rows"], lines, env)


class Trace:
    """History of an indexed Z-set: key -> value -> time -> weight (module docstring).

    ``nested`` is False in the root circuit (times are epochs) and True in a
    child circuit (times are ``(epoch, iteration)``). With an ``index`` (a key
    spec ``("cols", columns)`` or ``("fn", key_fn)``) the trace also takes plain
    row batches (``append_rows``) and keys them itself.
    """

    __slots__ = ("nested", "past", "cur", "staged", "epoch", "index", "functions",
                 "ordered")

    def __init__(self, nested: bool = False, index=None):
        self.nested = nested
        self.ordered = None  # SortedList of past keys, built on first ordered access
        self.past: dict = {}
        self.cur: dict = {}
        self.staged: list = []  # root scope: (is_rows, batch) of the current epoch
        self.epoch = 0
        self.index = index
        self.functions = compile_row_functions(index) if index is not None else None

    def append(self, batch: Mapping, iteration: int = 0, epoch: int | None = None) -> None:
        """Add an indexed batch at ``(self.epoch, iteration)``.

        The root scope stages the batch (lookups keep seeing the state before the
        epoch); a child scope adds it to the current epoch's histories.
        """
        if epoch is not None and epoch != self.epoch:
            raise EpochError(f"trace is at epoch {self.epoch}, got a batch for epoch {epoch}")
        if not batch:
            return
        if not self.nested:
            self.staged.append((False, batch))
            return
        cur = self.cur
        cur_get = cur.get
        unit = (1 << SHIFT) | iteration  # one shared int for the common weight 1
        for key, values in batch.items():
            group = cur_get(key)
            if group is None:
                cur[key] = {v: unit if w == 1 else (w << SHIFT) | iteration
                            for v, w in values.items()}
                continue
            get = group.get
            for value, weight in values.items():
                old = get(value)
                if old is None:
                    group[value] = unit if weight == 1 else (weight << SHIFT) | iteration
                    continue
                history = history_add(old, iteration, weight)
                if history is None:
                    del group[value]
                    if not group:
                        del cur[key]
                else:
                    group[value] = history

    def append_rows(self, batch: Mapping, iteration: int = 0) -> None:
        """Add a Z-set of rows, each under its key, at ``(self.epoch, iteration)``.

        >>> t = Trace(nested=True, index=("cols", (1,)))
        >>> t.append_rows({(1, 2): 1, (3, 2): 1}, iteration=1)
        >>> sorted(t.collection((2,)).items())
        [((1, 2), 1), ((3, 2), 1)]
        """
        if not batch:
            return
        if self.nested:
            self.functions["append_rows"](self.cur, batch, iteration)
        else:
            self.staged.append((True, batch))

    def index_rows(self, batch: Mapping) -> dict:
        """A batch of rows as an indexed Z-set under this trace's key."""
        return self.functions["index_rows"](batch)

    def commit(self) -> None:
        """The epoch is over: fold it into ``past`` (compaction) and drop zeros."""
        past = self.past
        if self.ordered is not None:
            self._commit_ordered()
            return
        if self.nested:
            for key, group in self.cur.items():
                old = past.get(key)
                if old is None:
                    past[key] = group
                else:
                    merge_histories(old, group)
                    if not old:
                        del past[key]
            self.cur = {}
        else:
            for is_rows, batch in self.staged:
                if is_rows:
                    self.functions["fold_rows"](past, batch)
                    continue
                for key, values in batch.items():
                    old = past.get(key)
                    if old is None:
                        past[key] = dict(values)
                        continue
                    get = old.get
                    for value, weight in values.items():
                        total = get(value, 0) + weight
                        if total:
                            old[value] = total
                        else:
                            del old[value]
                    if not old:
                        del past[key]
            self.staged = []
        self.epoch += 1

    def _commit_ordered(self) -> None:
        """Commit, keeping the sorted key list in step (only once it exists)."""
        touched = set(self.cur)
        for batch in self._staged_indexed():
            touched.update(batch)
        before = {key for key in touched if key in self.past}
        ordered, self.ordered = self.ordered, None
        self.commit()
        self.ordered = ordered
        for key in touched:
            if key in self.past and key not in before:
                ordered.add(key)
            elif key not in self.past and key in before:
                ordered.remove(key)

    def keys(self, minimum=None, maximum=None) -> Iterator:
        """The keys of past epochs in order (``minimum``/``maximum`` inclusive
        bounds), from a sorted index built on first use and kept up to date by
        later commits.

        >>> t = Trace(index=("cols", (0,)))
        >>> t.append_rows({(3, "c"): 1, (1, "a"): 1, (2, "b"): 1}); t.commit()
        >>> list(t.keys()), list(t.keys(minimum=(2,)))
        ([(1,), (2,), (3,)], [(2,), (3,)])
        >>> t.append_rows({(0, "z"): 1, (2, "b"): -1}); t.commit(); list(t.keys())
        [(0,), (1,), (3,)]
        """
        if self.ordered is None:
            self.ordered = SortedList(self.past)
        return self.ordered.irange(minimum, maximum)

    def rollback(self) -> None:
        """Forget everything appended in the current epoch."""
        self.cur = {}
        self.staged = []

    def _staged_indexed(self):
        for is_rows, batch in self.staged:
            yield self.index_rows(batch) if is_rows else batch

    def collection(self, key) -> dict:
        """The current value -> weight of ``key``, summed over all times seen."""
        out: dict = {}
        for part in (self.past.get(key), self.cur.get(key)):
            if part:
                for value, history in part.items():
                    total = out.get(value, 0) + (
                        history_total(history) if self.nested else history)
                    if total:
                        out[value] = total
                    else:  # a history may sum to zero over its iterations
                        out.pop(value, None)
        for batch in self._staged_indexed():
            values = batch.get(key)
            if values:
                for value, weight in values.items():
                    total = out.get(value, 0) + weight
                    if total:
                        out[value] = total
                    else:
                        del out[value]
        return out

    def entries(self) -> Iterator[tuple]:
        """``(key, value, time, weight)`` in order of key, then value, then time.

        Past epochs are compacted into one, reported as epoch ``self.epoch - 1``.
        Keys come from the sorted key index (``keys()``), merged with the few
        keys of the current epoch.
        """
        last = self.epoch - 1
        staged = list(self._staged_indexed())
        current = set(self.cur)
        for batch in staged:
            current.update(batch)
        fresh = sorted(key for key in current if key not in self.past)
        for key in heapq.merge(self.keys(), fresh):
            rows = []
            for epoch, store in ((last, self.past), (self.epoch, self.cur)):
                group = store.get(key)
                if not group:
                    continue
                for value, history in group.items():
                    if self.nested:
                        for iteration, weight in history_items(history):
                            rows.append((value, (epoch, iteration), weight))
                    else:
                        rows.append((value, (epoch,), history))
            for batch in staged:
                for value, weight in batch.get(key, {}).items():
                    rows.append((value, (self.epoch,), weight))
            rows.sort(key=lambda entry: (entry[0], entry[1]))
            for value, time, weight in rows:
                yield (key, value, time, weight)

    def size(self) -> int:
        """Number of stored (key, value, time) entries."""
        return sum(1 for _ in self.entries())


class ZSetTrace:
    """History of a Z-set: row -> time -> weight (a :class:`Trace` without keys).

    >>> t = ZSetTrace(nested=True)
    >>> t.append({(1,): 1}, iteration=2); t.commit(); history_items(t.past[(1,)])
    [(2, 1)]
    """

    __slots__ = ("nested", "past", "cur", "staged", "epoch")

    def __init__(self, nested: bool = False):
        self.nested = nested
        self.past: dict = {}
        self.cur: dict = {}
        self.staged: list = []
        self.epoch = 0

    def append(self, batch: Mapping, iteration: int = 0) -> None:
        if not batch:
            return
        if not self.nested:
            self.staged.append(batch)
            return
        cur = self.cur
        get = cur.get
        unit = (1 << SHIFT) | iteration  # one shared int for the common weight 1
        for row, weight in batch.items():
            old = get(row)
            if old is None:
                cur[row] = unit if weight == 1 else (weight << SHIFT) | iteration
                continue
            history = history_add(old, iteration, weight)
            if history is None:
                del cur[row]
            else:
                cur[row] = history

    def commit(self) -> None:
        if self.nested:
            if self.past:
                merge_histories(self.past, self.cur)
            else:
                self.past = self.cur
            self.cur = {}
        else:
            past = self.past
            get = past.get
            for batch in self.staged:
                for row, weight in batch.items():
                    total = get(row, 0) + weight
                    if total:
                        past[row] = total
                    else:
                        del past[row]
            self.staged = []
        self.epoch += 1

    def rollback(self) -> None:
        self.cur = {}
        self.staged = []

    def size(self) -> int:
        if not self.nested:
            return len(self.past) + sum(len(b) for b in self.staged)
        return sum(len(history_items(h)) for store in (self.past, self.cur)
                   for h in store.values())
