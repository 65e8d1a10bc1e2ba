"""Spark reads and writes fact files by the dialect's rules, exactly as the local
engine does (issue 15, items 1 and 2): lines end at ``\\n`` only, a line that holds
the delimiter is a row, a byte-order mark opening a file is skipped, numbers are
ASCII and NaN is refused; a row the format cannot hold is the same error."""

from __future__ import annotations

import pytest

from datalog.errors import DatalogError
from tests.spark.engines import ENGINES, run

PROGRAM = """
.decl s(a: symbol, b: symbol)
.decl n(x: number, y: float)
.decl one(x: symbol)
.input s
.input n
.input one
.output s
.output n
.output one
"""

FILES = {
    "s.facts": "\ufeffa\x0cb\tc\r\n\t\n\x1c\t\u2028\nd\x85\t\x1e\n",
    "n.facts": "\ufeff+5\t-0.5\n0x1F\tinf\n \x0b7\t-INFINITY\n-9223372036854775808\t1e-300\n"
               "9223372036854775807\t1.5e+300\n",
    "one.facts": " \n\x1c\n\n",
}


def outcome(engine, spark, tmp_path, files, program=PROGRAM):
    facts, out = tmp_path / f"facts-{engine}", tmp_path / f"out-{engine}"
    facts.mkdir()
    for name, text in files.items():
        (facts / name).write_bytes(text.encode("utf-8"))
    (tmp_path / "p.dl").write_text(program)
    try:
        return run(engine, str(tmp_path / "p.dl"), str(facts), str(out), spark)
    except DatalogError as error:
        return str(error).replace(f"facts-{engine}", "facts").replace(f"out-{engine}", "out")


def test_reading_follows_the_dialect_on_both_engines(spark, tmp_path):
    local, on_spark = (outcome(e, spark, tmp_path, FILES) for e in ENGINES)
    assert local == on_spark
    files, _ = local
    assert files["s.csv"] == "\t\n\x1c\t\u2028\na\x0cb\tc\nd\x85\t\x1e\n"
    assert files["n.csv"] == ("-9223372036854775808\t1e-300\n5\t-0.5\n7\t-inf\n31\tinf\n"
                              "9223372036854775807\t1.5e+300\n")
    assert files["one.csv"] == "\x1c\n \n"


def test_headers_skip_the_first_line_only(spark, tmp_path):
    program = ".decl s(a: symbol, b: symbol)\n.input s(headers=true)\n.output s\n"
    files = {"s.facts": "\ufeffa\tb\n\t\nc\td\n"}
    local, on_spark = (outcome(e, spark, tmp_path, files, program) for e in ENGINES)
    assert local == on_spark == ({"s.csv": "\t\nc\td\n"}, "")


@pytest.mark.parametrize("text", ["1_000\t1.0\n", "\u0661\t1.0\n", "1\tnan\n", "1\t1_0.5\n"])
def test_numbers_soufflé_would_not_read_fail_alike(spark, tmp_path, text):
    files = {"s.facts": "", "n.facts": text, "one.facts": ""}
    local, on_spark = (outcome(e, spark, tmp_path, files) for e in ENGINES)
    assert isinstance(local, str) and "n.facts:1: error: column" in local
    assert local == on_spark


@pytest.mark.parametrize(("rule", "what"), [
    ('s(cat("a", "\\t"), "b").', "a tab (the delimiter)"),
    ('s("a", cat("b", "\\n")).', "a line break"),
    ('one("").', "an empty symbol alone"),
])
def test_a_row_the_format_cannot_hold_fails_alike(spark, tmp_path, rule, what):
    files = {"s.facts": "", "n.facts": "", "one.facts": ""}
    results = [outcome(e, spark, tmp_path, files, PROGRAM + rule) for e in ENGINES]
    assert all(isinstance(r, str) and what in r and "cannot write" in r for r in results), \
        results
    assert "to " + str(tmp_path / "out") in results[0]


NAN_PROGRAM = """
.decl f(x: float)
.input f
.decl g(x: float)
.output g
"""


@pytest.mark.parametrize("rule", ["g(x - y) :- f(x), f(y).", "g(x * 0.0) :- f(x).",
                                  "g(s) :- s = sum x : f(x).", "g(s) :- s = mean x : f(x)."])
def test_nan_is_an_error_at_its_rule_on_both_engines(spark, tmp_path, rule):
    files = {"f.facts": "inf\n-inf\n2.5\n"}
    local, on_spark = (outcome(e, spark, tmp_path, files, NAN_PROGRAM + rule + "\n")
                       for e in ENGINES)
    assert isinstance(local, str) and "gives NaN (not a number)" in local
    assert local.split("\n")[0] == on_spark.split("\n")[0]


@pytest.mark.parametrize("call", ["range(0, 9223372036854775807)", "range(1e20, 1e21, 1.0)"])
def test_an_enormous_range_fails_alike(spark, tmp_path, call):
    program = (".decl n(x: number)\n.input n\n.decl r(x: number)\n.output r\n"
               f"r(x) :- n(_), x = {call}.\n")
    if "." in call:
        program = program.replace("r(x: number)", "r(x: float)")
    local, on_spark = (outcome(e, spark, tmp_path, {"n.facts": "1\n"}, program)
                       for e in ENGINES)
    assert isinstance(local, str) and "range(" in local
    assert local.split("\n")[0] == on_spark.split("\n")[0]
