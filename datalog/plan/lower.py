"""Lowering a checked program to the relational plan (:mod:`datalog.plan.ir`).

Each clause ``head :- body`` becomes a :class:`~datalog.plan.ir.RulePlan`: a pipeline
that binds the clause's variables left to right. The order is chosen greedily:

1. ``x = c`` with a constant ``c`` is substituted into the clause (``x`` becomes
   ``c`` everywhere), so constants reach the atoms as filters and join keys.
2. Whatever is *ready* (all its variables bound) is applied as early as possible:
   comparisons as filters, negated atoms as antijoins, ``x = expr`` with ``x``
   unbound as an assignment, ``range`` as a multi-valued assignment, aggregates
   once every variable they share with the rest of the clause is bound.
3. Otherwise the next positive atom is the one with most bound arguments
   (variables already bound, constants), ties broken by source order; the first
   atom of a rule becomes a scan, the others joins keyed by their bound arguments.

Records and ADT values: a record or constructor term whose variables are bound
is built (:class:`~datalog.plan.ir.Pack`); one holding unbound variables, as an
atom's argument or a side of an equality whose other side is bound, is a
*pattern*: a filter on the value's shape (not ``nil``; the branch) and then an
assignment or a filter per field (:class:`~datalog.plan.ir.Field`), nested
patterns in turn.

Aggregates and ``range`` calls anywhere in a term are hoisted into steps of their
own that bind a hidden variable (``$1``, ``$2``, ...). An aggregate's body is
planned the same way into a correlated sub-pipeline seeded by the variables it
shares with the clause outside every aggregate (Soufflé's grouping semantics);
:func:`~datalog.analysis.transforms.aggregates.scope_aggregates` first gives the
variables local to an aggregate names of their own and binds the witnesses of
``min``/``max``, so that sharing a name is sharing a variable.

>>> from datalog.syntax.ast import Atom, Comparison, Span, Variable
>>> at = Span("p.dl", 1, 1, 1, 1)
>>> x, y, z = (Variable(n, at) for n in "xyz")
>>> types = {"edge": ("number", "number"), "path": ("number", "number")}
>>> rule = plan_clause(Atom("path", (x, z), at),
...                    (Atom("path", (x, y), at), Atom("edge", (y, z), at),
...                     Comparison("!=", x, z, at)), types)
>>> print(rule.describe())
path(x, z) :- path(x, y), edge(y, z), x != z.
  scan path -> [0, 1]
  join edge on edge.0 = #1 -> +[1]
  filter (#0 != #2)
  head (#0, #2)
"""

from __future__ import annotations

from collections.abc import Iterable

from datalog.analysis.checks.choice import effective_domains
from datalog.analysis.context import user_functor_signatures
from datalog.analysis.transforms.aggregates import scope_aggregates
from datalog.analysis.transforms.constants import substitute_constants
from datalog.analysis.types import TypeTable
from datalog.dialect.functors import BINARY_OPS, FUNCTORS, UNARY_OPS, Operator
from datalog.dialect.records import PRIMITIVES, ADTType, RecordType, is_structured
from datalog.dialect.user_functors import AUTOINC
from datalog.errors import CheckError, Diagnostic
from datalog.plan.expressions import evaluate
from datalog.plan.ir import (
    Aggregate,
    Antijoin,
    Assign,
    Call,
    Col,
    Const,
    Expr,
    Field,
    Filter,
    IOPlan,
    Join,
    Pack,
    ProgramPlan,
    RelationPlan,
    RulePlan,
    Scan,
    StratumPlan,
)
from datalog.plan.subsumption import plan_subsumption
from datalog.syntax import ast
from datalog.syntax.printer import clause_text
from datalog.syntax.terms import (
    direct_variables,
    has_holes,
    literal_terms,
    pattern_variables,
    term_variables,
)


