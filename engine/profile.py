"""Profiling a circuit: time and tuples per node, epoch and iteration.

A :class:`Profiler` attached to a circuit replaces, in the evaluation lists the
circuits run (``evaluated``, a child's ``stoppers``, the root's ``stopping``),
each node by a timing proxy that calls the node and records, per ``(epoch,
iteration)``: seconds, tuples in (the rows of its inputs' batches), tuples out
(the rows of its batch) and, for the work a node does when an iteration ends
(a trace appending the iteration's batch), the rows appended. Each child
circuit also gets one marker at the start of its evaluation list and one at the
end of its stoppers: the iteration's wall time and the process's peak resident
memory (``ru_maxrss``) when it ended. Nothing else changes, so a circuit that is
not profiled pays nothing: the proxies exist only in the lists of a profiled one.

>>> from engine import Circuit
>>> circuit = Circuit()
>>> edge = circuit.source("edge", arity=2)
>>> circuit.output("swapped", edge.map(lambda r: (r[1], r[0]), label="swap"))
>>> profiler = Profiler(circuit).attach()
>>> _ = circuit.step({"edge": {(1, 2): 1, (2, 3): 1}})
>>> stats = profiler.stats[circuit.sinks["swapped"].inputs[0]]
>>> stats.by_time[(0, 0)][1:]    # [seconds, tuples in, tuples out, calls, appended]
[2, 2, 1, 0]
"""

from __future__ import annotations

import resource
from time import perf_counter

from engine.node import ChildNode, Node


def batch_size(node: Node, batch) -> int:
    """The rows of a batch ``node`` emitted (an indexed batch counts its values)."""
    if not batch:
        return 0
    if getattr(node, "indexed", False):
        return sum(map(len, batch.values()))
    return len(batch)


def out_size(node: Node) -> int:
    """The rows ``node`` emitted at the current time (a child circuit's node:
    what its exports hold so far this epoch)."""
    if isinstance(node, ChildNode):
        return sum(export.held() for export in node.child.exports)
    return batch_size(node, node.out)


def peak_memory_kb() -> int:
    """The process's peak resident memory so far, in KiB (Linux ``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class NodeStats:
    """What a profiled node did: ``by_time`` maps ``(epoch, iteration)`` to
    ``[seconds, tuples in, tuples out, calls, rows appended]``; ``absorbed``
    lists the nodes fused into it (their work is its work)."""

    __slots__ = ("node", "by_time", "absorbed")

    def __init__(self, node: Node):
        self.node = node
        self.by_time: dict[tuple[int, int], list] = {}
        self.absorbed: list[Node] = []

    def totals(self) -> list:
        """``[seconds, tuples in, tuples out, calls, rows appended]`` over all times."""
        total = [0.0, 0, 0, 0, 0]
        for entry in self.by_time.values():
            for k in range(5):
                total[k] += entry[k]
        return total


class _Timed:
    """A node's stand-in in a profiled circuit's evaluation lists."""

    __slots__ = ("node", "label", "by_time", "root", "inputs", "indexed", "child")

    def __init__(self, node: Node, stats: NodeStats, root):
        self.node, self.label, self.by_time, self.root = node, node.label, stats.by_time, root
        # what the size of each input's batch needs, fixed once the circuit is final
        self.inputs = tuple((n, bool(getattr(n, "indexed", False))) for n in node.inputs)
        self.indexed = bool(getattr(node, "indexed", False))
        self.child = isinstance(node, ChildNode)

    def _entry(self, i: int) -> list:
        key = (self.root.epoch, i)
        entry = self.by_time.get(key)
        if entry is None:
            entry = self.by_time[key] = [0.0, 0, 0, 0, 0]
        return entry

    def evaluate(self, i: int) -> None:
        node = self.node
        start = perf_counter()
        node.evaluate(i)
        seconds = perf_counter() - start
        entry = self._entry(i)
        entry[0] += seconds
        tuples = 0
        for other, indexed in self.inputs:
            batch = other.out
            if batch:
                tuples += sum(map(len, batch.values())) if indexed else len(batch)
        entry[1] += tuples
        batch = node.out
        if self.child:
            entry[2] += out_size(node)
        elif batch:
            entry[2] += sum(map(len, batch.values())) if self.indexed else len(batch)
        entry[3] += 1

    def clock_stop(self, scope: int, time: int) -> None:
        node = self.node
        appended = batch_size(node.inputs[0], node.inputs[0].out) if node.inputs else 0
        start = perf_counter()
        node.clock_stop(scope, time)
        seconds = perf_counter() - start
        entry = self._entry(time if scope == 1 else 0)
        entry[0] += seconds
        if scope == 1 or node.circuit.parent is None:  # not a child's commit
            entry[4] += appended


class _IterationStart:
    """First in a child's evaluation list: notes when an iteration starts."""

    __slots__ = ("profiler", "circuit", "label")

    def __init__(self, profiler: Profiler, circuit):
        self.profiler, self.circuit, self.label = profiler, circuit, "iteration start"

    def evaluate(self, i: int) -> None:
        self.profiler.started[id(self.circuit)] = perf_counter()


class _IterationEnd:
    """Last in a child's stoppers: records the iteration's wall time and the
    peak memory when it ended."""

    __slots__ = ("profiler", "circuit", "label")

    def __init__(self, profiler: Profiler, circuit):
        self.profiler, self.circuit, self.label = profiler, circuit, "iteration end"

    def clock_stop(self, scope: int, time: int) -> None:
        profiler = self.profiler
        seconds = perf_counter() - profiler.started[id(self.circuit)]
        profiler.iterations.setdefault(self.circuit, []).append(
            (profiler.circuit.epoch, time, seconds, peak_memory_kb()))


class Profiler:
    """Records what each node of ``circuit`` does (see the module docstring).

    ``attach()`` finalizes the circuit (fusing linear chains) and swaps in the
    proxies; ``detach()`` puts the nodes back. Afterwards ``stats`` maps each
    evaluated node to its :class:`NodeStats` and ``iterations`` maps each child
    circuit to ``(epoch, iteration, seconds, peak KiB)`` records.
    """

    def __init__(self, circuit):
        self.circuit = circuit
        self.stats: dict[Node, NodeStats] = {}
        self.iterations: dict = {}
        self.started: dict[int, float] = {}
        self._saved: list = []

    def attach(self) -> Profiler:
        circuit = self.circuit
        before = [n for c in circuit._circuits() for n in c.nodes]
        circuit.finalize()
        live = {id(n) for n in circuit.all_nodes}
        for node in circuit.all_nodes:
            self.stats[node] = NodeStats(node)
        for node in before:  # a fused node's work is done by the node it joined
            if id(node) not in live and node.inputs:
                producer = node.inputs[0]
                while id(producer) not in live and producer.inputs:
                    producer = producer.inputs[0]
                if producer in self.stats:
                    self.stats[producer].absorbed.append(node)
        for each in circuit._circuits():
            self._swap(each, "evaluated")
            if each.nested:
                self._swap(each, "stoppers")
                each.evaluated.insert(0, _IterationStart(self, each))
                each.stoppers.append(_IterationEnd(self, each))
        self._swap(circuit, "stopping")
        return self

    def _swap(self, circuit, name: str) -> None:
        nodes = getattr(circuit, name)
        self._saved.append((circuit, name, nodes))
        setattr(circuit, name, [_Timed(n, self.stats[n], self.circuit) for n in nodes])

    def detach(self) -> None:
        for circuit, name, nodes in reversed(self._saved):
            setattr(circuit, name, nodes)
        self._saved = []
