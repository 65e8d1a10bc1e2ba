"""Every hand-worked program of the reference evaluator's own tests, run through
the engine too: the engine must agree with the reference on the inputs, and again
after retracting every input (an incremental step back to the facts alone)."""

from __future__ import annotations

import inspect

import pytest

import datalog
import tests.test_reference as reference_tests
from datalog.errors import DatalogError
from datalog.syntax.parser import parse
from tests.reference import evaluate

CASES = [f for name, f in inspect.getmembers(reference_tests, inspect.isfunction)
         if name.startswith("test_") and not hasattr(f, "hypothesis")]


def _contents(session, program) -> dict:
    return {name: set(session.query(name)) for name in program.relations}


def engine_and_reference(text: str, **inputs) -> dict:
    """The reference's result, after checking that the engine's equals it (or
    that both reject the program or its inputs)."""
    try:
        expected = evaluate(parse(text), inputs)
    except DatalogError:
        with pytest.raises(DatalogError):
            program = datalog.Program(text)
            session = program.session()
            with session.transaction() as tx:
                for name, rows in inputs.items():
                    tx.insert(name, *rows)
        raise
    program = datalog.Program(text)
    session = program.session()
    with session.transaction() as tx:
        for name, rows in inputs.items():
            tx.insert(name, *rows)
    got = _contents(session, program)
    assert got == {name: expected.get(name, set()) for name in program.relations}, text
    with session.transaction() as tx:
        for name, rows in inputs.items():
            tx.retract(name, *rows)
    facts_only = evaluate(parse(text), {})
    assert _contents(session, program) == {
        name: facts_only.get(name, set()) for name in program.relations}, text
    return expected


@pytest.mark.parametrize("case", CASES, ids=[f.__name__ for f in CASES])
def test_reference_cases_through_the_engine(case, monkeypatch):
    monkeypatch.setattr(reference_tests, "run", engine_and_reference)
    case()


def test_joins_on_one_relation_and_key_share_one_index():
    import re

    from datalog.backends.circuit.compile import compile_plan

    program = datalog.Program("""
        .decl e(x: number, y: number)
        .decl a(x: number, y: number)
        .decl b(x: number, y: number)
        a(x, z) :- e(x, y), e(y, z).
        b(x, z) :- e(y, x), e(y, z), x != z.
    """)
    compiled = compile_plan(program.plan)
    assert compiled.indexes[("root", "e", (0,))] == [
        "a(x, z) :- e(x, y), e(y, z).", "b(x, z) :- e(y, x), e(y, z), x != z."]
    text = compiled.circuit.describe()
    source = re.search(r"^(\d+) source arity=2 `e`$", text, re.MULTILINE).group(1)
    assert len(re.findall(rf"index_by\(0,\) <- {source}$", text, re.MULTILINE)) == 1
    session = program.session()
    session.insert("e", (1, 2), (2, 3), (1, 4))
    assert session.query("a") == {(1, 3)} and session.query("b") == {(2, 4), (4, 2)}


def test_aggregates_in_recursive_rules():
    text = """
        .decl e(x: number, y: number)
        .decl w(x: number, c: number)
        .decl r(x: number, c: number)
        .decl q(x: number)
        r(x, 0) :- e(x, _), x < 1.
        r(y, c) :- r(x, _), e(x, y), c = count : { w(y, _) }.
        q(0).
        q(y) :- q(x), e(x, y), m = max v : { w(y, v) }, m > 1.
    """
    inputs = {"e": {(0, 1), (1, 2), (2, 3), (3, 1)}, "w": {(1, 5), (1, 6), (2, 0), (3, 3)}}
    engine_and_reference(text, **inputs)
    session = datalog.Program(text).session()
    session.insert("e", *inputs["e"])
    session.insert("w", *inputs["w"])
    delta = session.retract("w", (1, 5), (1, 6))
    assert delta.retracted["q"] == {(1,)} and delta.inserted["r"] == {(1, 0)}
    unsupported = datalog.Program("""
        .decl e(x: number, y: number)
        .decl r(x: number)
        r(0).
        r(y) :- r(x), e(x, y), c = count : { e(z, _), z < y }, c > 0.
    """)
    with pytest.raises(datalog.EvaluationError, match="recursive rule"):
        unsupported.session()


@pytest.mark.parametrize("text, inputs", [
    ("""  // nullary relations: a join and an antijoin with no key
        .decl q(x: number)
        .decl flag()
        .decl p(x: number)
        .decl np(x: number)
        flag() :- q(3).
        p(x) :- q(x), flag().
        np(x) :- q(x), !flag().
     """, {"q": {(1,), (3,)}}),
    ("""  // equalities: filters, assignments, both directions
        .decl q(x: number, y: number)
        .decl p(x: number, y: number)
        p(x, y) :- q(x, y), x = y.
        p(x, z) :- q(x, y), z = y * 2, z = x + 2.
        p(a, b) :- q(a, _), b = a, b > 1.
     """, {"q": {(1, 1), (2, 3), (2, 2), (4, 4)}}),
    ("""  // floats, string constraints, mean and count side by side
        .decl q(x: float, s: symbol)
        .decl p(x: float, n: number)
        p(x + 1, strlen(s)) :- q(x, s), x >= 1, contains("a", s).
        p(m, c) :- m = mean x : { q(x, _) }, c = count : { q(_, s), match("b.*", s) }.
     """, {"q": {(1.0, "abc"), (2.5, "bcd"), (0.5, "a")}}),
    ("""  // range: bound by an atom, and counting down without one
        .decl q(x: number)
        .decl p(x: number, y: number)
        p(x, y) :- q(x), y = range(0, x).
        p(x, x) :- x = range(10, 7).
     """, {"q": {(3,), (0,)}}),
], ids=["nullary", "equalities", "floats-strings", "range"])
def test_corner_cases_agree_with_the_reference(text, inputs):
    engine_and_reference(text, **inputs)