def plan_program(checked) -> ProgramPlan:
    """The :class:`~datalog.plan.ir.ProgramPlan` of a ``CheckedProgram`` (as returned by
    :func:`datalog.analysis.frontend.load`): relations, facts, directives and strata."""
    program: ast.Module = checked.program
    types: dict[str, tuple[str, ...]] = dict(checked.types)
    relations = {}
    for decl in program.relations:
        relations[decl.name] = RelationPlan(
            decl.name, tuple(a.name for a in decl.attributes), tuple(types[decl.name]))
    facts: dict[str, set] = {}
    sources = _sources(program)
    for fact in program.facts:
        row = fact_row(fact.atom, types[fact.atom.relation], sources)
        facts.setdefault(fact.atom.relation, set()).add(row)
    named = _named_types(program)
    strata = []
    functors = user_functor_signatures(program, TypeTable(program))
    sites = [0]   # autoinc() call sites, numbered across the program
    for stratum in checked.strata:
        rules = tuple(plan_clause(head, body, types, sources, functors, sites, named)
                      for head, body in stratum.clauses)
        pruning = tuple(plan for rule in stratum.subsumptions
                        for plan in plan_subsumption(rule, types, sources, functors, sites,
                                                     named))
        if rules or pruning:
            strata.append(StratumPlan(tuple(stratum.relations), stratum.recursive, rules,
                                      pruning))
    # Every .input and .output directive counts (a relation may be read from two
    # files, written to a file and printed); a repeated one, and .printsize, once.
    directives = {"input": [], "output": [], "printsize": []}
    for directive in program.directives:
        for name in directive.relations:
            plans = directives.setdefault(directive.kind, [])
            plan = IOPlan(directive.kind, name, tuple(directive.params))
            if plan not in plans and (directive.kind != "printsize"
                                      or all(p.relation != name for p in plans)):
                plans.append(plan)
    limits: dict[str, int] = {}
    for directive in program.directives:    # .limitsize r(n=N): the smallest N counts
        if directive.kind == "limitsize":
            n = int(directive.param("n"))
            for name in directive.relations:
                limits[name] = min(n, limits.get(name, n))
    choices = {decl.name: domains for decl in program.relations
               if (domains := effective_domains(decl))}
    return ProgramPlan(relations, tuple(strata),
                       {name: frozenset(rows) for name, rows in facts.items()},
                       tuple(directives["input"]), tuple(directives["output"]),
                       tuple(directives["printsize"]), limits, choices)


def _sources(program: ast.Module) -> dict[str, str]:
    return dict(program.sources)


def fact_row(atom: ast.Atom, types: tuple[str, ...],
             sources: dict[str, str] | None = None) -> tuple:
    """The row a fact states (a program's or one the REPL asserts).

    >>> from datalog.syntax.parser import parse
    >>> atom = parse("f(3 / 2, 1 + 2).").facts[0].atom
    >>> fact_row(atom, ("float", "number"))
    (1.5, 3)
    """
    return tuple(fact_value(term, column_type, sources or {})
                 for term, column_type in zip(atom.args, types))


def fact_value(term: ast.Term, column_type: str, sources: dict[str, str]):
    """The value of a constant expression in a column of ``column_type``, with
    Soufflé's semantics: a bare numeric constant takes the column's type (``3 / 2``
    is ``1.5`` in a ``float`` column). A term that is not a constant expression,
    ``range`` (several values) and a failing functor (division by zero) are
    each a :class:`~datalog.errors.CheckError` at the term."""
    from datalog.dialect.functors import FunctorError

    if isinstance(term, ast.Constant):     # the common case, fast for large fact lists
        if column_type == "unsigned" and term.value < 0:  # `-1` read as a number
            raise CheckError([Diagnostic(
                "error", f"`{term.value}` does not fit in a 64-bit `unsigned`", term.span,
                hint="unsigned numbers range from 0 to 2^64 - 1")], sources)
        return float(term.value) if column_type == "float" else term.value
    problem = _not_constant(term)
    if problem is not None:
        message, span, hint = problem
        raise CheckError([Diagnostic("error", message, span, hint)], sources)
    expr, _ = _PipelinePlanner({}, sources).expr(term, column_type)
    try:
        value = evaluate(expr, ())
    except FunctorError as exc:   # division by zero, to_number("x"), ...
        message = exc.diagnostics[0].message if exc.diagnostics else str(exc)
        raise CheckError([Diagnostic("error", message, term.span)], sources) from None
    return float(value) if column_type == "float" else value


def _not_constant(term: ast.Term) -> tuple[str, ast.Span, str | None] | None:
    """Why ``term`` is not one constant value: (message, place, hint), or None."""
    if isinstance(term, (ast.Constant, ast.Nil)):
        return None
    if isinstance(term, (ast.Record, ast.Branch)):
        return next(filter(None, map(_not_constant, term.args)), None)
    if isinstance(term, ast.Cast):
        return _not_constant(term.term)
    if isinstance(term, (ast.BinaryOp, ast.UnaryOp, ast.Functor)):
        if isinstance(term, ast.Functor) and term.name == "range":
            return ("`range` yields several values; assert one fact per value",
                    term.span, None)
        parts = ((term.left, term.right) if isinstance(term, ast.BinaryOp)
                 else (term.operand,) if isinstance(term, ast.UnaryOp) else term.args)
        return next(filter(None, map(_not_constant, parts)), None)
    return ("a fact's arguments must be constants", term.span,
            "queries are written `?- relation(x, ...)`"
            if isinstance(term, (ast.Variable, ast.Wildcard)) else None)


