"""A large epoch's weights per row in a table: Distinct Trace's ``w3`` by address.

Distinct Trace on packed rows (:func:`engine.operators.columns.distinct_step`)
needs, for each row of a batch at ``(e, i)``, ``w3``: the row's weight at the
earlier iterations of epoch ``e``, the sums of its entries in the epoch's runs.
Found by search, that is a ``searchsorted`` of the batch in each run of the
epoch, and a merge of the batch's run into them to keep the runs few: on the
closure of the 1,000-node random graph, 660,000 rows in 23 iterations, those
searches and merges were ~80% of the Distinct's time.

When the rows' columns span a small box (the closure's pairs of 1,000 nodes:
a million cells), :class:`DenseSums` keeps the epoch's weight of every cell in
an array indexed by the row's position in the box (row-major, so in the
packed rows' order), read and written by a gather and a scatter. The batches'
runs are then appended to the epoch's spine without merging, and merged once,
when the table is dropped (:func:`merge_epoch`: the commit, a small batch taken
row by row, a row outside the box that cannot grow it): ``k`` sorted runs
become one by one stable sort of their keys (a merge of sorted stretches).

The table is made for a batch of :data:`~engine.colbatch.DENSE_ROWS` rows or
more when the box holds at most :data:`~engine.colbatch.DENSE_CELLS` cells per
row of the epoch (its runs' entries and the batch) and
:data:`~engine.colbatch.DENSE_MAX` in all; it holds ``int32`` while the
absolute weights added so far could not overflow it, then ``int64``.

A long thin loop (a chain's closure: ~1,000 iterations of a few hundred rows,
where searching and merging the epoch's runs was a third of the Distinct's
time) gets one too, for a batch of any size, from iteration
:data:`~engine.colbatch.TABLE_FROM` on, when the box holds at most
:data:`~engine.colbatch.TABLE_SPARSITY` cells per entry of the whole state
(past, epoch, batch): an update's epoch is small beside its box, and its rows
due come from the past, whose box the table then takes in at once. A row
outside the box grows it by half its width on that side (:func:`widen`: a
chain's rows drift), from the old table's box, which holds every row of the
epoch already; a refused table is asked for again at twice the entries.
Small batches taken row by row (:mod:`engine.operators.packedsmall`) read
and add to the table too (:meth:`DenseSums.cell`; their overlay's run
appended unmerged), under :data:`~engine.colbatch.TABLE_SMALL_ROWS` rows
while there is one or a step from then on would make one (:func:`table_due`).
The table is freed before the epoch's runs merge at commit
(:meth:`~engine.operators.columns.PackedTrace.close_epoch`).

The same cells index a large run of the past (:class:`BoxDirectory`): the
position of each cell's first entry, so that the past's entries of a batch's
rows are found by two gathers instead of a binary search of the run (a
single-fact update of that closure probes its 1.1 million entries ~12 times).
When every row of the past's large runs is at one iteration (a chain's
closure: each path found once), they are summed by cell instead
(:class:`PastCells`: each cell's weight and iteration, 3 bytes a cell while
they fit): a batch's past entries are then three gathers whatever the number
of runs, and the epoch's runs are added to the cells at commit rather than
the directories made again (``profile_engine tc-chain-1000 --cpu --updates
4``, CPU a step, alternated with the base: 82-84 -> 67-68 ms; tc-chain-2000
220-240 -> 179-186 ms).

>>> from engine.operators.columns import Packing, PackedTrace
>>> packing = Packing(2)
>>> trace = PackedTrace()
>>> keys = packing.pack([np.array([0, 0, 3]), np.array([1, 2, 1])])
>>> trace.append(keys, 0, np.array([1, 1, 2]))
>>> sums = DenseSums.make(packing, trace.cur, [(0, 3), (1, 2)], 4)
>>> sums.cells, sums.take_add(keys[1:], np.array([5, -2])).tolist()
(8, [1, 2])
>>> sums.take_add(keys, np.array([0, 0, 0])).tolist()
[1, 6, 0]
>>> sums.covers([(0, 3), (0, 2)]), sums.covers([(0, 3), (1, 2)])
(False, True)
"""

from __future__ import annotations

from engine import colbatch, lazy
from engine.colbatch import INT64
from engine.columnar import (
    PAST_LARGE,
    Run,
    filled,
    key_starts,
    merge_runs,
    narrow,
    narrow_kind,
    unpack_in_place,
)

np = lazy.module("numpy", globals())
colbatch.COUNTS.setdefault("shared_cells", 0)  # past probes through the table's cells
colbatch.COUNTS.setdefault("past_cells", 0)  # past probes through PastCells
colbatch.COUNTS.setdefault("past_cells_dense", 0)  # ... read densely (PastCells.at_cells)
INT32_MAX = (1 << 31) - 1


