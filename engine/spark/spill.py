"""Spilling large traces to Spark: the join work against them runs there.

A trace that grows past ``threshold`` rows moves into Spark. A
:class:`SpillingTrace` is a :class:`~engine.trace.Trace` in two parts whose
entries add up:

* the in-memory dicts of the base class (``past``, ``cur``, ``staged``), now a
  write buffer of at most ``threshold`` rows;
* a :class:`SparkPart`: one DataFrame with a row per entry::

      v0 .. v{n-1} | k0 .. k{m-1} | epoch | iteration | weight

  (the value's columns; key columns only when the key is not a choice of the
  value's columns; the entry's time, iteration 0 in the root scope; its
  weight). It is compacted and partitioned by the key columns in Spark.

When the buffer passes the threshold its entries go to Spark as one Arrow
table (``createDataFrame(pyarrow.Table)``), each with its time: past epochs
as epoch ``e - 1``, the current epoch's as ``e``. Nothing of the current
epoch is thus ever anonymous, so a failed epoch is undone by dropping the rows
with ``epoch == e`` (``rollback``), exactly as the in-memory trace drops
``cur``.

Joins. The join is bilinear, so against a trace ``B = B_memory + B_spark``::

    a ⋈ B = a ⋈ B_memory + a ⋈ B_spark

``a ⋈ B_spark`` needs the entries of ``B_spark`` under the distinct keys of
the (small) difference ``a``. Those recently fetched are cached in Python
(:mod:`engine.spark.spill_cache`, a budget of rows shared by the circuit's
traces, kept exact as the traces change); the others go to Spark, the keys of
both sides of the join in **one request** per iteration (the join announces
them all with ``prefetch`` before reading either side): a filter on the key
columns for up to ``IN_LIMIT`` keys, a broadcast table in a left-semi join
beyond, the selections of several traces in one union. The matching entries
come back through Arrow (``toArrow``) and, cached or fetched, make a small
in-memory
:class:`~engine.trace.Trace` (this epoch's entries its current epoch, earlier
epochs' its past, by iteration), which the join reads through the same cursors
(``engine.cursor``) as its in-memory traces and pairs with ``a`` in its own
generated loops
(:meth:`engine.operators.join.JoinNode.join_spilled`), so times (least upper
bound in the product order, later iterations buffered) and weights (products)
follow exactly the in-memory rules. Shipping the matches rather than the pairs
is deliberate: a pair's weight and time are products and maxima of the two
factors', the pairs outnumber the matches, and every pair must pass through
the join's Python ``combine`` anyway.

Compaction. Spilled entries first join a **tail** (Arrow tables, columnar,
seen by Spark as one local relation); the **body** is the compacted past in
Spark. When the tail outnumbers the body, the next request to Spark for the
trace compacts it first (a warm session, served by the cache, sends none, so
it pays no compaction either; a tail of ``TAIL_CAP`` rows compacts at once):
past epochs merged into one, grouped by key, value and iteration, weights
summed, zeros dropped; the current epoch's rows
(a long epoch, such as a bulk load, compacts too) kept as they are, so a
rollback can still drop them; all partitioned by key and checkpointed
(``localCheckpoint``) to cut the lineage. Doubling keeps the cost per row
constant.

Spark is imported here only when a trace actually spills; :func:`check_spilling`
only checks that pyspark and Java are there.

>>> check_spilling(-1)
Traceback (most recent call last):
    ...
engine.errors.EngineError: spill_threshold must be a number of rows (0 or more), got -1
"""

from __future__ import annotations

from engine.errors import EngineError, SparkUnavailableError
from engine.operators.join import JoinNode, TraceNode
from engine.spark.session import INSTALL_HINT, _require_java, get_session, import_pyspark
from engine.spark.spill_cache import PAST, SpillCache
from engine.trace import Trace

EPOCH, ITERATION, WEIGHT = "epoch", "iteration", "weight"


class SpillError(EngineError):
    """Spilling cannot work: Spark is not installed, or a trace holds values
    Spark cannot store. ``str()`` is the whole message."""


TAIL_CAP = 200_000  # tail rows compacted at once, without waiting for a lookup
IN_LIMIT = 256  # keys looked up by a column filter; more go as a broadcast table


