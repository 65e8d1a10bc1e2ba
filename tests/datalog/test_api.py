"""The public API (issue 4, item 2): every name and rule."""

from __future__ import annotations

import pytest

import datalog
from datalog import CheckError, DataError, DatalogError, Delta, EvaluationError, ParseError

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.input edge
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""

TYPED = """
.decl t(n: number, u: unsigned, f: float, s: symbol)
.decl copy(n: number, u: unsigned, f: float, s: symbol)
copy(n, u, f, s) :- t(n, u, f, s).
"""


@pytest.fixture
def session():
    return datalog.Program(TC).session()


def test_public_names():
    for name in ("Program", "Session", "Transaction", "Delta", "Subscription",
                 "DatalogError", "ParseError", "CheckError", "DataError",
                 "EvaluationError"):
        assert name in datalog.__all__ and hasattr(datalog, name)


def test_program_errors_carry_place_and_cli_text():
    with pytest.raises(ParseError) as info:
        datalog.Program(".decl p(x: number)\np(x :- .", path="bad.dl")
    error = info.value
    assert isinstance(error, DatalogError)
    assert (error.path, error.line) == ("bad.dl", 2)
    assert error.column is not None
    assert str(error).startswith(f"bad.dl:2:{error.column}: error:")
    with pytest.raises(CheckError) as info:
        datalog.Program(".decl p(x: number)\np(x) :- q(x).\n", path="c.dl")
    assert (info.value.path, info.value.line, info.value.column) == ("c.dl", 2, 9)
    assert "`q`" in str(info.value)


def test_program_from_file(tmp_path):
    path = tmp_path / "tc.dl"
    path.write_text(TC)
    program = datalog.Program.from_file(path)
    assert tuple(program.relations) == ("edge", "path")   # a mapping: name -> Relation
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    session = program.session(fact_dir=tmp_path)
    assert session.query("path") == {(1, 2), (2, 3), (1, 3)}
    assert program.session().query("path") == frozenset()   # no fact_dir: no input


def test_insert_returns_delta_and_query(session):
    delta = session.insert("edge", (1, 2), (2, 3))
    assert isinstance(delta, Delta) and delta
    assert delta.inserted["path"] == {(1, 2), (2, 3), (1, 3)}
    assert delta.inserted["edge"] == {(1, 2), (2, 3)}
    assert delta.retracted["path"] == frozenset()
    assert delta.inserted["nothing"] == frozenset()
    assert session.query("path") == frozenset({(1, 2), (2, 3), (1, 3)})
    assert session.query("path(1, x)") == {(1, 2), (1, 3)}
    assert session.query("path(_, 3)") == {(2, 3), (1, 3)}
    assert session.query("path(x, x)") == frozenset()
    session.insert("edge", (3, 3))
    assert session.query("path(x, x)") == {(3, 3)}


def test_retract_and_iteration_order(session):
    session.insert("edge", (1, 2), (2, 3))
    delta = session.retract("edge", (2, 3))
    assert delta.retracted["path"] == {(2, 3), (1, 3)}
    assert list(delta) == [("edge", (2, 3), -1), ("path", (1, 3), -1), ("path", (2, 3), -1)]


def test_set_semantics_on_inputs(session):
    session.insert("edge", (1, 2))
    again = session.insert("edge", (1, 2))
    assert not again and list(again) == []
    absent = session.retract("edge", (5, 6))
    assert not absent
    gone = session.retract("edge", (1, 2))
    assert gone.retracted["path"] == {(1, 2)}
    assert session.query("path") == frozenset()


def test_program_facts_stay(session):
    program = datalog.Program(TC + "edge(7, 8).\n")
    s = program.session()
    assert s.query("path") == {(7, 8)}
    assert not s.retract("edge", (7, 8))          # not an input: nothing changes
    assert not s.insert("edge", (7, 8))           # already there
    assert not s.retract("edge", (7, 8))          # the inserted copy goes, the fact stays
    assert s.query("path") == {(7, 8)}


def test_transaction_is_one_epoch(session):
    epoch = session.epoch
    with session.transaction() as tx:
        tx.insert("edge", (1, 2))
        tx.insert("edge", (2, 3))
        tx.retract("edge", (2, 3))
        tx.insert("edge", (3, 4))
    assert session.epoch == epoch + 1
    assert tx.delta.inserted["path"] == {(1, 2), (3, 4)}