class DenseSums:
    """The epoch's weight of each row of a box of columns ``lows`` to
    ``highs`` (module docstring); ``total``: the absolute weights added, a
    bound on every cell (``int32`` while it fits)."""

    __slots__ = ("cells", "highs", "lows", "packing", "shifts", "sizes", "strides", "table",
                 "total")

    def __init__(self, packing, bounds: list):
        self.packing = packing
        self.lows = [low for low, _ in bounds]
        self.highs = [high for _, high in bounds]
        self.sizes = [high - low + 1 for low, high in bounds]
        self.cells = 1
        for size in self.sizes:
            self.cells *= size
        self.table = np.zeros(self.cells, dtype=np.int32)
        self.total = 0
        strides, stride = [], 1
        for size in reversed(self.sizes):
            strides.append(stride)
            stride *= size
        self.strides = strides[::-1]
        self.shifts = [packing.bits * (packing.arity - 1 - c) for c in range(packing.arity)]

    @staticmethod
    def box_cells(bounds: list) -> int:
        cells = 1
        for low, high in bounds:
            cells *= high - low + 1
        return cells

    @classmethod
    def make(cls, packing, spine: list, bounds: list, rows: int,
             state: int = 0) -> DenseSums | None:
        """A table of the box ``bounds`` (each column's ``(low, high)``) holding
        the weights of the runs of ``spine``, which must lie in it; ``None``
        when the box is too large for ``rows`` (the epoch's entries and the
        batch's: :data:`~engine.colbatch.DENSE_CELLS`,
        :data:`~engine.colbatch.DENSE_MAX`; ``state``: the entries of the
        whole state, in a long loop, :data:`~engine.colbatch.TABLE_SPARSITY`)."""
        if not allowed(bounds, rows, state):
            return None
        sums = cls(packing, bounds)
        colbatch.COUNTS["dense_tables"] += 1
        for run in spine:
            keys, weights = run.keys, run.weights.astype(INT64, copy=False)
            if not run.is_unique():  # a row at several iterations: one sum each
                new = np.empty(len(keys), dtype=bool)
                new[0] = True
                np.not_equal(keys[1:], keys[:-1], out=new[1:])
                starts = new.nonzero()[0]
                keys, weights = keys[starts], np.add.reduceat(weights, starts)
            sums.take_add(keys, weights)
        return sums

    def covers(self, bounds: list) -> bool:
        """Whether every column's ``(low, high)`` lies in the box."""
        for (low, high), lo, hi in zip(bounds, self.lows, self.highs):  # (a loop, not all()
            if low < lo or high > hi:  # of a generator: asked at each step of a long loop)
                return False
        return True

    def index(self, keys: np.ndarray, columns: list | None = None) -> np.ndarray:
        """The cells of packed rows (which lie in the box); ``columns``: the
        rows' columns, when at hand (the keys are not unpacked then: a long
        loop's step saves three numpy calls a column).

        >>> from engine.operators.columns import Packing
        >>> sums = DenseSums(Packing(2), [(3, 5), (0, 9)])
        >>> columns = [np.array([3, 5]), np.array([0, 9])]
        >>> sums.index(None, columns).tolist(), columns[0].tolist()
        ([0, 29], [3, 5])
        """
        fresh = columns is None  # (unpacked: ours to change in place)
        if fresh:
            columns = self.packing.unpack(keys)
        index = None
        for column, low, size in zip(columns, self.lows, self.sizes):
            if index is None:
                index = column - low if low or not fresh else column
            else:
                index *= size
                index += column
                if low:
                    index -= low
        return index

    def bounds(self) -> list:
        """The box: each column's ``(low, high)``."""
        return list(zip(self.lows, self.highs))

    def cell(self, key: int) -> int | None:
        """The cell of one packed row (a Python int: a small batch's);
        ``None`` outside the box.

        >>> from engine.operators.columns import Packing
        >>> packing = Packing(2)
        >>> sums = DenseSums(packing, [(3, 5), (7, 9)])
        >>> keys = packing.pack([np.array([5, 6, 3]), np.array([8, 8, 7])]).tolist()
        >>> [sums.cell(k) for k in keys], sums.index(np.array(keys[::2])).tolist()
        ([7, None, 0], [7, 0])
        >>> DenseSums(Packing(1), [(-2, 2)]).cell(1)
        3
        """
        packing = self.packing
        if packing.arity == 1:
            part = key - self.lows[0]
            return part if 0 <= part < self.sizes[0] else None
        mask, bias = (1 << packing.bits) - 1, packing.bias
        at = 0
        for shift, low, size, stride in zip(self.shifts, self.lows, self.sizes, self.strides):
            part = ((key >> shift) & mask) - bias - low
            if not 0 <= part < size:
                return None
            at += part * stride
        return at

    def add_total(self, total: int) -> None:
        """Count ``total`` more absolute weight (the table widened to
        ``int64`` before it could overflow)."""
        self.total += total
        if self.total > INT32_MAX and self.table.dtype != INT64:
            self.table = self.table.astype(INT64)

    def take_add(self, keys: np.ndarray, weights: np.ndarray,
                 columns: list | None = None, index: np.ndarray | None = None,
                 both: bool = False):
        """The weights of the packed rows ``keys`` (distinct; ``columns``:
        their columns, if at hand; ``index``: their cells, if found already)
        before, in the table's type (``int32`` while the weights could not
        overflow it: added to ``int64`` weights they give ``int64``);
        ``weights`` added to them. ``both``: ``(before, after)``, the sums
        with ``weights`` added too (in the table's type: Distinct Trace's
        ``w3 + w`` without another addition)."""
        if index is None:
            index = self.index(keys, columns)
        if len(weights):
            self.add_total(int(np.abs(weights).sum()))
        table = self.table
        before = table[index]
        # added in the table's type (add_total keeps every sum within it): an
        # int64 sum scattered into int32 cells is cast on the way, slower (500
        # rows of a million cells: 2.5 vs 1.6 µs the gather, sum and scatter)
        after = before + weights.astype(table.dtype, copy=False)
        table[index] = after
        return (before, after) if both else before