def plan_clause(head: ast.Atom, body: Iterable[ast.Literal],
                types: dict[str, tuple[str, ...]],
                sources: dict[str, str] | None = None,
                functors: dict[str, Operator] | None = None,
                sites: list[int] | None = None,
                named: dict[str, str] | None = None) -> RulePlan:
    """The pipeline of one clause (a head atom and a conjunction of literals).
    ``functors`` are the signatures of the program's user-defined functors
    (``@name`` -> :class:`~datalog.dialect.functors.Operator`); ``sites`` counts
    the ``autoinc()`` calls planned so far (each call site gets its number);
    ``named`` maps the program's type names to column types (for ``as`` and
    constructors of types no relation uses)."""
    label = clause_text(head, tuple(body))
    head, body = substitute_constants(*scope_aggregates(head, tuple(body)))
    span = head.span
    pipeline = _PipelinePlanner(types, sources or {}, named=named)
    pipeline.functors = functors or {}
    pipeline.sites = sites if sites is not None else [0]
    pipeline.head_atoms = (head,)
    outer = _outer_variables((head,), body)
    pipeline.plan(body, outer, extra_terms=head.args)
    column_types = types[head.relation]
    exprs = tuple(pipeline.expr(pipeline.hoisted_term(t), ct)[0]
                  for t, ct in zip(head.args, column_types))
    return RulePlan(head.relation, tuple(pipeline.steps), exprs, label, span)


# ---------------------------------------------------------------- the pipeline


