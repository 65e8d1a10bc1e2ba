"""An incremental Datalog engine for the Soufflé dialect.

>>> import datalog
>>> session = datalog.Program('''
...     .decl edge(x: number, y: number)
...     .decl path(x: number, y: number)
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''').session()
>>> sorted(session.insert("edge", (1, 2), (2, 3)).inserted["path"])
[(1, 2), (1, 3), (2, 3)]
"""

from datalog.api import Delta, Program, Session, Subscription, Transaction
from datalog.errors import (
    CheckError,
    DataError,
    DatalogError,
    EvaluationError,
    ParseError,
    StoreError,
)
from datalog.version import __version__

__all__ = [
    "CheckError",
    "DataError",
    "DatalogError",
    "Delta",
    "EvaluationError",
    "ParseError",
    "Program",
    "Session",
    "StoreError",
    "Subscription",
    "Transaction",
    "__version__",
]
