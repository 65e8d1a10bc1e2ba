"""From a :class:`~datalog.plan.ir.ProgramPlan` to an engine circuit (DESIGN.md §7).

Every relation ``r`` becomes one stream in the root circuit: the distinct union of
its source (``r``'s program facts at epoch 0 plus the rows a session inserts and
retracts) and the outputs of its rules::

    source r --+
    rule 1  ---+--> plus --> distinct --> r   (output "r")
    rule 2  ---+

A non-recursive stratum compiles to operators of the root circuit. A recursive
stratum is a child circuit: an Import for every stream it reads from outside, one
Feedback per relation of the stratum (the rules read the *delayed* relation), and
one Distinct Trace per relation, whose output feeds the Feedback and leaves the
child as the relation's epoch difference::

           +-------------------- child circuit ---------------------+
    edge --|-> import --+                                           |
           |            +--> rules --> plus --> distinct --+--------|--> path
           |  feedback -+                                  |        |
           |     ^-----------------------------------------+        |
           +--------------------------------------------------------+

At epoch 0 this is semi-naive evaluation; at later epochs the same circuit carries
the incremental update (the bilinear join produces exactly the new derivations).
A relation with subsumption rules is its distinct union (its *candidates*) minus
the candidates they dominate, in the root or between the Distinct Trace and the
Feedback (:mod:`datalog.backends.circuit.subsumption`).

Inside a rule, each run of filters and assignments between two joins, and the head
projection, is fused into ONE generated Python function (its source is kept on the
operator's label for ``datalog plan``). Joins index the relation by the join's key
columns; the engine memoizes ``index_by`` per (stream, columns), and every join
reads a relation through the same stream object, so all joins on one (relation,
key) share one trace. Negation is an antijoin; an aggregate is computed at the
root from its correlated body, seeded by the distinct grouping values of the
outer rows (so ``count``/``sum`` of an empty group are ``0``); when the rule's scan
alone seeds it and the body starts with the same atom (the group-by idiom,
:func:`scan_is_first_join`), the body reads that relation's rows without a join
of seeds and relation (no trace of it kept for the aggregate). In a recursive
rule the seeds are the key values of the body's first atom instead, and the table
enters the child circuit through an Import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from datalog.backends.circuit.choice import choose_in_recursion, choose_root
from datalog.backends.circuit.subsumption import prune
from datalog.backends.circuit.vectorise import equalities, select, stage_program, tagging
from datalog.backends.errors import functor_error
from datalog.dialect.functors import WRAP, FunctorError, Overload, not_nan
from datalog.errors import DatalogError, Diagnostic, EvaluationError
from datalog.plan.expressions import Codegen
from datalog.plan.ir import (
    Aggregate,
    Antijoin,
    Assign,
    Col,
    Const,
    Filter,
    Join,
    ProgramPlan,
    RulePlan,
    Scan,
    StratumPlan,
)
from engine import Circuit, EngineError
from engine.aggregates import Reduce
from engine.codegen import compiled

_SLOT = re.compile(r"([lr])\[(\d+)\]")  # a combine item that is one column of a side

UNIT = "$unit"
"""The source holding the single empty row ``()`` from epoch 0 on: where pipelines
that start with no atom (``p(x) :- x = range(0, 3).``) begin."""


@dataclass
class CompiledProgram:
    """A program's circuit and how to drive it: ``circuit.step`` takes batches for
    sources named after relations (plus :data:`UNIT`) and returns the epoch
    differences of every relation (output names = relation names).
    ``functions`` maps each generated function's name to its source text."""

    plan: ProgramPlan
    circuit: Circuit
    functions: dict[str, str] = field(default_factory=dict)
    #: (scope, relation, key columns) -> labels of the rules whose joins and
    #: antijoins read that one shared index (trace); scope is ``root`` or the
    #: recursive stratum's relations.
    indexes: dict[tuple, list[str]] = field(default_factory=dict)

    def describe_indexes(self) -> str:
        """The shared relation indexes, one line each, with the rules using them."""
        lines = []
        for (scope, relation, cols), rules in self.indexes.items():
            where = "" if scope == "root" else f" in {{{scope}}}"
            lines.append(f"{relation} by {list(cols)}{where}: {len(rules)} use"
                         f"{'s' if len(rules) != 1 else ''}")
            lines += [f"  {rule}" for rule in rules]
        return "\n".join(lines)

    def describe(self, code: bool = False) -> str:
        """What ``datalog plan`` prints: the relational plan, the shared indexes,
        the circuit's nodes and, with ``code``, every generated function.

        >>> from datalog.api import Program
        >>> text = ".decl e(x: number)\\n.decl p(x: number)\\np(x) :- e(x), x > 1."
        >>> print(compile_plan(Program(text).plan).describe().split("circuit:")[1])
        <BLANKLINE>
        0 source arity=0 `$unit`
        ...
        """
        parts = [self.plan.describe(),
                 "\nindexes (one trace each, shared by the rules listed):",
                 self.describe_indexes(), "\ncircuit:", self.circuit.describe()]
        if code:
            parts += ["\ngenerated functions:", *self.functions.values()]
        return "\n".join(parts)

    def initial_batches(self) -> dict[str, dict]:
        """The batches of epoch 0 besides the inputs: the unit row and the program's
        facts (each fact weight 1)."""
        batches: dict[str, dict] = {UNIT: {(): 1}}
        for name, rows in self.plan.facts.items():
            batches[name] = {row: 1 for row in rows}
        return batches


