"""Explanations: why a tuple holds, why it does not, why it changed.

**What it computes.** :func:`explain` answers with a :class:`Derivation`: the
tuple, the rule that derives it (its text and place) and the derivations of the
body's tuples, recursively down to input tuples and the program's facts. As in
Soufflé's provenance, it is the *shortest* derivation by height: an input or fact
has height 0, a rule instance ``1 + max`` of its body tuples' heights, and a
tuple's height is the least over its rule instances. :func:`why_not` takes each
rule for the tuple's relation, binds the head to it and reports the first body
step that no binding survives (an atom without a matching tuple, a negated atom
that holds, a false comparison).

**How, and what it costs.** Nothing is recorded while transactions run: the
circuit keeps no provenance, so sessions pay nothing in memory or time for it,
and it is always available. An explanation is computed on demand from the
session's current state: the relations the tuple depends on are evaluated again,
level by level (the rule pipelines of the plan interpreted over the current
rows, semi-naive: the rows of height ``k + 1`` are found from those of height
``k`` joined with lower ones, across strata; negations and aggregates read the
current state, which is exact), which gives every tuple's height and one
minimal rule instance. It costs about one from-scratch evaluation of those
relations in plain Python per question (``python -m benchmarks.explain``), and
its answers follow the current state exactly, retractions through recursion
included: a tuple with several derivations is explained by one that survives.

>>> import datalog
>>> session = datalog.Program('''
...     .decl edge(x: number, y: number)
...     .decl path(x: number, y: number)
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''').session()
>>> _ = session.insert("edge", (1, 2), (2, 3))
>>> print(session.explain("path(1, 3)"))
path(1, 3)  by path(x, z) :- path(x, y), edge(y, z).  <string>:5:5
  path(1, 2)  by path(x, y) :- edge(x, y).  <string>:4:5
    edge(1, 2)  input
  edge(2, 3)  input
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from datalog.errors import DataError
from datalog.plan.expressions import evaluate
from datalog.plan.ir import Aggregate, Antijoin, Assign, Filter, Join, RulePlan, Scan

#: relation -> set of rows
Database = dict[str, set]


@dataclass(frozen=True)
class Derivation:
    """Why ``relation(row)`` holds. ``kind``: ``input`` (inserted or read from a
    fact file), ``fact`` (stated by the program) or ``rule``; for a rule, its
    ``rule`` text and ``location``, the derivations of its body tuples
    (``premises``), the negated atoms it checked absent (``absent``: relation and
    row pattern, ``None`` for a wildcard) and the aggregate values it used
    (``aggregates``). ``height``: 0 for inputs and facts,
    else one more than the highest premise."""

    relation: str
    row: tuple
    kind: str
    height: int
    rule: str = ""
    location: str = ""
    premises: tuple[Derivation, ...] = ()
    absent: tuple[tuple[str, tuple], ...] = ()
    aggregates: tuple[str, ...] = ()

    @property
    def fact(self) -> str:
        from datalog.syntax.render import format_fact

        return format_fact(self.relation, self.row)

    def leaves(self) -> Iterator[Derivation]:
        """The input tuples and facts it rests on (each once)."""
        seen = set()
        todo = [self]
        while todo:
            node = todo.pop()
            if node.kind != "rule" and (node.relation, node.row) not in seen:
                seen.add((node.relation, node.row))
                yield node
            todo.extend(reversed(node.premises))

    def lines(self, indent: int = 0) -> list[str]:
        pad = "  " * indent
        if self.kind != "rule":
            return [f"{pad}{self.fact}  {self.kind}"]
        head = f"{pad}{self.fact}  by {self.rule}  {self.location}".rstrip()
        out = [head]
        for premise in self.premises:
            out += premise.lines(indent + 1)
        out += [f"{pad}  !{_pattern(name, values)}  holds: no such tuple"
                for name, values in self.absent]
        out += [f"{pad}  {text}" for text in self.aggregates]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


# ---------------------------------------------------------------- pipelines


@dataclass
class _Binding:
    row: tuple
    facts: tuple = ()          # (relation, tuple) read by Scan / Join
    absent: tuple = ()         # (relation, pattern) of the antijoins passed
    aggregates: tuple = ()     # (kind, value)


class _Tables:
    """Relations (name -> set of rows) with indexes (key columns -> key ->
    rows) kept up to date as rows are added."""

    def __init__(self, rows: Database | None = None):
        self.rows: Database = rows if rows is not None else {}
        self._indexes: dict[tuple[str, tuple[int, ...]], dict] = {}

    def get(self, relation: str):
        return self.rows.get(relation, ())

    def index(self, relation: str, columns: tuple[int, ...]) -> dict:
        index = self._indexes.get((relation, columns))
        if index is None:
            index = {}
            for t in self.get(relation):
                index.setdefault(tuple(t[c] for c in columns), []).append(t)
            self._indexes[(relation, columns)] = index
        return index

    def add(self, relation: str, rows) -> None:
        target = self.rows.setdefault(relation, set())
        fresh = [t for t in rows if t not in target]
        target.update(fresh)
        for (name, columns), index in self._indexes.items():
            if name == relation:
                for t in fresh:
                    index.setdefault(tuple(t[c] for c in columns), []).append(t)


class _Evaluator:
    """Runs rule pipelines, keeping with every binding the tuples it read:
    scans and joins read ``db`` (or the tables given per step), antijoins and
    aggregates ``full`` (lower strata, complete)."""

    def __init__(self, plan, db: _Tables, full: _Tables, functors=None):
        self.plan = plan
        self.db = db
        self.full = full
        self.functors = functors   # the session's user functors and autoinc

    def rule(self, rule: RulePlan, check=None, tables=None) -> Iterator[tuple[tuple, _Binding]]:
        """Every (head row, binding) of ``rule``; ``check(i, bindings)`` sees the
        bindings that survive step ``i`` (for why-not); ``tables[i]`` is what
        step ``i`` reads (semi-naive variants)."""
        bindings = [_Binding(())]
        for i, step in enumerate(rule.steps):
            db = tables[i] if tables is not None else self.db
            bindings = list(self.step(step, bindings, db))
            if check is not None:
                bindings = check(i, bindings)
            if not bindings:
                return
        for b in bindings:
            yield tuple(evaluate(e, b.row, self.functors) for e in rule.head), b

    def step(self, step, bindings, db: _Tables) -> Iterator[_Binding]:
        if isinstance(step, (Scan, Join)):
            keys = getattr(step, "keys", ())
            columns = tuple(c for c, _ in keys)
            index = db.index(step.relation, columns)
            for b in bindings:
                value = tuple(evaluate(e, b.row, self.functors) for _, e in keys)
                for t in index.get(value, ()):
                    if all(t[c] == v for c, v in step.consts) and \
                            all(t[a] == t[c] for a, c in step.equal):
                        yield _Binding(b.row + tuple(t[c] for c in step.columns),
                                       b.facts + ((step.relation, t),), b.absent,
                                       b.aggregates)
        elif isinstance(step, Antijoin):
            columns = tuple(c for c, _ in step.keys)
            index = self.full.index(step.relation, columns)
            for b in bindings:
                value = tuple(evaluate(e, b.row, self.functors) for _, e in step.keys)
                if value not in index:
                    yield _Binding(b.row, b.facts,
                                   b.absent + ((step.relation, dict(zip(columns, value))),),
                                   b.aggregates)
        elif isinstance(step, Filter):
            yield from (b for b in bindings if evaluate(step.condition, b.row, self.functors))
        elif isinstance(step, Assign):
            for b in bindings:
                values = evaluate(step.expr, b.row, self.functors)
                for value in (values if step.multi else (values,)):
                    yield _Binding(b.row + (value,), b.facts, b.absent, b.aggregates)
        elif isinstance(step, Aggregate):
            yield from self._aggregate(step, bindings)

    def _aggregate(self, step: Aggregate, bindings) -> Iterator[_Binding]:
        from datalog.backends.circuit.compile import _aggregator

        group = _aggregator(step, 0)
        for b in bindings:
            inner = [_Binding(tuple(b.row[i] for i in step.seed))]
            for sub in step.body:
                inner = list(self.step(sub, inner, self.full))
            target, functors = step.target, self.functors
            values = [((1, None if target is None else evaluate(target, i.row, functors)), 1)
                      for i in inner]
            result = group(values)
            if result is not None:
                yield _Binding(b.row + (result,), b.facts, b.absent,
                               b.aggregates + ((step.kind, result),))


# ---------------------------------------------------------------- heights


class Provenance:
    """Every tuple of the relations ``goal`` depends on, with its height and
    one rule instance of least height (see the module docstring)."""

    def __init__(self, session, relation: str):
        plan = session.program.plan
        self.session = session
        self.plan = plan
        contents = session._contents
        needed = _dependencies(plan, relation)
        #: (relation, row) -> (height, rule or None, binding or kind)
        self.best: dict[tuple[str, tuple], tuple] = {}
        known = _Tables()
        for name in needed:
            for kind, rows in (("input", session._inputs.get(name, ())),
                               ("fact", plan.facts.get(name, ()))):
                if name in plan.choices:    # the candidates not chosen are not there
                    rows = [row for row in rows if row in contents[name]]
                for row in rows:
                    self.best.setdefault((name, row), (0, None, kind))
                known.add(name, rows)
        # negations and aggregates read the whole current state: it is exact
        evaluator = _Evaluator(plan, known, _Tables(contents), session._functors)
        rules = [rule for stratum in plan.strata for rule in stratum.rules
                 if rule.relation in needed]
        old = _Tables({name: set(known.get(name)) for name in needed})
        # height 1: every rule over the inputs and facts
        delta = self._level(evaluator, [(rule, None) for rule in rules], contents, known)
        while delta:
            # height k + 1: each rule once per atom, that atom reading the rows of
            # height k, the atoms before it lower ones, those after it all known
            # (semi-naive, over all relations at once: heights cross strata)
            tables = _Tables(delta)
            variants = [(rule, [tables if i == j else old if i < j else known
                                for i in range(len(rule.steps))])
                        for rule in rules for j, step in enumerate(rule.steps)
                        if isinstance(step, (Scan, Join)) and step.relation in delta]
            new = self._level(evaluator, variants, contents, known)
            for name, rows in delta.items():
                old.add(name, rows)
            delta = new

    def _level(self, evaluator, variants, contents, known: _Tables) -> Database:
        """The tuples first derived at this level (added to ``known``), each
        with its height and rule instance in :attr:`best`."""
        found: Database = {}
        for rule, tables in variants:
            for head, binding in evaluator.rule(rule, tables=tables):
                key = (rule.relation, head)
                if key in self.best or head not in contents[rule.relation]:
                    continue
                height = 1 + max((self.best[f][0] for f in binding.facts), default=0)
                self.best[key] = (height, rule, binding)
                found.setdefault(rule.relation, set()).add(head)
        for name, rows in found.items():
            known.add(name, rows)
        return found

    def derivation(self, relation: str, row: tuple) -> Derivation:
        height, rule, binding = self.best[(relation, row)]
        if rule is None:
            return Derivation(relation, row, binding, 0)
        arity = {name: r.arity for name, r in self.plan.relations.items()}
        return Derivation(
            relation, row, "rule", height, rule.label, _place(rule),
            tuple(self.derivation(name, t) for name, t in binding.facts),
            tuple((name, tuple(values.get(c) for c in range(arity[name])))
                  for name, values in binding.absent),
            tuple(f"{kind} = {_value(value)}" for kind, value in binding.aggregates))


def _dependencies(plan, relation: str) -> set[str]:
    """``relation`` and every relation its rules read, transitively."""
    rules: dict[str, list[RulePlan]] = {}
    for stratum in plan.strata:
        for rule in stratum.rules:
            rules.setdefault(rule.relation, []).append(rule)
    seen, todo = set(), [relation]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            for rule in rules.get(name, ()):
                todo.extend(rule.reads())
    return seen


def _value(value) -> str:
    from datalog.syntax.render import format_value

    return format_value(value)


def _pattern(relation: str, values: tuple) -> str:
    """``r(1, _)``: ``None`` is a wildcard."""
    return f"{relation}({', '.join('_' if v is None else _value(v) for v in values)})"


# ---------------------------------------------------------------- the questions


def parse_fact(session, text: str) -> tuple[str, tuple]:
    """``"path(1, 5)"`` -> ``("path", (1, 5))``: a ground atom of the session's
    program (every argument a constant), validated."""
    from datalog.plan.query import Pattern

    pattern = Pattern.parse(text, session.program.checked, path="<fact>", example="path(1, 5)")
    name = pattern.relation
    arity = session._relations[name].arity
    consts = dict(pattern.constants)
    if len(consts) != arity:
        raise DataError(f"`{text}` is not a fact: every argument must be a constant")
    row = session._validate(name, tuple(consts[i] for i in range(arity)))
    return name, row


def explain(session, text: str) -> Derivation:
    """``session.explain("path(1, 5)")``: see the module docstring."""
    relation, row = parse_fact(session, text)
    if row not in session._contents[relation]:
        raise DataError(f"{_fact(relation, row)} does not hold; "
                        f"session.why_not({text!r}) says why")
    return Provenance(session, relation).derivation(relation, row)


def answer(session, text: str):
    """``datalog explain``: the :class:`Derivation` of a fact that holds, the
    :class:`WhyNot` of one that does not."""
    relation, row = parse_fact(session, text)
    if row in session._contents[relation]:
        return Provenance(session, relation).derivation(relation, row)
    return why_not(session, text)


@dataclass(frozen=True)
class WhyNot:
    """Why ``relation(row)`` does not hold: one line per rule for it (or that
    it has none), saying where its body fails for this tuple."""

    relation: str
    row: tuple
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        head = f"{_fact(self.relation, self.row)} does not hold:"
        return "\n".join([head] + [f"  {reason}" for reason in self.reasons])


def why_not(session, text: str) -> WhyNot:
    """``session.why_not("path(5, 1)")``: see the module docstring."""
    relation, row = parse_fact(session, text)
    if row in session._contents[relation]:
        raise DataError(f"{_fact(relation, row)} holds; session.explain({text!r}) says why")
    plan = session.program.plan
    rules = [r for s in plan.strata for r in s.rules if r.relation == relation]
    reasons = []
    if not rules:
        reasons.append(f"no rule derives `{relation}` and it is not among the inputs")
    db = _Tables(session._contents)
    evaluator = _Evaluator(plan, db, db, session._functors)
    failures = [(rule, _failure(evaluator, rule, row)) for rule in rules]
    given = row in session._inputs.get(relation, ()) or row in plan.facts.get(relation, ())
    # A candidate (derived, an input or a fact) that is absent: a subsumption rule
    # removed it, or the state is out of date.
    pruned = _dominated(session, relation, row) \
        if given or any(f == _OUT_OF_DATE for _, f in failures) else []
    if pruned:
        if not rules:
            reasons = []
        if given:
            reasons.append("it is an input or a fact of the program")
        failures = [(r, "the body derives it" if f == _OUT_OF_DATE else f)
                    for r, f in failures]
    for rule, failure in failures:
        if relation in plan.choices and failure.startswith("the body derives it"):
            failure = "the body derives it, as a candidate of the choice"
        reasons.append(f"{rule.label}  {_place(rule)}: {failure}")
    reasons += _not_chosen(plan, session._contents[relation], relation, row)
    return WhyNot(relation, row, tuple(reasons + pruned))


def _dominated(session, relation: str, row: tuple) -> list[str]:
    """Why a subsumption rule removes ``row`` from ``relation``: the rule and a
    tuple of the relation that dominates it (none: not removed)."""
    plans = [p for s in session.program.plan.strata for p in s.subsumptions
             if p.relation == relation]
    if not plans:
        return []
    contents = dict(session._contents)
    contents[relation] = set(contents[relation]) | {row}
    db = _Tables(contents)
    evaluator = _Evaluator(session.program.plan, db, db, session._functors)
    arity = len(row)
    for plan in plans:
        for pair, _ in evaluator.rule(plan.rule):
            if pair[:arity] == row and pair[arity:] != row:
                return [f"{plan.rule.label}  {_place(plan.rule)}: removed, dominated by "
                        f"{_fact(relation, pair[arity:])}"]
    return []


def _not_chosen(plan, rows, relation: str, row: tuple) -> list[str]:
    """For a ``choice-domain`` relation: the tuples it keeps instead of ``row``
    (a candidate that shares a domain value with one of them is left out)."""
    names = plan.relations[relation].attributes
    reasons = []
    for domain in plan.choices.get(relation, ()):
        for kept in sorted(r for r in rows if all(r[c] == row[c] for c in domain)):
            values = ", ".join(f"{names[c]} = {_value(row[c])}" for c in domain)
            reasons.append(f"`choice-domain` keeps {_fact(relation, kept)} for {values}, "
                           "not this candidate")
    return reasons


def _failure(evaluator: _Evaluator, rule: RulePlan, row: tuple) -> str:
    """Where ``rule``'s body fails to derive ``row``: the head's variables are
    bound to ``row`` as soon as their slots are."""
    from datalog.plan.ir import Col

    wanted = {e.index: row[i] for i, e in enumerate(rule.head) if isinstance(e, Col)}
    failed: list = []
    width = [0]

    def check(i, bindings):
        before = width[0]
        width[0] = len(bindings[0].row) if bindings else before
        kept = [b for b in bindings
                if all(b.row[s] == v for s, v in wanted.items() if s < width[0])]
        if not kept and not failed:
            failed.append((i, before))
        return kept

    reached: dict[int, list] = {}

    def watch(i, bindings):
        reached[i + 1] = bindings
        return check(i, bindings)

    reached[0] = [_Binding(())]
    heads = [head for head, _ in evaluator.rule(rule, watch)]
    if failed:
        i, before = failed[0]
        step = rule.steps[i]
        inputs = [b for b in reached.get(i, [])
                  if all(b.row[s] == v for s, v in wanted.items() if s < before)]
        if isinstance(step, (Scan, Join)):
            arity = evaluator.plan.relations[step.relation].arity
            shown = _step_pattern(step, arity, inputs, before, wanted, evaluator.functors)
            return f"no tuple matches {shown} (step {i + 1})"
        if isinstance(step, Antijoin):
            arity = evaluator.plan.relations[step.relation].arity
            shown = _step_pattern(step, arity, inputs, before, wanted, evaluator.functors)
            return f"the negated atom fails: {shown} holds (step {i + 1})"
        if isinstance(step, Filter):
            shown = {_render(step.condition, b.row) for b in inputs}
            condition = shown.pop() if len(shown) == 1 else str(step.condition)
            return f"the condition {condition} is false (step {i + 1})"
        return f"step {i + 1} ({type(step).__name__.lower()}) leaves no binding"
    if row not in heads:
        return "the body holds, but never with this head"
    return _OUT_OF_DATE


_OUT_OF_DATE = "the body derives it (the state is out of date: run verify())"


def _render(expr, row: tuple) -> str:
    """``expr`` with the values of ``row`` in its slots: ``"a" != "a"``."""
    from datalog.plan.ir import Col, Const

    if isinstance(expr, Col):
        return _value(row[expr.index])
    if isinstance(expr, Const):
        return _value(expr.value)
    args = [_render(a, row) for a in expr.args]
    if len(args) == 2 and not expr.op.isalpha():
        return f"{args[0]} {expr.op} {args[1]}"
    return f"{expr.op}({', '.join(args)})"


def _step_pattern(step, arity: int, inputs: list, width: int, wanted: dict,
                  functors=None) -> str:
    """The atom a Scan / Join / Antijoin step looks for, as ``edge(5, _)``: the
    columns fixed by its keys (when every binding reaching it agrees), its
    constants, and the head's values for the columns it would bind."""
    values: dict[int, object] = dict(getattr(step, "consts", ()))
    for c, expr in getattr(step, "keys", ()):
        seen = {evaluate(expr, b.row, functors) for b in inputs}
        if len(seen) == 1:
            values[c] = seen.pop()
    for j, c in enumerate(getattr(step, "columns", ())):
        if width + j in wanted:
            values[c] = wanted[width + j]
    return _pattern(step.relation, tuple(values.get(c) for c in range(arity)))


