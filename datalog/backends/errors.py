"""Errors that both backends raise for the same reason, with the same text.

>>> from datalog.plan.ir import StratumPlan
>>> print(iteration_limit(StratumPlan(("c",), True, ()), 3))  # doctest: +NORMALIZE_WHITESPACE
error: iteration limit reached: the recursive stratum {c} did not reach a fixed
point within 3 iterations
hint: raise the limit with max_iterations= (API) or --max-iterations (datalog run)
"""

from __future__ import annotations

from datalog.errors import Diagnostic, EvaluationError
from datalog.plan.ir import RulePlan, StratumPlan


def iteration_limit(stratum: StratumPlan, limit: int) -> EvaluationError:
    """A recursive stratum that did not reach its fixed point within ``limit``
    iterations, placed at its first recursive rule."""
    own = set(stratum.relations)
    span = next((rule.span for rule in stratum.rules if own & set(rule.reads())), None)
    return EvaluationError([Diagnostic(
        "error", f"iteration limit reached: the recursive stratum "
                 f"{{{', '.join(stratum.relations)}}} did not reach a fixed point within "
                 f"{limit} iterations", span,
        hint="raise the limit with max_iterations= (API) or --max-iterations (datalog run)")])


def functor_error(message: str, rule: RulePlan | None) -> EvaluationError:
    """A functor that failed (a division by zero) in ``rule``, placed at the rule."""
    if rule is None:
        return EvaluationError(message)
    return EvaluationError([Diagnostic("error", f"{message} in `{rule.label}`", rule.span)])
