"""Conjunctive queries (``session.ask``) and rules added at run time
(``session.add_rules``), through the public API."""

import pytest

import datalog

PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl name(node: number, label: symbol)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture
def session():
    session = datalog.Program(PROGRAM).session()
    session.insert("edge", [(1, 2), (2, 3), (3, 5), (2, 7)])
    session.insert("name", [(2, 'two "2"'), (3, "three"), (7, "seven")])
    return session


def test_a_conjunction_with_a_comparison_gives_named_answers(session):
    answers = session.ask("path(1, x), edge(x, y), y > 3")
    assert answers.variables == ("x", "y")
    assert list(answers) == [{"x": 2, "y": 7}, {"x": 3, "y": 5}]
    assert answers.rows == [(2, 7), (3, 5)] and len(answers) == 2
    assert repr(answers) == "Answers(x, y: 2 answers)"


def test_negation_arithmetic_alternatives_and_aggregates(session):
    assert list(session.ask("path(1, x), !edge(x, _)")) == [{"x": 5}, {"x": 7}]
    assert list(session.ask("edge(x, y), z = x * 10 + y, z > 30")) == \
        [{"x": 3, "y": 5, "z": 35}]
    assert list(session.ask("edge(x, 3) ; edge(x, 7)")) == [{"x": 2}]
    assert list(session.ask("n = count : { path(1, _) }")) == [{"n": 4}]
    assert list(session.ask("path(1, x), name(x, l), contains(\"e\", l)")) == \
        [{"x": 3, "l": "three"}, {"x": 7, "l": "seven"}]


def test_underscore_variables_are_not_answers(session):
    assert list(session.ask("path(1, _x), edge(_x, y)")) == \
        [{"y": 3}, {"y": 5}, {"y": 7}]


def test_a_query_without_variables_holds_or_not(session):
    assert session.ask("path(1, 5), !edge(1, 5)")
    assert list(session.ask("path(1, 5)")) == [{}]
    assert not session.ask("path(5, 1)")


def test_values_bind_variables_without_quoting(session):
    label = 'two "2"'
    assert list(session.ask("name(n, l), path(1, n)", l=label)) == [{"n": 2}]
    assert list(session.ask("path(a, y), y > low", a=1, low=4)) == [{"y": 5}, {"y": 7}]
    with pytest.raises(datalog.DataError, match="no variable `q`"):
        session.ask("path(1, x)", q=1)
    with pytest.raises(datalog.DataError, match="not a value of the dialect"):
        session.ask("path(1, x)", x=[1])
    with pytest.raises(datalog.CheckError, match="has type `symbol`"):
        session.ask("path(1, x)", x="a")


@pytest.mark.parametrize("query, expected", [
    ("path(1, x), z > 3", "<query>:1:13: error: variable `z` in a comparison is not bound"),
    ("path(1, x), edge(x, y, z)", "<query>:1:13: error: relation `edge` has 2 attributes"),
    ("pth(1, x)", "<query>:1:1: error: undefined relation `pth`"),
    ("path(1, x), x > \"a\"", "<query>:1:13: error: cannot compare a `number` with a "
                              "`symbol`"),
    ("path(1, x) :- edge(x, 1)", "<query>:1:12: error: unexpected `:-`"),
    ("path(1, x). edge(1, 2)", "<query>:1:13: error: a query is the body of a rule"),
    ("path(1, x),\n  y > 3", "<query>:2:3: error: variable `y` in a comparison"),
])
def test_a_bad_query_is_a_located_error(session, query, expected):
    with pytest.raises(datalog.DatalogError) as error:
        session.ask(query)
    assert str(error.value).startswith(expected)
    assert "^" in str(error.value)


def test_answers_convert_to_frames(session):
    frame = session.ask("name(n, l), path(1, n)").frame()
    assert list(frame.columns) == ["n", "l"]
    assert frame.dtypes.astype(str).tolist() == ["int64", "string"]
    assert frame.values.tolist() == [[2, 'two "2"'], [3, "three"], [7, "seven"]]
    assert session.ask("path(1, x)").to_arrow().column("x").to_pylist() == [2, 3, 5, 7]


def test_add_rules_extends_the_program_and_keeps_the_facts(session):
    seen = []
    session.subscribe("edge", seen.append)
    delta = session.add_rules("""
        .decl far(x: number)
        far(y) :- path(1, y), !edge(1, y).
    """)
    assert delta.inserted["far"] == {(3,), (5,), (7,)} and not delta.retracted
    assert "far" in session.program.relations
    assert session.query("edge") == {(1, 2), (2, 3), (3, 5), (2, 7)}
    # later transactions maintain the new rules; subscriptions stay
    assert session.insert("edge", (7, 8)).inserted["far"] == {(8,)}
    assert seen[-1].inserted["edge"] == {(7, 8)}
    assert list(session.ask("far(x), x > 6")) == [{"x": 7}, {"x": 8}]


def test_add_rules_that_fail_change_nothing(session):
    before = {name: session.query(name) for name in session.program.relations}
    program = session.program
    with pytest.raises(datalog.CheckError) as error:
        session.add_rules(".decl far(x: number)\nfar(y) :- path(1, y), y > z.")
    assert str(error.value).startswith("<added 1>:2:27: error: variable `z`")
    assert session.program is program
    assert {name: session.query(name) for name in session.program.relations} == before
    with pytest.raises(datalog.CheckError, match="undefined relation `nope`"):
        session.add_rules("path(x, y) :- nope(x, y).")
    assert session.insert("edge", (5, 6)).inserted["path"]


def test_add_rules_is_refused_inside_a_transaction_and_with_a_store(session, tmp_path):
    with session.transaction():
        with pytest.raises(datalog.DatalogError, match="a transaction is open"):
            session.add_rules(".decl q(x: number)")
    durable = datalog.Program(PROGRAM).session(store=tmp_path / "store")
    with pytest.raises(datalog.DatalogError, match="program cannot change"):
        durable.add_rules(".decl q(x: number)")
    durable.close()


def test_a_pattern_over_an_unknown_unary_relation_is_a_located_error(session):
    # `e(x)`: one variable, as many as an unknown relation was once assumed to have
    with pytest.raises(datalog.CheckError, match=r"<query>:1:1: error: undefined relation `e`"):
        session.query("e(x)")