def check_spilling(threshold) -> int:
    """``threshold`` as a row count, after checking that pyspark and a Java
    runtime are there (without starting Spark)."""
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise EngineError(
            f"spill_threshold must be a number of rows (0 or more), got {threshold!r}")
    try:
        import_pyspark()
        import pyarrow  # noqa: F401  (rows travel as Arrow tables)
        _require_java()
    except (SparkUnavailableError, ImportError):
        raise SpillError(
            f"spilling traces to Spark (spill_threshold) needs PySpark, pyarrow and a "
            f"Java 17+ runtime: install them with {INSTALL_HINT}") from None
    return threshold


def spill_traces(nodes, threshold: int, session=None, cache: SpillCache | None = None) -> int:
    """Make every trace among ``nodes`` that only joins read a
    :class:`SpillingTrace` with ``threshold``; returns how many. ``session``:
    the SparkSession (default: :func:`get_session`'s, made when a trace first
    spills); ``cache``: the :class:`~engine.spark.spill_cache.SpillCache` they
    share (default: a new one of the default budget). Traces aggregates read
    (whole groups per changed key) stay in memory."""
    cache = SpillCache() if cache is None else cache
    readers: dict[int, list] = {}
    for node in nodes:
        for read in node.reads:
            readers.setdefault(id(read), []).append(node)
    count = 0
    for node in nodes:
        users = readers.get(id(node))
        if (not isinstance(node, TraceNode) or not users
                or not all(isinstance(user, JoinNode) for user in users)):
            continue
        if not isinstance(node.trace, SpillingTrace):
            node.trace = SpillingTrace.from_trace(node.trace, threshold, session, node.label,
                                                  cache)
        for user in users:
            user.spilled = True
        count += 1
    return count


class SpillingTrace(Trace):
    """A trace whose entries beyond ``threshold`` rows live in Spark (module
    docstring). Behaves as a :class:`Trace` for every reader; joins also call
    :meth:`spilled_matches`.

    The in-memory part counts the rows appended since it last spilled (an
    upper bound of its entries); a child-scope trace spills as soon as an
    iteration's append passes the threshold, a root-scope trace (appended when
    the epoch commits) at its next lookup. Below the threshold nothing touches
    Spark:

    >>> t = SpillingTrace(nested=True, index=("cols", (0,)), threshold=10)
    >>> t.append_rows({(1, "a"): 1}, iteration=2); t.commit()
    >>> list(t.entries()), t.part is None
    ([((1,), (1, 'a'), (0, 2), 1)], True)
    """

    __slots__ = ("cache", "label", "part", "session", "threshold", "unspilled")

    def __init__(self, nested: bool = False, index=None, threshold: int = 0,
                 session=None, label: str = "", cache: SpillCache | None = None):
        super().__init__(nested=nested, index=index)
        self.threshold = threshold
        self.unspilled = 0
        self.part: SparkPart | None = None
        self.session = session
        self.label = label
        self.cache = SpillCache() if cache is None else cache

    @classmethod
    def from_trace(cls, trace: Trace, threshold: int, session=None,
                   label: str = "", cache: SpillCache | None = None) -> SpillingTrace:
        """A spilling trace holding ``trace``'s entries."""
        new = cls(trace.nested, trace.index, threshold, session, label, cache)
        new.adopt(trace)
        new.unspilled = sum(1 for _ in new.entries())
        return new

    # -- writing --------------------------------------------------------------

    def append(self, batch, iteration: int = 0, epoch: int | None = None) -> None:
        super().append(batch, iteration, epoch)
        self.unspilled += sum(len(values) for values in batch.values())
        if self.nested:
            self.spill_if_large()

    def append_rows(self, batch, iteration: int = 0) -> None:
        super().append_rows(batch, iteration)
        self.unspilled += len(batch)
        if self.nested:
            self.spill_if_large()

    def commit(self) -> None:
        super().commit()
        if self.part is not None:
            self.part.committed()

    def rollback(self) -> None:
        """Forget the current epoch: the base class drops its own, Spark the
        rows with ``epoch == self.epoch``."""
        super().rollback()
        if self.part is not None:
            self.part.rollback(self.epoch)
        self.unspilled = sum(1 for _ in self.past_cursor().entries())

    def spill_if_large(self) -> None:
        """Move the in-memory entries to Spark when they pass the threshold;
        compact the Spark part when its tail holds too many rows to wait for
        the next lookup (which compacts a tail that merely outnumbers the body)."""
        if self.unspilled > self.threshold:
            self.spill()
        if self.part is not None and self.part.pressing:
            self.part.compact(self.epoch)

    def spill(self) -> None:
        """Move every in-memory entry (not the root's staged batch of the
        current epoch) to Spark, with its time."""
        nested = self.nested
        entries = [(key, value, time[0], time[1] if nested else 0, weight)
                   for cursor in (self.past_cursor(), self.epoch_cursor())
                   for key, value, time, weight in cursor.entries()]
        if entries:
            if self.part is None:
                self.part = SparkPart(self.session or get_session(), self.index,
                                      self.nested, self.threshold, self.label, self.cache)
            self.part.append(entries, self.epoch)
        self.drop_entries()
        self.unspilled = 0

    # -- reading --------------------------------------------------------------

    def prefetch(self, keys) -> None:
        """``keys`` will be read by :meth:`spilled_matches` soon: those not
        cached go into the next request to Spark, which a join sends once for
        all the keys of all its spilled sides. Spills first when due."""
        self.spill_if_large()
        if self.part is not None and keys:
            self.part.announce(keys, self.epoch)

    def spilled_matches(self, keys) -> Trace | None:
        """The Spark part's entries under ``keys``, as a trace in memory at this
        trace's epoch (``None`` when there are none): from the cache, from the
        answer to the request of a :meth:`prefetch`, or else from a request
        of their own. Spills and compacts first when due, so a join calling
        this *before* it reads the in-memory part sees every entry exactly
        once."""
        self.spill_if_large()
        if self.part is None or not keys:
            return None
        return self.part.lookup(keys, self.epoch)

    def _spilled_entries(self) -> list:
        if self.part is None:
            return []
        last = self.epoch - 1
        return [(key, value, (last, iteration) if self.nested else (last,), w)
                if epoch < self.epoch else
                (key, value, (epoch, iteration) if self.nested else (epoch,), w)
                for key, value, epoch, iteration, w in self.part.entries()]

    def entries(self):
        """``(key, value, time, weight)`` of both parts, summed per time, in
        order of key, value, time (past epochs reported as ``epoch - 1``)."""
        totals: dict = {}
        for key, value, time, weight in list(super().entries()) + self._spilled_entries():
            at = (key, value, time)
            totals[at] = totals.get(at, 0) + weight
        return iter(sorted((k, v, t, w) for (k, v, t), w in totals.items() if w))

    def collection(self, key) -> dict:
        matches = self.spilled_matches([key])   # first: it may spill the memory part
        out = super().collection(key)
        for value, weight in (matches.collection(key) if matches else {}).items():
            total = out.get(value, 0) + weight
            if total:
                out[value] = total
            else:
                out.pop(value, None)
        return out

    def size(self) -> int:
        return sum(1 for _ in self.entries())


