"""Drive single operator nodes at chosen (epoch, iteration) times, outside a circuit.

``run_nested`` plays the role of a child circuit's clock for a few nodes: at each
epoch it visits iteration 0, then jumps to the next iteration where an input has
a batch or a node reports ``pending()`` work, exactly like ``ChildCircuit``; it
records each node's output at each visited time. ``integral`` sums a timed
Z-set over all times ``<= t`` in the product order.
"""

from __future__ import annotations

from types import SimpleNamespace

from engine.time import leq
from engine.zset import EMPTY


class Holder:
    """Stands in for an upstream node: its ``out`` is set by the driver."""

    kind = "holder"
    label = "holder"
    iteration_hook = False
    may_hold_work = False

    def __init__(self):
        self.out = EMPTY
        self.inputs, self.reads = [], []

    def clock_start(self, scope, time):
        pass

    def clock_stop(self, scope, time):
        pass

    def rollback(self):
        pass


def place(nodes, nested: bool):
    """Give nodes a stand-in circuit and compile them."""
    fake = SimpleNamespace(nested=nested, node=None, parent=None)
    for node in nodes:
        node.circuit = fake
    for node in nodes:
        node.prepare()


def run_nested(holders: dict, series: dict, nodes: list, watch, epochs: int,
               visit_all: int | None = None) -> dict:
    """Run ``nodes`` (in evaluation order) over ``epochs``; ``series`` maps each
    holder name to {(e, i): batch}. Returns {(e, i): output of ``watch``}."""
    outputs: dict = {}
    for e in range(epochs):
        for node in nodes:
            node.clock_start(0, e)
        i = 0
        while True:
            for name, holder in holders.items():
                holder.out = series[name].get((e, i), EMPTY)
            for node in nodes:
                node.evaluate(i)
            if watch.out:
                outputs[(e, i)] = dict(watch.out)
            for node in nodes:
                if node.iteration_hook:
                    node.clock_stop(1, i)
            later = [j for s in series.values() for (te, j) in s if te == e and j > i]
            for node in nodes:
                p = node.pending() if node.may_hold_work else None
                if p is not None:
                    later.append(p if p > i else i + 1)  # Feedback/Delay: next iteration
            if visit_all is not None and i < visit_all:
                later.append(i + 1)
            if not later:
                break
            nxt = min(later)
            assert nxt > i, "pending work must be for a later iteration"
            i = nxt
        for node in nodes:
            node.clock_stop(0, e)
    return outputs


def run_root(holders: dict, series: dict, nodes: list, watch, epochs: int) -> dict:
    """Root scope: one evaluation per epoch. Returns {e: output of ``watch``}."""
    outputs: dict = {}
    for e in range(epochs):
        for node in nodes:
            node.clock_start(0, e)
        for name, holder in holders.items():
            holder.out = series[name].get(e, EMPTY)
        for node in nodes:
            node.evaluate(0)
        if watch.out:
            outputs[e] = dict(watch.out)
        for node in nodes:
            node.clock_stop(0, e)
    return outputs


def integral(timed: dict, t, indexed: bool = False) -> dict:
    """Sum of ``timed[s]`` over all ``s <= t`` (product order; ints compare as is)."""
    out: dict = {}
    for s, batch in timed.items():
        if not (leq(s, t) if isinstance(t, tuple) else s <= t):
            continue
        if indexed:
            for key, values in batch.items():
                for value, w in values.items():
                    out[(key, value)] = out.get((key, value), 0) + w
        else:
            for row, w in batch.items():
                out[row] = out.get(row, 0) + w
    return {k: w for k, w in out.items() if w}


def grid(epochs: int, iterations: int):
    return [(e, i) for e in range(epochs) for i in range(iterations)]
