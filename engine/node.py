"""Nodes: the vertices of a circuit, their clock protocol, and the structural
kinds (Source, Sink, Feedback, Import, Export, Child); operators live in
``engine.operators``.

A **Node** reads the outputs of its ``inputs`` (edges that order evaluation)
and sets ``out``, its output at the current time: a Z-set (row -> weight) or an
indexed Z-set (key -> value -> weight). ``reads`` lists nodes whose *state* it
uses without an ordering edge (a join reads the traces of its inputs; a
Feedback reads the stream it closes the loop on). Every node has a local id
(its index in its circuit) and a global id (the path of local ids from the
root).

The clock protocol, with ``scope`` 0 for the root clock (epochs) and 1 for a
child circuit's clock (iterations):

* ``clock_start(0, e)``: a new epoch begins (per-epoch buffers are reset);
* ``evaluate(i)``: compute ``out`` at the current time (``i`` is the iteration
  in a child circuit, 0 in the root);
* ``clock_stop(1, i)``: iteration ``i`` of a child circuit is over (traces
  append the iteration's batch, Feedback captures its input);
* ``pending()``: the earliest later iteration of this epoch at which the node
  holds work (future join output, scheduled distinct keys), or ``None``;
* ``clock_stop(0, e)``: the epoch succeeded (traces fold it into the past);
* ``rollback()``: the epoch failed; forget everything it added.

A node marked ``quiet`` is skipped at a time when all its inputs are empty and
it holds no work due then (its ``out`` is set to nothing): most nodes of a
large circuit have nothing to do in most iterations of a small update.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine import colbatch
from engine.codegen import one_row_append
from engine.columnar import Unfit
from engine.errors import ArityError, EngineError, WeightError
from engine.logtrace import RowLog
from engine.zset import EMPTY, ZSet, add_into


class Node:
    """A vertex of a circuit (see the module docstring)."""

    kind = "operator"
    iteration_hook = False  # True when clock_stop(1, i) does something
    may_hold_work = False   # True when pending() can return an iteration
    observable = False      # True when evaluating it has an effect of its own (inspect)
    #: True when, at a time where every input is empty and the node holds no
    #: work for it (``pending()``), ``evaluate`` only sets ``out`` to nothing and
    #: ``clock_stop(1, i)`` does nothing: the circuit then skips both. (A child
    #: evaluates a node that may hold work all the same: asking costs as much.)
    quiet = False

    def __init__(self, inputs=(), label: str = "", reads=()):
        self.inputs = list(inputs)
        self.reads = list(reads)
        self.label = label
        self.out = EMPTY
        self.circuit = None
        self.local_id = -1

    @property
    def global_id(self) -> tuple[int, ...]:
        path = [self.local_id]
        circuit = self.circuit
        while circuit is not None and circuit.node is not None:
            path.append(circuit.node.local_id)
            circuit = circuit.parent
        return tuple(reversed(path))

    def evaluate(self, i: int) -> None:
        """Compute ``out`` at the current time."""

    def clock_start(self, scope: int, time: int) -> None:
        pass

    def clock_stop(self, scope: int, time: int) -> None:
        pass

    def pending(self) -> int | None:
        return None

    def rollback(self) -> None:
        pass

    def prepare(self) -> None:
        """Called once when the circuit is finalized (after fusion)."""

    def collection_cursor(self):
        """A :class:`~engine.cursor.RowCursor` over the finished epochs of a
        trace whose rows of positive weight are this node's output collection
        now, each row once (a Distinct's input trace); ``None`` when the node
        keeps no such trace. :meth:`engine.circuit.Circuit.contents` reads it."""
        return None

    def replace_input(self, old: Node, new: Node) -> None:
        self.inputs = [new if n is old else n for n in self.inputs]
        self.reads = [new if n is old else n for n in self.reads]

    def describe_args(self) -> str:
        """Extra text for ``describe()`` (operator parameters)."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label or ''} #{self.local_id}>"


class Source(Node):
    """An input relation: its batch for the epoch, as given to ``step``."""

    kind = "source"

    def __init__(self, name: str, arity: int | None, label: str = ""):
        super().__init__([], label or name)
        self.name, self.arity = name, arity
        self.batch = EMPTY

    def evaluate(self, i: int) -> None:
        self.out = self.batch

    def validate(self, rows) -> dict:
        """The batch as a Z-set; raises ArityError / WeightError naming the relation.

        ``rows`` is a mapping row -> weight, or an iterable of rows (weight 1).
        """
        if isinstance(rows, Mapping):
            items = rows.items()
        else:
            items = ((row, 1) for row in rows)
        out: dict = {}
        arity = self.arity
        for row, weight in items:
            if type(row) is not tuple:
                if not isinstance(row, tuple):
                    raise ArityError(self.name, row, arity if arity is not None else 0)
                row = tuple(row)
            if arity is not None and len(row) != arity:
                raise ArityError(self.name, row, arity)
            if type(weight) is not int:
                if isinstance(weight, bool) or not isinstance(weight, int):
                    raise WeightError(self.name, row, weight)
                weight = int(weight)
            try:
                total = out.get(row, 0) + weight
            except TypeError as error:
                raise EngineError(f"relation `{self.name}`: row {row!r} is not hashable") \
                    from error
            if total:
                out[row] = total
            else:  # cancelled out (or a zero weight, which means nothing)
                out.pop(row, None)
        return out

    def describe_args(self) -> str:
        return f"arity={self.arity}"


class Sink(Node):
    """An output: collects the epoch difference of its input (and, when
    ``keep`` is set, the current collection)."""

    kind = "sink"

    def __init__(self, name: str, source: Node, keep: bool = False, label: str = ""):
        super().__init__([source], label or name)
        self.name = name
        self.keep = keep
        self.collection: dict = {}
        self.delta = EMPTY

    def evaluate(self, i: int) -> None:
        # a columnar batch (engine.colbatch) leaves the circuit as it is: a
        # read-only mapping row -> weight whose rows are made only if asked for
        self.delta = self.inputs[0].out

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0 and self.keep and self.delta:
            add_into(self.collection, self.delta)

    def rollback(self) -> None:
        self.delta = EMPTY

    def collection_cursor(self):
        # with ``keep``: the collection of the committed epochs
        if not self.keep:
            return None
        from engine.trace import DictRowCursor

        return DictRowCursor(self.collection, False, self.circuit.epoch - 1)


class Feedback(Node):
    """Feedback: at iteration ``i`` outputs what its source produced at ``i - 1``
    (nothing at iteration 0). ``connect`` names the source."""

    kind = "feedback"
    iteration_hook = True
    may_hold_work = True

    def __init__(self, name: str, arity: int | None, label: str = ""):
        super().__init__([], label or name)
        self.name, self.arity = name, arity
        self.held = EMPTY

    @property
    def source(self) -> Node | None:
        return self.reads[0] if self.reads else None

    def evaluate(self, i: int) -> None:
        self.out = self.held if i > 0 else EMPTY

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 1:
            self.held = self.reads[0].out
        else:
            self.held = EMPTY

    def pending(self) -> int | None:
        return 0 if self.held else None  # the circuit reads 0 as "the next iteration"

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.held = EMPTY

    def rollback(self) -> None:
        self.held = EMPTY


class Import(Node):
    """Import: the parent stream's epoch difference, at iteration 0 only."""

    kind = "import"

    def evaluate(self, i: int) -> None:
        self.out = self.reads[0].out if i == 0 else EMPTY


class Export(Node):
    """A child stream seen from the parent: the sum over the epoch's iterations.

    In a long thin loop (``acc`` holding :data:`~engine.colbatch.EXPORT_LOG_FROM`
    rows), batches of a few rows go to a log of typed arrays
    (:class:`~engine.logtrace.RowLog`), added to the sum as one columnar batch
    (into ``acc`` if that is larger). Or, when the inner node is a Distinct
    Trace with no earlier epoch (a bulk load's loop), the epoch is ``summed``
    from there on: nothing more is added up (``acc`` is dropped), the sum is
    read off its trace at the end (``epoch_sum``: the rows of positive
    weight; a counter's one-row iterations pay a call that returns), or when
    it moves to packed runs (``add_up``: the sum so far, then adding up)."""

    kind = "export"

    def __init__(self, child_node: ChildNode, inner: Node, label: str = ""):
        super().__init__([child_node], label, reads=[inner])
        self.acc: dict = {}
        self.parts: list = []  # columnar batches (engine.colbatch), added at the end
        self.log = None  # the epoch's small batches in typed arrays (a RowLog), or None
        self.no_log = False  # a row the log could not hold: not this epoch
        # This epoch's sum is read off the inner node (a Distinct Trace with no
        # earlier epoch: its epoch_sum) when asked, not added up iteration by
        # iteration; add_up() goes back to adding up (the inner node asks)
        self.summed = False

    def accumulate(self) -> None:
        if self.summed:
            return  # read off the inner node's trace at the end (add_up)
        inner = self.reads[0]
        batch = inner.out
        log = self.log
        if (log is not None and len(batch) < colbatch.EXPORT_LOG_BATCH
                and not hasattr(batch, "kinds")):  # a long thin loop's rows (below)
            try:
                log.append(batch)
                return
            except Unfit:  # a row the log cannot hold: nothing more logged this epoch
                self._end_log()
                self.no_log = True
        if batch and hasattr(batch, "kinds"):
            self.parts.append(batch)
        elif batch:
            if len(batch) < colbatch.EXPORT_LOG_BATCH and (
                    self.log is not None
                    or (len(self.acc) >= colbatch.EXPORT_LOG_FROM and not self.no_log)):
                if self.log is None:
                    if getattr(inner, "sums_epoch", None) is not None and inner.sums_epoch():
                        # no earlier epoch: the sum is read off the trace at the end
                        self.acc, self.parts, self.summed = {}, [], True
                        inner.summing.append(self)
                        return
                    self.log = RowLog()
                try:
                    self.log.append(batch)
                    return
                except Unfit:  # a row the log cannot hold: nothing more logged this epoch
                    self._end_log()
                    self.no_log = True
            if not self.acc:
                self.acc = ZSet(batch)
            elif getattr(inner, "fresh", False):  # rows not emitted before this epoch
                self.acc.update(batch)
            else:
                add_into(self.acc, batch)

    def accumulate_lines(self, node: str, inner: str, call: str,
                         setup: list[str]) -> list[str]:
        """The lines of a generated iteration (:mod:`engine.schedule`) doing
        :meth:`accumulate` (named ``call``; this Export is ``node``, its
        inner node ``inner``) for a one-row batch of a one-column row into
        the log's arrays themselves, their ``append`` bound once a log (a
        log's ``parts`` are made once, with its ``arity``); any other batch,
        or a value the arrays cannot hold (nothing appended yet), goes to
        ``call``. Counter-1000000's batch CPU (``python -m
        benchmarks.profile_engine counter-1000000 --cpu``), five rounds
        alternated with ``accumulate`` called: median 1,821 ms against
        1,921, lower in every round."""
        setup.append(f"{node}_log = None")
        return [f"_bx, _xl = {inner}.out, {node}.log",
                "if (_xl is not None and _xl.arity == 1 and len(_bx) == 1 "
                f"and type(_bx) is dict and not {node}.summed):",
                f"    if _xl is not {node}_log:",
                f"        {node}_log = _xl",
                f"        {node}_ca, {node}_wa = _xl.parts[0].append, _xl.parts[1].append",
                *("    " + text for text in one_row_append(
                    "_bx", f"{node}_ca", f"{call}()", [f"{node}_wa(_w)"])),
                "else:",
                f"    {call}()"]

    def held(self) -> int:
        """The rows added up so far this epoch, for the profile (a row in two
        parts counts twice; a summed epoch: the rows of its sum so far)."""
        if self.summed:
            return len(self.reads[0].epoch_sum())
        return (len(self.acc) + sum(map(len, self.parts))
                + (len(self.log) if self.log is not None else 0))

    def _end_log(self) -> None:
        """The log's rows summed: a columnar part of the sum, or added to ``acc``
        when that is larger (a long loop's tail: no dict made into columns)."""
        if self.log is not None:
            found = self.log.batch()
            self.log = None
            if found is None:
                return
            if len(found) < len(self.acc):
                add_into(self.acc, found)
            else:
                self.parts.append(found)

    def add_up(self) -> None:
        """From now on, add the inner node's batches up, from the sum so far."""
        if self.summed:
            self.summed = False
            found = self.reads[0].epoch_sum()
            if hasattr(found, "kinds"):
                self.parts.append(found)
            elif found:
                self.acc = found  # (a new ZSet)

    def _unsum(self) -> None:
        self.summed = False
        summing = getattr(self.reads[0], "summing", None)
        if summing is not None and self in summing:
            summing.remove(self)

    def evaluate(self, i: int) -> None:
        if self.summed:
            self.out = self.reads[0].epoch_sum() or EMPTY
            return
        self._end_log()
        if self.parts:
            from engine.operators.columns import plus
            from engine.operators.distinct import DistinctTraceNode

            batches = self.parts + [self.acc] if self.acc else self.parts
            found = None
            if isinstance(self.reads[0], DistinctTraceNode):  # its epoch: -1, 0 or 1 a row
                found = colbatch.concat_fresh(batches)
            if found is None:
                found = plus(batches)
            if found is None:
                for part in self.parts:
                    add_into(self.acc, part)
            else:
                self.acc = found
            self.parts = []
        self.out = self.acc or EMPTY

    def clock_start(self, scope: int, time: int) -> None:
        if scope == 0:
            self.acc, self.parts, self.log, self.no_log = {}, [], None, False

    def clock_stop(self, scope: int, time: int) -> None:
        if scope == 0:
            self.acc, self.parts, self.log, self.no_log = {}, [], None, False
            self._unsum()

    def rollback(self) -> None:
        self.acc, self.parts, self.log, self.no_log = {}, [], None, False
        self._unsum()

    def collection_cursor(self):
        # the sum of every epoch's iteration differences: the inner stream's
        # collection after the last epoch's fixed point
        return self.reads[0].collection_cursor()


class ChildNode(Node):
    """The node of a child circuit in its parent; evaluating it runs the child's
    iterations of the epoch to a fixed point."""

    kind = "child"

    def __init__(self, child, label: str = ""):  # child: a ChildCircuit
        super().__init__([], label)
        self.child = child

    def evaluate(self, i: int) -> None:
        self.child.run_epoch()

    def clock_start(self, scope: int, time: int) -> None:
        # the child's own nodes get their clock events from the root directly
        self.child.epoch = time
