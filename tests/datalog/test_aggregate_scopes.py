"""Aggregates as Soufflé scopes them, end to end.

- Golden evaluations: each folder ``tests/aggregates/<case>/`` holds ``<case>.dl``
  (its outputs printed with ``IO=stdout``, its facts in the program) and
  ``<case>.out``: what ``datalog run <case>.dl -D -`` prints. ``DATALOG_REGEN=1``
  rewrites the ``.out`` files (review the diff).
- The scopes themselves: which variables are local, shared, witnesses.
- Incremental: random transactions over a program with locals that shadow,
  witnesses of ``min``/``max`` (with ties), grouping and nested aggregates;
  after each one the session equals a fresh session given all the inputs at
  once, and the reported delta is exactly the change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.analysis.grounded import grounded
from datalog.syntax.parser import parse
from datalog.syntax.terms import aggregates_in, literal_terms
from tests.golden import assert_golden, cases, run_output

ROOT = Path(__file__).resolve().parent.parent / "aggregates"
CASES = cases("aggregates")


def test_there_are_cases():
    assert len(CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_evaluation(case: Path):
    assert_golden(case, run_output(case))


# ---------------------------------------------------------------- scopes


def _scopes(text: str):
    """The grounding of the first clause of ``text`` and its top aggregates."""
    rule = parse(text).rules[0]
    head, body = next(rule.clauses())
    g = grounded(head, body)
    return g, list(aggregates_in(t for lit in body for t in literal_terms(lit)))


@pytest.mark.parametrize("text, outer", [
    ("m(a) :- a = max a : r(a, _).", set()),                 # the target shadows
    ("m(a, n) :- s(a), n = max a : r(_, a).", set()),        # even a bound name
    ("m(a, n) :- s(a), n = sum a : r(_, _).", {"a"}),        # unless the body leaves it
    ("m(b, n) :- s(b), n = count : r(_, b).", {"b"}),        # grouping
    ("m(n) :- n = count : { r(x, y), !s(y) }.", set()),      # all local
    ("m(n, k) :- n = count : r(x, _), k = count : s(x).", set()),   # siblings
    ("y(p, n) :- n = min x : f(p, x).", {"p"}),              # a witness
])
def test_outer_variables(text, outer):
    g, aggs = _scopes(text)
    assert set(g.scope(aggs[0]).outer) == outer


def test_witnesses_of_min_and_max_are_bound_others_are_not():
    g, aggs = _scopes("y(p, n) :- n = min x : f(p, x).")
    assert g.witnesses == {id(aggs[0]): frozenset({"p"})}
    assert (0, "p") in g.bound(g.top)
    g, aggs = _scopes("y(p, n) :- n = sum x : f(p, x).")
    assert g.witness_of("p", g.top) is aggs[0] and (0, "p") not in g.bound(g.top)


def test_an_aggregate_that_needs_its_own_result_binds_nothing():
    g, _ = _scopes("m(n) :- n = count : { r(x, _), x < n }.")
    assert (0, "n") not in g.bound(g.top)


# ---------------------------------------------------------------- incremental

PROGRAM = """
.decl f(p: symbol, x: number)
.decl dept(p: symbol, d: symbol)
.decl youngest(p: symbol, n: number)
youngest(p, n) :- n = min x : f(p, x).
.decl oldest_in(d: symbol, p: symbol)
oldest_in(d, p) :- dept(_, d), _n = max x : { f(p, x), dept(p, d) }.
.decl top(a: number)
top(a) :- a = max a : f(_, a).
.decl beside(p: symbol, m: number)
beside(p, m) :- dept(p, _), m = max p : { f(_, p) }.
.decl size(d: symbol, n: number)
size(d, n) :- dept(_, d), n = count : { dept(p, d), !f(p, _) }.
.decl widest(n: number)
widest(n) :- n = max c : { dept(_, d), c = count : { dept(p, d), f(p, _) } }.
.decl second(n: number)
second(n) :- n = max x : { f(_, x), x < max x : f(_, x) }.
"""

PEOPLE = ("ann", "bob", "cy")


@st.composite
def transactions(draw):
    f_rows = st.tuples(st.sampled_from(PEOPLE), st.integers(1, 4))
    dept_rows = st.tuples(st.sampled_from(PEOPLE), st.sampled_from(("ops", "dev")))
    change = st.one_of(st.tuples(st.just("f"), f_rows, st.booleans()),
                       st.tuples(st.just("dept"), dept_rows, st.booleans()))
    return draw(st.lists(st.lists(change, min_size=1, max_size=5), min_size=1, max_size=8))


def _contents(session) -> dict:
    return {name: session.query(name) for name in session.program.relations}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transactions())
def test_incremental_equals_from_scratch(txs):
    program = datalog.Program(PROGRAM)
    session = program.session()
    inputs: dict[str, set] = {}
    before = _contents(session)
    for tx in txs:
        with session.transaction() as t:
            for relation, row, insert in tx:
                (t.insert if insert else t.retract)(relation, row)
        for relation, row, insert in tx:         # the last change of a row wins
            rows = inputs.setdefault(relation, set())
            (rows.add if insert else rows.discard)(row)
        scratch = program.session()
        with scratch.transaction() as s:
            for relation, rows in inputs.items():
                for row in rows:
                    s.insert(relation, row)
        after = _contents(session)
        assert after == _contents(scratch), tx
        for name in after:
            assert t.delta.inserted[name] == after[name] - before[name], name
            assert t.delta.retracted[name] == before[name] - after[name], name
        before = after


def test_witnesses_follow_retraction():
    session = datalog.Program(PROGRAM).session()
    session.insert("f", ("ann", 3), ("bob", 2), ("cy", 2))
    assert session.query("youngest") == {("bob", 2), ("cy", 2)}
    session.retract("f", ("bob", 2))
    assert session.query("youngest") == {("cy", 2)}
    session.retract("f", ("cy", 2))
    assert session.query("youngest") == {("ann", 3)}
    assert session.query("second") == set()


# ---------------------------------------------------------------- README

README_DECLS = """
.decl r(a: number, b: number)
.decl s(b: number)
.decl family(name: symbol, age: number)
.decl works(d: symbol, p: symbol, salary: number)
.decl dept(d: symbol)
.decl node(x: number)
.decl e(x: number, y: number)
.decl top(a: number)
.decl n(c: number)
.decl per(b: number, c: number)
.decl youngest(p: symbol, n: number)
.decl best(d: symbol, p: symbol)
.decl widest(n: number)
.decl weighted(s: number)
r(1, 2). r(3, 2). s(2). family("ann", 3). works("ops", "ann", 1). dept("ops").
node(1). e(1, 2).
"""


def test_the_readme_examples_check_and_run():
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = text[text.index("**Aggregates** scope"):].split("```\n", 2)[1]
    rules = [line.split("//")[0].strip() for line in block.splitlines() if line.strip()]
    assert len(rules) >= 6
    session = datalog.Program(README_DECLS + "\n".join(rules)).session()
    assert session.query("top") == {(3,)}
    assert session.query("youngest") == {("ann", 3)}
    assert session.query("best") == {("ops", "ann")}
    assert session.query("weighted") == {(1,)}
