"""One row given to ``Session.insert``/``retract`` (a single-fact update) is
checked in one pass when every column is a number, unsigned, float or
symbol: that path gives the same row, or the same error, as the general
checks, and it is the path such a row takes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datalog
from datalog.api import Session
from datalog.errors import DatalogError

PROGRAM = """
.decl p(a: number, b: symbol, c: unsigned, d: float)
.decl q(a: number)
.decl r(x: number)
r(x) :- q(x).
"""

VALUE = st.one_of(
    st.integers(min_value=-(1 << 64), max_value=1 << 65), st.booleans(),
    st.floats(allow_nan=True), st.text(max_size=3), st.none(),
    st.integers(min_value=-5, max_value=5).map(np.int64),
    st.tuples(st.integers()), st.lists(st.integers(), max_size=2))


def outcome(session, relation, rows):
    try:
        return session._rows(relation, rows)
    except DatalogError as error:
        return type(error), str(error)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["p", "q", "r", "nope"]),
       st.one_of(st.lists(VALUE, min_size=0, max_size=5).map(tuple),
                 st.lists(VALUE, min_size=0, max_size=5)))
def test_one_row_checked_at_once_as_by_the_general_checks(relation, row):
    session = datalog.Program(PROGRAM).session()
    fast = outcome(session, relation, (row,))
    session._plain = {}     # every row through the general checks
    assert fast == outcome(session, relation, (row,))


def test_a_fitting_row_takes_the_one_pass(monkeypatch):
    session = datalog.Program(PROGRAM).session()

    def general(*args):
        raise AssertionError("the general row checks ran")

    monkeypatch.setattr(Session, "_validate", general)
    assert session._rows("p", ((1, "a", 2, 0.5),)) == [(1, "a", 2, 0.5)]
    session.insert("q", (np.int64(3),))
    assert session.contains("r", (3,)) and session.retract("q", (3,)).count("r") == 1
    with pytest.raises(AssertionError):
        session._rows("q", ((1.5,),))  # does not fit: the general checks say why