class _PipelinePlanner:
    """The planning state of one pipeline: bound variables and their slots."""

    def __init__(self, types, sources, seed: Iterable[tuple[str, str]] = (),
                 named: dict[str, str] | None = None):
        self.types = types
        self.sources = sources
        self.slots: dict[str, int] = {}
        self.slot_types: list[str] = []
        self.steps: list = []
        self.generated: dict[int, str] = {}   # id(term) -> hidden variable
        self.counter = [0]
        self.functors: dict[str, Operator] = {}
        self.sites = [0]
        self.scan_allowed = True
        self.head_atoms: tuple = ()
        self.deferred: list[ast.Comparison] = []   # fields of patterns, compared later
        #: variable -> the column or field type it fills (the type a record
        #: or ``nil`` equated with it has)
        self.hints: dict[str, str] = {}
        self.named = dict(named or {})
        self.branches = _branch_types([*self.named.values(),
                                       *(t for columns in types.values() for t in columns)])
        for name, type_ in seed:
            self._bind(name, type_)

    def _bind(self, name: str, type_: str) -> int:
        self.slots[name] = len(self.slot_types)
        self.slot_types.append(type_)
        return self.slots[name]

    def _fresh(self) -> str:
        self.counter[0] += 1
        return f"${self.counter[0]}"

    # ------------------------------------------------------------ planning

    def plan(self, body, outer: set[str], extra_terms=()) -> None:
        """Add the steps of ``body``; ``outer`` are the variables of the enclosing
        clause outside every aggregate (an aggregate's grouping candidates);
        ``extra_terms`` (the head) may hold aggregates and ranges too."""
        atoms: list[ast.Atom] = []
        waiting: list = []     # comparisons, negations, generators (var, term)
        for literal in (*body, *self.head_atoms):
            atom = literal.atom if isinstance(literal, ast.Negation) else literal
            if isinstance(atom, ast.Atom) and atom.relation in self.types:
                for arg, ctype in zip(atom.args, self.types[atom.relation]):
                    self._hint(arg, ctype)
        for literal in body:
            if isinstance(literal, ast.Atom):
                atoms.append(literal)
            else:
                waiting.append(literal)
            self._hoist(literal, waiting)
        for term in extra_terms:
            self._hoist_term(term, waiting)
        while atoms or waiting or self.deferred:
            waiting += self.deferred
            self.deferred.clear()
            if self._apply_ready(waiting, outer, may_defer=bool(atoms)):
                continue
            if not atoms:
                self._ungrounded(waiting)
            atom = max(atoms, key=lambda a: (self._bound_args(a), -self._open_exprs(a),
                                             -atoms.index(a)))
            atoms.remove(atom)
            self._join(atom, waiting)

    def _hint(self, term, type_: str) -> None:
        if isinstance(term, ast.Variable):
            self.hints.setdefault(term.name, type_)
        elif isinstance(term, ast.Record) and isinstance(type_, RecordType):
            for arg, (_, field_type) in zip(term.args, type_.fields):
                self._hint(arg, field_type)
        elif isinstance(term, ast.Branch) and term.name in self.branches:
            for arg, (_, field_type) in zip(term.args,
                                            self.branches[term.name].branches[term.name]):
                self._hint(arg, field_type)

    def _bound_args(self, atom: ast.Atom) -> int:
        score = 0
        for arg in atom.args:
            if isinstance(arg, ast.Constant) or (isinstance(arg, ast.Variable)
                                                 and arg.name in self.slots):
                score += 1
        return score

    def _open_exprs(self, atom: ast.Atom) -> int:
        """Arguments that are expressions over unbound variables (to avoid)."""
        return sum(1 for arg in atom.args
                   if isinstance(arg, (ast.BinaryOp, ast.UnaryOp, ast.Functor))
                   and not {v.name for v in term_variables(arg)} <= self.slots.keys())

    def _hoist(self, literal, waiting) -> None:
        if isinstance(literal, ast.Atom):
            for arg in literal.args:
                self._hoist_term(arg, waiting)
        elif isinstance(literal, ast.Negation):
            self._hoist(literal.atom, waiting)
        else:
            # x = count : {..} / x = range(..): the generator binds x itself.
            for var, term in ((literal.left, literal.right), (literal.right, literal.left)):
                if (literal.op == "=" and isinstance(var, ast.Variable)
                        and _is_generator(term) and id(term) not in self.generated):
                    self._hoist_term_inside(term, waiting)
                    self.generated[id(term)] = var.name
                    waiting.append(("gen", var.name, term))
                    self.generated[id(literal)] = "done"
            self._hoist_term(literal.left, waiting)
            self._hoist_term(literal.right, waiting)

    def _hoist_term(self, term, waiting) -> None:
        if id(term) in self.generated:
            return
        if _is_generator(term):
            self._hoist_term_inside(term, waiting)
            name = self._fresh()
            self.generated[id(term)] = name
            waiting.append(("gen", name, term))
        else:
            self._hoist_term_inside(term, waiting)

    def _hoist_term_inside(self, term, waiting) -> None:
        if isinstance(term, ast.BinaryOp):
            self._hoist_term(term.left, waiting)
            self._hoist_term(term.right, waiting)
        elif isinstance(term, ast.UnaryOp):
            self._hoist_term(term.operand, waiting)
        elif isinstance(term, (ast.Functor, ast.Record, ast.Branch)):
            for arg in term.args:
                self._hoist_term(arg, waiting)
        elif isinstance(term, ast.Cast):
            self._hoist_term(term.term, waiting)
        # An aggregate's own body is planned in its sub-pipeline.

    def hoisted_term(self, term):
        """``term`` with hoisted generators replaced by their hidden variables."""
        if id(term) in self.generated:
            return ast.Variable(self.generated[id(term)], term.span)
        if isinstance(term, ast.BinaryOp):
            return ast.BinaryOp(term.op, self.hoisted_term(term.left),
                                self.hoisted_term(term.right), term.span)
        if isinstance(term, ast.UnaryOp):
            return ast.UnaryOp(term.op, self.hoisted_term(term.operand), term.span)
        if isinstance(term, ast.Functor):
            return ast.Functor(term.name, tuple(self.hoisted_term(a) for a in term.args),
                               term.span)
        if isinstance(term, ast.Record):
            return ast.Record(tuple(self.hoisted_term(a) for a in term.args), term.span)
        if isinstance(term, ast.Branch):
            return ast.Branch(term.name, tuple(self.hoisted_term(a) for a in term.args),
                              term.span)
        if isinstance(term, ast.Cast):
            return ast.Cast(self.hoisted_term(term.term), term.type, term.span)
        return term

    def _vars(self, item) -> set[str]:
        """The variables an item needs bound before it can be applied."""
        if isinstance(item, tuple):
            _, _, term = item
            if isinstance(term, ast.Aggregate):
                return set()        # handled by _aggregate_ready
            return {v.name for a in term.args for v in term_variables(self.hoisted_term(a))}
        if isinstance(item, ast.Negation):
            return {v.name for a in item.atom.args for v in term_variables(self.hoisted_term(a))}
        return ({v.name for v in term_variables(self.hoisted_term(item.left))}
                | {v.name for v in term_variables(self.hoisted_term(item.right))})

    def _apply_ready(self, waiting, outer, may_defer) -> bool:
        """Apply one ready item (filters first); False when none is ready."""
        for item in list(waiting):
            if isinstance(item, ast.Comparison) and self.generated.get(id(item)) == "done":
                waiting.remove(item)
                return True
        order = sorted(waiting, key=lambda it: 0 if isinstance(it, ast.Comparison)
                       else 1 if isinstance(it, ast.Negation) else 2)
        for item in order:
            needed = self._vars(item)
            if needed and not needed <= self.slots.keys():
                if isinstance(item, ast.Comparison) and item.op == "=":
                    if self._try_assign(item):
                        waiting.remove(item)
                        return True
                continue
            if not needed and may_defer and self.scan_allowed and not self.steps \
                    and not isinstance(item, tuple):
                continue   # keep a constant-only filter after the first scan
            if isinstance(item, tuple) and isinstance(item[2], ast.Aggregate):
                if not self._aggregate_ready(item[2], outer):
                    continue
                waiting.remove(item)
                self._aggregate(item[1], item[2], outer)
                return True
            waiting.remove(item)
            if isinstance(item, ast.Comparison):
                if not (item.op == "=" and _holes(item) and self._try_assign(item)):
                    self.steps.append(Filter(self._condition(item)))
            elif isinstance(item, ast.Negation):
                self._antijoin(item.atom)
            else:
                self._range(item[1], item[2])
            return True
        return False

    def _try_assign(self, comparison: ast.Comparison) -> bool:
        """``x = expr`` with ``x`` unbound and ``expr`` bound: an assignment;
        ``pattern = expr`` with ``expr`` bound: the pattern's filters and
        assignments."""
        for var, other in ((comparison.left, comparison.right),
                           (comparison.right, comparison.left)):
            other = self.hoisted_term(other)
            if not {v.name for v in term_variables(other)} <= self.slots.keys():
                continue
            if isinstance(var, ast.Variable) and var.name not in self.slots \
                    and not _holes(other):
                expr, type_ = self.expr(other, self.hints.get(var.name))
                self.steps.append(Assign(expr))
                self._bind(var.name, type_)
                return True
            if isinstance(var, (ast.Record, ast.Branch)) and (any(
                    v.name not in self.slots for v in pattern_variables(var)) or _holes(var)):
                context = self._pattern_type(var)
                expr, type_ = self.expr(other, context)
                self._unpack(expr, type_, self.hoisted_term(var))
                return True
        return False

    def _pattern_type(self, pattern) -> str | None:
        """The type of a constructor pattern (a record's comes from the other side)."""
        if isinstance(pattern, ast.Branch):
            return self.branches.get(pattern.name)
        return None

    def _unpack(self, source: Expr, type_: str, pattern) -> None:
        """Match the value ``source`` (of ``type_``) against ``pattern``: keep
        the rows whose value has the pattern's shape and equal parts, binding
        its unbound variables."""
        if isinstance(pattern, ast.Wildcard):
            return
        if isinstance(pattern, ast.Variable) and pattern.name not in self.slots:
            self.steps.append(Assign(source))
            self._bind(pattern.name, type_)
            return
        unbound = any(v.name not in self.slots for v in pattern_variables(pattern)) \
            or has_holes(pattern)
        if isinstance(pattern, ast.Record) and unbound and isinstance(type_, RecordType):
            self.steps.append(Filter(Call("!=", (source, Const(())), (type_, type_))))
            for i, (arg, (_, field_type)) in enumerate(zip(pattern.args, type_.fields)):
                self._unpack(Field(source, i), field_type, arg)
            return
        if isinstance(pattern, ast.Branch) and unbound and isinstance(type_, ADTType) \
                and pattern.name in type_.branches:
            self.steps.append(Filter(Call("=", (Field(source, 0), Const(pattern.name)),
                                          ("symbol", "symbol"))))
            fields = type_.branches[pattern.name]
            for i, (arg, (_, field_type)) in enumerate(zip(pattern.args, fields), start=1):
                self._unpack(Field(source, i), field_type, arg)
            return
        if not {v.name for v in term_variables(pattern)} <= self.slots.keys():
            # `[y + 1, [y, _]]`: the field is compared once `y` is bound.
            hidden = self._fresh()
            self.steps.append(Assign(source))
            self._bind(hidden, type_)
            self.deferred.append(ast.Comparison("=", ast.Variable(hidden, pattern.span),
                                                pattern, pattern.span))
            return
        value, value_type = self.expr(pattern, type_)
        self.steps.append(Filter(Call("=", (source, value), (type_, value_type))))

    def _ungrounded(self, waiting) -> None:
        diagnostics = []
        for item in waiting:
            term = item[2] if isinstance(item, tuple) else item
            missing = sorted(self._vars(item) - self.slots.keys()) or ["?"]
            diagnostics.append(Diagnostic(
                "error", f"ungrounded variable `{missing[0]}`: no positive atom or "
                         f"equality binds it", term.span))
        raise CheckError(diagnostics, self.sources)

    # ------------------------------------------------------------ atoms

    def _join(self, atom: ast.Atom, waiting) -> None:
        column_types = self.types[atom.relation]
        first = self.scan_allowed and not self.steps and not self.slot_types
        keys, consts, equal, columns = [], [], [], []
        new: dict[str, int] = {}
        for column, (arg, ctype) in enumerate(zip(atom.args, column_types)):
            arg = self.hoisted_term(arg)
            if isinstance(arg, ast.Wildcard):
                continue
            if isinstance(arg, ast.Constant):
                value = _coerce(arg.value, ctype)
                if first:
                    consts.append((column, value))
                else:
                    keys.append((column, Const(value)))
                continue
            if isinstance(arg, ast.Variable):
                if arg.name in self.slots:
                    keys.append((column, Col(self.slots[arg.name])))
                elif arg.name in new:
                    equal.append((new[arg.name], column))
                else:
                    new[arg.name] = column
                    columns.append(column)
                continue
            names = {v.name for v in term_variables(arg)}
            if first and not names and not has_holes(arg):
                consts.append((column, evaluate(self.expr(arg, ctype)[0], ())))
            elif names <= self.slots.keys() and not has_holes(arg):
                keys.append((column, self.expr(arg, ctype)[0]))
            else:   # an expression over unbound variables: bind, then compare
                hidden = self._fresh()
                new[hidden] = column
                columns.append(column)
                waiting.insert(0, ast.Comparison("=", ast.Variable(hidden, arg.span), arg,
                                                 arg.span))
        if first:
            self.steps.append(Scan(atom.relation, tuple(columns), tuple(consts),
                                   tuple(equal)))
        else:
            self.steps.append(Join(atom.relation, tuple(keys), tuple(columns),
                                   equal=tuple(equal)))
        names_by_column = {c: n for n, c in new.items()}
        for column in columns:
            self._bind(names_by_column[column], column_types[column])

    def _antijoin(self, atom: ast.Atom) -> None:
        keys = []
        for column, (arg, ctype) in enumerate(zip(atom.args, self.types[atom.relation])):
            arg = self.hoisted_term(arg)
            if not isinstance(arg, ast.Wildcard):
                keys.append((column, self.expr(arg, ctype)[0]))
        self.steps.append(Antijoin(atom.relation, tuple(keys)))

    # ------------------------------------------------------------ generators

    def _range(self, name: str, term: ast.Functor) -> None:
        expr, type_ = self.expr(self._hoisted_args(term))
        self._bind_generated(name, Assign(expr, multi=True), type_, term.span)

    def _hoisted_args(self, term: ast.Functor) -> ast.Functor:
        return ast.Functor(term.name, tuple(self.hoisted_term(a) for a in term.args),
                           term.span)

    def _bind_generated(self, name: str, step, type_: str, span) -> None:
        self.steps.append(step)
        if name in self.slots:          # already bound: the generator must agree
            slot = len(self.slot_types)
            self.slot_types.append(type_)
            self.steps.append(Filter(Call("=", (Col(self.slots[name]), Col(slot)),
                                          (type_, type_))))
        else:
            self._bind(name, type_)

    def _aggregate_ready(self, term: ast.Aggregate, outer: set[str]) -> bool:
        return _correlated(term, outer) <= self.slots.keys()

    def _aggregate(self, name: str, term: ast.Aggregate, outer: set[str]) -> None:
        correlated = _correlated(term, outer)
        order = [v.name for v in term_variables(term) if v.name in correlated]
        seed_names = list(dict.fromkeys(order))
        seed = tuple(self.slots[n] for n in seed_names)
        inner = _PipelinePlanner(self.types, self.sources,
                                 [(n, self.slot_types[self.slots[n]]) for n in seed_names],
                                 named=self.named)
        inner.counter = self.counter
        inner.functors, inner.sites = self.functors, self.sites
        inner.scan_allowed = False    # the row starts with the seed, even if empty
        inner_outer = outer | _outer_variables((), term.body, exclude=term)
        inner.plan(term.body, inner_outer,
                   extra_terms=(term.target,) if term.target is not None else ())
        target, target_type = (None, "number")
        if term.target is not None:
            target, target_type = inner.expr(inner.hoisted_term(term.target))
        result_type = {"count": "number", "mean": "float"}.get(term.kind, target_type)
        step = Aggregate(term.kind, seed, tuple(inner.steps), target, result_type,
                         target_type if target is not None else None)
        self._bind_generated(name, step, result_type, term.span)

    # ------------------------------------------------------------ expressions

    def _condition(self, comparison: ast.Comparison) -> Expr:
        left_term = self.hoisted_term(comparison.left)
        right_term = self.hoisted_term(comparison.right)
        if _needs_context(left_term):
            right, rt = self.expr(right_term)
            left, lt = self.expr(left_term, rt)
        else:
            left, lt = self.expr(left_term)
            right, rt = self.expr(right_term, lt if _needs_context(right_term) else None)
        (left, lt), (right, rt) = _unify([(left, lt), (right, rt)])
        return Call(comparison.op, (left, right), (lt, rt))

    def expr(self, term, context: str | None = None) -> tuple[Expr, str]:
        """The plan expression of a (hoisted) term and its primitive type;
        ``context`` is the type a bare numeric constant should take."""
        if isinstance(term, ast.Variable):
            slot = self.slots[term.name]
            return Col(slot), self.slot_types[slot]
        if isinstance(term, ast.Constant):
            if context is not None and term.type in ("number", "unsigned", "float") \
                    and context in ("number", "unsigned", "float"):
                return Const(_coerce(term.value, context)), context
            return Const(term.value), term.type
        if isinstance(term, (ast.Record, ast.Nil, ast.Branch, ast.Cast)):
            return self._structured(term, context)
        if isinstance(term, ast.BinaryOp):
            args = _unify([self.expr(term.left, context), self.expr(term.right, context)])
            table = BINARY_OPS
            name, parts = term.op, args
        elif isinstance(term, ast.UnaryOp):
            name, parts, table = term.op, [self.expr(term.operand, context)], UNARY_OPS
        elif isinstance(term, ast.Functor) and term.name == AUTOINC:
            # autoinc(): numbered by its call site and the binding of the row so far
            site = self.sites[0]
            self.sites[0] += 1
            args = (Const(site), *(Col(i) for i in range(len(self.slot_types))))
            return Call(AUTOINC, args, ("number", *self.slot_types)), "number"
        elif isinstance(term, ast.Functor):
            table = self.functors if term.name.startswith("@") else FUNCTORS
            name = term.name
            parts = [self.expr(a) for a in term.args]
            if name in ("min", "max", "range"):
                parts = _unify(parts)
        else:
            raise CheckError([Diagnostic("error", "this term cannot be evaluated here",
                                         term.span)], self.sources)
        arg_types = tuple(t for _, t in parts)
        if any(is_structured(t) for t in arg_types):
            raise CheckError([Diagnostic(
                "error", f"`{name}` does not apply to records or ADT values", term.span)],
                self.sources)
        operator = table.get(name)
        result = operator.result_type(arg_types) if operator is not None else None
        if result is None:
            raise CheckError([Diagnostic(
                "error", f"`{name}` does not apply to ({', '.join(arg_types)})",
                term.span)], self.sources)
        return Call(name, tuple(e for e, _ in parts), arg_types), result


    def _structured(self, term, context: str | None) -> tuple[Expr, str]:
        """A record, ``nil``, a constructor or a cast, in a place of type ``context``."""
        if isinstance(term, ast.Cast):
            target = self._named_type(term.type)
            expr, type_ = self.expr(term.term, target or context)
            return expr, target or type_
        if isinstance(term, ast.Branch):
            adt = context if isinstance(context, ADTType) and term.name in context.branches \
                else self.branches.get(term.name)
            if adt is None:
                raise CheckError([Diagnostic("error", f"unknown constructor `${term.name}`",
                                             term.span)], self.sources)
            fields = adt.branches[term.name]
            args = [self._field(a, t) for a, (_, t) in zip(term.args, fields)]
            return _pack(term.name, args), adt
        if not isinstance(context, RecordType):
            raise CheckError([Diagnostic("error", "cannot tell which record type this is",
                                         term.span, hint="say it with `as([...], Type)`")],
                             self.sources)
        if isinstance(term, ast.Nil):
            return Const(()), context
        args = [self._field(a, t) for a, (_, t) in zip(term.args, context.fields)]
        return _pack(None, args), context

    def _field(self, term, type_: str) -> Expr:
        if isinstance(term, ast.Wildcard):
            raise CheckError([Diagnostic("error", "`_` cannot be part of a value that is "
                                         "built", term.span,
                                         hint="`_` ignores a field of a value taken apart; "
                                              "name the field here")], self.sources)
        return self.expr(term, type_)[0]

    def _named_type(self, name: str) -> str | None:
        """The column type called ``name`` when the plan knows it (a primitive, a
        record type or an ADT used by some relation); None for a user subtype."""
        if name in PRIMITIVES:
            return name
        found = self.named.get(name)
        return found if found is not None and is_structured(found) else None