def bounds_of_packed(packing, keys: np.ndarray) -> list:
    """Each column's ``(low, high)`` over packed rows (not empty)."""
    return [(int(c.min()), int(c.max())) for c in packing.unpack(keys)]


def union(first: list, second: list) -> list:
    return [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(first, second)]


def prepared(sums: DenseSums | None, trace, packing, batch_bounds: list | None,
             keys: np.ndarray, due: np.ndarray | None, i: int = 0) -> DenseSums | None:
    """The table to take this step's (at iteration ``i``) ``w3`` from:
    ``sums`` when it covers the batch's rows (``keys``; their columns'
    ``batch_bounds``, if known) and the rows ``due``; else one made (again)
    over a box holding them and the epoch's runs, if one is allowed; else
    ``None`` (the epoch's runs merged, :func:`merge_epoch`, if a table was in
    use). A batch under :data:`~engine.colbatch.DENSE_ROWS` rows makes no new
    table before iteration :data:`~engine.colbatch.TABLE_FROM` (then one at
    most :data:`~engine.colbatch.TABLE_SPARSITY` cells an entry of the state,
    asked again at twice the entries of a refusal: ``trace.sums_at``)."""
    long = i >= colbatch.TABLE_FROM
    if sums is None:
        if len(keys) < colbatch.DENSE_ROWS and not long:
            return None
        rows = sum(map(len, trace.cur)) + len(keys)  # (a few runs: merged as they come)
        state = rows + sum(map(len, trace.past)) if long else 0
        if len(keys) < colbatch.DENSE_ROWS and state < 2 * trace.sums_at:
            return None
    bounds = batch_bounds
    if bounds is None and len(keys):
        bounds = bounds_of_packed(packing, keys)
    if due is not None and len(due):
        found = bounds_of_packed(packing, due)
        bounds = found if bounds is None else union(bounds, found)
    if bounds is None or (sums is not None and sums.covers(bounds)):
        return sums
    if sums is not None:  # (the runs unmerged: counted only now)
        rows = sum(map(len, trace.cur)) + len(keys)
        state = rows + sum(map(len, trace.past)) if long else 0
    if long and trace.past:  # (the rows due come from the past)
        if trace.past_box is None:
            trace.past_box = past_bounds(trace, packing)
        bounds = union(bounds, trace.past_box)
    if sums is not None:  # (its box holds every row of the epoch)
        grown = widen(sums.bounds(), bounds)
        if allowed(grown, rows, state):
            return DenseSums.make(packing, trace.cur, grown, rows, state)
        bounds = union(bounds, sums.bounds())
        if allowed(bounds, rows, state):
            return DenseSums.make(packing, trace.cur, bounds, rows, state)
    elif allowed(bounds, rows, state) and allowed(sampled(bounds, trace.cur, packing), rows,
                                                  state):
        # (the box only grows with the epoch's rows: each check reads more of them)
        for run in trace.cur:
            bounds = union(bounds, bounds_of_packed(packing, run.keys))
        if allowed(bounds, rows, state):
            return DenseSums.make(packing, trace.cur, bounds, rows, state)
    if sums is not None:
        merge_epoch(trace)
    if long:
        trace.sums_at = state
    return None


