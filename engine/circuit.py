"""Circuits: the root circuit (clock: epoch) and child circuits (clock:
``(epoch, iteration)``), scheduling and fixed points, and the builder methods
that add nodes to them.

Node kinds (spec 002; defined in ``engine.node``): **Source** (input relation), **Sink** (output),
**Operator** (everything in ``engine.operators``), **Feedback** (its input
delayed by one iteration; the edge into it is not a cycle for scheduling),
**Import** (a parent stream inside a child: the parent difference at epoch ``e``
appears at ``(e, 0)``), **Child** (a nested circuit for one recursive
component; its **Export**s hand the parent the sum of their iteration
differences: the epoch difference).

Each circuit evaluates its nodes in a topological order of the graph without
feedback edges (:func:`engine.graphs.lexicographic_order`). A child circuit at
epoch ``e`` runs iterations ``i = 0, 1, ...`` and stops when its Feedbacks carry
nothing **and** no operator holds work for a later iteration; if only operators
hold work, the clock jumps to the earliest such iteration::

         ┌─────────────────────── child ────────────────────────┐
    edge ┼─> Import ──┐                                          │
         │            ├─> plus ─> distinct ─┬─> Export ──────────┼─> path
         │  Feedback ─┴> join               │                    │
         │     ^────────────────────────────┘ (one iteration later)
         └───────────────────────────────────────────────────────┘

A step is atomic: everything an epoch adds carries that epoch in its time, so
a failure drops it (``rollback``) and the circuit is exactly as before.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping

from engine import gcpolicy
from engine.colbatch import COUNTS, ColBatch
from engine.errors import (
    BuildError,
    EngineError,
    EpochError,
    IterationLimitError,
    MemoryLimitError,
    OperatorError,
)
from engine.graphs import CycleError, lexicographic_order
from engine.memory import trim_after
from engine.node import ChildNode, Export, Feedback, Import, Node, Sink, Source
from engine.schedule import Iteration, moved_feedbacks, quiet_inputs
from engine.zset import EMPTY, ZSet

#: The context of a step with no memory budget to watch (one, reused).
_UNWATCHED = contextlib.nullcontext()


class BaseCircuit:
    """What root and child circuits share: nodes, ids, building, rendering."""

    nested = False

    def __init__(self, parent: BaseCircuit | None = None, label: str = ""):
        self.parent = parent
        self.label = label
        self.nodes: list[Node] = []
        self.node: ChildNode | None = None  # this circuit's node in its parent
        self.order: list[Node] = []
        self.evaluated: list[Node] = []  # the order without do-nothing evaluates
        self.memo: dict = {}  # (node id, key spec) -> IndexedStream; shared traces

    @property
    def root(self) -> Circuit:
        circuit = self
        while circuit.parent is not None:
            circuit = circuit.parent
        return circuit

    def add(self, node: Node) -> Node:
        root = self.root
        if root.finalized:
            raise BuildError("cannot add nodes to a circuit after its first step")
        for other in node.inputs:
            if other.circuit is not self:
                raise BuildError(
                    f"node `{node.label or type(node).__name__}` reads a stream of another "
                    f"circuit; bring parent streams into a child with import_()")
        node.circuit = self
        node.local_id = len(self.nodes)
        self.nodes.append(node)
        return node

    def children(self) -> list[ChildCircuit]:
        return [n.child for n in self.nodes if isinstance(n, ChildNode)]

    def child(self, label: str = "") -> ChildCircuit:
        """A child circuit for one recursive component (use as a context manager)."""
        if self.nested:
            raise BuildError("child circuits nest one level deep (one per recursive "
                             "component of the root)")
        child = ChildCircuit(self, label, self.root.max_iterations)
        child.node = self.add(ChildNode(child, label))
        return child

    # -- rendering ---------------------------------------------------------

    def describe_lines(self, indent: str = "") -> list[str]:
        lines = []
        for node in self.nodes:
            gid = ".".join(map(str, node.global_id))
            ins = ", ".join(".".join(map(str, n.global_id)) for n in node.inputs)
            reads = ", ".join(".".join(map(str, n.global_id)) for n in node.reads)
            kind = node.kind
            args = node.describe_args()
            text = f"{indent}{gid} {kind}"
            if args:
                text += f" {args}"
            if node.label:
                text += f" `{node.label}`"
            if ins:
                text += f" <- {ins}"
            if reads:
                text += f" (reads {reads})"
            lines.append(text)
            if isinstance(node, ChildNode):
                lines += node.child.describe_lines(indent + "  ")
        return lines

    def dot_lines(self, indent: str = "  ") -> list[str]:
        lines = []
        for node in self.nodes:
            name = "n" + "_".join(map(str, node.global_id))
            if isinstance(node, ChildNode):
                lines.append(f"{indent}subgraph cluster_{name} {{")
                lines.append(f'{indent}  label="{_dot_escape(node.label or "child")}";')
                lines += node.child.dot_lines(indent + "  ")
                lines.append(f"{indent}}}")
                continue
            text = node.kind + (f" {node.describe_args()}" if node.describe_args() else "")
            if node.label:
                text += f"\\n{_dot_escape(node.label)}"
            lines.append(f'{indent}{name} [label="{text}"];')
            for other in node.inputs:
                if isinstance(other, ChildNode):
                    continue
                lines.append(f"{indent}n{'_'.join(map(str, other.global_id))} -> {name};")
            for other in node.reads:
                style = "dashed" if node.kind in ("feedback", "import", "export") else "dotted"
                lines.append(f"{indent}n{'_'.join(map(str, other.global_id))} -> {name} "
                             f"[style={style}];")
        return lines


def _overrides(node: Node, method: str) -> bool:
    """Whether ``node``'s ``method`` is more than the do-nothing ``Node`` one."""
    return getattr(getattr(node, method), "__func__", None) is not getattr(Node, method)


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _topological_order(circuit: BaseCircuit, live: set) -> list[Node]:
    nodes = [n for n in circuit.nodes if id(n) in live]
    successors: dict[int, list[int]] = {}
    for node in nodes:
        for other in node.inputs:
            successors.setdefault(other.local_id, []).append(node.local_id)
    try:
        ids = lexicographic_order((n.local_id for n in nodes), successors)
    except CycleError as error:
        raise BuildError(f"circuit `{circuit.label or 'root'}` has a cycle that does not "
                         f"go through a Feedback") from error
    return [circuit.nodes[k] for k in ids]


