"""User-defined functors through the API: declarations, checks, binding,
evaluation errors (the transaction rolled back), ``stateful``, and the answers
of a session equal to a from-scratch evaluation after insertions and retractions."""

from __future__ import annotations

import pytest

import datalog
from datalog import CheckError, DatalogError, EvaluationError

PROGRAM = """.functor weight(x: number, s: symbol): number
.functor label(x: number): symbol
.functor half(x: number): float
.decl item(x: number, s: symbol)
.decl weighted(x: number, w: number)
.decl labelled(l: symbol)
.decl halves(h: float)
.decl heavy(x: number)
weighted(x, @weight(x, s)) :- item(x, s).
labelled(@label(x)) :- item(x, _).
halves(h) :- item(x, _), h = @half(x).
heavy(x) :- weighted(x, w), w > @weight(1, "threshold").
"""


def implementations(**extra):
    return {"weight": lambda x, s: 10 * x + len(s), "label": lambda x: f"#{x}",
            "half": lambda x: x / 2, **extra}


def test_functors_are_called_with_the_declared_values():
    session = datalog.Program(PROGRAM, functors=implementations()).session()
    session.insert("item", (1, "ab"), (3, "x"))
    assert session.query("weighted") == {(1, 12), (3, 31)}
    assert session.query("labelled") == {("#1",), ("#3",)}
    assert session.query("halves") == {(0.5,), (1.5,)}
    assert session.query("heavy") == {(3,)}      # @weight(1, "threshold") = 19


def test_an_int_result_fills_a_float_and_extra_names_are_ignored():
    program = datalog.Program(PROGRAM, functors=implementations(half=lambda x: x, other=print))
    session = program.session()
    session.insert("item", (4, "a"))
    assert session.query("halves") == {(4.0,)}
    assert type(next(iter(session.query("halves")))[0]) is float


def test_a_session_equals_a_fresh_evaluation_after_retractions():
    program = datalog.Program(PROGRAM, functors=implementations())
    session = program.session()
    session.insert("item", (1, "a"), (2, "bb"), (5, "ccc"))
    session.retract("item", (2, "bb"))
    with session.transaction() as tx:
        tx.retract("item", (5, "ccc"))
        tx.insert("item", (7, "d"))
    fresh = program.session()
    fresh.insert("item", *session.query("item"))
    for name in program.relations:
        assert session.query(name) == fresh.query(name), name


@pytest.mark.parametrize("text, message", [
    ('.functor f(x: number): number\n.decl a(x: number)\n.decl b(s: symbol)\n'
     'b(s) :- a(x), s = @f(x).',
     "`s` has type `number` but column `s` of `b` has type `symbol`"),
    ('.functor f(x: number): number\n.decl a(x: symbol)\n.decl b(x: number)\n'
     'b(y) :- a(x), y = @f(x).', "`@f` cannot be applied to `symbol`"),
    ('.functor f(x: number): number\n.decl a(x: number)\nb(y) :- a(x), y = @g(x).\n'
     '.decl b(x: number)', "undefined functor `@g`"),
    ('.functor f(x: number): number\n.decl a(x: number)\n.decl b(x: number)\n'
     'b(y) :- a(x), y = @f(x, x).', "functor `@f` takes 1 argument, got 2"),
    ('.functor f(x: number): number\n.functor f(x: symbol): number', "declared twice"),
    ('.functor f(x: nmber): number', "unknown type `nmber`"),
    ('.functor f(x: number): number\n.decl a(x: number)\na(@f(1)).',
     "a fact cannot call `@f(..)`"),
])
def test_calls_are_checked_like_built_in_functors(text, message):
    with pytest.raises(CheckError) as info:
        datalog.Program(text, functors={"f": abs})
    assert message in str(info.value)


def test_subtypes_in_a_signature_are_their_primitive_types():
    text = (".type Id <: number\n.functor next(x: Id): Id\n.decl a(x: Id)\n"
            ".decl b(x: number)\nb(y) :- a(x), y = @next(x).\n")
    session = datalog.Program(text, functors={"next": lambda x: x + 1}).session()
    assert session.insert("a", (1,)).inserted["b"] == {(2,)}


def test_a_declared_functor_without_a_callable_is_an_error_at_its_declaration():
    with pytest.raises(CheckError) as info:
        datalog.Program(PROGRAM, path="p.dl", functors={"weight": abs, "lable": str})
    text = str(info.value)
    assert "p.dl:2:1: error: functor `@label` has no implementation" in text
    assert "did you mean `lable`?" in text
    assert "p.dl:3:1: error: functor `@half` has no implementation" in text
    with pytest.raises(CheckError) as info:
        datalog.Program(PROGRAM, path="p.dl", functors=implementations(half=2.5))
    assert "p.dl:3:1: error: functor `@half` is bound to 2.5, which is not callable" \
        in str(info.value)