def table_due(trace, i: int) -> bool:
    """Whether a long loop's step at iteration ``i`` of ``trace`` (a
    :class:`~engine.operators.packedsmall.OverlaidTrace` without a table)
    would ask :func:`prepared` for one: from iteration
    :data:`~engine.colbatch.TABLE_FROM` on, unless one was refused at more
    than half the state's entries (runs and overlays) now."""
    if i < colbatch.TABLE_FROM:
        return False
    if not trace.sums_at:
        return True
    state = (sum(map(len, trace.cur)) + sum(map(len, trace.past))
             + len(trace.recent) + len(trace.older))
    return state >= 2 * trace.sums_at


def bounds_of_spine(packing, spine: list) -> list | None:
    """Each column's ``(low, high)`` over the rows of ``spine``'s runs."""
    bounds = None
    for run in spine:
        if len(run):
            found = bounds_of_packed(packing, run.keys)
            bounds = found if bounds is None else union(bounds, found)
    return bounds


def past_bounds(trace, packing) -> list | None:
    """A box holding the rows of ``trace``'s past: its cells' box
    (:class:`PastCells`) and the rest's runs' rows, when the cells describe
    it (the large runs not read again: ~7 ms an update of tc-chain-2000,
    whose overlay flushed into the past each update forgets the box)."""
    cells = trace.past_cells
    rest = None if cells is None else cells.rest(trace.past)
    if rest is None:
        return bounds_of_spine(packing, trace.past)
    found = bounds_of_spine(packing, rest)
    return cells.bounds() if found is None else union(cells.bounds(), found)


def widen(box: list, rows: list) -> list:
    """``box`` grown to hold ``rows``' box, each side that grew by half the
    box's width more (a row past the edge is seldom the last).

    >>> widen([(0, 9), (0, 9)], [(5, 12), (3, 4)])
    [(0, 17), (0, 9)]
    """
    out = []
    for (low, high), (rlow, rhigh) in zip(box, rows):
        room = (high - low + 1) // 2
        out.append((min(low, rlow - room) if rlow < low else low,
                    max(high, rhigh + room) if rhigh > high else high))
    return out


def sampled(bounds: list, spine: list, packing) -> list:
    """``bounds`` grown by every :data:`SAMPLE` th row of the runs (and the
    last): a box the epoch's rows hold at least, read cheaply (same
    generation's levels each span a small box, the epoch's rows all of
    them: a full read of its 870,000 rows to refuse a table cost more than
    the step saved)."""
    for run in spine:
        bounds = union(bounds, bounds_of_packed(
            packing, np.concatenate((run.keys[::SAMPLE], run.keys[-1:]))))
    return bounds


#: :func:`sampled` reads one row in this many.
SAMPLE = 64


def allowed(bounds: list, rows: int, state: int = 0) -> bool:
    """Whether a table of the box ``bounds`` may be made for ``rows`` rows of
    the epoch (or, in a long loop, ``state`` entries in all)."""
    cells = DenseSums.box_cells(bounds)
    return cells <= colbatch.DENSE_MAX and (cells <= colbatch.DENSE_CELLS * rows
                                            or cells <= colbatch.TABLE_SPARSITY * state)


def append_run(trace, keys: np.ndarray, iteration: int, weights: np.ndarray,
               after=None) -> None:
    """Distinct ``keys`` in order and their nonzero weights at ``iteration``
    as a run at the end of the epoch's spine, not merged (the table gives
    ``w3``; :func:`merge_epoch` merges the spine once); ``after`` (the
    signature of :meth:`~engine.operators.columns.PackedTrace.append_sorted`)
    is not used."""
    if len(keys):  # (narrow: the merge then gathers int8 arrays, not int64)
        if len(keys) >= colbatch.NARROW_ROWS:
            weights = narrow(weights)
        trace.cur.append(Run([keys], filled(len(keys), iteration,
                                            narrow_kind(iteration, iteration)),
                             weights, 0, [(int(keys[0]), int(keys[-1])), (iteration, iteration)],
                             unique=True))


