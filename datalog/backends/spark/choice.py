"""``choice-domain`` relations on Spark (what is chosen: :mod:`datalog.plan.choice`).

One domain maps to a window: the rows ranked within each domain value in the
engine's order of rows, the first kept (:func:`least_per_domain`). In a recursive
stratum the semi-naive loop does the same per round: the new candidates whose
domain value the relation already holds are dropped (a ``left_anti`` join on the
domain's columns instead of on all columns), and the least of the rest per value
is the round's delta. Several domains make the choice a greedy matching taken
row after row, which does not map to DataFrame operators: such a relation is an
error naming its rule (:func:`refuse_matchings`), before Spark starts.
"""

from __future__ import annotations

from datalog.backends.spark.expressions import F
from datalog.errors import Diagnostic, EvaluationError
from datalog.plan.ir import ProgramPlan

#: ``unsigned`` values travel as the signed 64-bit integer of the same bits;
#: flipping the sign bit orders them as unsigned numbers.
_SIGN = -(2 ** 63)


def least_per_domain(df, domain: tuple[int, ...], types: tuple[str, ...]):
    """The least row of ``df`` (columns ``c0``, ``c1``, ...) for each value of
    the ``domain`` columns, in the local engine's order: column by column,
    numbers by value (unsigned ones as unsigned), symbols by code point."""
    from pyspark.sql import Window

    f = F()
    order = [f.col(f"c{i}").bitwiseXOR(f.lit(_SIGN)) if t == "unsigned" else f.col(f"c{i}")
             for i, t in enumerate(types)]
    window = Window.partitionBy(*[f"c{i}" for i in domain]).orderBy(*order)
    return df.withColumn("_choice", f.row_number().over(window))\
        .where(f.col("_choice") == 1).drop("_choice")


def refuse_matchings(plan: ProgramPlan) -> None:
    """A relation with several choice domains is evaluated by the local engine
    only: an error at its first rule (or naming it, when only facts and inputs
    fill it)."""
    problems = []
    for name, domains in plan.choices.items():
        if len(domains) < 2:
            continue
        rule = next((r for r in plan.rules() if r.relation == name), None)
        where = f" (in `{rule.label}`)" if rule is not None else ""
        problems.append(Diagnostic(
            "error", f"`{name}` has several choice domains, which the Spark engine does not "
                     f"evaluate{where}", rule.span if rule is not None else None,
            hint="the choice is then a matching made one row after another; run with "
                 "--engine local (engine=\"local\")"))
    if problems:
        raise EvaluationError(problems)
