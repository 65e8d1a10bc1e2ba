"""The root circuit's operators on columns: join (and semijoin), Distinct Incremental.

At the root every time is an epoch, and the large batches are those of the bulk
load (epoch 0) and of updates that change many rows. The nodes of
:mod:`engine.operators.join` and :mod:`engine.operators.distinct` hand such a
batch here (the same per-batch choice as in a child circuit: at least
:data:`engine.colbatch.THRESHOLD` rows for a join, :data:`~engine.colbatch.DISTINCT_ROWS`
for Distinct); a small one stays on their row loops.

**Join** (root; every pair lands at the current epoch)::

    out(e) = a ⋈ B_past + a ⋈ b + A_past ⋈ b

Each of the three parts picks its own way: ``a ⋈ b`` on columns (the smaller
delta sorted, the other probing it); ``a ⋈ B_past`` on columns when ``B``'s
trace is in runs (or holds :data:`~engine.colbatch.SMALL_STATE` rows or more,
and moves there: it would stay there at commit), by the row loop when it is a
small dict trace, and not at all when it is empty (the bulk load). The parts
add up to the same output as the row loops. A **semijoin** (the join of a
stream with the distinct keys of another, ``combine`` keeping the left row) is
the projection onto the left row's columns.

**Distinct Incremental** (root)::

    out(e) = [I(e) > 0] - [I(e-1) > 0]        for each row of the batch at e

with the rows packed into one ``int64`` each (:class:`~engine.operators.columns.Packing`)
and ``I(e-1)`` kept as a spine of runs of (packed row, weight): the old weights
of a batch come from one ``searchsorted`` per run. The state moves there with a
columnar batch of ``DISTINCT_ROWS`` rows (a batch of rows in a dict is no
cheaper to pack than to loop over, and its consumers want rows), stays while it
holds ``SMALL_STATE`` rows or more, and goes back to the dict trace at commit
below that (small updates are cheaper on dicts), when a batch does not pack,
and to be read.

:data:`engine.colbatch.COUNTS` counts ``root_join``, ``semijoin`` and
``root_distinct`` (the times each ran on columns).

>>> from engine import Circuit
>>> from engine.colbatch import columns_from
>>> c = Circuit(); a = c.source("a", arity=2); b = c.source("b", arity=2)
>>> c.output("ab", a.index_by((1,)).join(b.index_by((0,)), ((0, 0), (1, 1))))
>>> with columns_from(0): dict(c.step({"a": [(1, 2), (4, 2)], "b": [(2, 3)]})["ab"])
{(1, 3): 1, (4, 3): 1}
"""

from __future__ import annotations

from engine import colbatch, lazy
from engine.colbatch import COUNTS, INT64, ColBatch
from engine.columnar import ColumnarTrace, fits, push_run
from engine.operators import columns as col
from engine.trace import Trace
from engine.zset import add_into

np = lazy.module("numpy", globals())

for _name in ("root_join", "semijoin", "root_distinct"):
    COUNTS.setdefault(_name, 0)


def keep_left(key, left, right):
    """A semijoin's ``combine``: the left row (recognised by the columnar path)."""
    return left


# ---------------------------------------------------------------------------
# Join


def _columns(batch) -> ColBatch | None | bool:
    """``batch`` in columns of ints and symbols (interned ids); ``None`` when
    empty; ``False`` when it does not fit (floats, wide ints, mixed types)."""
    if not batch:
        return None
    found = ColBatch.from_rows(batch)
    if found is None or not all(kind in "is" for kind in found.kinds):
        return False
    return found


def _projection(node, a: ColBatch | None, left) -> tuple | None:
    """The join's output as ``((side, column), ...)``: its own projection, or
    for a semijoin every column of the left row (``None`` while no left row
    was seen: then ``A_past`` is empty and there is no pair)."""
    if not callable(node.combine):
        return node.combine
    if a is not None:
        node.left_arity = len(a.columns)
    arity = getattr(node, "left_arity", None)
    if arity is None and type(left.trace) is ColumnarTrace:
        arity = left.trace.arity
    return None if arity is None else tuple((0, c) for c in range(arity))


def _kinds(delta: ColBatch | None, trace) -> tuple | None:
    """The kinds of one side's rows: its delta's, else its trace's in runs
    (ints), else unknown (``None``: no pair has a row of that side)."""
    if delta is not None:
        return delta.kinds
    if type(trace) is ColumnarTrace and trace.arity is not None:
        return ("i",) * trace.arity
    return None


