"""The engine's own error family.

Every error the runtime raises is an :class:`EngineError`. The language package
turns them into ``DatalogError`` diagnostics; the engine itself knows nothing
about source positions, so each error names what it can: the relation (source
label), the child circuit, or the node whose user function failed.

>>> try:
...     raise ArityError("edge", (1, 2, 3), 2)
... except EngineError as error:
...     print(error)
relation `edge`: row (1, 2, 3) has 3 columns, expected 2
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every runtime error; a failed step leaves the circuit unchanged."""


class ArityError(EngineError):
    """A row given to a source has the wrong number of columns (or is not a tuple)."""

    def __init__(self, relation: str, row: object, arity: int):
        self.relation, self.row, self.arity = relation, row, arity
        if isinstance(row, tuple):
            what = f"row {row!r} has {len(row)} columns, expected {arity}"
        else:
            what = f"row {row!r} is a {type(row).__name__}, expected a tuple of {arity} values"
        super().__init__(f"relation `{relation}`: {what}")


class WeightError(EngineError):
    """A weight given to a source is not an integer."""

    def __init__(self, relation: str, row: object, weight: object):
        self.relation, self.row, self.weight = relation, row, weight
        super().__init__(
            f"relation `{relation}`: row {row!r} has weight {weight!r}, expected an int")


class EpochError(EngineError):
    """An epoch was given out of order (each step is the next epoch)."""


class IterationLimitError(EngineError):
    """A child circuit did not reach its fixed point within ``max_iterations``."""

    def __init__(self, child: str, limit: int, epoch: int):
        self.child, self.limit, self.epoch = child, limit, epoch
        super().__init__(
            f"child circuit `{child}` did not reach a fixed point within {limit} "
            f"iterations at epoch {epoch}")


class MemoryLimitError(EngineError):
    """The process's resident memory passed a circuit's memory limit during a
    step (:mod:`engine.memory`); the step was rolled back."""

    pending: tuple[int, int] = (0, 0)  # the watchdog's sizes for its exception

    def __init__(self, used: int, limit: int):
        self.used, self.limit = used, limit
        super().__init__(f"memory limit reached: the process holds {used / 2**20:,.0f} MiB, "
                         f"more than the limit of {limit / 2**20:,.0f} MiB")


class OperatorError(EngineError):
    """A user function (map, filter, combine, aggregate, ...) raised; the original
    exception is ``__cause__`` and ``node_label`` names the node."""

    def __init__(self, node_label: str, error: BaseException):
        self.node_label, self.error = node_label, error
        super().__init__(f"in node `{node_label}`: {type(error).__name__}: {error}")


class BuildError(EngineError):
    """The circuit was put together wrongly (a stream used outside its circuit, a
    feedback never connected, a node added after the first step, ...)."""


class SparkUnavailableError(EngineError):
    """pyspark, or the Java runtime it needs, is missing or cannot start (a trace
    cannot spill, a Spark session cannot be made); ``str()`` says what to install."""

    def __str__(self) -> str:
        return f"error: {self.args[0]}"
