"""The relational plan: what a program computes, independent of how it runs.

A :class:`ProgramPlan` is the contract between the language front end (which
lowers checked Datalog into it, ``datalog/plan/lower.py``) and the executors (the
circuit compiler ``datalog/backends/circuit/compile.py`` and the Spark executor in
``engine/spark/``). It is plain frozen data: no Datalog syntax, no operator state,
no pyspark.

Rows and slots
--------------
A rule is planned as a left-to-right **pipeline** over a growing *row of bound
variables*. The row starts empty (the single empty row ``()``: "one binding of no
variables") and every step either keeps, drops or extends each row. A **slot** is
a position in that row; :class:`Col` ``(i)`` reads slot ``i``. Steps never remove
or reorder slots, so a slot index, once bound, means the same variable until the
end of the pipeline.

Steps (in :attr:`RulePlan.steps` order)
----------------------------------------
- :class:`Scan` (only ever the first step): the rows of a relation that pass its
  relation-side filters, each projected to ``columns`` -> the initial row.
- :class:`Join`: for each row and each tuple ``t`` of ``relation`` passing the
  relation-side filters with ``t[c] == value(expr)`` for every ``(c, expr)`` in
  ``keys``: the row extended by ``t[c] for c in columns``.
- :class:`Antijoin`: keeps a row iff ``relation`` has no tuple matching ``keys``.
- :class:`Filter`: keeps a row iff ``condition`` evaluates to ``True``.
- :class:`Assign`: appends ``value(expr)``; with ``multi`` (the ``range``
  functor) appends each value of the generated sequence (0, 1 or more rows).
- :class:`Aggregate`: appends the aggregate of a correlated sub-pipeline (see its
  docstring); may drop the row (min/max/mean of nothing).

A rule's output is ``tuple(value(e) for e in RulePlan.head)`` for every row that
survives all steps. A relation's contents is the **set** (distinct union) of its
facts, its input rows and the outputs of its rules.

Multiplicity: pipelines compute bags whose multiplicities are the number of ways a
row is derived (products over joins). Only :class:`Aggregate` observes them
(``count`` and ``sum`` count every derivation of the body, as Soufflé does:
``count : { q(1, _) }`` counts the tuples of ``q``); everywhere else a set
semantics is applied at the relation boundary.

Expressions
-----------
``Col(i)`` (slot ``i``), ``Const(v)``, ``Call(op, args, types)``, and for records
and algebraic data types ``Pack(branch, args)`` (build one) and ``Field(arg, i)``
(take item ``i``; a rule takes a value apart by a :class:`Filter` on its shape,
``#0 != ()`` or ``#0[0] = 'Cons'``, then ``Field`` assignments). ``op`` is the
dialect's own spelling: binary operators ``+ - * / % ^ band bor bxor bshl bshr
bshru land lor lxor``, unary ``-`` (a ``Call("-", (x,))`` with ONE argument is
negation), ``bnot``, ``lnot``, constraints ``= != < <= > >= contains not_contains
match not_match`` (used by :class:`Filter`; they yield ``bool``), and functor
names (``cat``, ``strlen``, ``substr``, ``ord``, ``to_number``, ``to_unsigned``,
``to_float``, ``to_string``, ``min``, ``max``, ``range``). ``types`` are the
primitive types (``number``, ``unsigned``, ``float``, ``symbol``) of the
arguments, one per argument: an executor resolves ``(op, len(args), types)`` to
its implementation of Soufflé's semantics once, before running (in Python:
``datalog.dialect.functors.BINARY_OPS[op].resolve(types)``, ``UNARY_OPS``, ``FUNCTORS``,
``COMPARISONS``). Integer constants meant as ``float`` are already ``float``.
``Const`` values are Python ``int`` (number, unsigned), ``float`` or ``str``, or a
record or ADT value (see :mod:`datalog.dialect.records`).

Recursion
---------
A :class:`StratumPlan` with ``recursive=True`` is one strongly connected
component: its rules read relations of the same stratum (``StratumPlan.relations``)
and of earlier strata. Plans are written once per rule, for the *whole* relations.

* The circuit executor needs nothing more: inside a child circuit each atom of a
  same-stratum relation reads that relation's Feedback stream, and the bilinear
  join produces exactly the semi-naive deltas.
* A semi-naive loop (the Spark executor) derives, per rule, one variant per
  same-stratum atom occurrence ``k`` (:meth:`RulePlan.recursive_steps` lists them):
  in variant ``k``, step ``k`` reads the delta of the last iteration, steps before
  it the relation *before* that delta (old) and steps after it the *whole*
  relation (new) -- or, simpler and also correct, every other occurrence reads the
  whole relation (derivations are then found more than once; distinct removes
  them). Antijoins and aggregates never read a same-stratum relation (that is a
  stratification error).

>>> rule = RulePlan("path", (Scan("edge", (0, 1)),
...                          Join("path", keys=((0, Col(1)),), columns=(1,))),
...                 head=(Col(0), Col(2)), label="path(x, z) :- edge(x, y), path(y, z).")
>>> print(rule.describe())
path(x, z) :- edge(x, y), path(y, z).
  scan edge -> [0, 1]
  join path on path.0 = #1 -> +[1]
  head (#0, #2)
>>> rule.reads()
('edge', 'path')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.errors import Span
from datalog.plan.choice import choice_text
from datalog.syntax.ast import Directive

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Col:
    """Slot ``index`` of the current row."""

    index: int

    def __str__(self) -> str:
        return f"#{self.index}"


@dataclass(frozen=True)
class Const:
    """A constant value: ``int`` (number, unsigned), ``float`` or ``str`` (symbol)."""

    value: int | float | str

    def __str__(self) -> str:
        return repr(self.value) if isinstance(self.value, str) else str(self.value)


@dataclass(frozen=True)
class Call:
    """An operator, constraint or functor applied to ``args``; ``op`` and
    ``types`` (the argument types) as in the module docstring."""

    op: str
    args: tuple[Expr, ...]
    types: tuple[str, ...] = ()

    def __str__(self) -> str:
        args = ", ".join(str(a) for a in self.args)
        if self.op.isidentifier() or self.op.startswith("@"):
            return f"{self.op}({args})"
        if len(self.args) == 1:
            return f"({self.op}{args})"
        return f"({self.args[0]} {self.op} {self.args[1]})"


@dataclass(frozen=True)
class Pack:
    """A record or ADT value built from ``args``: with ``branch`` None the tuple
    of their values (a record), else the ADT value ``$branch(args)`` (an
    :class:`~datalog.dialect.records.ADTValue`, the tuple ``(branch, *values)``)."""

    branch: str | None
    args: tuple[Expr, ...]

    def __str__(self) -> str:
        args = ", ".join(str(a) for a in self.args)
        if self.branch is None:
            return f"[{args}]"
        return f"${self.branch}({args})" if self.args else f"${self.branch}"


@dataclass(frozen=True)
class Field:
    """Item ``index`` of a record or ADT value (of an ADT value, item 0 is the
    branch name and the fields follow)."""

    arg: Expr
    index: int

    def __str__(self) -> str:
        return f"{self.arg}[{self.index}]"


Expr = Col | Const | Call | Pack | Field


def expr_slots(expr: Expr) -> set[int]:
    """The slots an expression reads.

    >>> sorted(expr_slots(Call("+", (Col(3), Call("-", (Col(1),), ("number",))),
    ...                        ("number", "number"))))
    [1, 3]
    """
    if isinstance(expr, Col):
        return {expr.index}
    if isinstance(expr, (Call, Pack)):
        return set().union(*(expr_slots(a) for a in expr.args)) if expr.args else set()
    if isinstance(expr, Field):
        return expr_slots(expr.arg)
    return set()


# ---------------------------------------------------------------- steps


@dataclass(frozen=True)
class Scan:
    """The first step: the tuples ``t`` of ``relation`` with ``t[c] == v`` for each
    ``(c, v)`` in ``consts`` and ``t[a] == t[b]`` for each ``(a, b)`` in ``equal``,
    each becoming the row ``tuple(t[c] for c in columns)``."""

    relation: str
    columns: tuple[int, ...]
    consts: tuple[tuple[int, int | float | str], ...] = ()
    equal: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        return f"scan {self.relation}{_rel_filters(self)} -> {list(self.columns)}"


@dataclass(frozen=True)
class Join:
    """Equi-join of the row with ``relation``. ``keys`` pairs a relation column
    with an expression over already-bound slots (or a constant): the tuple ``t``
    matches when ``t[c] == value(expr)`` for every ``(c, expr)``. ``consts`` and
    ``equal`` are relation-side filters as in :class:`Scan` (``equal`` only for
    columns repeated among the newly bound ones). The output row is the input row
    followed by ``t[c] for c in columns``.

    An executor keeps one index of ``relation`` per distinct tuple of key columns
    (``key_columns()``), shared by every join that reads it that way."""

    relation: str
    keys: tuple[tuple[int, Expr], ...]
    columns: tuple[int, ...]
    consts: tuple[tuple[int, int | float | str], ...] = ()
    equal: tuple[tuple[int, int], ...] = ()

    def key_columns(self) -> tuple[int, ...]:
        return tuple(c for c, _ in self.keys)

    def describe(self) -> str:
        keys = ", ".join(f"{self.relation}.{c} = {e}" for c, e in self.keys) or "()"
        return (f"join {self.relation}{_rel_filters(self)} on {keys}"
                f" -> +{list(self.columns)}")


@dataclass(frozen=True)
class Antijoin:
    """Negation ``!relation(...)``: keeps the row iff no tuple ``t`` of
    ``relation`` has ``t[c] == value(expr)`` for every ``(c, expr)`` in ``keys``
    (wildcard columns are simply absent from ``keys``). The executor reads
    ``relation`` as a set."""

    relation: str
    keys: tuple[tuple[int, Expr], ...]

    def key_columns(self) -> tuple[int, ...]:
        return tuple(c for c, _ in self.keys)

    def describe(self) -> str:
        keys = ", ".join(f"{self.relation}.{c} = {e}" for c, e in self.keys) or "()"
        return f"antijoin {self.relation} on {keys}"


@dataclass(frozen=True)
class Filter:
    """Keeps the row iff ``condition`` (a comparison ``Call``) is true."""

    condition: Expr

    def describe(self) -> str:
        return f"filter {self.condition}"


@dataclass(frozen=True)
class Assign:
    """Appends one slot: ``value(expr)``; with ``multi=True`` ``expr`` is a
    ``Call("range", (lo, hi[, step]))`` and the row is repeated once per value of
    the range (Soufflé's ``range``: from ``lo`` towards ``hi``, ``hi`` excluded,
    counting down when ``lo > hi``; step 1 or -1 by default)."""

    expr: Expr
    multi: bool = False

    def describe(self, slot: int = 0) -> str:
        return f"{'each' if self.multi else 'let'} #{slot} = {self.expr}"


@dataclass(frozen=True)
class Aggregate:
    """An aggregate over a correlated sub-pipeline, appending one slot.

    For each row ``r`` reaching this step, the *seed* ``s = tuple(r[i] for i in
    seed)`` starts a sub-pipeline whose row begins with ``s`` (so inside ``body``,
    slots ``0 .. len(seed)-1`` are the outer variables the aggregate body
    mentions; ``body`` never starts with :class:`Scan`). ``body`` runs like a rule
    pipeline and yields a bag of rows ``b``; the aggregate ranges over
    ``value(target)`` evaluated on each ``b`` (``target`` is ``None`` for count),
    counting every derivation:

    - ``count``: the number of rows (0 when there are none);
    - ``sum``: the sum of the targets (0 when there are none), in ``type``
      arithmetic;
    - ``min`` / ``max``: the least / greatest target; no row -> ``r`` is dropped;
    - ``mean``: the arithmetic mean as a ``float``; no row -> ``r`` is dropped.

    ``type`` is the primitive type of the result (``number`` for count, ``float``
    for mean, the target's type otherwise); ``target_type`` the target's
    (``None`` for count, or when not known). Because the result depends only on
    ``s``, an executor can compute it once per distinct seed: ``group(seed rows)``
    joined back to the outer rows on the seed slots.

    ``n(d, c) :- dept(d), c = count : { emp(_, d, _) }.``:

    >>> rule = RulePlan("n", (Scan("dept", (0,)),
    ...                       Aggregate("count", (0,), (Join("emp", ((1, Col(0)),), ()),),
    ...                                 None)), head=(Col(0), Col(1)))
    >>> print("\\n".join(rule.describe().splitlines()[1:]))
      scan dept -> [0]
      #1 = count, body seeded by (#0):
        | join emp on emp.1 = #0 -> +[]
      head (#0, #1)
    """

    kind: str
    seed: tuple[int, ...]
    body: tuple[Step, ...]
    target: Expr | None
    type: str = "number"
    target_type: str | None = None

    def describe(self, slot: int = 0) -> str:
        target = f" of body {self.target}" if self.target is not None else ""
        seed = ", ".join(f"#{i}" for i in self.seed)
        lines = [f"#{slot} = {self.kind}{target}, body seeded by ({seed}):"]
        lines += ["  | " + line for line in describe_steps(self.body, len(self.seed))]
        return "\n".join(lines)


Step = Scan | Join | Antijoin | Filter | Assign | Aggregate


def _rel_filters(step) -> str:
    parts = [f"{step.relation}.{c} = {Const(v)}" for c, v in step.consts]
    parts += [f"{step.relation}.{a} = {step.relation}.{b}" for a, b in step.equal]
    return f" where {' and '.join(parts)}" if parts else ""


def describe_steps(steps, slot: int = 0) -> list[str]:
    """Text lines for a pipeline whose row starts with ``slot`` slots."""
    lines = []
    for step in steps:
        if isinstance(step, (Assign, Aggregate)):
            lines.extend(step.describe(slot).splitlines())
        else:
            lines.append(step.describe())
        slot += step_width(step)
    return lines


def step_width(step: Step) -> int:
    """How many slots a step appends to the row."""
    if isinstance(step, Scan):
        return len(step.columns)
    if isinstance(step, Join):
        return len(step.columns)
    if isinstance(step, (Assign, Aggregate)):
        return 1
    return 0


# ---------------------------------------------------------------- rules, strata


@dataclass(frozen=True)
class RulePlan:
    """One clause ``head :- body``: ``steps`` then the projection ``head`` (one
    expression per column of ``relation``). ``label`` is the clause's source text
    (for plans, graphs and errors); ``span`` its place in the source, which every
    backend's errors point at."""

    relation: str
    steps: tuple[Step, ...]
    head: tuple[Expr, ...]
    label: str = ""
    span: Span | None = None

    def reads(self) -> tuple[str, ...]:
        """The relations the rule reads (positively, negatively or inside
        aggregates), without repeats, in step order."""
        names: list[str] = []

        def visit(steps):
            for step in steps:
                if isinstance(step, (Scan, Join, Antijoin)):
                    if step.relation not in names:
                        names.append(step.relation)
                elif isinstance(step, Aggregate):
                    visit(step.body)

        visit(self.steps)
        return tuple(names)

    def recursive_steps(self, relations) -> tuple[int, ...]:
        """Indices (in ``steps``) of the Scan/Join steps that read one of
        ``relations`` (a recursive stratum's own relations): the occurrences a
        semi-naive executor makes one delta variant for."""
        return tuple(i for i, step in enumerate(self.steps)
                     if isinstance(step, (Scan, Join)) and step.relation in relations)

    def describe(self) -> str:
        lines = [self.label or f"{self.relation}(...) :- ..."]
        lines += ["  " + line for line in describe_steps(self.steps)]
        lines.append(f"  head ({', '.join(str(e) for e in self.head)})")
        return "\n".join(lines)


@dataclass(frozen=True)
class SubsumptionPlan:
    """A subsumption rule ``r(a..) <= r(b..) :- body.`` of ``relation``: ``rule``
    is planned as the clause ``r(a..) :- r(a..), r(b..), body`` whose head is the
    dominated tuple followed by the dominating one (``2 * arity`` expressions), and
    in whose steps ``relation`` stands for its *candidates* (what its facts,
    inputs and rules give, before pruning). ``relation`` holds the candidates
    minus every dominated tuple whose dominating tuple is another candidate
    (see :mod:`datalog.plan.subsumption`)."""

    relation: str
    rule: RulePlan

    def describe(self) -> str:
        lines = self.rule.describe().splitlines()
        arity = len(self.rule.head) // 2
        dominated = ", ".join(str(e) for e in self.rule.head[:arity])
        dominating = ", ".join(str(e) for e in self.rule.head[arity:])
        lines[-1] = f"  remove ({dominated}) if ({dominating}) is another candidate"
        return "\n".join(lines)


@dataclass(frozen=True)
class StratumPlan:
    """A set of relations computed together, after every earlier stratum.
    ``recursive`` is true for a strongly connected component with a cycle (a
    relation that depends on itself, directly or through the others); ``rules``
    are all the rules whose head is one of ``relations``; ``subsumptions`` the
    subsumption rules that prune them."""

    relations: tuple[str, ...]
    recursive: bool
    rules: tuple[RulePlan, ...]
    subsumptions: tuple[SubsumptionPlan, ...] = ()

    def describe(self) -> str:
        kind = "recursive stratum" if self.recursive else "stratum"
        lines = [f"{kind} {{{', '.join(self.relations)}}}"]
        for rule in (*self.rules, *self.subsumptions):
            lines += ["  " + line for line in rule.describe().splitlines()]
        return "\n".join(lines)


@dataclass(frozen=True)
class RelationPlan:
    """A relation: its name, attribute names and the primitive type of each
    column (``number``, ``unsigned``, ``float``, ``symbol``)."""

    name: str
    attributes: tuple[str, ...]
    types: tuple[str, ...]

    @property
    def arity(self) -> int:
        return len(self.types)


@dataclass(frozen=True)
class IOPlan:
    """A ``.input`` / ``.output`` / ``.printsize`` directive for one relation with
    its parameters (key, value) in source order, values unquoted."""

    kind: str
    relation: str
    params: tuple[tuple[str, str], ...] = ()

    param = Directive.param  # the same lookup of a parameter by key


@dataclass(frozen=True)
class ProgramPlan:
    """A whole program. ``relations`` maps every declared relation name to its
    :class:`RelationPlan` (in declaration order); ``facts`` maps relation names to
    the rows the program states (constant expressions already evaluated);
    ``strata`` are in evaluation order (every relation a stratum reads is
    computed by an earlier stratum or by itself, or has no rules); relations with
    no rules belong to no stratum. ``limits`` maps relations to their
    ``.limitsize`` (the loop of a recursive stratum ends once one of its relations
    has that many rows; no effect on other relations, as in Soufflé). ``choices``
    maps each ``choice-domain`` relation to the column numbers of its domains
    (what it holds: :mod:`datalog.plan.choice`)."""

    relations: dict[str, RelationPlan]
    strata: tuple[StratumPlan, ...]
    facts: dict[str, frozenset] = field(default_factory=dict)
    inputs: tuple[IOPlan, ...] = ()
    outputs: tuple[IOPlan, ...] = ()
    printsize: tuple[IOPlan, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    choices: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)

    def rules(self) -> tuple[RulePlan, ...]:
        """Every rule of every stratum, in evaluation order."""
        return tuple(rule for stratum in self.strata for rule in stratum.rules)

    def describe(self) -> str:
        """The stable text rendering used by ``datalog plan``."""
        lines = []
        for rel in self.relations.values():
            cols = ", ".join(f"{a}: {t}" for a, t in zip(rel.attributes, rel.types))
            marks = [kind for kind, plans in (("input", self.inputs),
                                              ("output", self.outputs),
                                              ("printsize", self.printsize))
                     if any(p.relation == rel.name for p in plans)]
            facts = len(self.facts.get(rel.name, ()))
            if facts:
                marks.append(f"{facts} fact{'s' if facts != 1 else ''}")
            if rel.name in self.choices:
                marks.append(choice_text(rel.attributes, self.choices[rel.name]))
            suffix = f"  [{', '.join(marks)}]" if marks else ""
            lines.append(f"relation {rel.name}({cols}){suffix}")
        for stratum in self.strata:
            lines.append("")
            lines.append(stratum.describe())
        return "\n".join(lines)
