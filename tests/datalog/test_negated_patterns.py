"""Negated atoms that ignore fields of records and ADT values (``!r([x, _])``):
evaluated as ``count : { r([x, _]) } = 0``, they must mean what the same
negation of a helper relation (``r1(x) :- r([x, _]).`` and ``!r1(x)``, the
workaround they replace) means, after every transaction of a random sequence."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.dialect.records import ADTValue
from datalog.errors import CheckError

TYPES = """
.type Pair = [a: number, b: symbol]
.type Shape = Circle {r: number} | Rect {w: number, h: number}
.decl r(p: Pair, s: Shape)
.decl v(x: number)
.decl q(x: number, how: number)
"""
PATTERNS = TYPES + """
q(x, 1) :- v(x), !r([x, _], _).
q(x, 2) :- v(x), !r(_, $Rect(x, _)).
q(x, 3) :- v(x), !r([x, "a"], $Circle(_)).
q(x, 4) :- v(x), !r([_, "b"], $Rect(_, x)), !r([x, _], $Circle(x)).
"""
HELPERS = TYPES + """
.decl r1(x: number)
r1(x) :- r([x, _], _).
.decl r2(x: number)
r2(x) :- r(_, $Rect(x, _)).
.decl r3(x: number)
r3(x) :- r([x, "a"], $Circle(_)).
.decl r4(x: number)
r4(x) :- r([_, "b"], $Rect(_, x)).
.decl r5(x: number)
r5(x) :- r([x, _], $Circle(x)).
q(x, 1) :- v(x), !r1(x).
q(x, 2) :- v(x), !r2(x).
q(x, 3) :- v(x), !r3(x).
q(x, 4) :- v(x), !r4(x), !r5(x).
"""

numbers = st.integers(0, 2)
shapes = st.one_of(st.builds(lambda r: ADTValue(("Circle", r)), numbers),
                   st.builds(lambda w, h: ADTValue(("Rect", w, h)), numbers, numbers))
rows = st.one_of(
    st.tuples(st.just("v"), st.tuples(numbers)),
    st.tuples(st.just("r"), st.tuples(st.tuples(numbers, st.sampled_from("ab")), shapes)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(rows, st.booleans()), min_size=1, max_size=5),
                min_size=1, max_size=6))
def test_negated_patterns_equal_negated_helpers(txs):
    session = datalog.Program(PATTERNS).session()
    helpers = datalog.Program(HELPERS)
    inputs: dict[str, set] = {"r": set(), "v": set()}
    before = session.query("q")
    for tx in txs:
        with session.transaction() as t:
            for (relation, row), insert in tx:
                (t.insert if insert else t.retract)(relation, row)
        for (relation, row), insert in tx:
            (inputs[relation].add if insert else inputs[relation].discard)(row)
        scratch = helpers.session()
        for relation, rows_ in inputs.items():
            if rows_:
                scratch.insert(relation, *rows_)
        after = session.query("q")
        assert after == scratch.query("q"), tx
        assert t.delta.inserted.get("q", set()) == after - before
        assert t.delta.retracted.get("q", set()) == before - after
        before = after


def test_a_query_may_negate_a_pattern():
    session = datalog.Program(PATTERNS).session()
    session.insert("v", (1,), (2,))
    session.insert("r", ((1, "a"), ADTValue(("Circle", 0))))
    assert [a["x"] for a in session.ask("v(x), !r([x, _], $Circle(_))")] == [2]


def test_not_inside_an_aggregate():
    text = TYPES + "q(x, n) :- v(x), n = count : { v(y), !r([y, _], _), y < x }.\n"
    with pytest.raises(CheckError, match=re.escape(
            "a negated atom inside an aggregate cannot ignore a field")):
        datalog.Program(text)