def root_join(node, a, b):
    """The root join of the deltas ``a``, ``b`` with the traces (module
    docstring) on columns; ``None`` when this time's work stays on the row
    loops (small deltas, keys of several columns, rows of floats or wide
    ints, a trace that may be spilled, a combine other than a projection or
    :func:`keep_left`). Rows with symbols join on columns against the other
    delta (ids of interned symbols are equal when the symbols are) and by
    the row loop against a trace (traces in runs hold ints only)."""
    semijoin = node.combine is keep_left
    if node.spilled or (callable(node.combine) and not semijoin):
        return None
    left, right = node.reads
    if not (fits(left.index) and fits(right.index)):
        return None
    size = max(len(a), len(b))
    if size < colbatch.THRESHOLD and (
            size < colbatch.JOIN_ON_RUNS or type(left.trace) is not ColumnarTrace
            or type(right.trace) is not ColumnarTrace):
        return None
    ca, cb = _columns(a), _columns(b)
    if ca is False or cb is False:
        return None
    for delta, own in ((ca, left), (cb, right)):
        if (delta is not None and not delta.int_only and type(own.trace) is ColumnarTrace
                and own.trace.past):
            return None  # a side's rows in symbols now, in ints in its runs
    for trace in (left, right):
        trace.wants_columns = True    # the deltas' appends go into runs too
    COUNTS["semijoin" if semijoin else "root_join"] += 1
    keys = (left.index[1][0], right.index[1][0])
    pieces: list = []
    rows_out: dict = {}
    projection = None
    for delta, rows, own, other, side, opposite in ((ca, a, 0, right, "left", cb),
                                                     (cb, b, 1, left, "right", ca)):
        if delta is None:
            continue
        trace = other.trace
        if type(trace) is Trace:
            past = trace.past_cursor()
            if not past:
                continue
            if (other.appended < colbatch.SMALL_STATE
                    or not (opposite is None or opposite.int_only)
                    or not other.columns_ready()):
                node.functions[f"{side}_plain"](rows_out, rows, past)  # a small dict trace
                continue
            trace = other.trace
        if not trace.past or delta.kinds[keys[own]] != "i":
            continue  # nothing there, or symbols sought among ints
        projection = projection or _projection(node, ca, left)
        if projection is not None:
            col.join_part(delta, keys[own], trace.past, projection, own == 0, pieces)
    if ca is not None and cb is not None and ca.kinds[keys[0]] == cb.kinds[keys[1]]:
        projection = projection or _projection(node, ca, left)  # a ⋈ b, the smaller side sorted
        if len(ca) >= len(cb):
            col.join_part(ca, keys[0], [col.DeltaRun(cb, keys[1])], projection, True, pieces)
        else:
            col.join_part(cb, keys[1], [col.DeltaRun(ca, keys[0])], projection, False, pieces)
    out = None
    if pieces:
        sides = (_kinds(ca, left.trace), _kinds(cb, right.trace))
        out = node.finish_columns(pieces, tuple(sides[s][c] for s, c in projection))
    rows_out = {r: w for r, w in rows_out.items() if w}
    if not out:
        return rows_out
    if not rows_out:
        return out
    found = col.plus([out, rows_out])
    return found if found is not None else add_into(dict(out.items()), rows_out)


# ---------------------------------------------------------------------------
# Distinct Incremental


class PackedRows:
    """A root Z-set trace in packed runs: ``past`` (``I(e-1)``, a spine of
    runs of packed rows, iteration 0) and ``staged`` (this epoch's batches,
    ``(packed rows, weights)``, folded in at commit); ``counted``: how many
    rows of ``past`` have positive weight, once a reader counted them
    (:class:`~engine.operators.packedsmall.PackedCollection`; cleared at
    commit)."""

    __slots__ = ("counted", "packing", "past", "staged")

    def __init__(self, packing: col.Packing):
        self.packing = packing
        self.past: list = []
        self.staged: list = []
        self.counted: int | None = None

    def __len__(self) -> int:
        return sum(len(run) for run in self.past)

    def old_weights(self, keys: np.ndarray) -> np.ndarray:
        """``I(e-1)`` of each of the (unique) packed rows ``keys``."""
        old = np.zeros(len(keys), dtype=INT64)
        found = col.gather(self.past, keys)
        if found is not None:
            np.add.at(old, found[0], found[2])
        return old

    def commit(self) -> None:
        self.counted = None
        for keys, weights in self.staged:
            push_run(self.past, col.key_run(keys, np.zeros(len(keys), dtype=INT64), weights), 0)
        self.staged = []

    def _rows(self, keys: np.ndarray, weights: np.ndarray) -> dict:
        """Packed rows and weights as row -> weight (summed, zeros dropped)."""
        out: dict = {}
        rows = zip(*(c.tolist() for c in self.packing.unpack(keys)))
        for row, w in zip(rows, weights.tolist()):
            total = out.get(row, 0) + w
            if total:
                out[row] = total
            else:
                del out[row]
        return out

    def to_trace(self, trace) -> None:
        """Put ``I(e-1)`` into the dict ZSetTrace ``trace`` (root scope). The
        staged batch is not copied: it is the node's input of this epoch, which
        the row path appends at the end of the epoch."""
        if self.past:
            trace.past = self._rows(np.concatenate([run.keys for run in self.past]),
                                    np.concatenate([run.weights for run in self.past]))
        else:
            trace.past = {}


