"""One rule's pipeline (:class:`datalog.plan.ir.RulePlan`) as a chain of DataFrames.

A relation is a DataFrame with one column per attribute, named ``c0``, ``c1``,
... and typed as :mod:`datalog.backends.spark.expressions` says. A pipeline's row is a
DataFrame with one column per slot (``s0``, ``s1``, ...; an aggregate's body at
nesting depth ``d`` uses ``a{d}_0``, ...). Each step maps to DataFrame operations:

==========  ================================================================
step        DataFrame
==========  ================================================================
Scan        the relation, filtered by its constants and repeated columns
Join        an inner equi-join on the key expressions (a cross join without
            keys); the relation side is whatever the caller's ``source``
            gives: a delta, a cached relation partitioned by those keys, ...
Antijoin    ``left_anti`` on the keys
Filter      ``filter``
Assign      ``withColumn``; ``range`` as ``explode`` of a ``sequence``
Aggregate   the distinct seeds run through the body, ``groupBy`` the seed,
            then joined back (a left join with 0 for ``count``/``sum``, whose
            empty groups count; an inner join for min/max/mean, which have no
            value on nothing)
==========  ================================================================

Pipelines are bags: a row derived twice is there twice, which only aggregates
observe; the executor takes the distinct rows at the relation boundary.
"""

from __future__ import annotations

from collections.abc import Callable

from datalog.backends.spark.expressions import (
    F,
    Scope,
    compile_expr,
    flip,
    literal,
    not_nan,
    range_values,
    rule_number,
    type_of,
    unsigned_decimal,
)
from datalog.plan.ir import Aggregate, Antijoin, Assign, Col, Filter, Join, RulePlan, Scan

SPARK_TYPES = {"number": "long", "unsigned": "long", "float": "double", "symbol": "string"}

#: ``source(relation, step_index)`` -> the DataFrame a Scan/Join/Antijoin reads.
Source = Callable[[str, int], "DataFrame"]  # noqa: F821


def relation_schema(types) -> str:
    """The DDL schema of a relation with column ``types``.

    >>> relation_schema(("number", "symbol"))
    'c0 long, c1 string'
    """
    return ", ".join(f"c{i} {SPARK_TYPES[t]}" for i, t in enumerate(types))