def child_label(stratum: StratumPlan) -> str:
    """The label of a recursive stratum's child circuit (its relations), by which
    the runtime's errors name it."""
    return ", ".join(stratum.relations)


def compile_plan(plan: ProgramPlan, max_iterations: int | None = None,
                 spill_threshold: int | None = None,
                 functors: Mapping[str, Overload] | None = None,
                 spill_cache: int | None = None) -> CompiledProgram:
    """Build the circuit of ``plan`` (see the module docstring). ``max_iterations``
    bounds each child circuit's iterations per epoch (``None``: no bound);
    ``spill_threshold`` (rows) lets large traces move to Spark, where the engine
    supports it, and ``spill_cache`` (rows) bounds what of them is cached in
    Python; ``functors`` are the implementations of the program's user-defined
    functors and of ``autoinc`` (``datalog.plan.expressions.resolve``)."""
    kwargs = {} if max_iterations is None else {"max_iterations": max_iterations}
    try:
        circuit = Circuit(spill_threshold=spill_threshold, spill_cache=spill_cache, **kwargs)
    except EngineError as error:  # max_iterations out of range; no Spark to spill to
        raise DatalogError(str(error)) from None
    compiler = _Compiler(plan, circuit, functors)
    compiler.build()
    return CompiledProgram(plan, circuit, compiler.functions, compiler.indexes)


class _Scope:
    """The streams visible in one circuit (the root or a child): relation name ->
    stream, and memoized derived streams (filtered relations, imports)."""

    def __init__(self, circuit, parent: _Scope | None = None, name: str = "root"):
        self.circuit = circuit
        self.parent = parent
        self.name = name
        self.streams: dict[str, object] = {}
        self.derived: dict[tuple, object] = {}

    def relation(self, name: str):
        stream = self.streams.get(name)
        if stream is None:
            if self.parent is None:
                raise KeyError(name)
            stream = self.circuit.import_(self.parent.relation(name), label=name)
            self.streams[name] = stream
        return stream


class _Candidates(_Scope):
    """``scope`` in which ``relation`` is the stream of its candidates (what the
    heads of its subsumption rules read)."""

    def __init__(self, scope: _Scope, relation: str, candidates):
        super().__init__(scope.circuit, scope.parent, f"{scope.name}: {relation} candidates")
        self.inner = scope
        self.streams[relation] = candidates

    def relation(self, name: str):
        stream = self.streams.get(name)
        return stream if stream is not None else self.inner.relation(name)


