"""Queries: one parser (the program grammar's) and one pattern type serve
``Session.query`` and the REPL's ``?-``; constants are written and evaluated as in
facts."""

import io

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import datalog
from datalog.errors import CheckError, DatalogError, ParseError
from datalog.repl import Repl
from datalog.syntax.render import format_fact, format_value, plural, sort_key

PROGRAM = """
.decl r(s: symbol, t: symbol, n: number, u: unsigned, f: float)
.decl path(x: number, y: number)
"""

#: Symbols that a second tokenizer would read differently: unknown escapes kept
#: as written, quotes, tabs, line breaks, backslashes, non-ASCII.
SYMBOLS = ["a\\.b", "a.b", "tab\there", 'q"q', "back\\slash", "\\", "x\ny", "ünï ☃",
           "\\d+\\s", "", "it's"]

ROWS = [(s, t, n, u, f)
        for i, (s, t) in enumerate(zip(SYMBOLS, SYMBOLS[1:] + SYMBOLS[:1]))
        for n, u, f in [(i - 3, i, i / 2), (16, 2**63 + i, -1.5), (i, i, float(i))]]
ROWS.append(("same", "same", 7, 7, 7.0))

def test_a_kept_escape_queries_the_fact_that_states_it():
    program = datalog.Program(PROGRAM + 'r("a\\.b", "\\d+", 1, 2u, 0.5).')
    session = program.session()
    row = ("a\\.b", "\\d+", 1, 2, 0.5)
    assert session.query('r("a\\.b", _, _, _, _)') == {row}
    assert session.query('r(_, "\\d+", _, _, _)') == {row}
    assert session.query('r("a\\\\.b", "\\\\d+", 1, 2u, 0.5)') == {row}  # `\\` is `\`
    assert session.query('r("a.b", _, _, _, _)') == frozenset()


def test_a_kept_escape_queries_the_fact_at_the_repl():
    out = io.StringIO()
    repl = Repl(out=out, err=out)
    repl.feed_lines([".decl r(s: symbol)", 'r("a\\.b").', "?- r(\"a\\.b\").",
                     '?r("a.b")'])
    assert not repl.failed, out.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[-3:] == ['r("a\\\\.b")', "1 row", "0 rows"]


@pytest.mark.parametrize("query, expected", [
    ("path(12, _)", {(12, -3)}),
    ("path(_, -3)", {(12, -3)}),
    ("path(0x1f, _)", {(31, 5)}),
    ("path(0b11111, y)", {(31, 5)}),
    ("path(1 + 2 * 15, 10 / 2)", {(31, 5)}),
    ("path(-(3), _)", {(-3, 0)}),
    ("r(_, _, 7, 7u, 7)", {("same", "same", 7, 7, 7.0)}),
    ("r(_, _, _, 0x7u, 7.0)", {("same", "same", 7, 7, 7.0)}),
    ("r(_, _, _, _, 14 / 2)", {("same", "same", 7, 7, 7.0)}),
    ("r(_, _, _, _, 0.7e1)", {("same", "same", 7, 7, 7.0)}),
    ('r(cat("sa", "me"), "s" , _, _, _)', frozenset()),
    ('r(cat("sa", "me"), "same", _, _, _)', {("same", "same", 7, 7, 7.0)}),
    ('r("tab\\there", _, _, 0, _)', {("tab\there", 'q"q', 0, 0, 0.0)}),
    ('r("tab\there", _, _, _, _)', {("tab\there", 'q"q', 0, 0, 0.0)}),   # a tab as is
    ('r("\\u2603", _, _, _, _)', {("\\u2603", "", 2, 2, 2.0)}),   # no `\u` escape: as written
    ('r("ünï ☃", _, _, _, _)', {("ünï ☃", "\\d+\\s", 16, 2**63 + 5, -1.5)}),
    ("r(\"it\\'s\", _, _, _, _)", {("it's", "", 1, 1, 1.0)}),    # `\'` is `'`
    ('r("q\\"q", _, _, _, -1.5)', {('q"q', "back\\slash", 16, 2**63 + 3, -1.5)}),
    ('r(_, _, 16, 9223372036854775813u, _)', {("ünï ☃", "\\d+\\s", 16, 2**63 + 5, -1.5)}),
])
def test_every_kind_of_constant(query, expected):
    session = datalog.Program(PROGRAM).session()
    session.insert("path", (12, -3), (31, 5), (-3, 0))
    session.insert("r", ("same", "same", 7, 7, 7.0), ("tab\there", 'q"q', 0, 0, 0.0),
                   ('q"q', "back\\slash", 16, 2**63 + 3, -1.5),
                   ("ünï ☃", "\\d+\\s", 16, 2**63 + 5, -1.5), ("it's", "", 1, 1, 1.0),
                   ("\\u2603", "", 2, 2, 2.0))
    assert session.query(query) == expected