class PipelineCompiler:
    """Builds the DataFrame of a rule's output; ``types`` maps relation names
    to their column types, ``spark`` makes the one-row start of aggregates."""

    def __init__(self, spark, types: dict[str, tuple[str, ...]], rules=()):
        self.spark = spark
        self.types = types
        #: id of each RulePlan -> its number in ``ProgramPlan.rules()`` (for errors)
        self.numbers = {id(rule): n for n, rule in enumerate(rules)}

    def rule(self, rule: RulePlan, source: Source):
        """The rows ``rule`` derives (a bag), as a relation DataFrame."""
        with rule_number(self.numbers.get(id(rule), "")):
            df, scope = self.steps(rule.steps, None, Scope((), ()), source, depth=0)
            column_types = self.types[rule.relation]
            return df.select(*[
                compile_expr(e, scope, t).cast(SPARK_TYPES[t]).alias(f"c{i}")
                for i, (e, t) in enumerate(zip(rule.head, column_types))])

    def steps(self, steps, df, scope: Scope, source: Source, depth: int, offset: int = 0):
        """Runs ``steps`` from the row DataFrame ``df`` (``None``: the single
        empty row); ``offset`` numbers the steps for ``source``."""
        for index, step in enumerate(steps):
            at = offset + index if depth == 0 else -1
            if df is None and not isinstance(step, Scan):
                df = self.unit()
            if isinstance(step, Scan):
                df, scope = self.scan(step, source(step.relation, at), scope, depth)
            elif isinstance(step, Join):
                df, scope = self.join(step, df, source(step.relation, at), scope, depth)
            elif isinstance(step, Antijoin):
                df = self.antijoin(step, df, source(step.relation, at), scope, depth)
            elif isinstance(step, Filter):
                df = df.filter(compile_expr(step.condition, scope))
            elif isinstance(step, Assign):
                name = slot_name(depth, len(scope.names))
                t = type_of(step.expr, scope)
                if step.multi:
                    df = df.withColumn(name, F().explode(range_values(step.expr, scope)))
                else:
                    df = df.withColumn(name, compile_expr(step.expr, scope))
                scope = scope.extend(name, t)
            elif isinstance(step, Aggregate):
                df, scope = self.aggregate(step, df, scope, source, depth)
            else:
                raise TypeError(f"unknown plan step {step!r}")
        if df is None:
            df = self.unit()
        return df, scope

    def unit(self):
        """The DataFrame of one row with no columns."""
        return self.spark.range(1).select()

    # ------------------------------------------------------------ steps

    def _filtered(self, relation, step):
        types = self.types[step.relation]
        for column, value in step.consts:
            relation = relation.filter(F().col(f"c{column}") == literal(value, types[column]))
        for a, b in step.equal:
            relation = relation.filter(F().col(f"c{a}") == F().col(f"c{b}"))
        return relation

    def scan(self, step: Scan, relation, scope: Scope, depth: int):
        relation = self._filtered(relation, step)
        types = self.types[step.relation]
        names = []
        for column in step.columns:
            names.append(slot_name(depth, len(scope.names)))
            scope = scope.extend(names[-1], types[column])
        return relation.select(*[F().col(f"c{c}").alias(n)
                                 for c, n in zip(step.columns, names)]), scope

    def _keys(self, df, keys, scope: Scope, types, depth: int):
        """The row's side of an equi-join: a column per key (computed into a
        temporary column when the key is an expression)."""
        names = []
        for j, (column, expr) in enumerate(keys):
            if isinstance(expr, Col):
                names.append(scope.names[expr.index])
            else:
                name = f"k{depth}_{j}"
                df = df.withColumn(name, compile_expr(expr, scope, types[column])
                                   .cast(SPARK_TYPES[types[column]]))
                names.append(name)
        return df, names

    def join(self, step: Join, df, relation, scope: Scope, depth: int):
        f = F()
        types = self.types[step.relation]
        relation = self._filtered(relation, step)
        df, left_keys = self._keys(df, step.keys, scope, types, depth)
        wanted = sorted({c for c, _ in step.keys} | set(step.columns))
        right = relation.select(*[f.col(f"c{c}").alias(f"r{depth}_{c}") for c in wanted])
        if step.keys:
            condition = [f.col(left) == f.col(f"r{depth}_{c}")
                         for left, (c, _) in zip(left_keys, step.keys)]
            joined = df.join(right, on=condition, how="inner")
        else:
            joined = df.crossJoin(right)
        new = []
        for column in step.columns:
            new.append(slot_name(depth, len(scope.names)))
            scope = scope.extend(new[-1], types[column])
        out = joined.select(*[f.col(n) for n in scope.names[:len(scope.names) - len(new)]],
                            *[f.col(f"r{depth}_{c}").alias(n)
                              for c, n in zip(step.columns, new)])
        return out, scope

    def antijoin(self, step: Antijoin, df, relation, scope: Scope, depth: int):
        f = F()
        types = self.types[step.relation]
        df, left_keys = self._keys(df, step.keys, scope, types, depth)
        right = relation.select(*[f.col(f"c{c}").alias(f"n_{c}") for c, _ in step.keys])
        if step.keys:
            condition = [f.col(left) == f.col(f"n_{c}")
                         for left, (c, _) in zip(left_keys, step.keys)]
            out = df.join(right, on=condition, how="left_anti")
        else:
            out = df.join(right, how="left_anti")
        return out.select(*scope.names)

    def aggregate(self, step: Aggregate, df, scope: Scope, source: Source, depth: int):
        """``step`` as a group-by over the distinct seeds, joined back."""
        f = F()
        inner_depth = depth + 1
        seed_names = [f"g{inner_depth}_{i}" for i in range(len(step.seed))]
        seed_scope = Scope(tuple(seed_names), tuple(scope.types[i] for i in step.seed))
        if step.seed:
            seeds = df.select(*[f.col(scope.names[i]).alias(n)
                                for i, n in zip(step.seed, seed_names)]).distinct()
        else:
            seeds = self.unit()
        inner, inner_scope = self.steps(step.body, seeds, seed_scope, source, inner_depth)
        name = slot_name(depth, len(scope.names))
        value = aggregate_column(step, inner_scope)
        grouped = inner.groupBy(*seed_names).agg(value.alias(name))
        if step.seed:
            condition = [f.col(scope.names[i]) == f.col(n)
                         for i, n in zip(step.seed, seed_names)]
        else:
            condition = None
        empty_has_value = step.kind in ("count", "sum")
        joined = df.join(grouped, on=condition, how="left" if empty_has_value else "inner")
        result = f.col(name)
        if empty_has_value:
            zero = literal(0.0 if step.type == "float" else 0, step.type)
            result = f.coalesce(result, zero)
        out = joined.select(*[f.col(n) for n in scope.names], result.alias(name))
        return out, scope.extend(name, step.type)


def aggregate_column(step: Aggregate, scope: Scope):
    """The Spark aggregate function of ``step`` over its body's rows."""
    f = F()
    if step.kind == "count":
        return f.count(f.lit(1))
    target_type = type_of(step.target, scope)
    value = compile_expr(step.target, scope)
    if step.kind == "sum":
        total = f.sum(value).cast(SPARK_TYPES[step.type])
        return not_nan(total) if step.type == "float" else total
    if step.kind in ("min", "max"):
        pick = f.min if step.kind == "min" else f.max
        if target_type == "unsigned":
            return flip(pick(flip(value)))
        return pick(value)
    if step.kind == "mean":
        if target_type == "float":
            return not_nan(f.sum(value) / f.count(f.lit(1)))
        exact = unsigned_decimal(value) if target_type == "unsigned" else value.cast(
            "decimal(20,0)")
        return f.sum(exact).cast("double") / f.count(f.lit(1))
    raise ValueError(f"unknown aggregate `{step.kind}`")


def slot_name(depth: int, index: int) -> str:
    """The column of slot ``index`` at aggregate nesting ``depth``.

    >>> slot_name(0, 3), slot_name(1, 0)
    ('s3', 'a1_0')
    """
    return f"s{index}" if depth == 0 else f"a{depth}_{index}"
