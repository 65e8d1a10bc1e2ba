"""How Spark's failures become the project's errors.

What the Spark backend raises on purpose is a :class:`~datalog.errors.DatalogError`
(a :class:`~datalog.errors.DataError` for a fact file, an
:class:`~datalog.errors.EvaluationError` for a failing functor or an iteration
limit), with the same text and place as the circuit backend's for the same
program and data. Exceptions that Spark raises (a failing job) are translated at
the backend's boundary by :func:`translate`; nothing from pyspark leaks out.

A functor that fails inside a job (a division by zero) raises through Spark's
``raise_error`` with :data:`FUNCTOR_MARK`, the number of its rule in
:meth:`~datalog.plan.ir.ProgramPlan.rules` and the message; :func:`explain` maps
the number back to the rule, so the error points at the rule's span.

>>> from datalog.errors import Span
>>> from datalog.plan.ir import RulePlan
>>> rules = (RulePlan("q", (), (), "q(x / y) :- e(x, y).", Span("p.dl", 3, 1, 3, 20)),)
>>> str(explain(RuntimeError(
...     "[USER_RAISED_EXCEPTION] datalog functor error [0] division by zero"), rules))
'p.dl:3:1: error: division by zero in `q(x / y) :- e(x, y).`'
>>> explain(RuntimeError("boom"), rules) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from datalog.backends.errors import functor_error
from datalog.errors import DatalogError, EvaluationError
from datalog.plan.ir import RulePlan

#: The text our expressions hand to ``raise_error``, followed by the rule's
#: number in brackets and the message; :func:`explain` finds it again.
FUNCTOR_MARK = "datalog functor error "
_MARKED = re.compile(re.escape(FUNCTOR_MARK) + r"\[(\d*)\] (.*?)(?:\"? SQLSTATE|\n|$)")


def explain(exc: BaseException, rules: Sequence[RulePlan]) -> EvaluationError | None:
    """The functor error inside a Spark exception raised by one of our
    ``raise_error`` expressions, or ``None`` when it is something else."""
    match = _MARKED.search(str(exc))
    if match is None:
        return None
    number, message = match.group(1), match.group(2).strip()
    rule = rules[int(number)] if number and int(number) < len(rules) else None
    return functor_error(message, rule)


def is_spark_failure(exc: BaseException) -> bool:
    """Whether ``exc`` comes from Spark running (or analysing) a plan, as
    opposed to an error of ours (which must surface as it is)."""
    module = type(exc).__module__
    return (module.startswith(("pyspark.errors.exceptions.captured",
                               "pyspark.errors.exceptions.connect", "py4j"))
            and not isinstance(exc, DatalogError))


def translate(exc: BaseException, rules: Sequence[RulePlan]) -> DatalogError:
    """A Spark failure as one of our errors: a functor error with the place of
    its rule, anything else with the first line of Spark's message."""
    error = explain(exc, rules)
    if error is not None:
        return error
    lines = (str(exc).strip() or type(exc).__name__).splitlines()
    text = lines[0]
    # py4j puts the Java exception on a line of its own: ": java.lang....: why"
    cause = next((line[2:] for line in lines[1:] if line.startswith(": ")), None)
    if cause is not None:
        text = f"{text} {cause}"
    if "OutOfMemoryError" in text or (type(exc).__module__.startswith("py4j")
                                      and cause is None):
        text += " (if the JVM ran out of memory, give it more with spark.driver.memory)"
    return DatalogError(f"Spark failed: {text}")