class FeedbackHandle:
    """What ``child.feedback(...)`` returns: ``stream`` (the fed-back stream, one
    iteration late) and ``connect(stream)`` (what to feed back)."""

    def __init__(self, circuit: ChildCircuit, node: Feedback):
        from engine.stream import Stream

        self.node = node
        self.stream = Stream(circuit, node)

    def connect(self, stream) -> None:
        if stream.circuit is not self.stream.circuit:
            raise BuildError(f"feedback `{self.node.name}`: connect a stream of the same "
                             f"child circuit")
        if self.node.reads:
            raise BuildError(f"feedback `{self.node.name}` is already connected")
        self.node.reads = [stream.node]


class ChildCircuit(BaseCircuit):
    """A nested circuit for one recursive component; clock ``(epoch, iteration)``.

    Build it inside ``with circuit.child(label) as child:`` with ``import_``,
    ``feedback`` and ``export`` (see ``engine.stream``).
    """

    nested = True

    def __init__(self, parent: BaseCircuit, label: str, max_iterations: int | None):
        super().__init__(parent, label)
        self.max_iterations = max_iterations
        self.feedbacks: list[Feedback] = []
        self.exports: list[Export] = []
        self.epoch = 0
        self.iterations = 0  # iterations run in the last epoch (for reports)
        self.stoppers: list[Node] = []
        self.holders: list[Node] = []
        self.limits: list[Node] = []   # SizeLimit nodes: may end the loop early
        self.imports: list[Node] = []
        self._compiled: tuple | None = None  # (what it was made from, Iteration)

    def __enter__(self) -> ChildCircuit:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            for feedback in self.feedbacks:
                if feedback.source is None:
                    raise BuildError(f"feedback `{feedback.name}` of child circuit "
                                     f"`{self.label}` was never connected")

    def import_(self, stream, label: str = ""):
        """Import a parent stream: its epoch difference appears at iteration 0."""
        from engine.stream import Stream

        if stream.circuit is not self.parent:
            raise BuildError("import_() takes a stream of the parent circuit")
        memo_key = (id(stream.node), "import")
        found = self.memo.get(memo_key)
        if found is None:
            node = self.add(Import([], label, reads=[stream.node]))
            if stream.node not in self.node.inputs:
                self.node.inputs.append(stream.node)
            found = self.memo[memo_key] = Stream(self, node)
        return found

    def feedback(self, name: str, arity: int | None = None,
                  label: str = "") -> FeedbackHandle:
        node = self.add(Feedback(name, arity, label))
        self.feedbacks.append(node)
        return FeedbackHandle(self, node)

    def limit(self, stream, size: int, label: str = "") -> None:
        """End each epoch's loop after the first iteration at which ``stream``'s
        collection holds at least ``size`` rows (:mod:`engine.operators.limit`)."""
        from engine.operators.limit import SizeLimit

        if stream.circuit is not self:
            raise BuildError("limit() takes a stream of this child circuit")
        self.add(SizeLimit(stream.node, size, label or f"limit {size}"))

    def export(self, stream, label: str = ""):
        """The sum over each epoch's iterations of ``stream``, as a parent stream."""
        from engine.stream import Stream

        if stream.circuit is not self:
            raise BuildError("export() takes a stream of this child circuit")
        node = self.parent.add(Export(self.node, stream.node, label))
        self.exports.append(node)
        return Stream(self.parent, node)

    def run_epoch(self) -> None:
        """Iterate this epoch to a fixed point (module docstring).

        Iteration 0 evaluates every node; later ones run the generated
        :class:`~engine.schedule.Iteration`, which skips the Imports (empty
        after iteration 0) and the ``quiet`` nodes with nothing to do, and
        moves each Feedback's batch itself. An epoch whose Imports are all
        empty has nothing to do at all.
        """
        if self.imports and not any(node.reads[0].out for node in self.imports):
            self.iterations = 0  # no input this epoch: every difference is empty
            return
        budget = self.root.memory_budget
        check = budget.check if budget is not None else None
        iteration = self._iteration(check)
        feedbacks, moved = iteration.feedbacks, iteration.moved
        holders = [n for n in self.holders if id(n) not in moved]
        limit = self.max_iterations
        limits = self.limits
        node = None
        try:
            for node in self.evaluated:
                node.evaluate(0)
                if check is not None:
                    check()
        except EngineError:
            raise
        except Exception as error:
            raise OperatorError(node.label or type(node).__name__, error) from error
        data = False  # whether a Feedback carries something to the next iteration
        for node, source in feedbacks:
            node.held = source.out or EMPTY
            data = data or bool(node.held)
        for node in self.stoppers:
            if id(node) not in moved:
                node.clock_stop(1, 0)
        for export in self.exports:
            export.accumulate()
        if limits and any(w < 0 for node in self.imports for w in node.out.values()):
            limits = ()   # an epoch that removes input runs to its fixed point
        for node in self.imports:
            node.out = EMPTY  # an Import is empty after iteration 0
        run, loop = iteration.run, iteration.loop
        if limits:
            loop = None  # (a size limit is asked between iterations)
        i = 0
        count = 1
        while True:
            if limits and any(node.reached() for node in limits):
                break   # a size limit: the epoch ends here (engine.operators.limit)
            nxt = i + 1 if data else None
            if not data:
                for node in holders:
                    p = node.pending()
                    if p is not None:
                        if p <= i:  # a Feedback or Delay with data: the next iteration
                            nxt = i + 1
                            break
                        if nxt is None or p < nxt:
                            nxt = p
            if nxt is None:
                break
            if limit is not None and nxt >= limit:
                raise IterationLimitError(self.label or "child", limit, self.epoch)
            try:
                if loop is not None and data:  # iterations i + 1, ... in one call
                    last, data = loop(i, limit)
                    COUNTS["loop_iterations"] += last - i
                    count += last - i
                    i = last
                    continue
                i = nxt
                count += 1
                data = run(i)
            except EngineError:
                raise
            except Exception as error:
                node = iteration.failed_node(error)
                if node is None:
                    raise
                raise OperatorError(node.label or type(node).__name__, error) from error
        self.iterations = count

    def _iteration(self, check) -> Iteration:
        """The generated later iteration for the current lists (again when
        they change: a profiler swaps in proxies) and memory check."""
        key = (self.evaluated, self.stoppers, self.exports, check)
        found = self._compiled
        if found is None or any(a is not b for a, b in zip(found[0], key)):
            feedbacks = moved_feedbacks(self.stoppers)
            iteration = Iteration(self.evaluated, self.stoppers, feedbacks,
                                  [(e, e.reads[0]) for e in self.exports], self.imports, check)
            found = self._compiled = (key, iteration)
        return found[1]


