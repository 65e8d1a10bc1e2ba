"""Values survive every round trip through a fact file, or the writer says why
not (issue 15, item 1): lines end at ``\\n`` only, numbers are read as Soufflé
reads them, a byte-order mark is skipped, a row the format cannot hold is a
located error, floats and 64-bit extremes come back bit for bit."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import datalog
from datalog.dialect.io import format_rows, parse_value, read_facts
from datalog.errors import DataError


def relation(*types: str) -> SimpleNamespace:
    return SimpleNamespace(name="r", attributes=tuple(f"c{i}" for i in range(len(types))),
                           types=types, arity=len(types))


def read(tmp_path: Path, content: str, *types: str) -> set:
    path = tmp_path / "r.facts"
    path.write_bytes(content.encode("utf-8"))
    return read_facts(str(path), relation(*types))


@pytest.mark.parametrize("character", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                       "\u2028", "\u2029"])
def test_only_newline_ends_a_line(tmp_path, character):
    rows = read(tmp_path, f"a{character}b\tc\r\nd\t{character}\n", "symbol", "symbol")
    assert rows == {(f"a{character}b", "c"), ("d", character)}


def test_a_line_of_unicode_blanks_is_data_not_a_blank_line(tmp_path):
    assert read(tmp_path, "\x1c\n\u2028\n \n", "symbol") == {("\x1c",), ("\u2028",), (" ",)}


@pytest.mark.parametrize("text", ["1_000", "\u0661\u0662", "１２", "0x_1f", "0b_1", "-0x10",
                                  "1.5", "", "\u00a012"])
def test_numbers_soufflé_would_not_read_are_refused(text):
    with pytest.raises(ValueError):
        parse_value(text, "number")


@pytest.mark.parametrize("text", ["1_0.5", "\u0661.5", "nan", "NaN", "-nan", "0x1p3", "1e",
                                  "\u20281.5"])
def test_floats_soufflé_would_not_read_are_refused(text):
    with pytest.raises(ValueError):
        parse_value(text, "float")


@pytest.mark.parametrize(("text", "value"), [("+5", 5), (" 7\t", 7), ("0x1F", 31),
                                             ("0b101", 5), ("-9223372036854775808", -2**63)])
def test_numbers_soufflé_reads(text, value):
    assert parse_value(text, "number") == value


def test_nan_in_a_fact_file_is_an_error_at_its_line(tmp_path):
    with pytest.raises(DataError, match=r"r\.facts:2: error: column 1 \(c0\) of `r` is a "
                                        r"float; found `nan`"):
        read(tmp_path, "1.5\nnan\n", "float")


def test_a_byte_order_mark_at_the_start_is_skipped(tmp_path):
    assert read(tmp_path, "\ufeff1\tx\n2\t\ufeffy\n", "number", "symbol") == {
        (1, "x"), (2, "\ufeffy")}


@pytest.mark.parametrize(("row", "what"), [
    (("a\tb", "c"), "a tab (the delimiter)"),
    (("a\nb", "c"), "a line break"),
    (("a", "b\r"), "a carriage return"),
    (("\ufeffa", "b"), "a byte-order mark"),
])
def test_the_writer_refuses_a_row_that_would_read_back_differently(row, what):
    with pytest.raises(DataError) as caught:
        format_rows({row}, relation("symbol", "symbol"), target="out/r.csv")
    message = str(caught.value)
    assert "cannot write `r` to out/r.csv" in message and what in message


def test_the_empty_symbol_alone_on_its_line_is_refused():
    with pytest.raises(DataError, match="empty symbol"):
        format_rows({("",), ("a",)}, relation("symbol"), target="r.facts")


def directive(**params: str) -> SimpleNamespace:
    return SimpleNamespace(kind="output", relation="r", param=params.get)


def test_output_text_golden():
    """Sorted rows, numbers in decimal, floats in their shortest round-trip form,
    symbols as they are (spaces and all), one- and two-character delimiters."""
    rows = {(2, -1.5, "b c"), (-7, 1e100, " a"), (2, -0.0, "\\t"), (10, math.inf, "é")}
    types = relation("number", "float", "symbol")
    assert format_rows(rows, types, target="r.csv") == (
        "-7\t1e+100\t a\n2\t-1.5\tb c\n2\t-0.0\t\\t\n10\tinf\té\n")
    assert format_rows(rows, types, directive(delimiter="::"), target="r.csv") == (
        "-7::1e+100:: a\n2::-1.5::b c\n2::-0.0::\\t\n10::inf::é\n")
    assert format_rows({(3,), (-12,), (2**64 - 1,)}, relation("unsigned"),
                       target="r.csv") == "-12\n3\n18446744073709551615\n"


@pytest.mark.parametrize(("bad", "what"), [
    (("m\tn", "x"), "a tab (the delimiter)"),
    (("m", "n\r"), "a carriage return"),
    (("m\r\nn", "x"), "a line break"),
])
def test_the_one_row_that_would_read_back_differently_among_many_is_named(bad, what):
    """Thousands of rows that read back, and one that would not, in the middle."""
    rows = {(f"s{i}", f"t{i % 7}") for i in range(5_000)} | {bad}
    with pytest.raises(DataError) as caught:
        format_rows(rows, relation("symbol", "symbol"), target="r.csv")
    assert f"the row {ascii(bad)}" in str(caught.value) and what in str(caught.value)


def test_a_number_holding_the_delimiter_is_refused():
    with pytest.raises(DataError, match="the delimiter '-'"):
        format_rows({(1, 2), (3, -4)}, relation("number", "number"), directive(delimiter="-"),
                    target="r.csv")
    assert format_rows({(1, 2), (3, 4)}, relation("number", "number"),
                       directive(delimiter="-"), target="r.csv") == "1-2\n3-4\n"


def test_a_byte_order_mark_is_refused_at_the_start_of_the_file_only():
    rows = {("\ufeffz",), ("a",)}      # sorted after "a": not on the first line
    assert format_rows(rows, relation("symbol"), target="r.csv") == "a\n\ufeffz\n"
    with pytest.raises(DataError, match="byte-order mark"):
        format_rows({("\ufeffa",), ("\ufeffb",)}, relation("symbol"), target="r.csv")
    assert format_rows({("\ufeffa",)}, relation("symbol"), directive(headers="true"),
                       target="r.csv") == "c0\n\ufeffa\n"


EXTREMES = {
    "n": [(-2**63,), (2**63 - 1,), (0,)],
    "u": [(0,), (2**64 - 1,)],
    "f": [(math.inf,), (-math.inf,), (-0.0,), (5e-324,), (1.7976931348623157e308,),
          (0.1,)],
    "s": [(" a ",), ("\x0c\x1c\x1d\x1e\x85\u2028\u2029",), ("é\U0001f600",), ("\ufeff",),
          ("a\rb",), ("\\t",)],
}
PROGRAM = """
.decl n(x: number)
.decl u(x: unsigned)
.decl f(x: float)
.decl s(x: symbol)
.input n
.input u
.input f
.input s
.output n
.output u
.output f
.output s
"""


def same(a: set, b: set) -> bool:
    """Equal, -0.0 told from 0.0."""
    return sorted(map(repr, a)) == sorted(map(repr, b))


def test_extremes_round_trip_through_run_and_a_session(tmp_path):
    facts, out = tmp_path / "facts", tmp_path / "out"
    facts.mkdir()
    program = datalog.Program(PROGRAM)
    session = program.session()
    for name, rows in EXTREMES.items():
        session.insert(name, *rows)
    for name in EXTREMES:  # what the session holds, written by :save's writer
        relation_ = program.plan.relations[name]
        text = format_rows(session.query(name), relation_, target=f"{name}.facts")
        (facts / f"{name}.facts").write_text(text, encoding="utf-8", newline="")
    datalog.run(program, str(facts), str(out))
    for name, rows in EXTREMES.items():
        back = read_facts(str(out / f"{name}.csv"), program.plan.relations[name])
        assert same(back, set(rows)), name
    reopened = program.session(str(facts))
    for name, rows in EXTREMES.items():
        assert same(reopened.query(name), set(rows)), name


def test_run_refuses_to_write_a_symbol_with_a_tab(tmp_path):
    (tmp_path / "p.dl").write_text('.decl r(x: symbol, y: number)\n.output r\n'
                                   'r(cat("a", to_string(1), "\\t"), 2).\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.csv").write_text("old\t1\n")
    result = subprocess.run(["datalog", "run", "p.dl", "-D", "out"], cwd=tmp_path,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"cannot write `r` to {os.path.join('out', 'r.csv')}" in result.stderr
    assert "a tab (the delimiter)" in result.stderr
    assert (tmp_path / "out" / "r.csv").read_text() == "old\t1\n"


# ---------------------------------------------------------------- NaN (item 2)

NAN_RULES = {
    "g(x - y) :- f(x), f(y).": "g((x - y)) :- f(x), f(y).",
    "g(x * 0.0) :- f(x).": "g((x * 0.0)) :- f(x).",
    "g(x / y) :- f(x), f(y).": "g((x / y)) :- f(x), f(y).",
    "g(s) :- s = sum x : f(x).": "g(s) :- s = sum x : { f(x) }.",
    "g(s) :- s = mean x : f(x).": "g(s) :- s = mean x : { f(x) }.",
}


@pytest.mark.parametrize("rule", list(NAN_RULES))
def test_an_operation_that_gives_nan_is_an_error_at_its_rule(rule):
    program = datalog.Program(f".decl f(x: float)\n.decl g(x: float)\n{rule}\n")
    session = program.session()
    session.insert("f", (2.0,))
    before = {name: session.query(name) for name in ("f", "g")}
    with pytest.raises(datalog.DatalogError) as caught:
        session.insert("f", (math.inf,), (-math.inf,))
    assert str(caught.value).startswith(
        f"<string>:3:1: error: a float operation gives NaN (not a number), never a value, "
        f"in `{NAN_RULES[rule]}`")
    assert {name: session.query(name) for name in ("f", "g")} == before
    assert not session.verify()


def test_nan_is_refused_by_the_api_and_to_float():
    program = datalog.Program(".decl f(x: float)\n")
    with pytest.raises(datalog.DatalogError, match="got nan"):
        program.session().insert("f", (math.nan,))
    with pytest.raises(datalog.DatalogError, match="is not a number"):
        datalog.Program('.decl g(x: float)\ng(to_float("nan")).\n').session()


# ------------------------------------------------- out-of-range constants (item 7)

@pytest.mark.parametrize("query", ["path(99999999999999999999, x)", "path(x, -9223372036854775809)",
                                   "u(-1)", "u(18446744073709551616u)"])
def test_a_query_constant_out_of_its_columns_range_is_an_error(query):
    session = datalog.Program(".decl path(x: number, y: number)\n.decl u(x: unsigned)\n"
                              "u(5).\n").session()
    with pytest.raises(datalog.DatalogError, match="does not fit in a 64-bit"):
        session.query(query)


def test_a_negative_fact_in_an_unsigned_column_is_an_error():
    with pytest.raises(datalog.DatalogError, match=r"<string>:2:3: error: `-1` does not fit"):
        datalog.Program(".decl u(x: unsigned)\nu(-1).\n").session()