class _Compiler:
    def __init__(self, plan: ProgramPlan, circuit, functors=None):
        self.plan = plan
        self.functors = functors   # implementations of @name and autoinc (Codegen)
        self.circuit = circuit
        self.root = _Scope(circuit)
        self.functions: dict[str, str] = {}
        self.indexes: dict[tuple, list[str]] = {}
        self.sources: dict[str, object] = {}

    def build(self) -> None:
        circuit = self.circuit
        self.root.streams[UNIT] = circuit.source(UNIT, arity=0)
        for rel in self.plan.relations.values():
            self.sources[rel.name] = circuit.source(rel.name, arity=rel.arity)
        ruled = {name for s in self.plan.strata for name in s.relations}
        for rel in self.plan.relations.values():
            if rel.name not in ruled:
                stream = self.sources[rel.name]
                if rel.name in self.plan.choices:
                    stream = choose_root(stream, self.plan.choices[rel.name], rel.name)
                # The session keeps inputs a set; facts may repeat an input row.
                elif self.plan.facts.get(rel.name):
                    stream = stream.distinct(label=rel.name)
                self.root.streams[rel.name] = stream
        for stratum in self.plan.strata:
            if stratum.recursive:
                self._recursive(stratum)
            else:
                self._nonrecursive(stratum)
        for rel in self.plan.relations.values():
            stream = self.root.streams[rel.name]
            # A session reads a relation's rows where the circuit keeps them
            # (Circuit.contents): a distinct's trace, or the session's own inputs
            # for a relation read straight off its source; the output of any
            # other stream keeps them.
            held = stream.node is self.sources[rel.name].node or \
                stream.node.collection_cursor() is not None
            circuit.output(rel.name, stream, keep=not held)

    # ------------------------------------------------------------ strata

    def _nonrecursive(self, stratum: StratumPlan) -> None:
        for name in stratum.relations:
            parts = [self._rule(rule, self.root) for rule in stratum.rules
                     if rule.relation == name]
            union = self.sources[name].plus(*parts) if parts else self.sources[name]
            if name in self.plan.choices:
                self.root.streams[name] = choose_root(union, self.plan.choices[name], name)
                continue
            self.root.streams[name] = self._pruned(stratum, name, union.distinct(label=name),
                                                   self.root)

    def _pruned(self, stratum: StratumPlan, name: str, candidates, scope: _Scope):
        """``candidates`` of ``name`` without the tuples its subsumption rules
        remove (:mod:`datalog.backends.circuit.subsumption`)."""
        plans = [p for p in stratum.subsumptions if p.relation == name]
        if not plans:
            return candidates
        own = _Candidates(scope, name, candidates)
        return prune(candidates, plans, self.plan.relations[name].arity,
                     lambda plan: self._rule(plan.rule, own))

    def _recursive(self, stratum: StratumPlan) -> None:
        # Rules reading no relation of the stratum (the base cases) run in the
        # root; their union with the source enters the child through one Import.
        own = set(stratum.relations)
        base = {}
        for name in stratum.relations:
            parts = [self._rule(rule, self.root) for rule in stratum.rules
                     if rule.relation == name and not own & set(rule.reads())]
            base[name] = self.sources[name].plus(*parts) if parts else self.sources[name]
        label = child_label(stratum)
        with self.circuit.child(label) as child:
            scope = _Scope(child, self.root, label)
            feedbacks = {}
            for name in stratum.relations:
                feedbacks[name] = child.feedback(name, arity=self.plan.relations[name].arity)
                scope.streams[name] = feedbacks[name].stream
            exported = {}
            for name in stratum.relations:
                parts = [self._rule(rule, scope) for rule in stratum.rules
                         if rule.relation == name and own & set(rule.reads())]
                new = child.import_(base[name], label=name).plus(*parts)
                if name in self.plan.choices:   # one domain (the checks refuse more)
                    new = choose_in_recursion(feedbacks[name].stream, new,
                                              self.plan.choices[name][0],
                                              self.plan.relations[name].arity, name)
                else:
                    new = self._pruned(stratum, name, new.distinct(label=name), scope)
                feedbacks[name].connect(new)
                if name in self.plan.limits:    # .limitsize: the loop ends at that size
                    child.limit(new, self.plan.limits[name], label=f"limitsize {name}")
                exported[name] = child.export(new)
        self.root.streams.update(exported)

    # ------------------------------------------------------------ rules

    def _rule(self, rule: RulePlan, scope: _Scope):
        pipeline = _PipelineBuilder(self, scope, rule)
        stream = pipeline.run(rule.steps, start=None, width=0)
        return pipeline.flush(stream, project=rule.head)