def test_a_variable_in_several_columns_asks_for_equal_columns():
    session = datalog.Program(PROGRAM).session()
    session.insert("r", ("a", "a", 1, 1, 1.0), ("a", "b", 1, 1, 1.0), ("a", "a", 1, 2, 1.0),
                   ("b", "b", 2, 2, 0.0))
    assert session.query("r(x, x, _, _, _)") == {("a", "a", 1, 1, 1.0), ("a", "a", 1, 2, 1.0),
                                                 ("b", "b", 2, 2, 0.0)}
    assert session.query("r(x, x, n, n, _)") == {("a", "a", 1, 1, 1.0), ("b", "b", 2, 2, 0.0)}
    assert session.query('r("a", x, n, n, _)') == {("a", "a", 1, 1, 1.0), ("a", "b", 1, 1, 1.0)}
    assert session.query("r(_, _, n, n, 1.0)") == {("a", "a", 1, 1, 1.0), ("a", "b", 1, 1, 1.0)}


@pytest.mark.parametrize("query, error, expected", [
    ("pth(1, x)", CheckError, ["<query>:1:1: error: undefined relation `pth`",
                               "    pth(1, x)", "    ^~~~~~~~~",
                               "hint: did you mean `path`?"]),
    ("path", None, None),
    ("  rr", CheckError, ["<query>:1:3: error: undefined relation `rr`", "    " + "  rr",
                          "      ^~", "hint: did you mean `r`?"]),
    ("path(1)", CheckError, ["<query>:1:1: error: relation `path` has 2 attributes, got 1 "
                             "argument", "    path(1)", "    ^~~~~~~",
                             "hint: declared at <string>:3:1"]),
    ('path(1, "a")', CheckError, ["<query>:1:9: error: this constant has type `symbol` but "
                                  "column `y` of `path` has type `number`",
                                  '    path(1, "a")', "            ^~~"]),
    ("r(_, _, 1.5, _, _)", CheckError, ["<query>:1:9: error: this constant has type `float` "
                                        "but column `n` of `r` has type `number`",
                                        "    r(_, _, 1.5, _, _)", "            ^~~"]),
    ("path(1,", ParseError, ["<query>:1:8: error: unexpected `.`; expected a term",
                             "    path(1,", "           ^"]),
    ("path(1, x), path(x, 2)", ParseError, ["<query>:1:1: error: a query is a single atom",
                                           "    path(1, x), path(x, 2)",
                                           "    ^~~~~~~~~~~~~~~~~~~~~~",
                                           "hint: such as `path(1, x)`"]),
    ("path(x, y) :- path(y, x)", ParseError, ["<query>:1:1: error: a rule cannot be queried",
                                             "    path(x, y) :- path(y, x)",
                                             "    ^~~~~~~~~~~~~~~~~~~~~~~~",
                                             "hint: such as `path(1, x)`"]),
    (".decl q(x: number)", ParseError, ["<query>:1:1: error: a declaration or directive "
                                        "cannot be queried", "    .decl q(x: number)",
                                        "    ^~~~~~~~~~~~~~~~~~", "hint: such as `path(1, x)`"]),
    ("path(x + 1, _)", CheckError, ["<query>:1:6: error: the variable `x` is inside an "
                                    "expression; a query's argument is a constant, a "
                                    "variable or `_`", "    path(x + 1, _)", "         ^"]),
    ("path(1 / 0, _)", CheckError, ["<query>:1:6: error: division by zero",
                                    "    path(1 / 0, _)", "         ^~~~~"]),
    ("", ParseError, ["<query>:1:1: error: a query names a relation",
                      "hint: such as `path(1, x)`"]),
    ("path(1, x) /", ParseError, ["<query>:1:12: error: unexpected `/`; expected `,`, `.` "
                                  "or `:-`", "    path(1, x) /", "               ^"]),
    ("path 1 2", ParseError, None),
    ('path("a', ParseError, None),
    ("path(1, 2) // a comment", None, None),
])
def test_bad_queries_are_located_errors(query, error, expected):
    session = datalog.Program(PROGRAM).session()
    if error is None:
        assert session.query(query) == frozenset()
        return
    with pytest.raises(error) as caught:
        session.query(query)
    assert isinstance(caught.value, DatalogError)
    assert "Traceback" not in str(caught.value)
    if expected is not None:
        assert str(caught.value).splitlines() == expected


# ---------------------------------------------------------------- API and REPL agree

_STATE: dict = {}


