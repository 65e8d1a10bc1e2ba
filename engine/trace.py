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
  weights too): one small int per stored value in the common case. Only
  iterations up to :data:`MASK` (1,048,575) are packed this way;
* a dict ``{iteration: weight, ...}``: several iterations, or one iteration
  past :data:`MASK`. So an iteration has no upper bound: a loop that runs for
  millions of iterations stores its late histories as dicts, and every loop of
  up to a million iterations pays nothing for that (the writers choose the
  packed or the wide form once per batch, from its iteration).

Readers (operators, the spill backend) go through the read API of
:mod:`engine.cursor`: :class:`DictCursor` / :class:`DictRowCursor` walk one part
(``past`` or ``cur``), and :class:`DictSource` / :class:`DictRowSource` write the
same questions as source fragments for generated loops. The encoding below is
known to this module only.

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
from engine.cursor import Cursor, CursorSource, RowCursor, RowCursorSource
from engine.errors import EpochError

SHIFT = 20  # codes stay one-digit (fast) ints for weights below 2**10
MASK = (1 << SHIFT) - 1
#: The last iteration packed into an int history; later ones are kept in dicts.
MAX_PACKED = MASK


def encode(iteration: int, weight: int):
    """The one-time history: ``weight`` at ``iteration`` (a new dict past
    :data:`MAX_PACKED`).

    >>> h = encode(5, -2); h >> SHIFT, h & MASK
    (-2, 5)
    >>> encode(MAX_PACKED + 1, 1)
    {1048576: 1}
    """
    if iteration > MASK:
        return {iteration: weight}
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
        return encode(iteration, weight)
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
            return encode(at, old)
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
    ``source`` is a committing epoch's, dropped afterwards: its dict histories
    are updated in place or taken over.

    >>> target = {"a": encode(3, 1), "b": encode(0, 1), "d": {0: 1, 2: 1}, "e": {0: 1, 1: 1}}
    >>> merge_histories(target, {"a": encode(3, -1), "b": encode(2, 1), "c": encode(1, 1),
    ...                          "d": {2: -1, 4: 1}, "e": encode(1, -1)})
    >>> sorted((v, history_items(h)) for v, h in target.items())
    [('b', [(0, 1), (2, 1)]), ('c', [(1, 1)]), ('d', [(0, 1), (4, 1)]), ('e', [(0, 1)])]
    >>> type(target["e"]) is int   # one time left: the int form again
    True
    """
    # Additions commute, so a dict history's times are added in any order, and
    # a dict takes the other history's few times in place (no sorting, no call
    # per time: the commit of a single-edge update to a large closure folds
    # thousands of histories of several times each).
    get = target.get
    for value, history in source.items():
        old = get(value)
        if old is None:
            target[value] = history
            continue
        if type(history) is int:
            iteration = history & MASK
            if type(old) is int:
                if old & MASK == iteration:  # same iteration: add the weights
                    total = old + history - iteration
                    if total >> SHIFT:
                        target[value] = total
                    else:
                        del target[value]
                    continue
                target[value] = {old & MASK: old >> SHIFT, iteration: history >> SHIFT}
                continue
            times = old
            total = times.get(iteration, 0) + (history >> SHIFT)
            if total:
                times[iteration] = total
                continue
            del times[iteration]
        elif type(old) is int:  # the epoch's dict takes the past's one time
            times = history
            at = old & MASK
            total = times.get(at, 0) + (old >> SHIFT)
            if total:
                times[at] = total
                target[value] = times
                continue
            del times[at]
        else:
            times = old
            tget = times.get
            for iteration, weight in history.items():
                total = tget(iteration, 0) + weight
                if total:
                    times[iteration] = total
                else:
                    del times[iteration]
        if len(times) > 1:
            target[value] = times
        elif times:
            ((at, weight),) = times.items()
            target[value] = encode(at, weight)
        else:
            del target[value]


#: The loops of each ``("cols", columns)`` index by its columns, compiled once: a trace that
#: changes kind (dicts <-> runs) mid-loop makes a new trace object each time.
ROW_FUNCTIONS: dict = {}


def compile_row_functions(index) -> dict:
    """Generated loops of a trace kept by ``index`` (a key spec): ``append_rows``
    (a child's current epoch), ``fold_rows`` (a root's past) and ``index_rows``
    (a batch grouped by key)."""
    if index[0] == "cols":
        columns = tuple(index[1])
        found = ROW_FUNCTIONS.get(columns)
        if found is None:
            found = ROW_FUNCTIONS[columns] = _compile_row_functions(("cols", columns))
        return found
    return _compile_row_functions(index)


def _compile_row_functions(index) -> dict:
    env = {"history_add": history_add, "append_wide": _append_wide}
    key = key_expression(index, "row", env)
    lines = [
        "def append_rows(cur, batch, iteration):",
        f"    if iteration > {MASK}: return append_wide(cur, batch, iteration, key_of)",
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
        "def key_of(row):",
        f"    return {key}",
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


def _append_wide(cur: dict, batch: Mapping, iteration: int, key_of) -> None:
    """``append_rows`` at an iteration past :data:`MAX_PACKED` (dict histories)."""
    for row, weight in batch.items():
        key = key_of(row)
        group = cur.setdefault(key, {})
        history = history_add(group.get(row), iteration, weight)
        if history is None:
            del group[row]
            if not group:
                del cur[key]
        else:
            group[row] = history


class _Parts:
    """A trace's two parts, ``past`` and ``cur`` (dicts), and the last cursor
    made over each (``cursors``): replacing a part drops its cursor, which
    would otherwise keep the old dict (a whole epoch's entries) alive."""

    __slots__ = ()

    @property
    def past(self) -> dict:
        return self._past

    @past.setter
    def past(self, value: dict) -> None:
        self._past = value
        self.cursors[0] = None

    @property
    def cur(self) -> dict:
        return self._cur

    @cur.setter
    def cur(self, value: dict) -> None:
        self._cur = value
        self.cursors[1] = None


class Trace(_Parts):
    """History of an indexed Z-set: key -> value -> time -> weight (module docstring).

    ``nested`` is False in the root circuit (times are epochs) and True in a
    child circuit (times are ``(epoch, iteration)``). With an ``index`` (a key
    spec ``("cols", columns)`` or ``("fn", key_fn)``) the trace also takes plain
    row batches (``append_rows``) and keys them itself.
    """

    __slots__ = ("nested", "_past", "_cur", "staged", "epoch", "index", "functions",
                 "ordered", "cursors")

    def __init__(self, nested: bool = False, index=None):
        self.nested = nested
        self.cursors = [None, None]  # the last past and epoch cursors (made again when stale)
        self.ordered = None  # SortedList of past keys, built on first ordered access
        self.past = {}
        self.cur = {}
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
        if iteration > MASK:
            for key, values in batch.items():
                _append_wide(cur, values, iteration, lambda _row, key=key: key)
            return
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
            self.functions["append_rows"](self._cur, batch, iteration)
        else:
            self.staged.append((True, batch))

    def index_rows(self, batch: Mapping) -> dict:
        """A batch of rows as an indexed Z-set under this trace's key."""
        return self.functions["index_rows"](batch)

    # -- the read API (engine.cursor) ---------------------------------------

    def past_cursor(self) -> DictCursor:
        """A cursor over the finished epochs (times reported at ``epoch - 1``).

        The same cursor is returned until the epoch or the part changes (a
        loop of one row per iteration asks for it every iteration): a reader
        seeks it and reads its group before asking the trace again."""
        cursor = self.cursors[0]
        if cursor is None or cursor.groups is not self._past or cursor.epoch != self.epoch - 1:
            cursor = self.cursors[0] = DictCursor(self._past, self.nested, self.epoch - 1)
        return cursor

    def epoch_cursor(self) -> DictCursor:
        """A cursor over the current epoch's appends (child scope; a root
        trace's current epoch is invisible to readers: empty); shared as the
        past one is."""
        cursor = self.cursors[1]
        if cursor is None or cursor.groups is not self._cur or cursor.epoch != self.epoch:
            cursor = self.cursors[1] = DictCursor(self._cur, self.nested, self.epoch)
        return cursor

    @classmethod
    def from_entries(cls, nested: bool, index, epoch: int, entries) -> Trace:
        """A trace at ``epoch`` holding ``(key, value, epoch, iteration,
        weight)`` entries: those of earlier epochs as its past, those of
        ``epoch`` as its current epoch (root scope: all of them are its past).
        Weights are summed, zeros dropped.

        >>> t = Trace.from_entries(True, None, 2, [("k", "v", 0, 1, 1), ("k", "v", 2, 0, 1),
        ...                                        ("k", "w", 1, 3, 1), ("k", "w", 0, 3, -1)])
        >>> list(t.entries())
        [('k', 'v', (1, 1), 1), ('k', 'v', (2, 0), 1)]
        """
        trace = cls(nested=nested, index=index)
        trace.epoch = epoch
        shared: dict = {}  # one object per int history (few distinct ones: 32 bytes each)
        for key, value, at, iteration, weight in entries:
            if not nested:
                group = trace.past.setdefault(key, {})
                total = group.get(value, 0) + weight
                if total:
                    group[value] = total
                else:
                    del group[value]
                    if not group:
                        del trace.past[key]
                continue
            store = trace.past if at < epoch else trace.cur
            group = store.setdefault(key, {})
            history = history_add(group.get(value), iteration, weight)
            if history is None:
                del group[value]
                if not group:
                    del store[key]
            else:
                group[value] = shared.setdefault(history, history) if type(
                    history) is int else history
        return trace

    def adopt(self, other: Trace) -> None:
        """Take over ``other``'s entries and epoch (``other`` is then not to be
        used): to change a trace's kind without copying."""
        self.past, self.cur, self.staged = other.past, other.cur, list(other.staged)
        self.epoch = other.epoch
        self.ordered = None

    def drop_entries(self) -> None:
        """Forget every entry of past epochs and of the current one (but not
        the root's staged batch): they have moved elsewhere."""
        self.past, self.cur = {}, {}
        self.ordered = None

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

    def staged_batches(self) -> list:
        """The root's batches of the current epoch (indexed), not yet visible
        to readers."""
        return list(self._staged_indexed())

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


class ZSetTrace(_Parts):
    """History of a Z-set: row -> time -> weight (a :class:`Trace` without keys).

    >>> t = ZSetTrace(nested=True)
    >>> t.append({(1,): 1}, iteration=2); t.commit(); history_items(t.past[(1,)])
    [(2, 1)]
    """

    __slots__ = ("nested", "_past", "_cur", "staged", "epoch", "cursors")

    def __init__(self, nested: bool = False):
        self.nested = nested
        self.cursors = [None, None]  # the last past and epoch cursors (made again when stale)
        self.past = {}
        self.cur = {}
        self.staged: list = []
        self.epoch = 0

    def append(self, batch: Mapping, iteration: int = 0) -> None:
        if not batch:
            return
        if not self.nested:
            self.staged.append(batch)
            return
        cur = self.cur
        if iteration > MASK:
            for row, weight in batch.items():
                history = history_add(cur.get(row), iteration, weight)
                if history is None:
                    del cur[row]
                else:
                    cur[row] = history
            return
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

    def past_cursor(self) -> DictRowCursor:
        """A cursor over the finished epochs (times reported at ``epoch - 1``);
        the same one until the epoch or the part changes (a row cursor keeps
        no position, so sharing it is safe)."""
        cursor = self.cursors[0]
        if cursor is None or cursor.rows_ is not self._past or cursor.epoch != self.epoch - 1:
            cursor = self.cursors[0] = DictRowCursor(self._past, self.nested, self.epoch - 1)
        return cursor

    def epoch_cursor(self) -> DictRowCursor:
        """A cursor over the current epoch's appends (child scope)."""
        cursor = self.cursors[1]
        if cursor is None or cursor.rows_ is not self._cur or cursor.epoch != self.epoch:
            cursor = self.cursors[1] = DictRowCursor(self._cur, self.nested, self.epoch)
        return cursor

    def size(self) -> int:
        if not self.nested:
            return len(self.past) + sum(len(b) for b in self.staged)
        return sum(len(history_items(h)) for store in (self.past, self.cur)
                   for h in store.values())


# ---------------------------------------------------------------------------
# The read API (engine.cursor) over the dicts above


def history_split(history, i: int) -> tuple[int, int, int | None]:
    """``(before, at, later)`` of a history around iteration ``i``.

    >>> history_split({0: 1, 2: 3, 5: -1, 7: 1}, 2)
    (1, 3, 5)
    """
    if type(history) is int:
        at = history & MASK
        if at < i:
            return history >> SHIFT, 0, None
        if at == i:
            return 0, history >> SHIFT, None
        return 0, 0, at
    return split_pairs(history.items(), i)


def split_pairs(pairs, i: int) -> tuple[int, int, int | None]:
    """:func:`history_split` of ``(iteration, weight)`` pairs.

    >>> split_pairs([(0, 1), (2, 3), (5, -1), (2, 1)], 2)
    (1, 4, 5)
    """
    before = now = 0
    later = None
    for j, weight in pairs:
        if j < i:
            before += weight
        elif j == i:
            now += weight
        elif later is None or j < later:
            later = j
    return before, now, later


def history_until(history, i: int) -> int:
    """The weight of a history at iterations ``<= i``."""
    if type(history) is int:
        return history >> SHIFT if history & MASK <= i else 0
    return sum(weight for j, weight in history.items() if j <= i)


class DictSource(CursorSource):
    """Fragments reading a :class:`DictCursor`: a group is a dict value ->
    weight (root) or value -> history (child scope; see the module docstring)."""

    def __init__(self, nested: bool):
        self.nested = nested

    def nonempty(self, cursor: str) -> str:
        return f"{cursor}.groups"

    def bind(self, cursor: str, prefix: str, keys: str = "()") -> list[str]:
        return [f"    {prefix}get = {cursor}.groups.get"]

    def seek(self, prefix: str, key: str, group: str, indent: str) -> list[str]:
        return [f"{indent}{group} = {prefix}get({key})",
                f"{indent}if {group} is None: continue"]

    def values(self, group: str, value: str, history: str) -> str:
        return f"for {value}, {history} in {group}.items():"

    def weight(self, history: str) -> str:
        if not self.nested:
            return history
        return f"({history} >> {SHIFT} if type({history}) is int else sum({history}.values()))"

    def walk_times(self, history: str, iteration: str, weight: str, body, indent: str):
        return ([f"{indent}if type({history}) is int:",
                 f"{indent}    {iteration} = {history} & {MASK}",
                 f"{indent}    {weight} = {history} >> {SHIFT}"]
                + body(indent + "    ")
                + [f"{indent}else:",
                   f"{indent}    for {iteration}, {weight} in {history}.items():"]
                + body(indent + "        "))


class DictRowSource(RowCursorSource):
    """Fragments reading (and appending to) a :class:`DictRowCursor`."""

    def __init__(self, nested: bool, wide: bool = False):
        self.nested = nested
        #: Appends at iterations past MAX_PACKED (each new history a dict).
        self.wide = wide

    def names(self) -> dict:
        return {"history_add": history_add, "encode": encode}

    def bind(self, cursor: str, prefix: str, i: str = "0") -> list[str]:
        # ``unit``: an int made per call, shared by the histories of weight 1
        # it stores; no history stored before is that object
        return [f"    {prefix}rows = {cursor}.rows_",
                f"    {prefix}get = {prefix}rows.get",
                f"    {prefix}setdefault = {prefix}rows.setdefault",
                f"    {prefix}unit = None" if self.wide else
                f"    {prefix}unit = (1 << {SHIFT}) | {i}"]

    def split(self, prefix, row, i, found, before, at, later, indent) -> list[str]:
        return [
            f"{indent}{prefix}h = {prefix}get({row})",
            f"{indent}{found} = {prefix}h is not None",
            f"{indent}if {found}:",
            f"{indent}    {before} = {at} = 0",
            f"{indent}    {later} = None",
            f"{indent}    if type({prefix}h) is int:",
            f"{indent}        _j = {prefix}h & {MASK}",
            f"{indent}        if _j < {i}: {before} = {prefix}h >> {SHIFT}",
            f"{indent}        elif _j == {i}: {at} = {prefix}h >> {SHIFT}",
            f"{indent}        else: {later} = _j",
            f"{indent}    else:",
            f"{indent}        for _j, _w in {prefix}h.items():",
            f"{indent}            if _j < {i}: {before} += _w",
            f"{indent}            elif _j == {i}: {at} += _w",
            f"{indent}            elif {later} is None or _j < {later}: {later} = _j",
        ]

    def accumulate(self, prefix, row, weight, i, before, indent) -> list[str]:
        # one probe of the (large) dict per row: setdefault with the new history
        return [
            f"{indent}_new = encode({i}, {weight})" if self.wide else
            f"{indent}_new = {prefix}unit if {weight} == 1 else ({weight} << {SHIFT}) | {i}",
            f"{indent}_h = {prefix}setdefault({row}, _new)",
            f"{indent}if _h is _new:",
            f"{indent}    {before} = None",
            f"{indent}else:",
            f"{indent}    {before} = _h >> {SHIFT} if type(_h) is int else sum(_h.values())",
            f"{indent}    _h = history_add(_h, {i}, {weight})",
            f"{indent}    if _h is None: del {prefix}rows[{row}]",
            f"{indent}    else: {prefix}rows[{row}] = _h",
        ]

    def weight(self, prefix: str, row: str) -> str:
        if not self.nested:
            return f"{prefix}get({row}, 0)"
        return (f"(0 if ({prefix}h := {prefix}get({row})) is None else {prefix}h >> {SHIFT} "
                f"if type({prefix}h) is int else sum({prefix}h.values()))")


SOURCES = {False: DictSource(False), True: DictSource(True)}
DELTA_SOURCE = SOURCES[False]  # an indexed Z-set read as a cursor
ROW_SOURCES = {False: DictRowSource(False), True: DictRowSource(True)}
#: The current epoch of a child's ZSetTrace, appended to past MAX_PACKED.
WIDE_ROW_SOURCE = DictRowSource(True, wide=True)


class DictCursor(Cursor):
    """A :class:`~engine.cursor.Cursor` over one part of a :class:`Trace`:
    ``groups`` is key -> value -> weight (root) or history (child scope)."""

    __slots__ = ("epoch", "group", "groups", "nested")

    def __init__(self, groups: dict, nested: bool, epoch: int):
        self.groups = groups
        self.nested = nested
        self.epoch = epoch
        self.group: dict = {}

    @property
    def source(self) -> DictSource:
        return SOURCES[self.nested]

    def __bool__(self) -> bool:
        return bool(self.groups)

    def seek(self, key) -> bool:
        group = self.groups.get(key)
        self.group = group or {}
        return group is not None

    def seek_many(self, keys) -> Iterator:
        groups = self.groups
        for key in sorted({key for key in keys if key in groups}):
            self.group = groups[key]
            yield key

    def keys(self) -> Iterator:
        return iter(self.groups)

    def values(self) -> Iterator:
        return iter(self.group)

    def times(self, value) -> list[tuple[tuple, int]]:
        history = self.group.get(value)
        if history is None:
            return []
        if not self.nested:
            return [((self.epoch,), history)]
        return [((self.epoch, j), weight) for j, weight in history_items(history)]

    def weight(self, value, until: int | None = None) -> int:
        history = self.group.get(value)
        if history is None:
            return 0
        if not self.nested:
            return history
        return history_total(history) if until is None else history_until(history, until)

    def split(self, value, i: int) -> tuple[int, int, int | None]:
        history = self.group.get(value)
        return (0, 0, None) if history is None else history_split(history, i)

    def weights(self) -> dict:
        if not self.nested:
            return dict(self.group)
        out = {}
        for value, history in self.group.items():
            weight = history_total(history)
            if weight:
                out[value] = weight
        return out


class DictRowCursor(RowCursor):
    """A :class:`~engine.cursor.RowCursor` over one part of a :class:`ZSetTrace`:
    ``rows_`` is row -> weight (root) or history (child scope)."""

    __slots__ = ("epoch", "nested", "rows_")

    def __init__(self, rows: dict, nested: bool, epoch: int):
        self.rows_ = rows
        self.nested = nested
        self.epoch = epoch

    @property
    def source(self) -> DictRowSource:
        return ROW_SOURCES[self.nested]

    def __bool__(self) -> bool:
        return bool(self.rows_)

    def rows(self) -> Iterator:
        return iter(self.rows_)

    def times(self, row) -> list[tuple[tuple, int]]:
        history = self.rows_.get(row)
        if history is None:
            return []
        if not self.nested:
            return [((self.epoch,), history)]
        return [((self.epoch, j), weight) for j, weight in history_items(history)]

    def weight(self, row, until: int | None = None) -> int:
        history = self.rows_.get(row)
        if history is None:
            return 0
        if not self.nested:
            return history
        return history_total(history) if until is None else history_until(history, until)

    def weights_of(self, rows) -> list[int]:
        if not self.nested:
            get = self.rows_.get
            return [get(row, 0) for row in rows]
        return [self.weight(row) for row in rows]

    def split(self, row, i: int) -> tuple[int, int, int | None]:
        history = self.rows_.get(row)
        return (0, 0, None) if history is None else history_split(history, i)

    def positive(self) -> Iterator:
        if not self.nested:
            return (row for row, weight in self.rows_.items() if weight > 0)
        return (row for row, h in self.rows_.items()
                if (h >> SHIFT if type(h) is int else history_total(h)) > 0)


def delta_cursor(indexed: dict) -> DictCursor:
    """A cursor over an indexed Z-set in memory (a batch: key -> value ->
    weight, all at the current time); read with ``DELTA_SOURCE``.

    >>> c = delta_cursor({"k": {"v": 2}}); c.seek("k"), c.weights()
    (True, {'v': 2})
    """
    return DictCursor(indexed, False, 0)