class Circuit(BaseCircuit):
    """The root circuit; its clock is the epoch (one tick per ``step``).

    >>> circuit = Circuit()
    >>> edge = circuit.source("edge", arity=2)
    >>> circuit.output("swapped", edge.map(lambda r: (r[1], r[0])))
    >>> circuit.step({"edge": {(1, 2): 1}})
    {'swapped': ZSet({(2, 1): 1})}
    """

    def __init__(self, max_iterations: int | None = None, spill_threshold: int | None = None,
                 columnar_threshold: int | None = None, spill_cache: int | None = None):
        super().__init__(None, "")
        if max_iterations is not None and (type(max_iterations) is not int
                                           or max_iterations < 1):
            raise BuildError(f"max_iterations must be a positive integer or None (no limit), "
                             f"got {max_iterations!r}")
        self.max_iterations = max_iterations
        #: The process's resident memory allowed while a step runs
        #: (:mod:`engine.memory`); ``None``: no limit. Set with :meth:`limit_memory`.
        self.memory_budget = None
        # Traces that joins read move to Spark past this many rows (engine.spark.spill).
        self.spill_threshold = spill_threshold
        # Join and aggregate traces past this many rows go columnar (engine.columnar;
        # not together with spilling, which moves dict traces).
        self.columnar_threshold = columnar_threshold
        # Rows of spilled traces cached in Python (engine.spark.spill_cache).
        self.spill_cache = None
        if spill_threshold is not None:
            from engine.spark.spill import check_spilling
            from engine.spark.spill_cache import DEFAULT_BUDGET, SpillCache
            check_spilling(spill_threshold)
            self.spill_cache = SpillCache(DEFAULT_BUDGET if spill_cache is None else spill_cache)
        elif spill_cache is not None:
            raise BuildError("spill_cache is for spilled traces: give a spill_threshold too")
        self.epoch = 0
        self.finalized = False
        self.sources: dict[str, Source] = {}
        self.sinks: dict[str, Sink] = {}
        self.all_nodes: list[Node] = []
        # the nodes whose clock_start / clock_stop do something (the rest are
        # skipped: a small update pays for the nodes it touches)
        self.starting: list[Node] = []
        self.stopping: list[Node] = []
        # ``evaluated`` with the inputs that let ``step`` skip a quiet node
        self._steps: list = []
        self._steps_for: list | None = None

    def source(self, name: str, arity: int | None = None, label: str = ""):
        """A Source node for the input relation ``name``; returns its Stream."""
        from engine.stream import Stream

        if name in self.sources:
            raise BuildError(f"a source named `{name}` already exists")
        node = self.add(Source(name, arity, label))
        self.sources[name] = node
        return Stream(self, node)

    def output(self, name: str, stream, label: str = "", keep: bool = False) -> None:
        """A Sink collecting the epoch difference of ``stream`` under ``name``."""
        if name in self.sinks:
            raise BuildError(f"an output named `{name}` already exists")
        if stream.circuit is not self:
            raise BuildError(f"output `{name}`: the stream belongs to a child circuit; "
                             f"export() it first")
        self.sinks[name] = self.add(Sink(name, stream.node, keep, label))

    # -- finalization: fusion, liveness, order -----------------------------

    def _circuits(self) -> list[BaseCircuit]:
        out, todo = [], [self]
        while todo:
            circuit = todo.pop()
            out.append(circuit)
            todo += circuit.children()
        return out

    def finalize(self) -> None:
        """Fuse linear chains, drop dead nodes, compute evaluation orders."""
        if self.finalized:
            return
        from engine.operators.linear import LinearNode

        circuits = self._circuits()
        every = [n for c in circuits for n in c.nodes]
        live = self._live(every)
        consumers: dict[int, list[Node]] = {id(n): [] for n in every}
        for node in every:
            if id(node) in live:
                for other in node.inputs + node.reads:
                    consumers[id(other)].append(node)
        fused: set = set()
        for circuit in circuits:
            for node in circuit.nodes:
                if not isinstance(node, LinearNode) or id(node) not in live:
                    continue
                producer = node.inputs[0]
                if (hasattr(producer, "absorb") and not producer.indexed
                        and consumers[id(producer)] == [node] and id(producer) in live):
                    producer.absorb(node)
                    fused.add(id(node))
                    for consumer in consumers[id(node)]:
                        consumer.replace_input(node, producer)
                    consumers[id(producer)] = consumers[id(node)]
        live -= fused
        for circuit in circuits:
            circuit.order = _topological_order(circuit, live)
            circuit.evaluated = [n for n in circuit.order if _overrides(n, "evaluate")]
            if isinstance(circuit, ChildCircuit):
                circuit.stoppers = [n for n in circuit.order if n.iteration_hook]
                circuit.holders = [n for n in circuit.order if n.may_hold_work]
                circuit.limits = [n for n in circuit.order if n.kind == "limit"]
                circuit.imports = [n for n in circuit.order if n.kind == "import"]
        self.all_nodes = [n for n in every if id(n) in live]
        for node in self.all_nodes:
            node.prepare()
        if self.columnar_threshold is not None and self.spill_threshold is None:
            from engine.operators.join import TraceNode
            for node in self.all_nodes:
                if isinstance(node, TraceNode):
                    node.use_columnar(self.columnar_threshold)
        if self.spill_threshold is not None:
            from engine.spark.spill import spill_traces
            spill_traces(self.all_nodes, self.spill_threshold, cache=self.spill_cache)
        self.starting = [n for n in self.all_nodes if _overrides(n, "clock_start")]
        self.stopping = [n for n in self.all_nodes if _overrides(n, "clock_stop")]
        self.finalized = True

    @staticmethod
    def _live(every: list[Node]) -> set:
        """Nodes something observable depends on."""
        roots = [n for n in every if n.kind in ("sink", "source", "feedback")
                 or n.observable]
        live: set = set()
        todo = list(roots)
        while todo:
            node = todo.pop()
            if id(node) in live:
                continue
            live.add(id(node))
            todo += node.inputs + node.reads
            if isinstance(node, Export):
                todo.append(node.inputs[0])
            if isinstance(node, ChildNode):
                todo += node.child.feedbacks
        return live

    def limit_memory(self, limit: int | None) -> None:
        """Bound the process's resident memory (bytes) while a step runs: past it
        the step fails with :class:`MemoryLimitError` and is rolled back."""
        from engine.memory import MemoryBudget

        self.memory_budget = MemoryBudget(limit) if limit is not None else None

    # -- running -------------------------------------------------------------

    def step(self, inputs: Mapping[str, object] | None = None,
             epoch: int | None = None, dry_run: bool = False) -> dict[str, ZSet]:
        """Run one epoch (one transaction) and return each output's difference:
        a :class:`~engine.zset.ZSet`, or a columnar batch
        (:class:`~engine.colbatch.ColBatch`, a read-only mapping row -> weight
        that makes its rows only when asked). Neither changes after the step.

        ``inputs`` maps source names to Z-sets (row -> weight) or iterables of
        rows. Atomic: on any error every operator's state is as before.
        ``dry_run``: return the differences, then drop the epoch as a failure
        would (the circuit stays at its epoch, exactly as before).
        """
        restore = gcpolicy.quiet()  # fewer collections while it runs (engine.gcpolicy)
        try:
            return self._step(inputs, epoch, dry_run)
        finally:
            restore()

    def _step(self, inputs: Mapping[str, object] | None, epoch: int | None,
              dry_run: bool) -> dict[str, ZSet]:
        if epoch is not None and epoch != self.epoch:
            raise EpochError(f"the circuit is at epoch {self.epoch}; got a step for "
                             f"epoch {epoch}")
        started = time.perf_counter()
        self.finalize()
        inputs = dict(inputs or {})
        if not inputs.keys() <= self.sources.keys():
            unknown = sorted(set(inputs) - set(self.sources))
            raise EngineError(f"no source named `{unknown[0]}` (sources: "
                              f"{', '.join(sorted(self.sources)) or 'none'})")
        batches = {name: self.sources[name].validate(rows) for name, rows in inputs.items()}
        for name, source in self.sources.items():
            source.batch = batches.get(name, EMPTY)
        nodes = self.all_nodes
        e = self.epoch
        try:
            for node in self.starting:
                node.clock_start(0, e)
            node = None
            budget = self.memory_budget
            if self._steps_for is not self.evaluated:  # again when a profiler swaps it
                self._steps = [(node, quiet_inputs(node)) for node in self.evaluated]
                self._steps_for = self.evaluated
            with budget.watching() if budget is not None else _UNWATCHED:
                for node, inputs in self._steps:
                    if inputs is not None:  # a quiet node with every input empty
                        for source in inputs:
                            if source.out:
                                break
                        else:
                            node.out = EMPTY
                            continue
                    node.evaluate(0)
                    if budget is not None:
                        budget.check()
        except BaseException as error:
            for other in nodes:
                other.rollback()
            self._clear()
            if isinstance(error, MemoryLimitError):
                budget.release()
            if isinstance(error, EngineError) or not isinstance(error, Exception):
                raise
            label = (node.label or type(node).__name__) if node is not None else "circuit"
            raise OperatorError(label, error) from error
        result = {name: sink.delta if type(sink.delta) in (ZSet, ColBatch) else ZSet(sink.delta)
                  for name, sink in self.sinks.items()}
        if dry_run:
            for node in nodes:
                node.rollback()
        else:
            for node in self.stopping:
                node.clock_stop(0, e)
            self.epoch = e + 1
        self._clear()
        trim_after(time.perf_counter() - started)  # a large epoch's garbage: back to the system
        return result

    def _clear(self) -> None:
        for node in self.all_nodes:
            node.out = EMPTY
        for source in self.sources.values():
            source.batch = EMPTY
        for sink in self.sinks.values():
            sink.delta = EMPTY

    def collection(self, name: str) -> ZSet:
        """The current collection of an output declared with ``keep=True``."""
        sink = self.sinks.get(name)
        if sink is None or not sink.keep:
            raise EngineError(f"no output named `{name}` kept with keep=True")
        return ZSet(sink.collection)

    def contents(self, name: str):
        """The current rows of output ``name`` (its collection's rows of positive
        weight) as a read-only, live set (:mod:`engine.contents`), read where
        they are kept: the trace of the node the output reads when it keeps its
        collection (a distinct, in the root or exported from a child), else the
        output's own collection when declared with ``keep=True``. ``None`` when
        neither keeps them (e.g. an output read straight off a source: whoever
        gave the batches holds them)."""
        from engine.contents import Contents

        sink = self.sinks.get(name)
        if sink is None:
            raise EngineError(f"no output named `{name}`")
        self.finalize()
        node = sink.inputs[0]
        if node.collection_cursor() is not None:
            return Contents(node.collection_cursor)
        if sink.keep:
            return Contents(sink.collection_cursor)
        return None

    def describe(self) -> str:
        """A stable text rendering: one line per node (global id, kind, label,
        inputs), child circuits indented under their node."""
        return "\n".join(self.describe_lines())

    def to_dot(self) -> str:
        """A DOT rendering; child circuits are clusters."""
        return "\n".join(["digraph circuit {", "  rankdir=LR;"] + self.dot_lines() + ["}"])
