"""The session's input rows in sorted arrays (datalog.inputs) behave as a set
of tuples: random changes against a Python set, at a fold size that folds
often and at the default; and a session keeps them so, giving the same
answers as before for retractions of rows never given, re-insertions,
queries of input relations, fact files and ``add_rules``."""

from __future__ import annotations

import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

import datalog
from datalog import inputs
from datalog.inputs import InputRows, input_rows

TYPES = [("number",), ("number", "symbol"), ("unsigned", "number"),
         ("symbol", "symbol", "number")]

VALUES = {"number": st.sampled_from([0, 1, -1, 2, 1 << 40, -(1 << 63), (1 << 63) - 1]),
          "unsigned": st.sampled_from([0, 1, 2, 1 << 63, (1 << 64) - 1]),
          "symbol": st.sampled_from(["a", "b", "", "é", "never-seen-before-0"])}


@st.composite
def changes(draw):
    types = draw(st.sampled_from(TYPES))
    row = st.tuples(*[VALUES[t] for t in types])
    steps = draw(st.lists(st.tuples(st.sampled_from(["update", "difference_update"]),
                                    st.lists(row, max_size=12)), max_size=25))
    return types, steps


@settings(max_examples=150, deadline=None)
@given(changes(), st.sampled_from([1, 3, inputs.FOLD]))
def test_input_rows_are_a_set_of_tuples(case, fold):
    types, steps = case
    saved = inputs.FOLD
    inputs.FOLD = fold
    try:
        rows, reference = input_rows(types), set()
        assert isinstance(rows, InputRows)
        for op, batch in steps:
            getattr(rows, op)(batch)
            getattr(reference, op)(batch)
            assert len(rows) == len(reference)
            for row in batch:
                assert (row in rows) == (row in reference)
        assert set(rows) == reference and rows == reference
        assert ("a",) * (len(types) + 1) not in rows and (1.5,) * len(types) not in rows
    finally:
        inputs.FOLD = saved


@st.composite
def transactions(draw):
    types = draw(st.sampled_from(TYPES))
    row = st.tuples(*[VALUES[t] for t in types])
    initial = draw(st.lists(row, max_size=12))
    steps = draw(st.lists(st.dictionaries(row, st.booleans(), max_size=12), max_size=25))
    return types, initial, steps


@settings(max_examples=150, deadline=None)
@given(transactions(), st.sampled_from([1, 3, inputs.FOLD]))
@example((("number",), [(1,), (2,)], [{(1,): False}, {(1,): True, (3,): True}, {(3,): False}]),
         inputs.FOLD)   # a row of the table lost and back, one never there in and out
def test_change_with_known_membership_is_update_and_difference_update(case, fold):
    """``change`` (a session's commit: rows known absent gained, rows known
    present lost, no search of the table) against a Python set, keeping the
    invariants that let it skip the search; fold 1 takes its bulk path."""
    types, initial, steps = case
    saved = inputs.FOLD
    inputs.FOLD = fold
    try:
        rows, reference = input_rows(types, initial), set(initial)
        rows._fold()    # the initial rows in the table (fewer than FOLD stay in a set)
        for wanted in steps:
            gained = [row for row, present in wanted.items() if present and row not in reference]
            lost = [row for row, present in wanted.items() if not present and row in reference]
            rows.change(gained, lost)
            reference.update(gained)
            reference.difference_update(lost)
            table = set() if rows.table is None else set(rows._decode(rows.table))
            assert rows.removed <= table and not rows.added & table
            assert len(rows) == len(reference) and set(rows) == reference
            for row in wanted:
                assert (row in rows) == (row in reference)
    finally:
        inputs.FOLD = saved


def test_columns_that_cannot_be_packed_keep_a_set():
    for types in [("float",), ("number", "float"), ()]:
        assert type(input_rows(types, [])) is set


def test_a_session_keeps_its_inputs_in_arrays_and_answers_as_a_set_does():
    text = (".decl e(x: number, y: symbol)\n.decl f(x: number)\n"
            "f(x) :- e(x, _).\n")
    session = datalog.Program(text).session()
    rows = [(x, f"s{x % 10}") for x in range(9000)]
    session.insert("e", rows)
    kept = session._inputs["e"]
    assert type(kept) is InputRows and kept.table is not None and not kept.added
    assert sys.getsizeof(kept.table) < 20 * len(rows)
    assert session.retract("e", (1, "s2")).count("f") == 0     # never given: no change
    assert session.retract("e", (1, "s1")).count("f") == 1
    assert session.insert("e", (1, "s1")).count("f") == 1
    assert session.insert("e", (1, "s1")).count("f") == 0      # given already
    session.insert("e", (9000, "new"))
    assert session.query("e") == set(rows) | {(9000, "new")}
    assert session.inputs("e") == set(rows) | {(9000, "new")}
    assert session.query("e(x, \"new\")") == {(9000, "new")}
    with session.transaction() as tx:
        tx.retract("e", *rows[:8500])
    assert session.query("f") == {(x,) for x in range(8500, 9000)} | {(9000,)}
    session.add_rules(".decl g(x: number)\ng(x) :- f(x), x > 8990.\n")
    assert session.query("g") == {(x,) for x in range(8991, 9001)}
    assert type(session._inputs["e"]) is InputRows
    assert session.inputs("e") == set(rows[8500:]) | {(9000, "new")}


def test_facts_read_from_files_go_to_arrays(tmp_path):
    (tmp_path / "e.facts").write_text("".join(f"{x}\t{x + 1}\n" for x in range(9000)))
    text = (".decl e(x: number, y: number)\n.input e\n.decl p(x: number, y: number)\n"
            "p(x, z) :- e(x, y), e(y, z).\n")
    session = datalog.Program(text).session(fact_dir=str(tmp_path))
    assert session._inputs["e"].table is not None
    assert len(session.query("e")) == 9000
    assert (4, 6) in session.query("p") and (5, 8) not in session.query("p")
    session.retract("e", (2, 3))
    assert (1, 3) not in session.query("p") and (0, 2) in session.query("p")
    assert len(session.query("p")) == 8999 - 2 and (2, 3) not in session.inputs("e")