def _translated(method):
    """``method`` with Spark's own exceptions (a failed job, a lost session)
    turned into a :class:`SpillError` naming the trace; the step that called
    it then fails cleanly and rolls back."""

    def call(self, *args):
        try:
            return method(self, *args)
        except EngineError:
            raise
        except Exception as error:  # Py4J / PySpark errors: one line is enough
            text = (str(error).strip() or type(error).__name__).splitlines()[0]
            raise SpillError(f"trace `{self.label}`: Spark failed: {text}") from error

    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


class SparkPart:
    """The spilled entries of one trace (module docstring): a **body**, the
    compacted past in Spark, partitioned by key and checkpointed; and a
    **tail**, the entries spilled since the last compaction, kept as Arrow
    tables and seen by Spark as one local relation. Lookups read both in one
    Spark query, sent with the other lookups announced to ``cache`` (a
    :class:`~engine.spark.spill_cache.SpillCache`), whose groups it keeps
    exact; compaction moves the tail into the body."""

    def __init__(self, session, index, nested: bool, threshold: int, label: str = "",
                 cache: SpillCache | None = None):
        # Arrow tables become DataFrames through Arrow only with this set (else
        # row by row through Python: 15x slower for the tail here).
        session.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
        self.session = session
        self.index = index
        self.nested = nested
        self.threshold = threshold
        self.label = label
        self.body = None                   # DataFrame of past epochs, or None
        self.body_rows = 0                 # its rows (an upper bound)
        self.body_epoch = None             # the epoch whose rows it holds, if any
        self.tail: list = []               # Arrow tables spilled since the compaction
        self.tail_rows = 0
        self._tail_frame = None            # the tail as one DataFrame (made on use)
        self.columns: list | None = None   # Arrow types: values, then keys
        self.arity = 0
        self.key_is_tuple = True
        self.due = False       # the tail outnumbers the body: compact before a lookup
        self.pressing = False  # the tail is too large to wait for a lookup
        self.cache = SpillCache() if cache is None else cache
        self.uid = id(self)    # this part's name in the cache

    # -- layout -------------------------------------------------------------

    def _layout(self, key, value) -> None:
        import pyarrow as pa

        self.arity = len(value)
        self.key_is_tuple = type(key) is tuple
        types = [_arrow_type(pa, x, self.label) for x in value]
        if self.index[0] != "cols":
            types += [_arrow_type(pa, x, self.label)
                      for x in (key if self.key_is_tuple else (key,))]
        self.columns = types

    @property
    def key_names(self) -> list[str]:
        """The DataFrame columns holding the key (in the key's order)."""
        kind, spec = self.index
        if kind == "cols":
            return [f"v{c}" for c in spec]
        return [f"k{j}" for j in range(len(self.columns) - self.arity)]

    def _names(self) -> list[str]:
        return ([f"v{c}" for c in range(self.arity)]
                + [f"k{j}" for j in range(len(self.columns) - self.arity)])

    def _key_of(self, value, stored):
        if self.index[0] == "cols":
            return tuple(value[c] for c in self.index[1])
        return tuple(stored) if self.key_is_tuple else stored[0]

    def frame(self):
        """Every spilled entry as one DataFrame (body and tail)."""
        if self.tail and self._tail_frame is None:
            import pyarrow as pa

            self._tail_frame = self.session.createDataFrame(
                pa.concat_tables(self.tail).combine_chunks())
        parts = [f for f in (self.body, self._tail_frame if self.tail else None)
                 if f is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])

    # -- writing ------------------------------------------------------------

    def append(self, entries: list, epoch: int) -> None:
        """Add ``(key, value, epoch, iteration, weight)`` entries to the tail
        (and to the cached groups of their keys); ``epoch``: the current one."""
        import pyarrow as pa

        if self.columns is None:
            self._layout(entries[0][0], entries[0][1])
        names, arrays = self._names(), []
        values = [entry[1] for entry in entries]
        stored = list(zip(*values)) if self.arity else []
        if self.index[0] != "cols":
            keys = [entry[0] if self.key_is_tuple else (entry[0],) for entry in entries]
            stored += list(zip(*keys)) if keys[0] else []
        for column, data in enumerate(stored):
            arrays.append(_arrow_array(pa, data, self.columns[column], names[column],
                                       self.label))
        for name, position in ((EPOCH, 2), (ITERATION, 3), (WEIGHT, 4)):
            names.append(name)
            arrays.append(pa.array([entry[position] for entry in entries], pa.int64()))
        self.tail.append(pa.Table.from_arrays(arrays, names=names))
        self.tail_rows += len(entries)
        self._tail_frame = None
        self.cache.add(self.uid, entries, epoch)
        self._check_due()

    def committed(self) -> None:
        """An epoch committed: its rows are past now."""
        self.body_epoch = None
        self.cache.committed(self.uid)
        self._check_due()

    def _check_due(self) -> None:
        """Compaction is due when the tail outnumbers the body (doubling, so
        the cost per row stays constant), or ``TAIL_CAP`` rows; it waits for
        the next lookup that goes to Spark (warm lookups are served by the
        cache) unless the tail passes ``TAIL_CAP`` rows (and the threshold)."""
        if self.tail_rows > max(self.threshold, min(self.body_rows, TAIL_CAP)):
            self.due = True
        if self.tail_rows > max(self.threshold, TAIL_CAP):
            self.pressing = True

    def rollback(self, epoch: int) -> None:
        """Drop the rows of the failed ``epoch``: from the tail (Arrow), and
        from the body if a compaction during the epoch moved some there."""
        import pyarrow.compute as pc

        kept = [t.filter(pc.less(t.column(EPOCH), epoch)) for t in self.tail]
        kept = [t for t in kept if t.num_rows]
        if sum(t.num_rows for t in kept) != self.tail_rows:
            self.tail, self.tail_rows = kept, sum(t.num_rows for t in kept)
            self._tail_frame = None
        if self.body_epoch == epoch:
            from pyspark.sql import functions as F

            self.body = self.body.filter(F.col(EPOCH) < epoch)
        self.body_epoch = None
        self.due = self.pressing = False
        self.cache.rolled_back(self.uid)
        self._check_due()

    @_translated
    def compact(self, epoch: int) -> None:
        """Move the tail into the body: the epochs before ``epoch`` merged into
        one (per key, value and iteration, weights summed, zeros dropped), the
        rows of ``epoch`` itself (a compaction during a long epoch, such as a
        bulk load) kept as they are; partitioned by key, the lineage cut."""
        from pyspark.sql import functions as F

        frame = self.frame()
        keys = self.key_names
        if keys:
            partitions = int(self.session.conf.get("spark.sql.shuffle.partitions"))
            frame = frame.repartition(partitions, *keys)   # the groupBy reuses it
        past = (frame.filter(F.col(EPOCH) < epoch).groupBy(*self._names(), ITERATION)
                .agg(F.sum(WEIGHT).alias(WEIGHT)).filter(F.col(WEIGHT) != 0)
                .withColumn(EPOCH, F.lit(epoch - 1).cast("long")))
        body = past.unionByName(frame.filter(F.col(EPOCH) >= epoch))
        body = body.localCheckpoint(eager=True)
        if any(_latest_epoch(t) >= epoch for t in self.tail):
            self.body_epoch = epoch
        self.body, self.body_rows = body, self.body_rows + self.tail_rows
        self.tail, self.tail_rows, self._tail_frame = [], 0, None
        self.due = self.pressing = False

    # -- reading ------------------------------------------------------------

    def announce(self, keys, epoch: int) -> None:
        """``keys`` will be looked up at ``epoch``: those not cached join the
        next request (:func:`send`)."""
        self.cache.announce(self.uid, self, epoch, keys)

    def lookup(self, keys, epoch: int) -> Trace | None:
        """The entries under ``keys``, as a trace in memory at ``epoch``
        (entries of ``epoch`` its current epoch, earlier ones its past), or
        ``None`` when there are none: each key's group from the cache or the
        last request's answer; the keys in neither go to Spark in one
        request (with every other lookup announced meanwhile)."""
        cache, uid = self.cache, self.uid
        found, missing = [], []
        answers = cache.answers.get(uid, {})
        for key in keys:
            group = cache.group(uid, key)
            if group is None:
                group = answers.get(key)
                if group is None:
                    missing.append(key)
                    continue
            found.append((key, group))
        if missing:
            cache.announce(uid, self, epoch, missing)
            send(cache)
            answers = cache.answers[uid]
            found += [(key, answers[key]) for key in missing]
        entries = [(key, value, at, iteration, weight)
                   for key, group in found
                   for (value, at, iteration), weight in group.items()]
        return (Trace.from_entries(self.nested, None, epoch, entries)
                if entries else None)

    @_translated
    def select(self, keys):
        """The DataFrame of the entries under ``keys`` (``None`` when none can
        match). A few keys become a filter on each key column (one Spark
        stage; rows of a multi-column key that only match column by column
        are dropped on arrival); many keys go as a broadcast table into a
        left-semi join."""
        import pyarrow as pa
        from pyspark.sql import functions as F

        frame = self.frame()
        if frame is None or self.columns is None:
            return None
        names = self.key_names
        if not names:
            return frame
        wanted = self._wanted(keys, names)
        if not wanted:
            return None
        columns = sorted(set(names))
        if len(wanted) <= IN_LIMIT:
            for name in columns:
                position = names.index(name)
                frame = frame.filter(F.col(name).isin(sorted({k[position] for k in wanted})))
            return frame
        types = dict(zip(self._names(), self.columns))
        table = pa.Table.from_arrays(
            [_arrow_array(pa, [k[names.index(n)] for k in wanted], types[n], n, self.label)
             for n in columns], names=columns)
        return frame.join(F.broadcast(self.session.createDataFrame(table)),
                          on=columns, how="left_semi")

    def _wanted(self, keys, names) -> set:
        """The keys as tuples (a column used twice by the key keeps the keys
        whose two positions agree)."""
        first: dict[str, int] = {}
        for position, name in enumerate(names):
            first.setdefault(name, position)
        repeated = [(p, first[n]) for p, n in enumerate(names) if first[n] != p]
        rows = {key if type(key) is tuple else (key,) for key in keys}
        if repeated:
            rows = {k for k in rows if all(k[p] == k[q] for p, q in repeated)}
        return rows

    def _rows(self, table):
        """``(key, value, epoch, iteration, weight)`` of an Arrow table."""
        data = [table.column(name).to_pylist() for name in self._names()]
        values = (list(zip(*data[:self.arity])) if self.arity
                  else [()] * table.num_rows)
        # Key columns, when the key is not a selection of value columns; a key of
        # no columns (an antijoin like `!v(_)`) is the empty tuple on every row.
        stored = (list(zip(*data[self.arity:])) if len(data) > self.arity
                  else [()] * table.num_rows)
        epochs, iterations, weights = (table.column(c).to_pylist()
                                       for c in (EPOCH, ITERATION, WEIGHT))
        key_of = self._key_of
        for n, value in enumerate(values):
            yield key_of(value, stored[n]), value, epochs[n], iterations[n], weights[n]

    def groups(self, table, keys, epoch: int) -> dict:
        """key -> group (``engine.spark.spill_cache``) of each of ``keys``,
        from the Arrow table of their rows (fetched at ``epoch``); rows under
        other keys (matched column by column only) are dropped."""
        groups: dict = {key: {} for key in keys}
        if table is None:
            return groups
        for key, value, at, iteration, weight in self._rows(table):
            group = groups.get(key)
            if group is None:
                continue
            slot = (value, at if at >= epoch else PAST, iteration)
            total = group.get(slot, 0) + weight
            if total:
                group[slot] = total
            else:
                del group[slot]
        return groups

    @_translated
    def entries(self) -> list:
        """Every row as ``(key, value, epoch, iteration, weight)`` (tests and
        inspection: it collects the whole trace)."""
        frame = self.frame()
        return [] if frame is None else list(self._rows(frame.toArrow()))


