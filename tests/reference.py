"""A small from-scratch Datalog evaluator: the oracle the engine is tested against.

It shares nothing with the engine and very little with the front end (only the AST
and the operator tables of :mod:`datalog.dialect.functors`, which *define* what operators
mean); it computes its own strata, its own types and evaluates naively, so that a
bug in the compiler, the circuits or the stratifier cannot hide in both. Clarity
over speed: it is meant for programs of test size (up to a few thousand tuples).

Semantics (Soufflé's, as the engine implements them):

- Every relation is the set of its input tuples, its facts and what its rules
  derive; an ``eqrel`` relation is closed under equivalence (reflexive on its
  values, symmetric, transitive) at every round, here directly rather than by the
  front end's rewriting into rules. Strata are the strongly connected components
  of the relation dependency graph in dependency order; each is iterated naively
  (apply every rule to everything, add what is new) until nothing changes.
- A rule body is a conjunction of literals, solved left to right, except that a
  literal waits until the variables it needs are bound (``x = y + 1`` before the
  atom that binds ``y`` simply runs later). ``x = e`` binds ``x`` when ``e`` can be
  computed; a multi-valued functor (``range``) binds one solution per value.
- ``!r(a, _)`` holds when no tuple of ``r`` matches; its variables must be bound.
- Aggregates are *correlated*: for each binding of the aggregate's variables that
  also occur outside it (the grouping variables), the body is solved with those
  fixed and the target is evaluated once per distinct solution of the body (every
  variable and every ``_`` of the body counts, so ``count : r(x, _)`` counts
  tuples of ``r``). ``count`` and ``sum`` of no solutions are ``0``; ``min``,
  ``max`` and ``mean`` of no solutions have no value, so the rule does not fire.
  ``mean`` is a float; ``sum`` has the type of its target (and wraps like ``+``).
- A subsumption rule ``r(a) <= r(b) :- body.`` removes from ``r`` each tuple
  matching ``a`` for which a *different* tuple matching ``b`` and a solution of
  the body exist, all at once. A stratum with such rules is iterated from empty
  relations, each round recomputing every relation of the stratum from the last
  round's (facts, inputs, every rule) and then removing the dominated tuples,
  until a round changes nothing.
- Numeric constants take the type their context asks for: in ``x + 1`` with a
  ``float`` ``x`` the ``1`` is ``1.0``; a head column declared ``float`` stores
  floats.

>>> from datalog.syntax.parser import parse
>>> program = parse('''
...     .decl edge(x: number, y: number)
...     .decl path(x: number, y: number)
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''')
>>> sorted(evaluate(program, {"edge": {(1, 2), (2, 3)}})["path"])
[(1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import networkx as nx

from datalog.dialect.functors import (
    BINARY_OPS,
    COMPARISONS,
    FUNCTORS,
    NUMERIC_TYPES,
    UNARY_OPS,
    WRAP,
    FunctorError,
    type_of_value,
)
from datalog.errors import Diagnostic, EvaluationError
from datalog.syntax.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    Comparison,
    Constant,
    Functor,
    Module,
    Negation,
    Span,
    Term,
    UnaryOp,
    Variable,
    Wildcard,
)
from datalog.syntax.terms import literal_variables, term_variables

Binding = dict[str, Any]
Database = dict[str, set[tuple]]


def evaluate(program: Module, inputs: Mapping[str, set[tuple]] | None = None,
             max_iterations: int = 100_000) -> Database:
    """Every declared relation of ``program`` (name -> set of tuples) after
    evaluating it over ``inputs`` (name -> tuples added to that relation)."""
    columns = column_types(program)
    db: Database = {name: set() for name in columns}
    for name, rows in (inputs or {}).items():
        if name not in db:
            raise EvaluationError(f"input for undeclared relation `{name}`")
        for row in rows:
            if len(row) != len(columns[name]):
                raise EvaluationError(f"{name}{tuple(row)!r} has {len(row)} values, "
                                      f"`{name}` has {len(columns[name])} columns")
            db[name].add(_coerce_row(tuple(row), columns[name]))
    for fact in program.facts:
        clause = Clause(fact.atom, (), columns, program)
        db[fact.atom.relation].update(clause.heads({}))
    eqrel = {r.name for r in program.relations if "eqrel" in r.qualifiers}
    for stratum in strata(program):
        clauses = [Clause(head, body, columns, program)
                   for rule in program.rules for head, body in rule.clauses()
                   if head.relation in stratum]
        pruning = [_pair_clause(rule, body, columns, program)
                   for rule in program.subsumptions if rule.dominated.relation in stratum
                   for body in rule.body]
        if pruning:
            _pruned_fixpoint(clauses, pruning, db, stratum, max_iterations)
        else:
            _fixpoint(clauses, db, stratum & eqrel, max_iterations)
    return db


def _pair_clause(rule, body: tuple, columns: dict, program: Module) -> Clause:
    """``r(a) <= r(b) :- body`` as the clause ``pair(a, b) :- r(a), r(b), body``
    (a ``_`` in a head a variable of its own), its relation ``(r, arity)``."""
    counter = itertools.count(1)
    dominated = Atom(rule.dominated.relation, tuple(
        Variable(f"_<{next(counter)}", a.span) if isinstance(a, Wildcard) else a
        for a in rule.dominated.args), rule.dominated.span)
    dominating = Atom(rule.dominating.relation, tuple(
        Variable(f"_>{next(counter)}", a.span) if isinstance(a, Wildcard) else a
        for a in rule.dominating.args), rule.dominating.span)
    name = f"pair of {dominated.relation}"
    columns = {**columns, name: columns[dominated.relation] * 2}
    head = Atom(name, dominated.args + dominating.args, rule.span)
    return Clause(head, (dominated, dominating, *body), columns, program)


def _pruned_fixpoint(clauses: list[Clause], pruning: list[Clause], db: Database,
                     stratum: set[str], max_iterations: int) -> None:
    base = {name: set(db[name]) for name in stratum}
    current = {name: set() for name in stratum}
    for _ in range(max_iterations):
        view = {**db, **current}
        candidates = {name: set(rows) for name, rows in base.items()}
        for clause in clauses:
            candidates[clause.head.relation].update(clause.derive(view))
        view = {**db, **candidates}
        for clause in pruning:
            relation = clause.body[0].relation
            arity = len(clause.columns[relation])
            candidates[relation] = candidates[relation] - {
                pair[:arity] for pair in clause.derive(view) if pair[:arity] != pair[arity:]}
        if candidates == current:
            db.update(current)
            return
        current = candidates
    raise EvaluationError(f"no fixpoint after {max_iterations} iterations")


def _fixpoint(clauses: list[Clause], db: Database, eqrel: set[str],
              max_iterations: int) -> None:
    for _ in range(max_iterations):
        changed = False
        for name in eqrel:
            closed = equivalence_closure(db[name])
            changed |= closed != db[name]
            db[name] = closed
        for clause in clauses:
            # head(..) :- body.   Collect first: the body may read the head relation.
            derived = list(clause.derive(db))
            target = db[clause.head.relation]
            before = len(target)
            target.update(derived)
            changed |= len(target) != before
        if not changed:
            return
    raise EvaluationError(f"no fixpoint after {max_iterations} iterations")


def equivalence_closure(pairs: set[tuple]) -> set[tuple]:
    """The least equivalence relation containing ``pairs`` (on the values in them).

    >>> sorted(equivalence_closure({(1, 2), (3, 2)}))[:4]
    [(1, 1), (1, 2), (1, 3), (2, 1)]
    """
    classes: dict[Any, set] = {}
    for a, b in pairs:
        merged = classes.get(a, {a}) | classes.get(b, {b})
        for value in merged:
            classes[value] = merged
    return {(a, b) for a, members in classes.items() for b in members}


# ---------------------------------------------------------------- program analysis


def column_types(program: Module) -> dict[str, tuple[str, ...]]:
    """The primitive type of each column of each declared relation."""
    decls = {t.name: t for t in program.types}

    def primitive(name: str, seen: frozenset = frozenset()) -> str:
        if name in NUMERIC_TYPES or name == "symbol":
            return name
        if name in seen or name not in decls:
            raise EvaluationError(f"unknown type `{name}`")
        return primitive(decls[name].bases[0], seen | {name})

    return {r.name: tuple(primitive(a.type) for a in r.attributes)
            for r in program.relations}


def body_relations(literals: tuple) -> Iterator[str]:
    """The relations a conjunction reads, including inside negations and aggregates."""
    for literal in literals:
        if isinstance(literal, Atom):
            yield literal.relation
            terms = literal.args
        elif isinstance(literal, Negation):
            yield literal.atom.relation
            terms = literal.atom.args
        else:
            terms = (literal.left, literal.right)
        for term in terms:
            for agg in _aggregates(term):
                yield from body_relations(agg.body)


def strata(program: Module) -> list[set[str]]:
    """The strongly connected components of the dependency graph, each before
    every component that reads it."""
    graph = nx.DiGraph()
    graph.add_nodes_from(r.name for r in program.relations)
    for rule in program.rules:
        for head, body in rule.clauses():
            graph.add_edges_from((r, head.relation) for r in body_relations(body))
    for rule in program.subsumptions:
        for body in rule.body:
            graph.add_edges_from((r, rule.dominated.relation) for r in body_relations(body))
    condensed = nx.condensation(graph)
    return [set(condensed.nodes[c]["members"]) for c in nx.topological_sort(condensed)]


def _aggregates(term: Term) -> Iterator[Aggregate]:
    """Aggregates in ``term``, outermost first (not those nested in their bodies)."""
    if isinstance(term, Aggregate):
        yield term
    elif isinstance(term, BinaryOp):
        yield from _aggregates(term.left)
        yield from _aggregates(term.right)
    elif isinstance(term, UnaryOp):
        yield from _aggregates(term.operand)
    elif isinstance(term, Functor):
        for arg in term.args:
            yield from _aggregates(arg)


def _coerce(value: Any, column: str) -> Any:
    return float(value) if column == "float" and isinstance(value, int) else value


def _coerce_row(row: tuple, columns: tuple[str, ...]) -> tuple:
    return tuple(_coerce(v, c) for v, c in zip(row, columns))


def _error(message: str, span: Span | None, program: Module) -> EvaluationError:
    return EvaluationError([Diagnostic("error", message, span)], dict(program.sources))


# ---------------------------------------------------------------- one clause


class Clause:
    """``head :- body.`` (one alternative of one head of a rule; a fact when the
    body is empty), with what evaluating it needs: the static type of each
    variable, the grouping variables of each aggregate, and each aggregate's body
    with every ``_`` renamed to a distinct fresh variable (``_#1``, ...)."""

    def __init__(self, head: Atom, body: tuple, columns: dict[str, tuple[str, ...]],
                 program: Module, indexes: dict | None = None):
        self.head, self.body, self.columns, self.program = head, body, columns, program
        self.indexes = {} if indexes is None else indexes
        self.db: Database = {}
        self.outer: dict[int, frozenset[str]] = {}
        self.agg_bodies: dict[int, tuple] = {}
        self._memo: dict[tuple[int, str | None], list] = {}
        self._scope(list(head.args), body, frozenset())
        self.var_types = self._variable_types()

    # -- structure ---------------------------------------------------------

    def _scope(self, terms: list, literals: tuple, visible: frozenset[str]) -> None:
        """Record the grouping variables of each aggregate in ``terms`` and
        ``literals``: its variables that are visible where it occurs, i.e. that
        occur outside every aggregate of its level or are visible there in turn.
        (So ``s`` in ``lo = min s : {..}, hi = max s : {..}`` is local to each.)
        Witnesses of ``min``/``max`` are not modelled here."""
        terms = terms + [t for lit in literals for t in _literal_terms(lit)]
        visible = visible | {v.name for t in terms for v in _direct_variables(t)}
        for term in terms:
            for agg in _aggregates(term):
                # A target variable that an atom of the body binds is the
                # aggregate's own (Soufflé's shadowing: `a = max a : r(a, _)`).
                own = {v.name for v in term_variables(agg.target)} & {
                    v.name for lit in agg.body if isinstance(lit, Atom)
                    for arg in lit.args for v in term_variables(arg)} \
                    if agg.target is not None else set()
                self.outer[id(agg)] = frozenset(
                    v.name for v in term_variables(agg)) & visible - own
                fresh = itertools.count(1)
                self.agg_bodies[id(agg)] = tuple(_name_wildcards(lit, fresh) for lit in agg.body)
                self._scope([agg.target] if agg.target is not None else [], agg.body, visible)

    def _atoms(self, literals: tuple) -> Iterator[Atom]:
        for lit in literals:
            if isinstance(lit, Atom):
                yield lit
            elif isinstance(lit, Negation):
                yield lit.atom
            for term in _literal_terms(lit):
                for agg in _aggregates(term):
                    yield from self._atoms(agg.body)

    def _equalities(self, literals: tuple) -> Iterator[Comparison]:
        for lit in literals:
            if isinstance(lit, Comparison) and lit.op == "=":
                yield lit
            for term in _literal_terms(lit):
                for agg in _aggregates(term):
                    yield from self._equalities(agg.body)

    # -- types ---------------------------------------------------------------

    def _variable_types(self) -> dict[str, str]:
        """Variables take the column type of the atoms they occur in, or the type
        of the term they are equated with."""
        self.var_types: dict[str, str] = {}
        for atom in self._atoms(self.body):
            for arg, column in zip(atom.args, self.columns.get(atom.relation, ())):
                if isinstance(arg, Variable):
                    self.var_types.setdefault(arg.name, column)
        changed = True
        while changed:
            changed = False
            for eq in self._equalities(self.body):
                for var, other in ((eq.left, eq.right), (eq.right, eq.left)):
                    if isinstance(var, Variable) and var.name not in self.var_types:
                        found = self.type_of(other, None)
                        if found is not None:
                            self.var_types[var.name] = found
                            changed = True
        return self.var_types

    def type_of(self, term: Term, expected: str | None) -> str | None:
        """The static type of ``term`` where its context asks for ``expected``
        (``None``: unknown; then values decide at run time)."""
        if isinstance(term, Variable):
            return self.var_types.get(term.name, expected)
        if isinstance(term, Wildcard):
            return expected
        if isinstance(term, Constant):
            flexible = term.type == "number" and expected in ("unsigned", "float")
            return expected if flexible else term.type
        if isinstance(term, Aggregate):
            if term.kind == "count":
                return "number"
            if term.kind == "mean":
                return "float"
            return self.type_of(term.target, expected)
        table, name, _args = _operator(term)
        arg_types = self.arg_types(term, expected)
        if any(t is None for t in arg_types):
            return None
        return table[name].result_type(arg_types)

    def arg_types(self, term: Term, expected: str | None) -> list:
        """The types of an operator's arguments: numeric literals take the type of
        their numeric siblings (``x + 1``), or the expected one."""
        key = (id(term), expected)
        if key not in self._memo:
            _table, name, args = _operator(term)
            if isinstance(term, Functor) and name not in ("min", "max", "range"):
                types = [self.type_of(a, None) for a in args]
            else:
                fixed = [self.type_of(a, None) for a in args if not _flexible(a)]
                anchor = next((t for t in fixed if t is not None), expected)
                types = [self.type_of(a, anchor) for a in args]
            self._memo[key] = types
        return self._memo[key]

    # -- evaluation ----------------------------------------------------------

    def derive(self, db: Database) -> Iterator[tuple]:
        """The head tuples the body yields over ``db``."""
        self.db = db
        for binding in self.solve(self.body, {}):
            yield from self.heads(binding)

    def heads(self, binding: Binding) -> Iterator[tuple]:
        columns = self.columns[self.head.relation]
        for arg in self.head.args:
            missing = self._needs(arg) - binding.keys()
            if missing or isinstance(arg, Wildcard):
                what = f"variable `{min(missing)}`" if missing else "`_`"
                raise _error(f"{what} in the head of this rule is not bound",
                             arg.span, self.program)
        choices = [list(self.values(a, binding, c)) for a, c in zip(self.head.args, columns)]
        for row in itertools.product(*choices):
            yield _coerce_row(row, columns)

    def solve(self, literals: tuple, binding: Binding) -> Iterator[Binding]:
        """Every extension of ``binding`` that satisfies all ``literals``."""
        if not literals:
            yield binding
            return
        for i, literal in enumerate(literals):  # noqa: B007 (i is used after the loop)
            if self._ready(literal, binding):
                break
        else:
            unbound = {v.name for lit in literals for v in literal_variables(lit)} - binding.keys()
            raise _error(f"cannot bind {', '.join(f'`{v}`' for v in sorted(unbound))}",
                         literals[0].span, self.program)
        rest = literals[:i] + literals[i + 1:]
        for extended in self._step(literal, binding):
            yield from self.solve(rest, extended)

    def _needs(self, term: Term) -> set[str]:
        if isinstance(term, Aggregate):
            return set(self.outer[id(term)])
        if isinstance(term, (Variable, Wildcard, Constant)):
            return {term.name} if isinstance(term, Variable) else set()
        return set().union(*(self._needs(a) for a in _operator(term)[2]))

    def _ready(self, literal, binding: Binding) -> bool:
        bound = binding.keys()
        if isinstance(literal, Atom):
            return all(isinstance(a, (Variable, Wildcard)) or self._needs(a) <= bound
                       for a in literal.args)
        if isinstance(literal, Negation):
            return all(self._needs(a) <= bound for a in literal.atom.args)
        left, right = self._needs(literal.left) <= bound, self._needs(literal.right) <= bound
        if literal.op == "=":
            return (left or isinstance(literal.left, Variable)) and \
                   (right or isinstance(literal.right, Variable)) and (left or right)
        return left and right

    def _step(self, literal, binding: Binding) -> Iterator[Binding]:
        if isinstance(literal, Atom):
            yield from self._match(literal, binding)
        elif isinstance(literal, Negation):
            if not any(True for _ in self._match(literal.atom, binding)):
                yield binding
        elif literal.op == "=" and not self._needs(literal.left) <= binding.keys():
            yield from self._assign(literal.left, literal.right, binding)
        elif literal.op == "=" and not self._needs(literal.right) <= binding.keys():
            yield from self._assign(literal.right, literal.left, binding)
        elif self._compare(literal, binding):
            yield binding

    def _assign(self, var: Variable, term: Term, binding: Binding) -> Iterator[Binding]:
        # x = e: bind x to each value of e.
        for value in self.values(term, binding, self.var_types.get(var.name)):
            yield {**binding, var.name: value}

    def _compare(self, literal: Comparison, binding: Binding) -> bool:
        types = self.arg_types(literal, None)
        lefts = list(self.values(literal.left, binding, types[0]))
        rights = list(self.values(literal.right, binding, types[1]))
        for a, b in itertools.product(lefts, rights):
            if self._call(COMPARISONS, literal.op, types, (a, b), literal.span):
                return True
        return False

    def _match(self, atom: Atom, binding: Binding) -> Iterator[Binding]:
        """Extensions of ``binding`` by the tuples of ``atom``'s relation that match."""
        columns = self.columns[atom.relation]
        fixed: dict[int, set] = {}
        for i, arg in enumerate(atom.args):
            if isinstance(arg, Variable) and arg.name in binding:
                fixed[i] = {binding[arg.name]}
            elif not isinstance(arg, (Variable, Wildcard)):
                fixed[i] = set(self.values(arg, binding, columns[i]))
        for row in self._rows(atom.relation, fixed):
            extended = dict(binding)
            for i, (arg, value) in enumerate(zip(atom.args, row)):
                if i in fixed:
                    if value not in fixed[i]:
                        break
                elif isinstance(arg, Variable) and extended.setdefault(arg.name, value) != value:
                    break
            else:
                yield extended

    def _rows(self, relation: str, fixed: dict[int, set]) -> list[tuple]:
        """The tuples of ``relation`` that can match the single-valued ``fixed``
        columns, through an index rebuilt whenever the relation has grown or is
        another set (a pruned stratum's rounds are new sets, not grown ones)."""
        rows = self.db[relation]
        positions = tuple(i for i, values in sorted(fixed.items()) if len(values) == 1)
        if not positions:
            return list(rows)
        indexed, size, index = self.indexes.get((relation, positions), (None, -1, None))
        if indexed is not rows or size != len(rows) or index is None:
            index = {}
            for row in rows:
                index.setdefault(tuple(row[i] for i in positions), []).append(row)
            self.indexes[(relation, positions)] = (rows, len(rows), index)
        return index.get(tuple(next(iter(fixed[i])) for i in positions), [])

    def values(self, term: Term, binding: Binding, expected: str | None) -> Iterator[Any]:
        """The values of ``term`` under ``binding``: one, or several for ``range``."""
        if isinstance(term, Variable):
            yield binding[term.name]
        elif isinstance(term, Constant):
            yield _coerce(term.value, self.type_of(term, expected) or term.type)
        elif isinstance(term, Aggregate):
            yield from self._aggregate(term, binding, expected)
        else:
            table, name, args = _operator(term)
            types = self.arg_types(term, expected)
            choices = [list(self.values(a, binding, t)) for a, t in zip(args, types)]
            for vals in itertools.product(*choices):
                result = self._call(table, name, types, vals, term.span)
                if table is FUNCTORS and FUNCTORS[name].multi:
                    yield from self._guard(result, term.span)
                else:
                    yield result

    def _call(self, table: dict, name: str, types: list, vals: tuple, span: Span) -> Any:
        actual = tuple(t or type_of_value(v) for t, v in zip(types, vals))
        overload = table[name].resolve(actual)
        if overload is None:
            raise _error(f"`{name}` does not apply to ({', '.join(actual)})", span, self.program)
        try:
            return overload(*vals)
        except FunctorError as exc:
            raise _error(exc.diagnostics[0].message, span, self.program) from None

    def _guard(self, values: Iterator, span: Span) -> Iterator:
        try:
            yield from values
        except FunctorError as exc:
            raise _error(exc.diagnostics[0].message, span, self.program) from None

    def _aggregate(self, agg: Aggregate, binding: Binding, expected: str | None) -> Iterator:
        # For this binding of the grouping variables, every distinct solution of the body.
        group = {v: binding[v] for v in self.outer[id(agg)]}
        solutions = {tuple(sorted(s.items())): s
                     for s in self.solve(self.agg_bodies[id(agg)], group)}
        if agg.kind == "count":
            yield len(solutions)
            return
        target_type = self.type_of(agg.target, expected)
        values = [v for s in solutions.values() for v in self.values(agg.target, s, target_type)]
        if agg.kind == "sum":
            total = sum(values)
            yield WRAP[target_type or "number"](total) if target_type != "float" else float(total)
        elif values and agg.kind == "mean":
            yield sum(values) / len(values)
        elif values:
            yield min(values) if agg.kind == "min" else max(values)


def _operator(term: Term) -> tuple[dict, str, tuple]:
    """(table, name, arguments) of an operator term or a comparison."""
    if isinstance(term, BinaryOp):
        return BINARY_OPS, term.op, (term.left, term.right)
    if isinstance(term, UnaryOp):
        return UNARY_OPS, term.op, (term.operand,)
    if isinstance(term, Functor):
        if term.name not in FUNCTORS:
            raise EvaluationError(f"unknown functor `{term.name}`")
        return FUNCTORS, term.name, term.args
    if isinstance(term, Comparison):
        return COMPARISONS, term.op, (term.left, term.right)
    raise TypeError(f"not an operator: {term!r}")


def _direct_variables(term: Term) -> Iterator[Variable]:
    """The variables of ``term`` outside any aggregate in it."""
    if isinstance(term, Variable):
        yield term
    elif not isinstance(term, (Aggregate, Constant, Wildcard)):
        for arg in _operator(term)[2]:
            yield from _direct_variables(arg)


def _flexible(term: Term) -> bool:
    """A numeric expression of literals only, whose type its context decides."""
    if isinstance(term, Constant):
        return term.type == "number"
    if isinstance(term, BinaryOp):
        return _flexible(term.left) and _flexible(term.right)
    if isinstance(term, UnaryOp):
        return _flexible(term.operand)
    return False


def _literal_terms(literal) -> tuple:
    if isinstance(literal, Atom):
        return literal.args
    if isinstance(literal, Negation):
        return literal.atom.args
    return (literal.left, literal.right)


def _name_wildcards(literal, counter: Iterator[int]):
    """``literal`` with each ``_`` argument of a positive atom renamed ``_#k``, so
    that solutions differing only there stay distinct in an aggregate."""
    if not isinstance(literal, Atom):
        return literal
    args = tuple(Variable(f"_#{next(counter)}", a.span) if isinstance(a, Wildcard) else a
                 for a in literal.args)
    return Atom(literal.relation, args, literal.span)