def _fact(relation: str, row: tuple) -> str:
    from datalog.syntax.render import format_fact

    return format_fact(relation, row)


# ---------------------------------------------------------------- changes


@dataclass(frozen=True)
class Change:
    """Why ``relation(row)`` appeared (``sign`` +1) or disappeared (-1) in one
    transaction: ``causes``, the transaction's input changes the derivation
    rests on (``+edge(2, 3)`` inserted as one of its tuples, ``-firewall("db")``
    retracted where it negates the tuple), and the ``derivation`` gained (in the
    state after) or lost (in the state before)."""

    relation: str
    row: tuple
    sign: int
    causes: tuple[str, ...]
    derivation: Derivation

    def __str__(self) -> str:
        what = "appeared" if self.sign > 0 else "disappeared"
        causes = ", ".join(self.causes) or "no change of this transaction appears " \
            "in the derivation (it changed through an aggregate)"
        kind = "gained" if self.sign > 0 else "lost"
        return "\n".join([f"{_fact(self.relation, self.row)} {what}: {causes}",
                          f"derivation {kind}:", *self.derivation.lines(1)])


def _sorted_rows(rows) -> list:
    from datalog.syntax.render import sort_key

    return sorted(rows, key=sort_key)


def explain_change(delta, text: str) -> Change:
    """``delta.explain("path(1, 5)")``: see :class:`Change`."""
    origin = getattr(delta, "_origin", None)
    if origin is None:
        raise DataError("this delta comes from no transaction of a session")
    session, epoch, batches, dry_run = origin
    if session.epoch != epoch:
        raise DataError("the session has moved on since this transaction: explain a "
                        "change before committing the next one")
    relation, row = parse_fact(session, text)
    if row in delta.inserted[relation]:
        sign = 1
    elif row in delta.retracted[relation]:
        sign = -1
    else:
        raise DataError(f"{_fact(relation, row)} did not change in this transaction")
    # the state the derivation lives in: after the transaction for a tuple that
    # appeared, before it for one that disappeared
    live_is_after = not dry_run
    if (sign > 0) == live_is_after:
        state = session
    else:
        inputs = {name: set(rows) for name, rows in session._inputs.items()}
        for name, batch in batches.items():
            for r, weight in batch.items():
                undo = -weight if live_is_after else weight
                (inputs[name].add if undo > 0 else inputs[name].discard)(r)
        state = type(session)(session.program, max_iterations=session._max_iterations,
                        _initial=inputs)
    derivation = Provenance(state, relation).derivation(relation, row)
    return Change(relation, row, sign, _causes(derivation, batches, delta, sign), derivation)


def _causes(derivation: Derivation, batches: dict, delta, sign: int) -> tuple[str, ...]:
    """What in this transaction made ``derivation`` appear (``sign`` +1) or
    disappear: its input tuples changed the same way (``+edge(2, 3)`` for a
    tuple that appeared), and rows changed the other way that its negated atoms
    match (``-firewall("db")``, or a derived ``+at_risk("db")`` for a tuple that
    disappeared)."""
    from datalog.syntax.render import format_change

    causes: list[str] = []
    for leaf in derivation.leaves():
        if batches.get(leaf.relation, {}).get(leaf.row, 0) == sign:
            causes.append(format_change(leaf.relation, leaf.row, sign))
    todo = [derivation]
    while todo:
        node = todo.pop()
        todo.extend(node.premises)
        for name, values in node.absent:
            changed = delta.retracted[name] if sign > 0 else delta.inserted[name]
            for r in _sorted_rows(changed):
                change = format_change(name, r, -sign)
                if change not in causes and all(v is None or v == x
                                                for v, x in zip(values, r)):
                    causes.append(change)
    return tuple(causes)


def _place(rule) -> str:
    """A rule's ``path:line:column`` for the text of an explanation."""
    return str(rule.span) if rule.span is not None else ""