def send(cache: SpillCache) -> None:
    """Send every lookup announced to ``cache`` as one request to Spark: the
    selections of all the parts concerned (each compacted first if due) in
    one query (a union, each part's columns renamed apart, tagged with its
    place), collected in one ``toArrow``. The answers, a group per key, go
    to ``cache.answers`` and into the cache."""
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    announced = cache.take_announced()
    selections = []
    for part, epoch, keys in announced:
        if part.due:
            part.compact(epoch)
        selections.append(part.select(keys))
    frames = [(n, f) for n, f in enumerate(selections) if f is not None]
    tables: list = [None] * len(announced)
    if len(frames) == 1:
        n, frame = frames[0]
        tables[n] = _collect(announced[n][0], frame)
    elif frames:
        tagged = [frame.select(F.lit(n).alias("request"),
                               *(F.col(c).alias(f"r{n}_{c}") for c in frame.columns))
                  for n, frame in frames]
        union = tagged[0]
        for frame in tagged[1:]:
            union = union.unionByName(frame, allowMissingColumns=True)
        table = _collect(announced[frames[0][0]][0], union)
        for n, frame in frames:
            own = table.filter(pc.equal(table.column("request"), n))
            tables[n] = own.select([f"r{n}_{c}" for c in frame.columns]).rename_columns(
                frame.columns)
    if frames:
        cache.requests += 1
    cache.answers = {}
    for (part, epoch, keys), table in zip(announced, tables):
        groups = part.groups(table, keys, epoch)
        cache.answers[part.uid] = groups
        for key, group in groups.items():
            cache.store(part.uid, key, group)


def _collect(part: SparkPart, frame):
    """``frame.toArrow()``, Spark's errors named after ``part``'s trace."""

    @_translated
    def collect(self):
        return frame.toArrow()

    return collect(part)


def _latest_epoch(table) -> int:
    """The latest epoch among an Arrow table's entries (-1 when empty)."""
    import pyarrow.compute as pc

    latest = pc.max(table.column(EPOCH)).as_py()
    return -1 if latest is None else latest


def _arrow_type(pa, sample, label: str):
    if type(sample) is int:
        return pa.int64()
    if type(sample) is float:
        return pa.float64()
    if type(sample) is str:
        return pa.string()
    raise SpillError(f"trace `{label}`: cannot spill a value of type "
                           f"{type(sample).__name__} ({sample!r}) to Spark")


def _arrow_array(pa, data, type_, name: str, label: str):
    try:
        return pa.array(data, type_)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as error:
        raise SpillError(
            f"trace `{label}`: column {name} holds values Spark cannot store as "
            f"{type_}: {str(error).splitlines()[0]}") from None