class _PipelineBuilder:
    """Compiles one rule's steps into operators, fusing runs of filters and
    assignments into generated functions."""

    def __init__(self, compiler: _Compiler, scope: _Scope, rule: RulePlan):
        self.compiler = compiler
        self.scope = scope
        self.rule = rule
        self.pending: list = []
        self.projection: tuple[int, ...] | None = None   # a scan's, not yet applied
        self.width = 0

    def _gen(self) -> Codegen:
        return Codegen(self.compiler.functors)

    def run(self, steps, start, width: int):
        """The stream of rows after ``steps``, starting from ``start`` (rows of
        ``width`` slots; ``None``: the unit row)."""
        stream, self.width = start, width
        for at, step in enumerate(steps):
            if isinstance(step, (Filter, Assign)):
                self.pending.append(step)
                self.width += 1 if isinstance(step, Assign) else 0
                continue
            if stream is None and not isinstance(step, Scan):
                stream = self.scope.relation(UNIT)
            if isinstance(step, Scan):
                stream = self._scan(step)
            elif isinstance(step, Join):
                stream = self._join(stream, step)
            elif isinstance(step, Antijoin):
                stream = self._antijoin(stream, step)
            elif isinstance(step, Aggregate):   # (after the rule's scan alone: `scan`)
                scan = steps[0] if at == 1 and start is None else None
                stream = self._aggregate(stream, step, scan)
        if stream is None:
            stream = self.scope.relation(UNIT)
        return stream

    # ------------------------------------------------------------ relations

    def _relation(self, name: str, consts=(), equal=()):
        """``name``'s stream, filtered by relation-side constants and equalities
        (memoized per scope, so indexes on it are shared)."""
        stream = self.scope.relation(name)
        if not consts and not equal:
            return stream
        key = ("filter", name, tuple(consts), tuple(equal))
        if key not in self.scope.derived:
            gen = self._gen()
            tests = [f"t[{c}] == {gen.const(v)}" for c, v in consts]
            tests += [f"t[{a}] == t[{b}]" for a, b in equal]
            function = self._function(gen, "t", [f"return {' and '.join(tests)}"],
                                      f"{name} where {' and '.join(tests)}")
            types = self.compiler.plan.relations[name].types
            self.scope.derived[key] = stream.filter(function, label=f"{name} where ...",
                                                    vector=equalities(consts, equal, types))
        return self.scope.derived[key]

    def _used(self, relation: str, cols, consts=(), equal=()) -> None:
        name = relation
        if consts or equal:
            name += " where " + " and ".join(
                [f"{c} = {v!r}" for c, v in consts] + [f"{a} = {b}" for a, b in equal])
        users = self.compiler.indexes.setdefault((self.scope.name, name, tuple(cols)), [])
        if self.rule.label not in users:
            users.append(self.rule.label)

    def _scan(self, step: Scan):
        stream = self._relation(step.relation, step.consts, step.equal)
        arity = self.compiler.plan.relations[step.relation].arity
        self.width = len(step.columns)
        if tuple(step.columns) == tuple(range(arity)):
            return stream
        self.projection = tuple(step.columns)    # applied by the next flush
        return stream

    def _keyed(self, stream, keys):
        """``stream`` (after pending steps) indexed by the key expressions: plain
        slots index directly; other keys are computed into extra trailing slots."""
        if all(isinstance(e, Col) for _, e in keys):
            stream = self.flush(stream)
            return stream.index_by(tuple(e.index for _, e in keys)), False
        stream = self.flush(stream, extra=[e for _, e in keys])
        cols = tuple(range(self.width, self.width + len(keys)))
        return stream.index_by(cols), True

    def _join(self, stream, step: Join):
        """The join, left pending: a following projection (the head, or the
        next join's computed keys) is fused into its combine function."""
        left, _ = self._keyed(stream, step.keys)    # slots past `width` are keys
        right = self._relation(step.relation, step.consts, step.equal) \
            .index_by(step.key_columns())
        self._used(step.relation, step.key_columns(), step.consts, step.equal)
        width = self.width
        self.width = width + len(step.columns)
        # slot i of the output row, as source over the combine's l and r
        slots = [f"l[{i}]" for i in range(width)] + [f"r[{c}]" for c in step.columns]
        return _PendingJoin(left, right, slots, step.describe(),
                            f"{self.rule.label}  [{step.describe()}]")

    def _materialize(self, stream, items: list[str] | None = None, what: str = "",
                     gen: Codegen | None = None):
        """The stream of a pending join, its combine building ``items`` (source
        over ``l`` and ``r``, names bound in ``gen``; default: the whole row)."""
        if not isinstance(stream, _PendingJoin):
            return stream
        items = items if items is not None else stream.slots
        slots = [_SLOT.fullmatch(item) for item in items]
        if items and all(slots):  # columns only: a projection (the engine may vectorise it)
            combine = tuple((0 if m[1] == "l" else 1, int(m[2])) for m in slots)
            return stream.left.join(stream.right, combine, label=stream.label)
        row = _tuple_source(items)
        combine = self._function(gen or self._gen(), "k, l, r", [f"return {row}"],
                                 f"{stream.what}{what}")
        return stream.left.join(stream.right, combine, label=stream.label)

    def _antijoin(self, stream, step: Antijoin):
        left, extended = self._keyed(stream, step.keys)
        right = self.scope.relation(step.relation).index_by(step.key_columns())
        self._used(step.relation, step.key_columns())
        out = left.antijoin(right, label=f"{self.rule.label}  [{step.describe()}]")
        if extended:
            width = self.width
            out = out.map(self._function(self._gen(), "t", [f"return t[:{width}]"],
                                         "drop keys"), vector=select(range(width)))
        return out

    def _aggregate(self, stream, step: Aggregate, scan: Scan | None = None):
        """Outer rows extended by their aggregate. The result table (seed ->
        result) is computed in the root: seeded by the outer rows themselves in
        the root; inside a child circuit (a recursive rule) seeded by every seed
        the body's first join can match, and imported. ``scan``: the rule's
        scan when the aggregate follows it alone (:func:`scan_is_first_join`)."""
        stream = self.flush(stream)
        width = self.width
        k = len(step.seed)
        gen = self._gen()
        seed_row = _tuple_source([f"t[{i}]" for i in step.seed])
        left = stream.index_by(tuple(step.seed))
        combine = self._function(self._gen(), "k, l, r", [f"return l + (r[{k}],)"],
                                 "aggregate result")
        label = f"{self.rule.label}  [{step.kind}]"
        self.width = width + 1
        if self.scope.parent is None:
            seeds = stream.map(self._function(gen, "t", [f"return {seed_row}"], "seed"),
                               vector=select(step.seed)).distinct(label="aggregate seeds")
            own = scan_is_first_join(scan, step)
            result = self._aggregate_table(seeds, step, (scan, own, stream) if own else None)
            return left.join(result.index_by(tuple(range(k))), combine, label=label)
        root = _PipelineBuilder(self.compiler, self.compiler.root, self.rule)
        table = root._aggregate_table(root._candidate_seeds(step), step)
        right = self.scope.circuit.import_(table, label=f"{step.kind} table")\
            .index_by(tuple(range(k)))
        joined = left.join(right, combine, label=label)
        if step.kind not in ("count", "sum"):
            return joined
        # Seeds the body cannot match: count and sum of nothing are 0.
        zero = "0.0" if step.type == "float" else "0"
        empty = left.antijoin(right, label=f"{label} of nothing").map(
            self._function(self._gen(), "t", [f"return t + ({zero},)"], "empty group"))
        return joined.plus(empty)

    def _candidate_seeds(self, step: Aggregate):
        """A root stream holding every seed for which ``step.body`` can have a
        row: the distinct key values of the body's first join (which must key
        on every seed slot)."""
        k = len(step.seed)
        first = step.body[0] if step.body else None
        if k == 0:
            return self.scope.relation(UNIT)
        columns = {}
        if isinstance(first, Join):
            for column, expr in first.keys:
                if isinstance(expr, Col) and expr.index < k:
                    columns.setdefault(expr.index, column)
        if len(columns) < k:
            raise EvaluationError([Diagnostic(
                "error", f"this aggregate inside a recursive rule is not supported: "
                         f"its body must start with an atom binding every variable it "
                         f"shares with the rule (`{self.rule.label}`)",
                self.rule.span,
                "compute the aggregate into a relation of its own")])
        relation = self._relation(first.relation, first.consts, first.equal)
        row = _tuple_source([f"t[{columns[i]}]" for i in range(k)])
        return relation.map(self._function(self._gen(), "t", [f"return {row}"],
                                           "candidate seeds"),
                            vector=select([columns[i] for i in range(k)]))\
            .distinct(label="aggregate seeds")

    def _aggregate_table(self, seeds, step: Aggregate, own: tuple | None = None):
        """``seed + (result,)`` for every seed of ``seeds`` whose group has a
        result (count and sum always have one: 0 for an empty body).
        ``own``: ``(scan, columns, outer)`` when every row the rule's scan
        reads meets its seed in the body's first join
        (:func:`scan_is_first_join`): then that join is those rows projected
        to ``columns`` (the ``outer`` rows themselves when those are the
        scan's), and neither side needs a trace."""
        k = len(step.seed)
        body = _PipelineBuilder(self.compiler, self.scope, self.rule)
        if own is None:
            rows = body.run(step.body, start=seeds, width=k)
        else:
            scan, columns, start = own
            if columns != tuple(scan.columns):
                row = _tuple_source([f"t[{c}]" for c in columns])
                start = self._relation(scan.relation, scan.consts, scan.equal).map(
                    self._function(self._gen(), "t", [f"return {row}"],
                                   f"{scan.relation} as its own aggregate's body"),
                    vector=select(columns))
            rows = body.run(step.body[1:], start=start, width=len(columns))
        target = step.target
        # body rows -> key + (1, target); seeds -> key + (0, zero): every seed
        # has a group, so count and sum of an empty body are 0. The zero is
        # never read: a value of the targets' type (0 for count), so that the
        # column has one type and a large batch can stay in columns.
        rows = body.flush(rows, extra=[target] if target is not None else [])
        if target is None:
            zero = 0
        else:  # (a mean's result type is not its target's)
            zero = {"number": 0, "unsigned": 0, "float": 0.0, "symbol": ""}.get(
                step.target_type if step.kind == "mean" else step.type)
        value = f"t[{body.width}]" if target is not None else "0"
        tag = self._function(self._gen(), "t", [f"return t[:{k}] + (1, {value})"], "tag")
        seed_tag = self._function(self._gen(), "t", [f"return t + (0, {zero!r})"], "seed tag")
        target_slot = Col(body.width) if target is not None else 0
        tagged = rows.map(tag, vector=tagging(k, 1, target_slot))\
            .plus(seeds.map(seed_tag, vector=tagging(k, 0, zero)))
        groups = tagged.index_by(tuple(range(k)))
        return groups.aggregate(_aggregator(step, k, self.rule),
                                label=f"{step.kind} [{self.rule.label}]")

    # ------------------------------------------------------------ fused steps

    def flush(self, stream, extra=(), project=None):
        """Apply the pending filters and assignments, then append ``extra``
        expressions (join keys) or project to ``project`` (the head), as one
        generated function."""
        if isinstance(stream, _PendingJoin):
            if not self.pending and (extra or project is not None):
                # fuse the projection into the join's combine function
                gen = self._gen()
                columns = stream.slots
                if project is not None:
                    items = [gen.expr(e, "t", columns) for e in project]
                else:
                    items = columns + [gen.expr(e, "t", columns) for e in extra]
                return self._materialize(stream, items, " + head" if project is not None
                                         else " + keys", gen)
            stream = self._materialize(stream)
        if not self.pending and not extra and project is None and self.projection is None:
            return stream
        program = stage_program(self.projection, self.pending, extra, project)
        gen = self._gen()
        lines: list[str] = []
        if self.projection is not None:
            lines.append(f"t = {_tuple_source([f't[{c}]' for c in self.projection])}")
            self.projection = None
        indent = ""
        row = "t"
        multi = any(isinstance(s, Assign) and s.multi for s in self.pending)
        filtered = any(isinstance(s, Filter) for s in self.pending)
        counter = 0
        for step in self.pending:
            if isinstance(step, Filter):
                drop = "continue" if indent else "return out" if multi else "return ()"
                lines.append(f"{indent}if not {gen.expr(step.condition, row)}:")
                lines.append(f"{indent}    {drop}")
                continue
            counter += 1
            if step.multi:
                lines.append(f"{indent}for v{counter} in {gen.expr(step.expr, row)}:")
                indent += "    "
                lines.append(f"{indent}t{counter} = {row} + (v{counter},)")
            else:
                lines.append(f"{indent}t{counter} = {row} + ({gen.expr(step.expr, row)},)")
            row = f"t{counter}"
        if project is not None:
            result = _tuple_source([gen.expr(e, row) for e in project])
        elif extra:
            result = f"{row} + {_tuple_source([gen.expr(e, row) for e in extra])}"
        else:
            result = row
        if multi:
            lines.insert(0, "out = []")
            lines.append(f"{indent}out.append({result})")
            lines.append("return out")
        elif filtered:
            lines.append(f"return ({result},)")
        else:
            lines.append(f"return {result}")
        self.pending = []
        what = "head" if project is not None else "keys" if extra else "steps"
        function = self._function(gen, "t", lines, f"{self.rule.label} ({what})")
        label = f"{self.rule.label}  [{what}]"
        if multi or filtered:
            return stream.flat_map(function, label=label, vector=program)
        return stream.map(function, label=label, vector=program)

    def _function(self, gen: Codegen, params: str, lines: list[str], what: str):
        """Compile a generated function; functor errors become EvaluationErrors
        naming the rule."""
        index = len(self.compiler.functions)
        name = f"_f{index}"
        body = "\n".join("        " + line for line in lines)
        source = (f"def {name}({params}):\n    try:\n{body}\n"
                  f"    except _FunctorError as error:\n"
                  f"        raise _fail(error) from None\n")
        rule = self.rule

        def fail(error):
            return functor_error(error.diagnostics[0].message, rule)

        scope = dict(gen.namespace, _FunctorError=FunctorError, _fail=fail)
        exec(compiled(source, f"<rule {rule.span}: {what}>"), scope)
        self.compiler.functions[name] = f"# {what}\n{source}"
        return scope[name]