# ---------------------------------------------------------------- helpers


def _pack(branch: str | None, args: list[Expr]) -> Expr:
    """A :class:`Pack`, or the constant value when every part is constant."""
    if all(isinstance(a, Const) for a in args):
        return Const(evaluate(Pack(branch, tuple(args)), ()))
    return Pack(branch, tuple(args))


def _needs_context(term) -> bool:
    """A record or ``nil`` takes its type from the other side of a comparison."""
    return isinstance(term, (ast.Record, ast.Nil))


def _holes(node) -> bool:
    """Whether a comparison's side (or ``node`` itself) is a pattern with a ``_``."""
    if isinstance(node, ast.Comparison):
        return has_holes(node.left) or has_holes(node.right)
    return has_holes(node)


def _named_types(program: ast.Module) -> dict[str, str]:
    """Each user type's name -> its column type (a record type or ADT, or the
    primitive of a subtype or union)."""
    from datalog.analysis.types import TypeTable

    table = TypeTable(program)
    return {decl.name: table.primitive(decl.name) for decl in program.types
            if table.primitive(decl.name) is not None}


def _structured_types(types: Iterable[str]) -> dict[str, str]:
    """Every record type and ADT reachable from the column types ``types``."""
    found: dict[str, str] = {}
    todo = list(types)
    while todo:
        type_ = todo.pop()
        if not is_structured(type_) or type_ in found:
            continue
        found[str(type_)] = type_
        if isinstance(type_, RecordType):
            todo += [t for _, t in type_.fields]
        else:
            todo += [t for fields in type_.branches.values() for _, t in fields]
    return found