def merge_epoch(trace) -> None:
    """The epoch's runs merged into one. Runs of one column, each at
    iterations after the one before's (as :func:`append_run` leaves them),
    hold no two equal entries, and sorted by key with those of one key in
    iteration order: from :data:`~engine.colbatch.VALUE_SORT_ROWS` entries,
    each entry's key, iteration and weight packed into one ``int64`` sorted
    by value (:func:`sorted_in_place`), else one stable sort of their keys
    concatenated (a merge of sorted stretches) and a gather of each array;
    others by :func:`~engine.columnar.merge_runs`."""
    spine = trace.cur
    if len(spine) < 2:
        return
    if not in_order(spine):
        merged = merge_runs(spine, 0)
        trace.cur = [] if merged is None else [merged]
        return
    keys = np.concatenate([run.keys for run in spine])  # (ours: packed and sorted in place)
    iterations = np.concatenate([run.iterations for run in spine])
    weights = np.concatenate([run.weights for run in spine])
    bounds = [(min(run.bounds[0][0] for run in spine), max(run.bounds[0][1] for run in spine)),
              (spine[0].bounds[-1][0], spine[-1].bounds[-1][1])]
    found = None
    if len(keys) >= colbatch.VALUE_SORT_ROWS and keys.dtype == INT64:
        found = sorted_in_place(keys, iterations, weights, bounds)
    if found is not None:
        keys, iterations, weights = found
    else:
        order = keys.argsort(kind="stable")
        keys, iterations, weights = keys[order], iterations[order], weights[order]
    if len(keys) < colbatch.NARROW_ROWS:  # (a short run's in int64, as make_run's)
        iterations, weights = iterations.astype(INT64), weights.astype(INT64)
    else:  # (a short run merged in was int64)
        iterations = narrow(iterations) if iterations.dtype == INT64 else iterations
        weights = narrow(weights) if weights.dtype == INT64 else weights
    trace.cur = [Run([keys], iterations, weights, 0, bounds)]


def sorted_in_place(keys: np.ndarray, iterations: np.ndarray, weights: np.ndarray,
                    bounds: list):
    """``(keys, iterations, weights)`` of entries with no two of equal key
    and iteration, sorted by key, then iteration, in the narrowest types
    that hold them; ``bounds``: the keys' and the iterations' ``(low,
    high)``, iterations not negative. Key, iteration and weight are packed
    into ``keys`` (``int64``, which is overwritten: the keys returned are
    the same array), sorted by value and read back, in place: no
    ``int64`` array of all the entries is made besides ``keys`` (the
    2,000-node chain's batch merged 2 million entries through ~8 such
    arrays, then packed key and iteration sorted with the weights by
    :func:`~engine.colbatch.sorted_with`: ``profile_engine tc-chain-2000
    --cpu --updates 2`` with a timer around ``merge_epoch``, alternated with
    the earlier way, CPU 95, 104 -> 28, 26 ms in the batch, 14.1, 13.8 ->
    12.2, 12.2 ms an update; the batch 375, 376 -> 309, 307 ms). ``None``
    (nothing changed) when the three need more than 63 bits.

    >>> keys = np.array([7, 9, 3, 7]); sorted_in_place(keys, np.array([0, 0, 1, 1]),
    ...     np.array([1, -2, 1, 5]), [(3, 9), (0, 1)])[0] is keys
    True
    >>> [x.tolist() for x in sorted_in_place(np.array([7, 9, 3, 7]), np.array([0, 0, 1, 1]),
    ...     np.array([1, -2, 1, 5]), [(3, 9), (0, 1)])]
    [[3, 7, 7, 9], [1, 0, 1, 0], [1, 1, 5, -2]]
    """
    (key_low, key_high), (low, high) = bounds
    least, most = int(weights.min()), int(weights.max())
    key_width, width = (key_high - key_low).bit_length(), (high - low).bit_length()
    weight_width = (most - least).bit_length()
    if key_width + width + weight_width > 63:
        return None
    if key_low:  # (added back by unpack_in_place)
        keys -= key_low
    for values, start, end, bits in ((iterations, low, high, width),
                                     (weights, least, most, weight_width)):
        if bits:  # (below the key: the values' offsets from their least, never negative)
            keys <<= bits
            keys |= offsets(values, start, end)
    keys.sort()
    return unpack_in_place(keys, [(key_low, key_high), (low, high), (least, most)],
                           [key_width, width, weight_width], [INT64, None, None])


def offsets(values: np.ndarray, low: int, high: int) -> np.ndarray:
    """``values - low`` (``values`` lie within ``low`` to ``high``), in the
    values' own type when it holds ``high - low`` (a narrow temporary,
    not an ``int64`` one).

    >>> offsets(np.array([-100, 100], dtype=np.int8), -100, 100).tolist()
    [0, 200]
    """
    if values.dtype.kind == "i" and high - low <= np.iinfo(values.dtype).max:
        return values - values.dtype.type(low) if low else values
    return np.subtract(values, low, dtype=INT64)


def in_order(spine: list) -> bool:
    """Whether the runs are of one column, their bounds known, each at
    iterations after those of the one before."""
    return (all(len(run.columns) == 1 and run.bounds is not None for run in spine)
            and all(before.bounds[-1][1] < after.bounds[-1][0]
                    for before, after in zip(spine, spine[1:])))


