"""An incremental Datalog engine for the Soufflé dialect.

Takes a program's text (Soufflé's dialect) and facts; gives its relations, kept
up to date as facts are inserted and retracted (:class:`Program`,
:class:`Session`), or written to files by a whole run (:func:`run`). The stages,
top to bottom: :mod:`datalog.api` over :mod:`datalog.backends`, which run the
plan (:mod:`datalog.plan`) of the checked (:mod:`datalog.analysis`) syntax tree
(:mod:`datalog.syntax`); :mod:`datalog.dialect` and :mod:`datalog.errors` below
them all; :mod:`datalog.repl` on top of the API.

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

from datalog.api import (
    Answers,
    Delta,
    Program,
    Relation,
    RunResult,
    Session,
    Subscription,
    Transaction,
    run,
)
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
    "Answers",
    "CheckError",
    "DataError",
    "DatalogError",
    "Delta",
    "EvaluationError",
    "ParseError",
    "Program",
    "Relation",
    "RunResult",
    "Session",
    "StoreError",
    "Subscription",
    "Transaction",
    "__version__",
    "run",
]