def _branch_types(types: Iterable[str]) -> dict[str, ADTType]:
    """Branch name -> its ADT, for the ADTs reachable from ``types``."""
    return {name: t for t in _structured_types(types).values() if isinstance(t, ADTType)
            for name in t.branches}



def _is_generator(term) -> bool:
    return isinstance(term, ast.Aggregate) or (
        isinstance(term, ast.Functor) and term.name == "range")


def _coerce(value, type_: str):
    if type_ == "float" and isinstance(value, int):
        return float(value)
    return value


def _unify(parts: list[tuple[Expr, str]]) -> list[tuple[Expr, str]]:
    """Give bare numeric constants the type of their non-constant partners
    (``x < 1`` on a float ``x`` compares with ``1.0``)."""
    numeric = ("number", "unsigned", "float")
    targets = [t for e, t in parts if not isinstance(e, Const) and t in numeric]
    if not targets:
        targets = [t for _, t in parts if t in ("unsigned", "float")]
    if not targets:
        return parts
    target = "float" if "float" in targets else targets[0]
    return [(Const(_coerce(e.value, target)), target)
            if isinstance(e, Const) and t in numeric and t != target else (e, t)
            for e, t in parts]


def _outer_variables(heads, body, exclude=None) -> set[str]:
    """Variables of ``heads`` and ``body`` outside every aggregate (inside
    ``exclude``'s own body: outside its nested aggregates)."""
    terms = [t for literal in (*heads, *body) for t in literal_terms(literal)]
    if exclude is not None and exclude.target is not None:
        terms.append(exclude.target)
    return {v.name for v in direct_variables(terms)}


def _correlated(term: ast.Aggregate, outer: set[str]) -> set[str]:
    return {v.name for v in term_variables(term)} & outer