class Box:
    """A box of columns (each column's ``lows`` and ``sizes``) whose ``cells``
    are numbered row-major, so in the packed rows' order: the cell
    arithmetic of :class:`BoxDirectory` and :class:`PastCells`."""

    __slots__ = ("cells", "lows", "packing", "sizes")

    def __init__(self, packing, bounds: list):
        self.packing = packing
        self.lows = [low for low, _ in bounds]
        self.sizes = [high - low + 1 for low, high in bounds]
        self.cells = DenseSums.box_cells(bounds)

    def cells_of(self, keys: np.ndarray, check: bool = False,
                 columns: list | None = None) -> np.ndarray:
        """:meth:`counted_cells`' cells alone."""
        return self.counted_cells(keys, check, columns)[0]

    def counted_cells(self, keys: np.ndarray, check: bool = False,
                      columns: list | None = None) -> tuple[np.ndarray, int]:
        """``(cells, rows outside the box)`` of packed rows (``columns``:
        their columns, when at hand: not unpacked then); ``check``: those
        outside the box at ``cells`` (an empty slot: no entry; counted only
        then). Without the columns, each
        column's offset in the box is read off the keys in place
        (:meth:`~engine.operators.columns.Packing.column`, ``low`` taken off
        with the bias): a chain's commit adds an update's rows to the
        past's cells (:meth:`PastCells.add`; a million keys of two columns,
        checked: 7.6 -> 3.4 ms)."""
        index = outside = None
        packing = self.packing
        for c, (low, size) in enumerate(zip(self.lows, self.sizes)):
            if columns is not None or packing.arity == 1:
                column = keys if columns is None else columns[c]
                part = column - low if low else column.copy()
            else:
                part = packing.column(keys, c, low)
            if check:  # (negative: a huge unsigned value)
                far = part.view(np.uint64) >= size
                if outside is None:
                    outside = far
                else:
                    outside |= far
            if index is None:
                index = part
            else:
                index *= size
                index += part
        far = 0 if outside is None else np.count_nonzero(outside)
        if far:
            index[outside] = self.cells
        return index, far

    def bounds(self) -> list:
        """The box: each column's ``(low, high)``."""
        return [(low, low + size - 1) for low, size in zip(self.lows, self.sizes)]

    def sought_cells(self, sought: np.ndarray, columns: list | None = None, cells=None):
        """The cells of the sought packed rows, those outside the box at
        ``cells`` (``columns``: their columns, if at hand). ``cells``:
        ``(table, index)``, the rows' cells in a :class:`DenseSums` table
        that holds them all; when its box is this one (a long loop's table
        takes in the past's box), they are the cells here too, read as they
        are (``COUNTS["shared_cells"]``)."""
        if cells is not None and cells[0].lows == self.lows and cells[0].sizes == self.sizes:
            colbatch.COUNTS["shared_cells"] += 1
            return cells[1]  # (all inside the box: no check)
        return self.cells_of(sought, check=True, columns=columns)


class BoxDirectory(Box):
    """A large run of packed rows (a Distinct's past) indexed by cell: the
    position of each cell's first entry (``starts``, ``int32``; the cells
    in the packed rows' order, so a cell's entries are contiguous), for a
    run whose rows' columns span at most :data:`~engine.colbatch.BOX_CELLS`
    cells an entry. A probe is two gathers instead of a binary search of
    the run (an update of the closure of the 1,000-node random graph probes
    its 1.1 million entries ~12 times with ~900 rows each).

    >>> from engine.operators.columns import Packing, key_run
    >>> packing = Packing(2)
    >>> keys = packing.pack([np.array([0, 0, 1, 1]), np.array([1, 1, 0, 1])])
    >>> run = key_run(keys, np.array([0, 2, 0, 0]), np.ones(4, dtype=np.int64))
    >>> box = BoxDirectory(packing, run, [(0, 1), (0, 1)])
    >>> sought = packing.pack([np.array([0, 1, 5, -3]), np.array([1, 1, 0, 1])])
    >>> [x.tolist() for x in box.spans(sought)]
    [[0, 3, 4, 4], [2, 1, 0, 0]]
    """

    __slots__ = ("starts",)

    def __init__(self, packing, run, bounds: list):
        super().__init__(packing, bounds)
        self.starts = key_starts(self.cells_of(run.keys), 0, self.cells)  # (row-major: sorted)

    def spans(self, sought: np.ndarray, columns: list | None = None, cells=None):
        """``(first entry, entries)`` of each sought packed row (``columns``:
        their columns, if at hand; ``cells``: :meth:`Box.sought_cells`')."""
        index = self.sought_cells(sought, columns, cells)
        lo = self.starts[index]
        return lo.astype(np.intp), (self.starts[index + 1] - lo).astype(np.intp)