def _pack(batch, packing: col.Packing | None):
    """``(packing, packed rows, weights)`` of a batch, or ``None``."""
    columns = ColBatch.from_rows(batch)
    if columns is None or not columns.columns or not columns.int_only:
        return None     # (nullary rows: nothing to pack, the rows are cheap)
    packing = packing or col.Packing(len(columns.columns))
    keys = packing.pack(columns.columns)
    return None if keys is None else (packing, keys, columns.weights)


def to_packed(node, batch) -> PackedRows | None:
    """The node's dict trace (``I(e-1)``) in packed runs, if it and ``batch`` pack."""
    found = _pack(batch, None)
    if found is None:
        return None
    packing = found[0]
    past = node.trace.past
    packed = PackedRows(packing)
    if past:
        table = np.array(list(past))
        if table.dtype != INT64 or table.shape[1:] != (packing.arity,):
            return None
        keys = packing.pack([np.ascontiguousarray(table[:, c]) for c in range(packing.arity)])
        if keys is None:
            return None
        weights = np.fromiter(past.values(), dtype=INT64, count=len(past))
        push_run(packed.past, col.key_run(keys, np.zeros(len(keys), dtype=INT64), weights), 0)
    node.trace.past = {}  # the runs hold it now
    return packed


#: A batch this small meets packed state one row at a time (a scalar
#: ``searchsorted`` per run): numpy's per-call costs on whole arrays made a
#: one-row update of a 50,000-row state cost ~45 µs, ~8 µs this way.
SMALL_BATCH = 64


def _pack_row(row, packing: col.Packing) -> int | None:
    """One row packed as :meth:`~engine.operators.columns.Packing.pack` would."""
    if len(row) != packing.arity or any(type(v) is not int for v in row):
        return None
    if packing.arity == 1:
        return row[0] if -(1 << 63) <= row[0] < (1 << 63) else None
    bias, key = packing.bias, 0
    for v in row:
        if not -bias <= v < bias:
            return None
        key = (key << packing.bits) | (v + bias)
    return key


def _distinct_rows(packed: PackedRows, batch) -> dict | None:
    """:func:`root_distinct` of a small dict batch, row by row."""
    packing, past = packed.packing, packed.past
    keys, out = [], {}
    for row, w in batch.items():
        key = _pack_row(row, packing)
        if key is None:
            return None
        keys.append(key)
        old = 0
        for run in past:
            at = int(run.keys.searchsorted(key))
            if at < len(run.keys) and run.keys[at] == key:
                old += int(run.weights[at])
        delta = (old + w > 0) - (old > 0)
        if delta:
            out[row] = delta
    packed.staged.append((np.array(keys, dtype=INT64),
                          np.fromiter(batch.values(), dtype=INT64, count=len(keys))))
    return out


def root_distinct(packed: PackedRows, batch):
    """``out(e)`` for ``batch`` against the packed ``I(e-1)``, the batch
    staged; ``None`` (nothing changed) when it does not pack."""
    if len(batch) < SMALL_BATCH and type(batch) is not ColBatch:
        COUNTS["root_distinct"] += 1
        return _distinct_rows(packed, batch)
    found = _pack(batch, packed.packing)
    if found is None:
        return None
    _, keys, weights = found
    COUNTS["root_distinct"] += 1
    packed.staged.append((keys, weights))
    if len(keys) > 1:
        order = np.argsort(keys, kind="stable")
        keys, weights = keys[order], weights[order]
    old = packed.old_weights(keys)
    delta = (old + weights > 0).astype(INT64) - (old > 0)
    keep = delta != 0
    if not keep.any():
        return {}
    arity = packed.packing.arity
    return ColBatch(packed.packing.unpack(keys[keep]), ("i",) * arity, delta[keep])