def test_transaction_rolls_back_when_the_block_raises(session):
    session.insert("edge", (1, 2))
    epoch = session.epoch
    with pytest.raises(RuntimeError), session.transaction() as tx:
        tx.insert("edge", (2, 3))
        raise RuntimeError("boom")
    assert tx.delta is None
    assert session.epoch == epoch
    assert session.query("path") == {(1, 2)}
    assert session.insert("edge", (2, 3)).inserted["path"] == {(2, 3), (1, 3)}


def test_rows_are_validated_before_anything_changes():
    s = datalog.Program(TYPED).session()
    good = (1, 2, 1.5, "a")
    for bad in [(1, 2, 1.5), (1, 2, 1.5, "a", 0), ("1", 2, 1.5, "a"), (1, -1, 1.5, "a"),
                (1, 2, "x", "a"), (1, 2, 1.5, 3), (True, 2, 1.5, "a"), (2**63, 0, 0.0, "a"),
                (1, 2, float("nan"), "a"), 5]:
        with pytest.raises(DataError):
            s.insert("t", good, bad)
        assert s.query("t") == frozenset()
    with pytest.raises(DataError) as info:
        s.insert("tt", good)
    assert "did you mean `t`?" in str(info.value)
    # ints are accepted for float columns, as floats
    delta = s.insert("t", [1, 2, 3, "a"])
    assert delta.inserted["copy"] == {(1, 2, 3.0, "a")}
    assert all(isinstance(row[2], float) for row in s.query("copy"))


def test_failed_transaction_changes_nothing_and_session_stays_usable():
    s = datalog.Program(TC + ".decl q(x: number)\nq(100 / (y - x)) :- edge(x, y).\n")\
        .session()
    s.insert("edge", (1, 2))
    calls = []
    s.subscribe("path", calls.append)
    epoch = s.epoch
    with pytest.raises(EvaluationError) as info:
        s.insert("edge", (2, 2), (2, 3))            # 100 / 0
    assert "division by zero" in str(info.value)
    assert info.value.line == 9
    assert s.epoch == epoch and calls == []
    assert s.query("path") == {(1, 2)} and s.query("q") == {(100,)}
    with pytest.raises(DataError), s.transaction() as tx:
        tx.insert("edge", (4, 5))
        tx.insert("edge", ("bad", 5))
    assert s.query("path") == {(1, 2)}
    assert s.insert("edge", (2, 3)).inserted["path"] == {(2, 3), (1, 3)}
    assert len(calls) == 1


def test_iteration_limit_is_an_evaluation_error():
    program = datalog.Program("""
        .decl n(x: number)
        .decl seed(x: number)
        n(x) :- seed(x).
        n(x + 1) :- n(x), x < 1000.
    """)
    s = program.session(max_iterations=50)
    with pytest.raises(EvaluationError) as info:
        s.insert("seed", (0,))
    assert "iteration limit" in str(info.value)
    assert s.query("n") == frozenset()
    assert s.insert("seed", (990,)).inserted["n"] == {(x,) for x in range(990, 1001)}


def test_subscriptions(session):
    seen, edges = [], []
    handle = session.subscribe("path", seen.append)
    session.subscribe("edge", edges.append)
    session.insert("edge", (1, 2))
    session.insert("edge", (1, 2))                   # no change: no call
    assert len(seen) == 1
    assert seen[0].inserted == {"path": {(1, 2)}}
    assert dict(seen[0].retracted) == {}
    session.retract("edge", (1, 2))
    assert seen[1].retracted["path"] == {(1, 2)} and "edge" not in seen[1].retracted
    handle.close()
    handle.close()
    session.insert("edge", (3, 4))
    assert len(seen) == 2 and len(edges) == 3
    with pytest.raises(DataError):
        session.subscribe("nope", seen.append)


def test_query_patterns_are_checked(session):
    for bad in ("nope", "path(1)", "path(1, \"a\")", "path(1,", "path 1 2", ""):
        with pytest.raises(DatalogError):
            session.query(bad)


def test_delta_semantics():
    d = Delta({"p": {(1,)}}, {})
    assert d and d == Delta({"p": {(1,)}})
    assert not Delta() and list(Delta()) == []
    assert d.inserted["q"] == frozenset()
    assert "q" not in d.inserted


