"""Evaluating a :class:`~datalog.plan.ir.ProgramPlan` with Spark DataFrames.

Strata run in order; each relation ends as a materialised DataFrame (a
checkpoint: its lineage cut, its rows computed once). A non-recursive stratum is
one query per relation: the distinct union of its facts, its input and its
rules' outputs. A recursive stratum is a semi-naive loop:

::

    all_0   = distinct(base + rules that read no relation of the stratum)
    delta_0 = all_0
    repeat:                       # one iteration
        new     = every variant of every recursive rule: the k-th occurrence of
                  a stratum relation reads delta_i, the others all_i
        delta_i+1 = distinct(new) left_anti all_i      (materialised)
        all_i+1   = all_i + delta_i+1
    until every delta is empty

What keeps an iteration cheap (the lessons of BigDatalog, SIGMOD 2016, and
RaSQL, SIGMOD 2019, in DataFrame terms):

- **Static relations never move.** The relations of earlier strata that a
  recursive rule joins are repartitioned and sorted once by the join key and
  cached (or broadcast by Spark when small), so each iteration shuffles and
  sorts only the delta.
- **The accumulated relation is never re-shuffled or copied.** ``all`` is kept
  as a list of materialised deltas, each hash-partitioned by all its columns
  (what ``distinct`` leaves); the new rows are ``left_anti``-joined with each
  piece in turn, co-partitioned, so only the new rows move, and adding a delta
  is free. (A union of the pieces would forget their partitioning and be
  shuffled whole every iteration.) Every ``MAX_PIECES`` iterations the pieces
  are merged and repartitioned once, so plans stay small.
- **Dedupe before the anti-join**: ``distinct(new)`` shrinks the new rows first
  and partitions them like ``all``.
- **Lineage is cut every iteration** with ``localCheckpoint`` (or a reliable
  ``checkpoint`` when ``spark.checkpoint.dir`` is set, for clusters); both exist
  in Spark Connect, and nothing here uses RDDs.
- **Few partitions, no adaptive execution**: it would change partition counts
  between iterations (losing the co-partitioning) and it runs a plan's shuffle
  stages as soon as the plan is checkpointed, one job each.

Integer arithmetic needs ``spark.sql.ansi.enabled=false`` (wrapping, as in the
local engine); the executor sets it, and the two settings above, for the run
and restores them after.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from datalog.backends.errors import iteration_limit
from datalog.backends.spark.choice import least_per_domain, refuse_matchings
from datalog.backends.spark.errors import is_spark_failure, translate
from datalog.backends.spark.expressions import F
from datalog.backends.spark.pipeline import SPARK_TYPES, PipelineCompiler, relation_schema
from datalog.errors import Diagnostic, EvaluationError
from datalog.plan.ir import Call, Join, ProgramPlan, RulePlan, StratumPlan, SubsumptionPlan
from datalog.plan.subsumption import PAIR


def refuse_bound_functors(plan: ProgramPlan) -> None:
    """User-defined functors and ``autoinc()`` are evaluated by the local engine
    only (their implementations and the counter's state live in the Python
    process): a rule calling one is an error at the rule, before any Spark job."""
    problems = []
    for rule in plan.rules():
        for op in dict.fromkeys(_calls(rule)):
            shown = "autoinc()" if op == "autoinc" else f"the user-defined functor `{op}`"
            problems.append(Diagnostic(
                "error", f"{shown} is evaluated by the local engine only, not on Spark "
                         f"(in `{rule.label}`)", rule.span,
                hint="run with --engine local (engine=\"local\"), which can still spill "
                     "large traces to Spark with --spill-threshold"))
    if problems:
        raise EvaluationError(sorted(problems, key=lambda d: (d.span is not None, d.span and (
            d.span.path, d.span.line, d.span.column))))


def refuse_recursive_subsumption(plan: ProgramPlan) -> None:
    """Pruning a relation inside its recursion is not monotone: the semi-naive
    loop, which only adds rows, cannot run it (the local engine can). A
    subsumption rule of a recursive relation is an error at the rule."""
    problems = [Diagnostic(
        "error", f"the Spark engine cannot evaluate a subsumption rule of a recursive "
                 f"relation (`{sub.rule.label}`): pruning inside recursion removes rows, "
                 f"its semi-naive loop only adds them", sub.rule.span,
        hint="run with --engine local (engine=\"local\"), which can still spill large "
             "traces to Spark with --spill-threshold")
        for stratum in plan.strata if stratum.recursive for sub in stratum.subsumptions]
    if problems:
        raise EvaluationError(problems)


def _calls(node) -> Iterator[str]:
    """The ``@name`` and ``autoinc`` operators anywhere in a plan node."""
    if isinstance(node, Call):
        if node.op.startswith("@") or node.op == "autoinc":
            yield node.op
        for arg in node.args:
            yield from _calls(arg)
    elif isinstance(node, (tuple, list)):
        for item in node:
            yield from _calls(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from _calls(getattr(node, f.name))


#: Merge the pieces of an accumulated relation once it has this many.
MAX_PIECES = 8

RUN_CONF = {
    "spark.sql.ansi.enabled": "false",
    # Adaptive execution runs every shuffle stage of a plan as soon as its RDD is
    # asked for (a lazy checkpoint included) and changes partition counts.
    "spark.sql.adaptive.enabled": "false",
}


class SparkExecutor:
    """Evaluates ``plan`` in ``spark``. ``max_iterations`` bounds each
    recursive stratum's loop."""

    def __init__(self, spark, plan: ProgramPlan, *, max_iterations: int | None = None):
        self.spark = spark
        self.plan = plan
        self.max_iterations = max_iterations
        self.types = {name: rel.types for name, rel in plan.relations.items()}
        self.rules = plan.rules()
        self.compiler = PipelineCompiler(spark, self.types, self.rules)
        self.relations: dict[str, object] = {}
        self.iterations: dict[tuple[str, ...], int] = {}
        self.cached: list = []
        refuse_bound_functors(plan)
        refuse_matchings(plan)
        refuse_recursive_subsumption(plan)

    # ------------------------------------------------------------ entry

    def evaluate(self, inputs: Mapping[str, object] | None = None) -> dict[str, object]:
        """Every relation of the plan as a materialised DataFrame (columns
        ``c0``, ``c1``, ...). ``inputs`` maps relation names to DataFrames of
        their input rows (typed as :func:`relation_schema` says)."""
        inputs = dict(inputs or {})
        with run_settings(self.spark):
            try:
                computed = {r for s in self.plan.strata for r in s.relations}
                for name in self.plan.relations:
                    if name not in computed:
                        self.relations[name] = self.keep(
                            self.chosen(name, self.base(name, inputs).distinct()))
                for stratum in self.plan.strata:
                    if stratum.recursive:
                        self.recursive(stratum, inputs)
                    else:
                        self.nonrecursive(stratum, inputs)
            except Exception as exc:
                if not is_spark_failure(exc):
                    raise
                raise translate(exc, self.rules) from None
        return dict(self.relations)

    # ------------------------------------------------------------ relations

    def empty(self, name: str):
        """A relation with no rows (built in the JVM: no Python data)."""
        f = F()
        return self.spark.range(0).select(*[
            f.lit(None).cast(SPARK_TYPES[t]).alias(f"c{i}")
            for i, t in enumerate(self.types[name])])

    def base(self, name: str, inputs: Mapping[str, object]):
        """Facts and input rows of ``name`` (a bag: the caller takes the
        distinct rows once, after adding its rules' rows)."""
        parts = []
        facts = self.plan.facts.get(name)
        if facts:
            parts.append(self.facts_frame(name, facts))
        if name in inputs:
            parts.append(inputs[name])
        if not parts:
            return self.empty(name)
        return union_all(parts)

    def facts_frame(self, name: str, rows):
        """The facts the program states (rows of its text, not data files), as a
        DataFrame with the relation's schema (no type inference)."""
        types = self.types[name]
        data = [tuple(_bits(v, t) for v, t in zip(row, types)) for row in rows]
        return self.spark.createDataFrame(data, relation_schema(types))

    def nonrecursive(self, stratum: StratumPlan, inputs):
        for name in stratum.relations:
            df = self.base(name, inputs)
            for rule in stratum.rules:
                if rule.relation == name:
                    df = df.unionByName(self.compiler.rule(rule, self.whole))
            plans = [p for p in stratum.subsumptions if p.relation == name]
            if plans:
                df = self.pruned(name, self.keep(df.distinct()), plans)
            self.relations[name] = self.keep(self.chosen(name, df.distinct()))

    def chosen(self, name: str, df):
        """``df``, or for a ``choice-domain`` relation its least row per domain
        value (one domain: :func:`refuse_matchings` refused more)."""
        domains = self.plan.choices.get(name)
        return df if not domains else least_per_domain(df, domains[0], self.types[name])

    def pruned(self, name: str, candidates, plans: list[SubsumptionPlan]):
        """``candidates`` (the distinct rows of ``name``) without the rows its
        subsumption rules remove (:mod:`datalog.plan.subsumption`): each rule's
        pairs (dominated, dominating) of two different rows, the dominated rows
        anti-joined away."""
        f = F()
        arity = len(self.types[name])
        pair = f"{PAIR} {name}"
        self.types[pair] = tuple(self.types[name]) * 2

        def source(relation: str, step: int):
            return candidates if relation == name else self.relations[relation]

        columns = [f"c{i}" for i in range(arity)]
        dominated = []
        for plan in plans:
            pairs = self.compiler.rule(dataclasses.replace(plan.rule, relation=pair), source)
            differ = f.lit(False)
            for i in range(arity):
                differ = differ | ~f.col(f"c{i}").eqNullSafe(f.col(f"c{arity + i}"))
            dominated.append(pairs.filter(differ).select(*columns))
        return candidates.join(union_all(dominated).distinct(), on=columns, how="left_anti")

    def keep(self, df):
        """A finished non-recursive relation: cached, computed once by the
        first job that reads it (its lineage is bounded by the program)."""
        df = df.cache()
        self.cached.append(df)
        return df

    def release(self) -> None:
        """Frees the cached relations (the DataFrames :meth:`evaluate` returned
        stay usable, recomputed when read)."""
        for df in self.cached:
            df.unpersist()
        self.cached.clear()

    def whole(self, relation: str, step: int):
        """The source of a rule reading finished relations only."""
        return self.relations[relation]

    # ------------------------------------------------------------ recursion

    def recursive(self, stratum: StratumPlan, inputs):
        own = set(stratum.relations)
        base_rules = [r for r in stratum.rules if not r.recursive_steps(own)]
        loop_rules = [r for r in stratum.rules if r.recursive_steps(own)]
        statics = self.partitioned_statics(loop_rules, own)
        accumulated: dict[str, list] = {}
        delta: dict[str, object] = {}
        for name in stratum.relations:
            df = self.base(name, inputs)
            for rule in base_rules:
                if rule.relation == name:
                    df = df.unionByName(self.compiler.rule(rule, self.whole))
            delta[name] = materialize(self.chosen(name, df.distinct()))
            accumulated[name] = [delta[name]]
        iteration = 0
        live = {name for name in stratum.relations if delta[name].count()}
        while live:
            iteration += 1
            if self.max_iterations is not None and iteration > self.max_iterations:
                raise iteration_limit(stratum, self.max_iterations)
            whole = {name: union_all(pieces) for name, pieces in accumulated.items()}
            new: dict[str, list] = {}
            for rule in loop_rules:
                for k in rule.recursive_steps(own):
                    if rule.steps[k].relation not in live:
                        continue  # its delta is empty: this variant derives nothing
                    source = self.variant_source(rule, k, own, delta, whole, statics)
                    new.setdefault(rule.relation, []).append(self.compiler.rule(rule, source))
            delta = {}
            for name in stratum.relations:
                if name not in new:
                    delta[name] = None
                    continue
                columns = [f"c{i}" for i in range(len(self.types[name]))]
                fresh = union_all(new[name]).distinct()
                domains = self.plan.choices.get(name)
                on = [columns[c] for c in domains[0]] if domains else columns
                for piece in accumulated[name]:   # co-partitioned: no shuffle of `all`
                    fresh = fresh.join(piece, on=on, how="left_anti")
                if domains:   # the least per open value; the join put `on` first
                    fresh = self.chosen(name, fresh.select(*columns))
                delta[name] = materialize(fresh)
            # One job per relation and iteration: computing the count fills the
            # checkpoint of the delta, which the next iteration reads.
            live = {name for name, df in delta.items() if df is not None and df.count()}
            for name in live:
                pieces = accumulated[name]
                pieces.append(delta[name])
                if len(pieces) >= MAX_PIECES:
                    # a union forgets its inputs' partitioning: restore it once
                    columns = [f"c{i}" for i in range(len(self.types[name]))]
                    accumulated[name] = [materialize(union_all(pieces).repartition(*columns))]
        self.iterations[tuple(stratum.relations)] = iteration
        for df in statics.values():
            df.unpersist()
        for name in stratum.relations:
            pieces = accumulated[name]
            self.relations[name] = pieces[0] if len(pieces) == 1 else materialize(
                union_all(pieces))

    def partitioned_statics(self, rules: list[RulePlan], own: set[str]) -> dict:
        """The finished relations the loop joins, each repartitioned by the
        join's key columns and cached: ``(relation, key columns) -> DataFrame``."""
        statics = {}
        for rule in rules:
            for step in rule.steps:
                if isinstance(step, Join) and step.relation not in own and step.keys:
                    key = (step.relation, step.key_columns())
                    if key not in statics:
                        df = self.relations[step.relation]
                        cols = [F().col(f"c{c}") for c in step.key_columns()]
                        # partitioned and sorted by the key: a sort-merge join
                        # then moves and sorts only the delta side
                        statics[key] = df.repartition(*cols).sortWithinPartitions(*cols).cache()
                        self.cached.append(statics[key])
        return statics  # filled by the first iteration that reads them

    def variant_source(self, rule: RulePlan, k: int, own, delta, whole, statics):
        """The source of variant ``k`` of ``rule``: step ``k`` reads the delta,
        the other occurrences of the stratum's relations the whole relation so
        far, and joins with finished relations their partitioned copies."""
        def source(relation: str, step: int):
            if step == k:
                return delta[relation]
            if relation in own:
                return whole[relation]
            if step >= 0:
                s = rule.steps[step]
                if isinstance(s, Join) and (relation, s.key_columns()) in statics:
                    return statics[(relation, s.key_columns())]
            return self.relations[relation]
        return source


# ---------------------------------------------------------------- helpers


def union_all(frames: list):
    df = frames[0]
    for frame in frames[1:]:
        df = df.union(frame)
    return df


def materialize(df, eager: bool = False):
    """``df`` with its lineage cut, computed once: by a job of its own when
    ``eager``, else by the first job that reads it (every Spark job costs
    seconds of fixed overhead). A reliable checkpoint when
    ``spark.checkpoint.dir`` is set (clusters), else a local one."""
    if df.sparkSession.conf.get("spark.checkpoint.dir", None):
        return df.checkpoint(eager=eager)
    return df.localCheckpoint(eager=eager)


@contextmanager
def run_settings(spark):
    """:data:`RUN_CONF` for the duration of a run, then the previous values."""
    previous = {key: spark.conf.get(key, None) for key in RUN_CONF}
    for key, value in RUN_CONF.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _bits(value, type_: str):
    if type_ == "unsigned" and int(value) >= 2**63:
        return int(value) - 2**64
    if type_ == "float":
        return float(value)
    return value
