"""Data in and out of Python through the public API: iterables of rows, pandas
DataFrames, Arrow tables and numpy arrays in; typed DataFrames and Arrow tables
out, of relations, deltas and answers."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import datalog

PROGRAM = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl item(id: unsigned, name: symbol, price: float)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture
def session():
    return datalog.Program(PROGRAM).session()


def state(session):
    return {name: session.query(name) for name in session.program.relations}


def test_insert_takes_rows_one_by_one_or_one_iterable(session):
    session.insert("edge", (1, 2), [2, 3])
    session.insert("edge", [(3, 4), (4, 5)])
    session.insert("edge", ((x, x + 1) for x in range(5, 7)))
    session.insert("edge", ((7, 8),))
    session.retract("edge", [(7, 8)])
    assert session.query("edge") == {(x, x + 1) for x in range(1, 7)}
    with session.transaction() as tx:
        tx.insert("edge", {(10, 11), (11, 12)})
        tx.retract("edge", iter([(1, 2)]))
    assert (1, 2) not in session.query("edge") and (10, 12) in session.query("path")


def test_a_single_unary_row_is_a_row_not_rows():
    session = datalog.Program(".decl n(x: number)").session()
    session.insert("n", [1])
    session.insert("n", [(2,), (3,)])
    assert session.query("n") == {(1,), (2,), (3,)}


def test_numpy_scalars_are_values(session):
    session.insert("edge", (np.int64(1), np.int32(2)))
    session.insert("item", (np.uint64(2**64 - 1), np.str_("x"), np.float32(1.5)))
    assert session.query("edge") == {(1, 2)}
    ((ident, name, price),) = session.query("item")
    assert (ident, name, price) == (2**64 - 1, "x", 1.5)
    assert type(ident) is int and type(price) is float
    with pytest.raises(datalog.DataError, match="column x of `edge` is number"):
        session.insert("edge", (np.bool_(True), 2))


def test_a_dataframe_goes_in_by_name_or_by_position(session):
    by_name = pd.DataFrame({"y": [2, 3], "x": [1, 2]})       # columns in another order
    delta = session.insert("edge", by_name)
    assert session.query("edge") == {(1, 2), (2, 3)}
    assert delta.inserted["path"] == {(1, 2), (2, 3), (1, 3)}
    session.insert("edge", pd.DataFrame([[3, 4], [4, 5]]))   # columns 0, 1: by position
    assert (1, 5) in session.query("path")
    session.insert("item", pd.DataFrame({"id": np.array([1, 2], dtype=np.uint64),
                                         "name": ["a", "b"], "price": [1, 2]}))
    assert session.query("item") == {(1, "a", 1.0), (2, "b", 2.0)}


def test_arrow_tables_and_numpy_arrays_go_in(session):
    session.insert("edge", pa.table({"x": [1, 2], "y": [2, 3]}))
    session.insert("edge", np.array([[3, 4], [4, 5]]))
    session.insert("item", pa.table({"id": pa.array([7], pa.uint64()), "name": ["s"],
                                     "price": [0.5]}))
    assert session.query("edge") == {(1, 2), (2, 3), (3, 4), (4, 5)}
    assert session.query("item") == {(7, "s", 0.5)}


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"x": [1.5], "y": [2]}), "column x of `edge` is number; the column holds "
                                           "float64"),
    (pd.DataFrame({"x": [1], "y": [2], "z": [3]}), "remove z"),
    (pd.DataFrame({"x": [1], "z": [2]}), "name every attribute"),
    (pd.DataFrame({"a": [1], "b": [2], "c": [3]}), "give 2 columns"),
    (pd.DataFrame({"x": [1], "y": [None]}), "column y of `edge` holds a missing value"),
    (pd.DataFrame({"x": [1, 2], "y": ["a", 3]}), r"column y of `edge` is number; got 'a' "
                                                 r"\(row 0\)"),
    (pd.DataFrame({"x": [True], "y": [2]}), "holds bool"),
    (pd.DataFrame({"x": np.array([2**63], dtype=np.uint64), "y": [1]}),
     "got 9223372036854775808"),
    (pa.table({"x": [1, None], "y": [2, 3]}), "column x of `edge` holds a missing value"),
    (np.array([[1, 2, 3]]), "`edge` has 2 columns; the array has 3"),
])
def test_a_frame_that_does_not_fit_is_refused_and_changes_nothing(session, frame, message):
    session.insert("edge", (1, 2))
    before = state(session)
    with pytest.raises(datalog.DataError, match=message):
        session.insert("edge", frame)
    assert state(session) == before
    assert session.insert("edge", (2, 3))     # still usable


def test_bad_values_in_typed_columns(session):
    with pytest.raises(datalog.DataError, match=r"column id of `item` is unsigned; got -1"):
        session.insert("item", pd.DataFrame({"id": [-1], "name": ["a"], "price": [1.0]}))
    with pytest.raises(datalog.DataError, match="got nan"):
        session.insert("item", pd.DataFrame({"id": [1], "name": ["a"],
                                             "price": [float("nan")]}))
    with pytest.raises(datalog.DataError, match="column name of `item` is symbol"):
        session.insert("item", pd.DataFrame({"id": [1], "name": [1], "price": [1.0]}))
    with pytest.raises(datalog.DataError, match="must be a tuple; got 'ab'"):
        session.insert("edge", "ab")


def test_relations_come_out_typed_with_their_columns(session):
    session.insert("edge", [(2, 3), (1, 2)])
    session.insert("item", (2**64 - 1, "z", 2.5), (1, "a", 0.0))
    frame = session.frame("path")
    assert list(frame.columns) == ["x", "y"]
    assert frame.values.tolist() == [[1, 2], [1, 3], [2, 3]]      # sorted
    items = session.to_pandas("item")
    assert items.dtypes.astype(str).tolist() == ["uint64", "string", "float64"]
    assert items["id"].tolist() == [1, 2**64 - 1]
    table = session.to_arrow("item")
    assert table.schema.names == ["id", "name", "price"]
    assert [str(t) for t in table.schema.types] == ["uint64", "string", "double"]
    assert table.to_pylist()[1] == {"id": 2**64 - 1, "name": "z", "price": 2.5}
    empty = datalog.Program(PROGRAM).session().frame("item")
    assert len(empty) == 0 and empty.dtypes.astype(str).tolist() == \
        ["uint64", "string", "float64"]
    with pytest.raises(datalog.DataError, match="did you mean `path`"):
        session.frame("pth")


def test_the_dataframe_round_trip(session):
    session.insert("edge", [(1, 2), (2, 3), (3, 1)])
    session.insert("item", [(1, "a\tb", 1.5), (2, "é", -0.0)])
    again = datalog.Program(PROGRAM).session()
    again.insert("edge", session.frame("edge"))
    again.insert("item", session.to_arrow("item"))
    assert state(again) == state(session)
    third = datalog.Program(PROGRAM).session()
    third.insert("item", session.frame("item"))     # uint64, string and float64 columns
    third.insert("edge", pd.DataFrame({"x": [], "y": []}))     # empty: no rows, any dtype
    assert third.query("item") == session.query("item") and not third.query("edge")


def test_deltas_convert_with_a_weight_column(session):
    session.insert("edge", [(1, 2), (2, 3)])
    seen = []
    session.subscribe("path", lambda part: seen.append(part.frame("path")))
    with session.transaction() as tx:
        tx.retract("edge", (2, 3))
        tx.insert("edge", (2, 4))
    frame = tx.delta.frame("path")
    assert list(frame.columns) == ["x", "y", "weight"]
    assert frame.values.tolist() == [[1, 3, -1], [1, 4, 1], [2, 3, -1], [2, 4, 1]]
    assert seen[0].equals(frame)
    table = tx.delta.to_arrow("edge", weight="sign")
    assert table.to_pylist() == [{"x": 2, "y": 3, "sign": -1}, {"x": 2, "y": 4, "sign": 1}]
    assert len(tx.delta.frame("item")) == 0
    assert session.insert("edge", (1, 2)).frame("path").empty     # nothing changed


def test_query_by_attribute_name_needs_no_quoting():
    session = datalog.Program('.decl person(name: symbol, age: number)').session()
    session.insert("person", ('Ann "the" \\ Ó', 30), ("Bob", 40), ("Cy", 30))
    assert session.query("person", name='Ann "the" \\ Ó') == {('Ann "the" \\ Ó', 30)}
    assert session.query("person", age=30) == {('Ann "the" \\ Ó', 30), ("Cy", 30)}
    assert session.query("person", age=np.int64(40), name="Bob") == {("Bob", 40)}
    with pytest.raises(datalog.DataError, match="`person` has no column `agee`") as error:
        session.query("person", agee=3)
    assert "did you mean `age`" in str(error.value)
    with pytest.raises(datalog.DataError, match="column age of `person` is number; got '3'"):
        session.query("person", age="3")


def test_program_relations_give_columns_and_types():
    program = datalog.Program(PROGRAM + ".input edge\n")
    relations = program.relations
    assert list(relations) == ["edge", "path", "item"]
    item = relations["item"]
    assert (item.columns, item.types, item.arity) == (("id", "name", "price"),
                                                       ("unsigned", "symbol", "float"), 3)
    assert (relations["edge"].input, relations["path"].output) == (True, True)
    assert str(item) == "item(id: unsigned, name: symbol, price: float)"
    assert repr(relations["edge"]) == "Relation('edge(x: number, y: number)', input)"
    assert repr(program) == "<datalog.Program: 3 relations, 2 rules>"


def test_reprs(session):
    session.insert("edge", (1, 2))
    assert repr(session) == "<datalog.Session at epoch 2: edge: 1, path: 1, item: 0>"
    with session.transaction() as tx:
        tx.insert("edge", [(2, 3), (3, 4)])
        assert repr(tx) == "<datalog.Transaction, open: 2 changes recorded>"
    assert repr(tx) == "<datalog.Transaction, finished: 2 changes recorded>"
    handle = session.subscribe("path", print)
    assert repr(handle) == "<datalog.Subscription to path (open)>"
    handle.close()
    assert repr(handle) == "<datalog.Subscription to path (closed)>"


def test_the_package_is_typed():
    from pathlib import Path

    assert (Path(datalog.__file__).parent / "py.typed").is_file()


def test_the_readme_example_prints_what_its_comments_say():
    import contextlib
    import io
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text[text.index("\n### Data frames, queries, rules at run time\n"):]
    code = section.split("```python\n", 1)[1].split("```\n", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    expected = [line.split("# ", 1)[1].strip() for line in code.splitlines()
                if line.startswith("print(")]
    assert out.getvalue().splitlines() == expected


def test_many_rows_are_checked_a_column_at_a_time_with_the_same_errors(session):
    rows = [(i, i + 1) for i in range(1000)]
    session.insert("edge", *rows[:500])
    session.insert("edge", rows[500:])
    assert session.query("edge") == set(rows)
    before = state(session)
    for bad, message in [((5, True), r"got True in \(5, True\)"),
                         ((5, 2**63), "got 9223372036854775808"),
                         ((5, "a"), "got 'a'"), ((5,), "`edge` has 2 columns; got 1")]:
        with pytest.raises(datalog.DataError, match=message):
            session.insert("edge", [(i, -i) for i in range(100)] + [bad])
        assert state(session) == before
    items = [(i, f"n{i}", i) for i in range(100)]          # ints in a float column
    session.insert("item", items)
    assert all(type(price) is float for _, _, price in session.query("item"))