def index_past(spine: list, packing) -> None:
    """A :class:`BoxDirectory` for each run of ``spine`` of
    :data:`~engine.colbatch.BOX_ROWS` entries or more not looked at yet,
    where its box is small enough (else it is marked as having none)."""
    for run in spine:
        if run.directory is not None or len(run) < colbatch.BOX_ROWS:
            continue
        if len(run) >= 1 << 31 or run.bounds is None or len(run.bounds) != 2:
            run.directory = False
            continue
        bounds = bounds_of_packed(packing, run.keys[[0, -1]])  # the first column's range
        if (bounds[0][1] - bounds[0][0] + 1) > colbatch.BOX_CELLS * len(run):
            run.directory = False
            continue
        bounds = bounds_of_packed(packing, run.keys)
        if DenseSums.box_cells(bounds) > colbatch.BOX_CELLS * len(run):
            run.directory = False
            continue
        run.directory = BoxDirectory(packing, run, bounds)


class PastCells(Box):
    """The past's large runs summed by cell: each row's weight over them and
    the iteration it is at (``weights``, ``iterations``: one slot a cell of
    the box, and one past it for rows outside), when every row is at one
    iteration in them (a chain's closure: each path found once). A batch's
    past entries are then three gathers of its cells (:meth:`gather`)
    however many large runs the past holds, not a probe of each and their
    matches concatenated; ``covered``: the runs summed, the past's others
    probed as they are. At commit the epoch's large runs are added to the
    cells (:meth:`add`) rather than the cells made again (a chain's update
    retracts or inserts up to a million of its entries).

    >>> from engine.operators.columns import Packing, key_run
    >>> packing = Packing(2)
    >>> keys = packing.pack([np.array([0, 0, 1]), np.array([0, 1, 1])])
    >>> run = key_run(keys, np.array([0, 2, 1]), np.ones(3, dtype=np.int64))
    >>> past = PastCells(packing, [(0, 1), (0, 1)], [run])
    >>> past.add(run), past.add(key_run(keys[1:], np.array([2, 1]), np.array([-1, 1])))
    (True, True)
    >>> sought = packing.pack([np.array([0, 1, 5]), np.array([1, 1, 0])])
    >>> [x.tolist() for x in past.gather(sought, None, None)]
    [[1], [1], [2]]
    >>> past.add(key_run(keys[:1], np.array([3]), np.array([1])))  # (0, 0) at 0 and 3
    False
    """

    __slots__ = ("boxes", "covered", "ids", "iterations", "weights")

    def __init__(self, packing, bounds: list, covered: list):
        super().__init__(packing, bounds)
        self.boxes: dict = {}  # (refused: sum_past) id -> (run, its box) of the runs seen
        self.cover(covered)
        self.iterations = np.zeros(self.cells + 1, dtype=np.int16)
        self.weights = np.zeros(self.cells + 1, dtype=np.int8)

    def cover(self, runs: list) -> None:
        """The runs summed are ``runs`` (held here: their ids stay theirs)."""
        self.covered = runs
        self.ids = frozenset(map(id, runs))

    def rest(self, past: list) -> list | None:
        """The runs of ``past`` not summed here; ``None`` when one that is
        left it (merged into another: the cells do not describe the past)."""
        if self.iterations is None:  # (refused: sum_past)
            return None
        ids = self.ids
        rest = [run for run in past if id(run) not in ids]
        return rest if len(past) - len(rest) == len(ids) else None

    def add(self, run) -> bool:
        """Add the entries of ``run``; ``False`` (the cells then unusable) when
        a row repeats in it, lies outside the box, or is at an iteration
        other than its cell's, which holds weight."""
        if not len(run):
            return True
        if not run.is_unique():
            return False
        index, outside = self.counted_cells(run.keys, check=True)
        if outside:
            return False
        held = self.weights[index]
        iterations = run.iterations
        if np.count_nonzero((held != 0) & (self.iterations[index] != iterations)):
            return False
        total = held.astype(INT64)
        total += run.weights
        self.weights = widened(self.weights, total)
        self.iterations = widened(self.iterations, iterations,
                                  None if run.bounds is None else run.bounds[-1])
        self.weights[index] = total
        self.iterations[index] = iterations  # (where the weight was 0, or the same)
        return True

    def at_cells(self, sums: DenseSums, index: np.ndarray, past: list):
        """``(weights, iterations)`` of the cells ``index`` of the table
        ``sums`` (a long loop's, whose box takes in the past's), one slot a
        sought row (a weight 0 where the past holds none: its iteration
        then means nothing), when the cells are the table's and hold every
        entry of ``past`` (no other run to probe); else ``None``. Gathered
        densely, a step reads them without finding the matches first (a
        chain's update: ~6 numpy calls fewer an iteration than
        :meth:`gather` and the scatter of its matches)."""
        if self.rest(past) != [] or sums.lows != self.lows or sums.sizes != self.sizes:
            return None
        colbatch.COUNTS["past_cells_dense"] += 1
        return self.weights[index], self.iterations[index]

    def gather(self, sought: np.ndarray, columns: list | None, cells):
        """``(sought index, iteration, weight)`` (``int64``) of the sought
        rows held in the cells, each at most once; ``None`` when none is
        (``columns``, ``cells``: :meth:`Box.sought_cells`')."""
        colbatch.COUNTS["past_cells"] += 1
        index = self.sought_cells(sought, columns, cells)
        weights = self.weights[index]
        mine = weights.nonzero()[0]
        if not len(mine):
            return None
        return (mine, self.iterations[index[mine]].astype(INT64),
                weights[mine].astype(INT64))