def _sessions() -> tuple[datalog.Session, Repl, io.StringIO]:
    """One API session and one REPL holding :data:`ROWS` (made once)."""
    if not _STATE:
        session = datalog.Program(PROGRAM).session()
        session.insert("r", *ROWS)
        out = io.StringIO()
        repl = Repl(out=out, err=out)
        repl.feed_lines([line for line in PROGRAM.splitlines() if line]
                        + [":begin"] + [_statement(row) for row in ROWS]
                        + [":commit"])
        assert not repl.failed, out.getvalue()
        _STATE.update(session=session, repl=repl, out=out)
    return _STATE["session"], _STATE["repl"], _STATE["out"]


def _integer(value: int, unsigned: bool) -> st.SearchStrategy[str]:
    """Ways of writing ``value`` in a number (or, with ``u``, unsigned) column."""
    u = "u" if unsigned else ""
    forms = [st.just(f"{value}{u}")]
    if value >= 0:
        forms += [st.just(hex(value) + u), st.just(bin(value) + u)]
    low = 0 if unsigned else -100
    forms.append(st.integers(low, 100).filter(lambda k: k <= value or not unsigned)
                 .map(lambda k: f"{value - k}{u} + {k}{u}"))
    return st.one_of(forms)


def _statement(row: tuple) -> str:
    """``row`` of ``r`` asserted at the REPL (its unsigned column written with ``u``)."""
    return "r(" + ", ".join(format_value(v) + ("u" if column == 3 else "")
                            for column, v in enumerate(row)) + ")."


_SYMBOL = st.one_of(st.sampled_from(SYMBOLS),
                    st.text(st.sampled_from('ab.\\"\t\n\'ü☃ '), max_size=6))
_COLUMNS = ("symbol", "symbol", "number", "unsigned", "float")
_VARIABLES = {"symbol": ("s", "t"), "number": ("i", "j"), "unsigned": ("i", "j"),
              "float": ("f",)}


@st.composite
def _argument(draw, column: int, kind: str):
    """(text, value or None, variable name or None) for one column."""
    choice = draw(st.sampled_from(["wildcard", "variable", "known", "random"]))
    if choice == "wildcard":
        return "_", None, None
    if choice == "variable":
        name = draw(st.sampled_from(_VARIABLES[kind]))
        return name, None, name
    if choice == "known":
        value = draw(st.sampled_from(ROWS))[column]
    elif kind == "symbol":
        value = draw(_SYMBOL)
    elif kind == "float":
        value = draw(st.sampled_from([0.0, 0.5, 1.5, -1.5, 7.0, 2.25]))
    else:
        value = draw(st.integers(0, 20))
    if kind == "symbol":
        text = draw(st.sampled_from([format_value(value)]
                                    + ([_as_written(value)] if _as_written(value) else [])))
    elif kind == "float":
        text = draw(st.sampled_from([format_value(value), repr(value)]
                                    + ([str(int(value))] if value == int(value) else [])))
    else:
        text = draw(_integer(value, kind == "unsigned"))
    return text, value, None


def _as_written(value: str) -> str | None:
    """``value`` as a literal without escapes, where the dialect allows it: every
    backslash is kept as written when what follows is not an escape (``"a\\.b"``)."""
    if '"' in value or "\n" in value or value.endswith("\\"):
        return None
    if any(value[i + 1] in "ntr0\"\\'" for i in range(len(value) - 1) if value[i] == "\\"):
        return None
    return f'"{value}"'


@st.composite
def _patterns(draw):
    return [draw(_argument(column, kind)) for column, kind in enumerate(_COLUMNS)]


def _expected(arguments) -> list[tuple]:
    groups: dict[str, list[int]] = {}
    for column, (_, _, name) in enumerate(arguments):
        if name is not None:
            groups.setdefault(name, []).append(column)
    return [row for row in ROWS
            if all(value is None or row[c] == value for c, (_, value, _) in enumerate(arguments))
            and all(row[c] == row[cols[0]] for cols in groups.values() for c in cols)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patterns())
@example([('"a\\.b"', "a\\.b", None), ("_", None, None), ("_", None, None),
          ("_", None, None), ("_", None, None)])
@example([("s", None, "s"), ("s", None, "s"), ("i", None, "i"), ("i", None, "i"),
          ("7", 7.0, None)])
def test_api_and_repl_agree_on_patterns(arguments):
    session, repl, out = _sessions()
    query = "r(" + ", ".join(text for text, _, _ in arguments) + ")"
    expected = _expected(arguments)
    assert sorted(session.query(query), key=sort_key) == sorted(expected, key=sort_key)
    out.seek(0)
    out.truncate()
    repl.feed_lines([f"?- {query}."])
    assert not repl.failed, out.getvalue()
    assert out.getvalue().splitlines() == (
        [format_fact("r", row) for row in sorted(expected, key=sort_key)]
        + [plural(len(expected), "row")])