def test_aggregates_of_empty_groups():
    s = datalog.Program("""
        .decl dept(d: symbol)
        .decl emp(n: symbol, d: symbol, pay: number)
        .decl stats(d: symbol, n: number, total: number)
        .decl low(d: symbol, m: number)
        .decl avg(d: symbol, m: float)
        stats(d, n, t) :- dept(d), n = count : { emp(_, d, _) }, t = sum p : { emp(_, d, p) }.
        low(d, m) :- dept(d), m = min p : { emp(_, d, p) }.
        avg(d, m) :- dept(d), m = mean p : { emp(_, d, p) }.
    """).session()
    s.insert("dept", ("a",))
    assert s.query("stats") == {("a", 0, 0)} and s.query("low") == frozenset()
    assert s.query("avg") == frozenset()
    s.insert("emp", ("x", "a", 10), ("y", "a", 10), ("z", "a", 1))
    assert s.query("stats") == {("a", 3, 21)}
    assert s.query("low") == {("a", 1)} and s.query("avg") == {("a", 7.0)}
    d = s.retract("emp", ("x", "a", 10), ("y", "a", 10), ("z", "a", 1))
    assert d.retracted["low"] == {("a", 1)} and s.query("stats") == {("a", 0, 0)}


def test_derived_relations_take_inserted_rows_too(session):
    session.insert("edge", (1, 2))
    delta = session.insert("path", (1, 2), (7, 8))        # (1, 2) is derived already
    assert delta.inserted == {"path": {(7, 8)}}
    assert not session.retract("path", (3, 4))             # never inserted: no change
    delta = session.retract("path", (1, 2))                # inserted copy gone, still derived
    assert not delta and (1, 2) in session.query("path")
    assert session.retract("edge", (1, 2)).retracted["path"] == {(1, 2)}
    assert session.query("path") == {(7, 8)}


def test_bad_session_options_are_datalog_errors():
    program = datalog.Program(TC)
    for bad in (0, -5):
        with pytest.raises(DatalogError):
            program.session(max_iterations=bad)


def test_a_failing_subscriber_does_not_undo_the_transaction(session):
    seen = []

    def broken(delta):
        raise ValueError("subscriber bug")

    session.subscribe("path", broken)
    session.subscribe("path", seen.append)
    with pytest.raises(ValueError):
        session.insert("edge", (1, 2))
    assert session.query("path") == {(1, 2)} and len(seen) == 1
    assert not session.insert("edge", (1, 2))        # the insert was committed


# ---------------------------------------------------------------- macros, include dirs


def test_program_macros_and_include_dirs(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "decls.dl").write_text(".decl r(x: number)\n")
    main = tmp_path / "main.dl"
    main.write_text("#include <decls.dl>\n#if MODE == 2\nr(N).\n#else\nr(0).\n#endif\n")
    program = datalog.Program.from_file(main, macros={"MODE": 2, "N": "40 + 2"},
                                        include_dirs=[tmp_path / "lib"])
    assert program.session().query("r") == {(42,)}
    text = datalog.Program('#include "decls.dl"\nr(N).\n', macros={"N": 7},
                           include_dirs=[str(tmp_path / "lib")])
    assert text.session().query("r") == {(7,)}
    with pytest.raises(ParseError, match="cannot read included file `decls.dl`"):
        datalog.Program.from_file(main)


def test_run_takes_macros_and_include_dirs_and_returns_warnings(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "out.dl").write_text(".output r(IO=stdout)\n")
    main = tmp_path / "main.dl"
    main.write_text(".decl r(x: number)\n#include <out.dl>\nr(N).\n.decl unused(x: number)\n")
    result = datalog.run(main, tmp_path, tmp_path, macros={"N": 5},
                         include_dirs=[tmp_path / "lib"])
    assert result.stdout.splitlines()[-2] == "5"
    [warning] = result.warnings
    assert warning.startswith(f"{main}:4:1: warning: relation `unused`")
    program = datalog.Program.from_file(main, macros={"N": 5},
                                        include_dirs=[tmp_path / "lib"])
    with pytest.raises(DatalogError, match="give them to Program"):
        datalog.run(program, tmp_path, tmp_path, macros={"N": 6})


def test_nested_transactions_are_an_error_and_change_nothing():
    session = datalog.Program(".decl e(x: number)").session()
    with pytest.raises(DatalogError, match="a transaction is already open"):
        with session.transaction() as outer:
            outer.insert("e", (1,))
            with session.transaction() as inner:
                inner.insert("e", (2,))
    with pytest.raises(DatalogError, match="a transaction is already open"):
        with session.transaction() as tx:
            tx.insert("e", (3,))
            session.insert("e", (4,))
    assert session.query("e") == frozenset()       # neither block committed anything
    with session.transaction() as tx:              # and the session goes on
        tx.insert("e", (5,))
    assert session.query("e") == frozenset({(5,)})