def widened(table: np.ndarray, values: np.ndarray, bounds: tuple | None = None) -> np.ndarray:
    """``table``, or a copy of it in a wider int type, so that it holds
    ``values`` (``bounds``: their ``(low, high)``, if known: not found
    again, two passes over an update's million entries fewer).

    >>> widened(np.zeros(2, dtype=np.int8), np.array([3]), (0, 300)).dtype
    dtype('int16')
    """
    if not len(values):
        return table
    low, high = (int(values.min()), int(values.max())) if bounds is None else bounds
    needed = np.dtype(narrow_kind(low, high))
    return table if needed.itemsize <= table.itemsize else table.astype(needed)


#: :func:`sum_past` sums the past's runs of this many entries or more (a run
#: of the past this large is pushed by itself, :data:`~engine.columnar.PAST_LARGE`):
#: the smaller ones (an overlay flushed, an update's epoch) merge with the
#: next small ones, each time a new set of runs to sum or refuse again (same
#: generation's updates, whose refusal read its runs of 5,000-20,000 entries
#: again at each vectorised step: 0.1 ms of its 3.6).
CELLS_FLOOR = PAST_LARGE


def sum_past(trace, packing) -> list | None:
    """The past's cells (:class:`PastCells`, ``trace.past_cells``) made over
    its runs of :data:`CELLS_FLOOR` entries or more when
    they hold :data:`~engine.colbatch.BOX_ROWS` entries in a box of at most
    :data:`~engine.colbatch.BOX_CELLS` cells an entry, unless the cells
    describe the past already or were refused for these runs; the past's
    runs they do not hold (:meth:`PastCells.rest`), ``None`` without cells."""
    found = trace.past_cells
    rest = None if found is None else found.rest(trace.past)
    if rest is None:
        make_cells(trace, packing)
        found = trace.past_cells
        rest = None if found is None else found.rest(trace.past)
    return rest


def make_cells(trace, packing) -> None:
    """:func:`sum_past`'s cells made, or refused (kept as such while the
    past's large runs are the same)."""
    found = trace.past_cells
    large = [run for run in trace.past if len(run) >= CELLS_FLOOR]
    if found is not None and len(found.covered) == len(large) and all(
            a is b for a, b in zip(found.covered, large)):
        return  # (refused for these runs: iterations None)
    trace.past_cells = None
    entries = sum(map(len, large))
    if not entries or entries < colbatch.BOX_ROWS:
        return
    refused = PastCells.__new__(PastCells)
    refused.cover(large)
    refused.iterations = None
    refused.boxes = {}
    if not all(run.is_unique() for run in large):  # (known once a run: before any
        trace.past_cells = refused  # unpacking, the closure of a random graph's rows
        return                      # at several iterations refused for ~nothing)
    # each run's box, kept while it is in the past (same generation's large
    # run was unpacked again at each refusal, its small companions merging)
    known = {} if found is None else found.boxes
    bounds = None
    for run in large:
        box = known.get(id(run))
        box = box[1] if box is not None and box[0] is run else bounds_of_packed(packing,
                                                                                 run.keys)
        refused.boxes[id(run)] = (run, box)
        bounds = box if bounds is None else union(bounds, box)
    cells = DenseSums.box_cells(bounds)
    if cells > colbatch.BOX_CELLS * entries or cells >= 1 << 31:
        trace.past_cells = refused
        return
    past = PastCells(packing, bounds, large)
    if not all(past.add(run) for run in large):
        trace.past_cells = refused
        return
    trace.past_cells = past
    for run in large:  # (read through the cells now: their directories' memory freed)
        run.directory = None
