"""An incremental Datalog engine for the Soufflé dialect."""

from datalog.errors import CheckError, DatalogError, DataError, EvaluationError, ParseError
from datalog.version import __version__

__all__ = ["DatalogError", "ParseError", "CheckError", "DataError", "EvaluationError",
           "__version__"]