def fails_at(value):
    def weight(x, s):
        if x == value:
            raise ValueError(f"no weight for {x}")
        return x
    return weight


@pytest.mark.parametrize("weight, message", [
    (fails_at(2), "functor `@weight` raised ValueError: no weight for 2 in "
                  "`weighted(x, @weight(x, s)) :- item(x, s).`"),
    (lambda x, s: s if x == 2 else x, "functor `@weight` returned 'b' (a str) where its "
                                      "declaration says `number`"),
    (lambda x, s: 2 ** 63 if x == 2 else x, "functor `@weight` returned 9223372036854775808, "
                                            "out of range for `number`"),
    (lambda x, s: True if x == 2 else x, "returned True (a bool) where its declaration says "
                                         "`number`"),
    (lambda x, s: 1.5 if x == 2 else x, "returned 1.5 (a float)"),
])
def test_a_failing_functor_rolls_the_transaction_back(weight, message):
    program = datalog.Program(PROGRAM, path="p.dl", functors=implementations(weight=weight))
    session = program.session()
    session.insert("item", (1, "a"))
    before = {name: session.query(name) for name in program.relations}
    with pytest.raises(EvaluationError) as info:
        with session.transaction() as tx:
            tx.insert("item", (2, "b"))
            tx.insert("item", (3, "c"))
    assert str(info.value).startswith("p.dl:9:1: error: "), str(info.value)
    assert message in str(info.value)
    assert "weighted(x, @weight(x, s)) :- item(x, s)." in str(info.value)   # the line
    assert {name: session.query(name) for name in program.relations} == before
    # usable afterwards, and a retraction through the functor still balances
    session.insert("item", (4, "dd"))
    session.retract("item", (1, "a"))
    assert session.query("item") == {(4, "dd")}
    assert session.query("labelled") == {("#4",)}


def test_stateful_functors_are_called_once_per_argument_tuple():
    calls = []

    def fresh(x):
        calls.append(x)
        return 100 * len(calls) + x

    text = (".functor fresh(x: number): number stateful\n.decl a(x: number)\n"
            ".decl b(x: number, y: number)\nb(x, @fresh(x)) :- a(x).\n")
    session = datalog.Program(text, functors={"fresh": fresh}).session()
    session.insert("a", (1,), (2,))
    first = session.query("b")
    session.retract("a", (1,))                  # the retraction sees the same value
    assert session.query("b") == {row for row in first if row[0] == 2}
    session.insert("a", (1,))
    assert session.query("b") == first
    assert sorted(calls) == [1, 2]


def test_a_non_stateful_functor_must_be_a_function_of_its_arguments():
    # the declaration says nothing: the engine calls it as often as it needs
    calls = []

    def counted(x):
        calls.append(x)
        return x

    text = (".functor f(x: number): number\n.decl a(x: number)\n.decl b(x: number)\n"
            "b(@f(x)) :- a(x).\n")
    session = datalog.Program(text, functors={"f": counted}).session()
    session.insert("a", (1,))
    session.retract("a", (1,))
    assert calls == [1, 1] and session.query("b") == frozenset()


def test_run_takes_functors_for_a_program_given_by_path(tmp_path):
    path = tmp_path / "p.dl"
    path.write_text(PROGRAM + ".input item\n.output weighted\n")
    (tmp_path / "item.facts").write_text("1\tab\n2\tc\n")
    result = datalog.run(str(path), str(tmp_path), "-", functors=implementations())
    assert ["1\t12", "2\t21"] == [line for line in result.stdout.splitlines()
                                  if "\t" in line]
    with pytest.raises(DatalogError, match="functors apply when the program is read"):
        datalog.run(datalog.Program(PROGRAM, functors=implementations()), str(tmp_path), "-",
                    functors=implementations())


def test_the_spark_engine_refuses_user_functors_before_starting():
    from datalog.backends.spark.executor import refuse_bound_functors

    program = datalog.Program(PROGRAM, path="p.dl", functors=implementations())
    with pytest.raises(EvaluationError) as info:
        refuse_bound_functors(program.plan)
    text = str(info.value)
    assert "p.dl:9:1: error: the user-defined functor `@weight` is evaluated by the local " \
           "engine only" in text
    assert "p.dl:12:1" in text and "--engine local" in text
