"""The errors of the Spark executor.

Every error the executor raises on purpose is a :class:`SparkEngineError`, a kind
of the engine's :class:`~engine.errors.EngineError`, whose ``str()`` is the one
text the command line prints. Exceptions that Spark raises (a failing job, an
expression error such as a division by zero) are translated at the executor's
boundary by :func:`explain`; nothing from pyspark leaks out untranslated.

>>> str(FactFileError("facts/edge.facts", 3, "expected 2 columns, found 1"))
'facts/edge.facts:3: error: expected 2 columns, found 1'
"""

from __future__ import annotations

import re

from engine.errors import EngineError


class SparkEngineError(EngineError):
    """An error of the Spark executor; ``str()`` is the whole message."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"error: {self.message}"


class FactFileError(SparkEngineError):
    """A fact file does not fit its relation: it names the file and, where it
    can be found, the line."""

    def __init__(self, path: str, line: int | None, message: str):
        super().__init__(message)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: error: {self.message}"


class SparkEvaluationError(SparkEngineError):
    """Evaluation could not finish: an iteration limit, a failing functor
    (``location`` is then the ``path:line:column`` of its rule)."""

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.location = location

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}error: {self.message}"


class SparkIterationLimitError(SparkEvaluationError):
    """A recursive stratum did not reach its fixed point within the limit."""


#: The text our expressions hand to ``raise_error`` (followed by the rule's
#: location in brackets and the message); :func:`explain` finds it again.
FUNCTOR_MARK = "datalog functor error "
_MARKED = re.compile(re.escape(FUNCTOR_MARK) + r"\[([^\]]*)\] (.*?)(?:\"? SQLSTATE|\n|$)")


def explain(exc: BaseException) -> SparkEvaluationError | None:
    """The functor error inside a Spark exception raised by one of our
    ``raise_error`` expressions, or ``None`` when it is something else.

    >>> str(explain(RuntimeError(
    ...     "[USER_RAISED_EXCEPTION] datalog functor error [p.dl:3:1] division by zero")))
    'p.dl:3:1: error: division by zero'
    >>> explain(RuntimeError("boom")) is None
    True
    """
    match = _MARKED.search(str(exc))
    if match is None:
        return None
    location, message = match.group(1), match.group(2).strip()
    return SparkEvaluationError(message, location or None)
