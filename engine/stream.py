"""The builder: ``Stream`` and ``IndexedStream`` handles over circuit nodes.

A :class:`Stream` is a Z-set-valued stream of a circuit; an
:class:`IndexedStream` is the same rows indexed by a key. Methods add nodes and
return new handles, so a query plan reads like the query::

    path.index_by((1,)).join(edge.index_by((0,)), lambda k, p, e: (p[0], e[1])).distinct()

``index_by`` is memoized per (stream, columns): every join that reads the same
stream by the same key shares one index and one trace. Builder methods accept
``label=`` (e.g. the rule text), shown by ``describe()`` and ``to_dot()``.

>>> from engine import Circuit
>>> c = Circuit()
>>> edge = c.source("edge", arity=2)
>>> edge.index_by((0,)) is edge.index_by((0,))
True
"""

from __future__ import annotations

from collections.abc import Callable

from engine.codegen import key_function
from engine.errors import BuildError
from engine.operators.aggregate import AggregateNode
from engine.operators.delay import DelayNode, IntegrateNode
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.operators.join import JoinNode, NestedJoinNode, TraceNode
from engine.operators.linear import InspectNode, LinearNode, PlusNode
from engine.operators.rootcols import keep_left


def _identity(row):
    return row


class Stream:
    """A stream of Z-set differences in one circuit (module docstring)."""

    __slots__ = ("circuit", "node")

    def __init__(self, circuit, node):
        self.circuit = circuit
        self.node = node

    def _add(self, node) -> Stream:
        return Stream(self.circuit, self.circuit.add(node))

    def _check(self, other: Stream) -> None:
        if other.circuit is not self.circuit:
            raise BuildError("streams of different circuits cannot be combined; bring a "
                             "parent stream into a child circuit with import_()")

    # -- linear ------------------------------------------------------------

    def map(self, fn: Callable, label: str = "", vector=None) -> Stream:
        """Map: each row ``r`` becomes ``fn(r)`` (weights of equal results add).

        ``vector`` (here and for ``filter`` and ``flat_map``): an
        :class:`engine.vector.Program` computing the same on columns, for
        large columnar batches."""
        return self._add(LinearNode(self.node, [("map", fn)], None, label, [vector]))

    def project(self, columns, label: str = "") -> Stream:
        """Map to ``tuple(row[c] for c in columns)``, written inline in the fused loop.

        >>> from engine import Circuit
        >>> c = Circuit(); r = c.source("r", arity=3)
        >>> c.output("out", r.project((2, 0)))
        >>> c.step({"r": [(1, 2, 3)]})
        {'out': ZSet({(3, 1): 1})}
        """
        columns = tuple(columns)
        if not all(type(c) is int and c >= 0 for c in columns):
            raise BuildError(f"project: columns must be non-negative ints, got {columns!r}")
        return self._add(LinearNode(self.node, [("project", columns)], None, label))

    def filter(self, predicate: Callable, label: str = "", vector=None) -> Stream:
        """Filter: rows for which ``predicate(r)`` is true."""
        return self._add(LinearNode(self.node, [("filter", predicate)], None, label, [vector]))

    def flat_map(self, fn: Callable, label: str = "", vector=None) -> Stream:
        """FlatMap: each row ``r`` becomes every row of ``fn(r)``."""
        return self._add(LinearNode(self.node, [("flat_map", fn)], None, label, [vector]))

    def negate(self, label: str = "") -> Stream:
        """Negate: every weight's sign flipped."""
        return self._add(LinearNode(self.node, [("negate", None)], None, label))

    def plus(self, *others: Stream, label: str = "") -> Stream:
        """Plus: the sum of this stream and ``others``."""
        for other in others:
            self._check(other)
        if not others:
            return self
        return self._add(PlusNode([self.node] + [o.node for o in others], label))

    def minus(self, other: Stream, label: str = "") -> Stream:
        """Minus: this stream plus the negation of ``other``."""
        self._check(other)
        return self.plus(other.negate(), label=label)

    def inspect(self, callback: Callable, label: str = "") -> Stream:
        """Inspect: ``callback(batch, time)`` for every non-empty batch; passes it on."""
        return self._add(InspectNode(self.node, callback, label))

    def consolidate(self, label: str = "") -> Stream:
        """Consolidate: every batch is already consolidated (one weight per row,
        no zeros), so this is the stream itself."""
        return self

    def index_by(self, columns, label: str = "") -> IndexedStream:
        """Index With key ``tuple(row[c] for c in columns)``; value: the row."""
        return self._index(("cols", tuple(columns)), label)

    def index_with(self, key_fn: Callable, label: str = "") -> IndexedStream:
        """Index With key ``key_fn(row)``; value: the row."""
        return self._index(("fn", key_fn), label)

    def _index(self, index, label: str) -> IndexedStream:
        memo_key = (id(self.node), index[0], index[1] if index[0] == "cols" else id(index[1]))
        found = self.circuit.memo.get(memo_key)
        if found is None:
            found = IndexedStream(self.circuit, self, index, label)
            self.circuit.memo[memo_key] = found
        return found

    # -- non-linear ----------------------------------------------------------

    def distinct(self, label: str = "") -> Stream:
        """Distinct: Distinct Incremental in the root, Distinct Trace in a child."""
        cls = DistinctTraceNode if self.circuit.nested else DistinctNode
        return self._add(cls(self.node, label))

    def delay(self, label: str = "") -> Stream:
        """Delay (z^-1): the previous epoch (root) or iteration (child)."""
        return self._add(DelayNode(self.node, label))

    def integrate(self, label: str = "") -> Stream:
        """Integrate (trace append + consolidate): the whole collection at each time."""
        return self._add(IntegrateNode(self.node, self.circuit.nested, label))

    def __repr__(self) -> str:
        return f"Stream({self.node!r})"


