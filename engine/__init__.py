"""The runtime: incremental dataflow circuits with product-order time.

Takes a circuit built node by node (sources, operators, child circuits for
recursion, outputs) and, at each step (epoch), a batch of changes per source;
gives each output's difference for that epoch. It knows nothing about Datalog:
the circuit backend (:mod:`datalog.backends.circuit`) builds its circuits.

Vocabulary (used everywhere in this package, and nowhere for anything else):

row
    A tuple of values (int, float, str).
weight
    An int, positive or negative, never stored as zero.
ZSet
    row -> weight: a collection with multiplicities, or the *difference*
    between two versions of one.
IndexedZSet
    key -> value -> weight; the value is the whole row, the key some columns.
batch
    What one node emits (or a source is given) at one time: the difference
    there, a ZSet or an IndexedZSet. A transaction gives each changed input
    relation's source one batch.
time
    When a difference happens. In the root circuit it is the **epoch** ``e``
    alone; in a child circuit it is ``(epoch, iteration)``. Child circuits nest
    one level deep (one per recursive component), so no time has more than two
    coordinates, and the runtime passes the iteration as a plain int next to
    the epoch it is in. Times are compared in the **product order** (never
    lexicographically): the collection at ``t`` is the sum of the differences
    at all times ``<= t``. :class:`Timestamp` is the same as a value, for
    readers and tests.
epoch
    One tick of the root clock: one transaction (epoch 0 is the bulk load).
iteration
    One tick of a child circuit's clock within an epoch.
scope
    A clock level, as nodes see it: scope 0 is the root clock (epochs), scope 1
    a child circuit's (iterations); every node gets ``clock_start(scope, t)``
    and ``clock_stop(scope, t)`` (see :mod:`engine.node`).
Trace
    The history of an indexed Z-set: key -> value -> time -> weight, with past
    epochs compacted into one.
history
    Inside a child circuit's trace, the weights of one (key, value) by
    iteration: ``iteration -> weight`` for the past epochs merged, and again for
    the current epoch (stored compactly: see :mod:`engine.trace`).
contents
    An output's current collection, read from the trace of the node that
    keeps it (a Distinct's) rather than copied: :meth:`Circuit.contents`.
Circuit
    The root circuit: nodes evaluated in topological order once per epoch.
ChildCircuit
    A nested circuit for one recursive component: iterated each epoch to a
    fixed point.
Node
    A vertex: Source, Sink, Operator, Feedback, Import, Child (and Export, a
    child stream seen from the parent).
Stream
    The builder's handle on a node's output (``IndexedStream`` when indexed).
Feedback
    A node giving, at iteration ``i``, its input at ``i - 1``.
Import
    A node bringing a parent stream into a child circuit at iteration 0.

Transitive closure, as a child circuit::

    >>> from engine import Circuit
    >>> circuit = Circuit()
    >>> edge = circuit.source("edge", arity=2)
    >>> with circuit.child("path") as child:
    ...     e = child.import_(edge)
    ...     fb = child.feedback("path", arity=2)
    ...     # path(x, z) :- path(x, y), edge(y, z).
    ...     step = fb.stream.index_by((1,)).join(e.index_by((0,)),
    ...                                          lambda k, p, ed: (p[0], ed[1]))
    ...     new = e.plus(step).distinct()
    ...     fb.connect(new)
    ...     path = child.export(new)
    >>> circuit.output("path", path)
    >>> sorted(circuit.step({"edge": {(1, 2): 1, (2, 3): 1}})["path"].items())
    [((1, 2), 1), ((1, 3), 1), ((2, 3), 1)]
    >>> sorted(circuit.step({"edge": {(2, 3): -1}})["path"].items())
    [((1, 3), -1), ((2, 3), -1)]
"""

from engine import aggregates
from engine.circuit import ChildCircuit, Circuit
from engine.errors import (
                           ArityError,
                           BuildError,
                           EngineError,
                           EpochError,
                           IterationLimitError,
                           MemoryLimitError,
                           OperatorError,
                           WeightError,
)
from engine.node import Node
from engine.stream import IndexedStream, Stream
from engine.time import Timestamp
from engine.trace import Trace, ZSetTrace
from engine.zset import IndexedZSet, ZSet

__all__ = [
    "ArityError", "BuildError", "ChildCircuit", "Circuit", "EngineError", "EpochError",
    "IndexedStream", "IndexedZSet", "IterationLimitError", "MemoryLimitError", "Node",
    "OperatorError",
    "Stream", "Timestamp", "Trace", "WeightError", "ZSet", "ZSetTrace", "aggregates",
]
