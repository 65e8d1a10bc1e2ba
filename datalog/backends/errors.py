"""Errors that both backends raise for the same reason, with the same text.

>>> from datalog.errors import Span
>>> from datalog.plan.ir import RulePlan, Scan, StratumPlan
>>> rules = tuple(RulePlan("c", (Scan("c", (0,)),), (), span=Span("p.dl", line, 1, line, 9))
...               for line in (3, 5))
>>> print(iteration_limit(StratumPlan(("c",), True, rules), 3))  # doctest: +NORMALIZE_WHITESPACE
p.dl:3:1: error: iteration limit reached: the recursive stratum {c} did not reach a
fixed point within 3 iterations; its recursive rules are at p.dl:3:1, p.dl:5:1
hint: raise the limit with max_iterations= (API) or --max-iterations (datalog run); there
is no limit unless one is given
"""

from __future__ import annotations

from datalog.errors import Diagnostic, EvaluationError
from datalog.plan.ir import RulePlan, StratumPlan


def iteration_limit(stratum: StratumPlan, limit: int) -> EvaluationError:
    """A recursive stratum that did not reach its fixed point within ``limit``
    iterations, placed at its first recursive rule."""
    own = set(stratum.relations)
    spans = [rule.span for rule in stratum.rules if own & set(rule.reads()) and rule.span]
    places = ", ".join(dict.fromkeys(f"{s.path}:{s.line}:{s.column}" for s in spans))
    return EvaluationError([Diagnostic(
        "error", f"iteration limit reached: the recursive stratum "
                 f"{{{', '.join(stratum.relations)}}} did not reach a fixed point within "
                 f"{limit} iterations" + (f"; its recursive rules are at {places}"
                                          if places else ""),
        spans[0] if spans else None,
        hint="raise the limit with max_iterations= (API) or --max-iterations (datalog run); "
             "there is no limit unless one is given")])


def functor_error(message: str, rule: RulePlan | None) -> EvaluationError:
    """A functor that failed (a division by zero) in ``rule``, placed at the rule."""
    if rule is None:
        return EvaluationError(message)
    return EvaluationError([Diagnostic("error", f"{message} in `{rule.label}`", rule.span)])