class IndexedStream:
    """The rows of a stream seen by a key: what joins, antijoins and aggregates
    read. It adds no node of its own: joins iterate the row differences and
    compute keys inline; the one TraceNode per (stream, key) keeps the history
    by key."""

    __slots__ = ("circuit", "stream", "index", "label", "_trace")

    def __init__(self, circuit, stream: Stream, index, label: str = ""):
        self.circuit, self.stream, self.index, self.label = circuit, stream, index, label
        self._trace = None

    @property
    def node(self):
        """The node producing the rows."""
        return self.stream.node

    def trace_node(self) -> TraceNode:
        """The one trace of this (stream, key), created on first use."""
        if self._trace is None:
            self._trace = self.circuit.add(
                TraceNode(self.stream.node, self.index, self.circuit.nested, self.label))
        return self._trace

    def join(self, other: IndexedStream, combine: Callable, label: str = "") -> Stream:
        """Join on equal keys: ``combine(key, left_row, right_row)`` -> output row;
        weights multiply; incremental and bilinear (``engine.operators.join``).

        ``combine`` may also be a projection ``((side, column), ...)``: the output
        row takes ``column`` of the left row (side 0) or the right row (side 1),
        written inline in the join loop (no call per pair).

        >>> from engine import Circuit
        >>> c = Circuit(); a = c.source("a", arity=2); b = c.source("b", arity=2)
        >>> c.output("ab", a.index_by((1,)).join(b.index_by((0,)), ((0, 0), (1, 1))))
        >>> c.step({"a": [(1, 2)], "b": [(2, 3)]})
        {'ab': ZSet({(1, 3): 1})}
        """
        if other.circuit is not self.circuit:
            raise BuildError("cannot join streams of different circuits; use import_()")
        if not callable(combine):
            combine = tuple(tuple(pair) for pair in combine)
            if not all(len(p) == 2 and p[0] in (0, 1) and type(p[1]) is int and p[1] >= 0
                       for p in combine):
                raise BuildError(f"join: a projection is ((side, column), ...) with side 0 "
                                 f"or 1, got {combine!r}")
        cls = NestedJoinNode if self.circuit.nested else JoinNode
        node = cls(self.stream.node, other.stream.node, self.trace_node(),
                   other.trace_node(), combine, label)
        return Stream(self.circuit, self.circuit.add(node))

    def keys(self) -> Stream:
        """The distinct keys of this stream, as rows (memoized)."""
        kind, spec = self.index
        memo_key = (id(self.node), "keys", kind, spec if kind == "cols" else id(spec))
        found = self.circuit.memo.get(memo_key)
        if found is None:
            found = self.stream.map(key_function(self.index)).distinct()
            self.circuit.memo[memo_key] = found
        return found

    def semijoin(self, other: IndexedStream, label: str = "") -> Stream:
        """Rows of this stream whose key has a row in ``distinct(other)``."""
        kind, spec = other.index
        if kind == "cols":  # keys of k columns are rows of k columns: (row[0], ...)
            keys = other.keys().index_by(tuple(range(len(spec))))
        else:
            keys = other.keys().index_with(_identity)
        return self.join(keys, keep_left, label)

    def antijoin(self, other: IndexedStream, label: str = "") -> Stream:
        """Rows of this stream whose key has no row in ``distinct(other)``:
        ``rows - semijoin(rows, other)``."""
        return self.stream.minus(self.semijoin(other), label=label)

    def aggregate(self, fn: Callable, label: str = "") -> Stream:
        """Aggregate each group (root circuit only); see ``engine.operators.aggregate``."""
        if self.circuit.nested:
            raise BuildError("aggregates run in the root circuit only (not inside recursion)")
        node = AggregateNode(self.stream.node, self.trace_node(), fn, label)
        return Stream(self.circuit, self.circuit.add(node))

    def __repr__(self) -> str:
        return f"IndexedStream({self.node!r})"
