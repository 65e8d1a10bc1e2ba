"""Query patterns that take records and ADT values apart:
``session.query("shape($Rect(1, x))")`` keeps the rows whose value has the
pattern's shape, its constants equal and each variable one value throughout
(also across columns); a bad pattern is the located error a bad fact gets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datalog
from datalog.dialect.records import ADTValue
from datalog.errors import CheckError

PROGRAM = """
.type Pair = [a: number, b: symbol]
.type Shape = Circle {r: number} | Rect {w: number, h: number} | Tagged {p: Pair, s: Shape}
.decl shape(s: Shape)
.decl pairs(p: Pair, n: number)
"""


def rect(w, h):
    return ADTValue(("Rect", w, h))


def circle(r):
    return ADTValue(("Circle", r))


def tagged(p, s):
    return ADTValue(("Tagged", p, s))


SHAPES = [(circle(2),), (rect(1, 2),), (rect(3, 3),), (tagged((1, "a"), circle(1)),),
          (tagged((2, "a"), circle(1)),)]
PAIRS = [((1, "a"), 1), ((2, "b"), 1), ((), 0)]


@pytest.fixture(scope="module")
def session():
    s = datalog.Program(PROGRAM).session()
    s.insert("shape", *SHAPES)
    s.insert("pairs", *PAIRS)
    return s


@pytest.mark.parametrize("query, rows", [
    ("shape($Rect(1, x))", {(rect(1, 2),)}),
    ("shape($Rect(x, x))", {(rect(3, 3),)}),
    ("shape($Rect(_, _))", {(rect(1, 2),), (rect(3, 3),)}),
    ("shape($Tagged([n, _], $Circle(n)))", {(tagged((1, "a"), circle(1)),)}),
    ("shape($Tagged(_, $Circle(_)))", {(tagged((1, "a"), circle(1)),),
                                       (tagged((2, "a"), circle(1)),)}),
    ("pairs([x, _], x)", {((1, "a"), 1)}),
    ('pairs([x, "b"], _)', {((2, "b"), 1)}),
    ("pairs([_, _], 0)", set()),
    ("pairs(nil, n)", {((), 0)}),
])
def test_patterns_take_values_apart(session, query, rows):
    assert session.query(query) == rows


@pytest.mark.parametrize("query, message", [
    ('shape($Rect(1, "a"))', "this constant has type `symbol` but field `h`"),
    ("shape($Rect(x))", "`$Rect` has 2 fields, got 1"),
    ("shape($Nope(x))", "unknown constructor `$Nope`"),
    ("shape([x, 1])", "a record where a `Shape` is expected"),
    ("shape($Rect(x + 1, 2))", "the variable `x` is inside an expression"),
])
def test_bad_patterns_are_located(session, query, message):
    with pytest.raises(CheckError, match=re.escape(message)):
        session.query(query)


numbers = st.sampled_from([0, 1, 2, "x", "y", "_"])


@settings(max_examples=60, deadline=None)
@given(numbers, numbers)
def test_a_pattern_equals_a_conjunctive_query(session, a, b):
    """The rows a pattern keeps are those a conjunctive query finds by taking
    the whole value apart with an equality (another path through the planner)."""
    pattern = f"$Tagged([{a}, _], $Circle({b}))"
    answers = session.ask(f"shape(s), s = {pattern}")
    assert session.query(f"shape({pattern})") == {(row["s"],) for row in answers}, pattern


def test_a_record_pattern_in_ask_compares_records():
    """Taking a record apart inside an ADT in ``ask`` filters on the record's
    shape (``!= nil``), which the explanation evaluator computes as the circuit
    does."""
    s = datalog.Program(PROGRAM).session()
    s.insert("shape", *SHAPES)
    assert [row["s"] for row in s.ask("shape(s), s = $Tagged([1, _], $Circle(1))")] == \
        [tagged((1, "a"), circle(1))]
