"""Differential testing: a session's incremental answers against the reference
evaluator's from-scratch answers.

- :func:`programs` generates random stratified programs over four input
  relations (``e(x: number, y: number)``, ``v(x: number)``, ``s(a: symbol, x:
  number)``, ``f(a: symbol, p: float)``): groups of derived relations, mutual
  recursion inside a group,
  negation and aggregates (count, sum, min, max, mean) of lower groups, comparisons,
  constants, symbols, assignments.
- :func:`transactions` generates sequences of transactions over the inputs, drawn
  from a small domain so that repeated inserts and retractions of absent rows are
  frequent.
- :func:`run_differential` runs one program through one sequence and, after every
  transaction, checks that every relation equals the reference's and that the
  reported delta is exactly the difference of consecutive reference results.

Session options are passed through, so the same check runs against other
configurations: ``run_differential(text, txs, spill_threshold=1)`` for one case,
or a whole hypothesis test from :func:`differential_test`::

    test_spilled = differential_test(max_examples=100, spill_threshold=1)
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.syntax.parser import parse
from tests.reference import evaluate

NUMBERS = range(5)
SYMBOLS = ("a", "b", "c")
FLOATS = (0.5, 1.0, 2.25)          # dyadic: sums are exact in any order
INPUTS = {"e": ("number", "number"), "v": ("number",), "s": ("symbol", "number"),
          "f": ("symbol", "float")}
SIGNATURES = (("number",), ("number", "number"), ("symbol", "number"),
              ("number", "float"))
VARIABLES = {"number": ("x", "y", "z"), "symbol": ("a", "b"), "float": ("p", "q")}
VALUES = {"number": NUMBERS, "symbol": SYMBOLS, "float": FLOATS}


def _const(draw, type_: str) -> str:
    if type_ == "symbol":
        return '"' + draw(st.sampled_from(SYMBOLS)) + '"'
    return repr(draw(st.sampled_from(VALUES[type_])))


def _arg(draw, type_: str, wildcard: bool = True) -> str:
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return _const(draw, type_)
    if choice == 1 and wildcard:
        return "_"
    return draw(st.sampled_from(VARIABLES[type_]))


def _bound(args: list[str], types) -> dict[str, str]:
    return {a: t for a, t in zip(args, types) if a[0].isalpha() and a != "_"}


@st.composite
def rules_for(draw, head: str, head_types, group: int, relations: dict, groups: dict):
    """One rule for ``head`` (in ``group``): positive atoms of inputs and of groups
    up to ``group``; negation and aggregates only of inputs and lower groups."""
    lower = [r for r in relations if groups.get(r, -1) < group]
    same_or_lower = [r for r in relations if groups.get(r, -1) <= group]
    body: list[str] = []
    bound: dict[str, str] = {}
    recursive = False
    for _ in range(draw(st.integers(1, 3))):
        rel = draw(st.sampled_from(same_or_lower))
        recursive |= groups.get(rel, -1) == group
        args = [_arg(draw, t) for t in relations[rel]]
        for a, t in _bound(args, relations[rel]).items():
            if bound.get(a, t) != t:       # one variable, two types: rename
                args = [("_" if x == a else x) for x in args]
            else:
                bound[a] = t
        body.append(f"{rel}({', '.join(args)})")
    numbers = [v for v, t in bound.items() if t == "number"]
    symbols = [v for v, t in bound.items() if t == "symbol"]
    floats = [v for v, t in bound.items() if t == "float"]
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(("compare", "negate", "aggregate", "assign")))
        if kind == "compare" and numbers:
            left = draw(st.sampled_from(numbers))
            op = draw(st.sampled_from(("<", "<=", "!=", "=", ">", ">=")))
            right = draw(st.sampled_from(numbers + [str(n) for n in NUMBERS]))
            body.append(f"{left} {op} {right}")
        elif kind == "compare" and floats and draw(st.booleans()):
            op = draw(st.sampled_from(("<", "<=", "!=", ">")))
            body.append(f"{floats[0]} {op} {draw(st.sampled_from(floats + ['1.0']))}")
        elif kind == "compare" and len(symbols) >= 1:
            other = draw(st.sampled_from(symbols + ['"b"']))
            body.append(f"{symbols[0]} != {other}")
        elif kind == "negate" and lower:
            rel = draw(st.sampled_from(lower))
            args = []
            for t in relations[rel]:
                pool = [v for v, vt in bound.items() if vt == t]
                pick = draw(st.integers(0, 3))
                args.append(_const(draw, t) if pick == 0 or (not pool and pick != 1)
                            else "_" if pick == 1 else draw(st.sampled_from(pool)))
            body.append(f"!{rel}({', '.join(args)})")
        elif kind == "aggregate":
            candidates = [(r, i) for r in lower for i, t in enumerate(relations[r])
                          if t in ("number", "float")]
            if not candidates:
                continue
            rel, target_col = draw(st.sampled_from(candidates))
            args = []
            for i, t in enumerate(relations[rel]):
                pool = [v for v, vt in bound.items() if vt == t]
                if i == target_col:
                    args.append(f"u{len(body)}")
                elif pool and draw(st.booleans()):
                    args.append(draw(st.sampled_from(pool)))   # a grouping variable
                else:
                    args.append("_")
            kind = draw(st.sampled_from(("count", "sum", "min", "max", "mean")))
            target_type = relations[rel][target_col]
            if kind == "mean" and target_type != "float":
                kind = "count"
            agg = kind if kind == "count" else f"{kind} u{len(body)}"
            name = f"c{len(body)}"
            body.append(f"{name} = {agg} : {{ {rel}({', '.join(args)}) }}")
            bound[name] = "number" if kind == "count" else target_type
            (numbers if bound[name] == "number" else floats).append(name)
        elif kind == "assign" and not recursive and numbers:
            source = draw(st.sampled_from(numbers))
            name = f"w{len(body)}"
            body.append(f"{name} = {source} + {draw(st.integers(1, 2))}")
            bound[name] = "number"
            numbers.append(name)
    head_args = []
    for t in head_types:
        pool = [v for v, vt in bound.items() if vt == t]
        head_args.append(draw(st.sampled_from(pool)) if pool and draw(st.integers(0, 5))
                         else _const(draw, t))
    return f"{head}({', '.join(head_args)}) :- {', '.join(body)}."


@st.composite
def programs(draw) -> str:
    """The text of a random stratified program (see the module docstring)."""
    relations = dict(INPUTS)
    groups: dict[str, int] = {}
    derived = []
    for group in range(draw(st.integers(1, 3))):
        for _ in range(draw(st.integers(1, 2))):
            name = f"r{len(derived)}"
            relations[name] = draw(st.sampled_from(SIGNATURES))
            groups[name] = group
            derived.append(name)
    lines = []
    for name, types in relations.items():
        cols = ", ".join(f"c{i}: {t}" for i, t in enumerate(types))
        lines.append(f".decl {name}({cols})")
    for name in derived:
        for _ in range(draw(st.integers(1, 3))):
            lines.append(draw(rules_for(name, relations[name], groups[name], relations,
                                        groups)))
    if draw(st.booleans()):
        lines.append(f'v({draw(st.sampled_from(NUMBERS))}).')
    return "\n".join(lines) + "\n"


def _row(draw, relation: str) -> tuple:
    return tuple(draw(st.sampled_from(VALUES[t])) for t in INPUTS[relation])


@st.composite
def transactions(draw, max_transactions: int = 15) -> list:
    """``[[("insert" | "retract", relation, row), ...], ...]``."""
    result = []
    for _ in range(draw(st.integers(3, max_transactions))):
        tx = []
        for _ in range(draw(st.integers(1, 4))):
            relation = draw(st.sampled_from(tuple(INPUTS)))
            op = draw(st.sampled_from(("insert", "insert", "retract")))
            tx.append((op, relation, _row(draw, relation)))
        result.append(tx)
    return result


def run_differential(text: str, txs: list, **session_options) -> int:
    """Check a session of ``text`` against the reference after every transaction
    of ``txs``; returns the number of transactions checked."""
    program = datalog.Program(text)
    ast_program = parse(text)
    session = program.session(**session_options)
    inputs: dict[str, set] = {name: set() for name in INPUTS if name in program.relations}
    before = evaluate(ast_program, inputs)
    _compare(session, before, text, "initial evaluation")
    for number, tx in enumerate(txs):
        with session.transaction() as t:
            for op, relation, row in tx:
                getattr(t, op)(relation, row)
                (inputs[relation].add if op == "insert" else inputs[relation].discard)(row)
        after = evaluate(ast_program, inputs)
        where = f"after transaction {number}: {tx}"
        _compare(session, after, text, where)
        for name in program.relations:
            old, new = before.get(name, set()), after.get(name, set())
            assert t.delta.inserted[name] == new - old, (name, where, text)
            assert t.delta.retracted[name] == old - new, (name, where, text)
        before = after
    return len(txs)


def _compare(session, expected: dict, text: str, where: str) -> None:
    for name in session.program.relations:
        got = session.query(name)
        want = expected.get(name, set())
        assert got == want, (f"{name} {where}\nmissing {sorted(want - got)}\n"
                             f"extra {sorted(got - want)}\n{text}")


def differential_test(max_examples: int = 400, **session_options):
    """A hypothesis test function checking :func:`run_differential` on
    ``max_examples`` random programs and transaction sequences, with sessions
    made with ``session_options``."""

    @settings(max_examples=max_examples, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(), transactions())
    def test(text, txs):
        run_differential(text, txs, **session_options)

    return test


# A pinned case: mutual recursion through two relations, a cycle edge retracted.
MUTUAL_RECURSION = """.decl e(c0: number, c1: number)
.decl v(c0: number)
.decl s(c0: symbol, c1: number)
.decl r0(c0: number, c1: number)
.decl r1(c0: number, c1: number)
r0(x, y) :- e(x, y).
r0(x, z) :- r1(x, y), e(y, z).
r1(x, y) :- r0(x, y), !v(x).
"""
MUTUAL_RECURSION_TXS = [
    [("insert", "e", (0, 1)), ("insert", "e", (1, 0))], [("insert", "v", (1,))],
    [("retract", "e", (1, 0))], [("retract", "v", (1,)), ("retract", "v", (3,))]]


def closure(edges) -> tuple[dict, set]:
    """``(successors, path)`` of ``edges`` by a plain semi-naive loop: the
    oracle of the tests whose graphs are too large for the reference evaluator."""
    successors: dict = {}
    for x, y in edges:
        successors.setdefault(x, set()).add(y)
    path, new = set(edges), set(edges)
    while new:
        new = {(x, z) for x, y in new for z in successors.get(y, ())} - path
        path |= new
    return successors, path