@dataclass
class _PendingJoin:
    """A join whose combine function is not generated yet (see ``_join``)."""

    left: object
    right: object
    slots: list[str]
    what: str
    label: str


def _tuple_source(items: list[str]) -> str:
    if not items:
        return "()"
    return f"({', '.join(items)},)"


def _aggregator(step: Aggregate, k: int, rule=None) -> Reduce:
    """The group function for ``ix.aggregate``, as a built-in the engine may
    compute on columns: values are ``key + (0, zero)`` (the seed: the group
    exists) or ``key + (1, target)`` (one body row), each with its weight (the
    number of derivations); slot ``k`` flags the body rows. A sum wraps to its
    type's 64 bits; a float sum or mean that is NaN is an error at ``rule``."""
    kind = step.kind
    wrap = WRAP.get(step.type) if kind == "sum" else not_nan if kind == "mean" else None
    finish = None
    if wrap is not None:
        def finish(value):
            try:
                return wrap(value)
            except FunctorError as error:
                raise functor_error(error.diagnostics[0].message, rule) from None
    return Reduce(kind, None if kind == "count" else k + 1, weighted=True, flag=k,
                  finish=finish, modular=kind == "sum" and step.type in ("number", "unsigned"))


def scan_is_first_join(scan: Scan | None, step: Aggregate) -> tuple[int, ...] | None:
    """When a rule's scan alone seeds an aggregate whose body's first join
    reads the scanned relation as the scan does (its constants, as filters or
    keys, and equalities) keyed on exactly the seed slots otherwise, as in
    ``c(x, n) :- r(x, _), n = count : { r(x, _) }``: every row the scan reads
    meets its seed (the seeds are the key values of those very rows), so the
    join of seeds and relation is those rows, each once. Then: the relation
    columns of the join's output row (the seeds', then those the join adds);
    else ``None``.

    >>> scan = Scan("r", (0,))
    >>> count = Aggregate("count", (0,), (Join("r", ((0, Col(0)),), (1,)),), None)
    >>> scan_is_first_join(scan, count)
    (0, 1)
    >>> other = Aggregate("count", (0,), (Join("r", ((1, Col(0)),), ()),), None)
    >>> scan_is_first_join(scan, other) is None   # keyed on another column
    True
    >>> fixed = Aggregate("count", (0,), (Join("r", ((0, Col(0)), (1, Const(2))), ()),), None)
    >>> two = Scan("r", (0,), consts=((1, 2),))   # r(x, 2), as a key in the body
    >>> scan_is_first_join(two, fixed), scan_is_first_join(scan, fixed)
    ((0,), None)
    """
    if not isinstance(scan, Scan) or not step.body:
        return None
    first = step.body[0]
    if not isinstance(first, Join) or first.relation != scan.relation or first.equal != scan.equal:
        return None
    keys = [(c, e) for c, e in first.keys if isinstance(e, Col)]
    consts = {(c, e.value) for c, e in first.keys if isinstance(e, Const)}
    if len(keys) + len(consts) != len(first.keys) or consts | set(first.consts) != set(
            scan.consts) or len(consts) + len(first.consts) != len(scan.consts):
        return None
    seeds = tuple(scan.columns[slot] for slot in step.seed)
    if sorted(keys, key=str) != sorted(((c, Col(i)) for i, c in enumerate(seeds)), key=str):
        return None
    return seeds + tuple(first.columns)
