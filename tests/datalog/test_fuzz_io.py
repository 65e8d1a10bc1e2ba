"""No input, however malformed, makes the I/O edges fail with anything but a
:class:`DatalogError`: random fact files through the reader (and rows through the
writer and back), random parameters of I/O directives through check and run, and
random REPL command lines, in this process and through the real ``datalog repl``.

The example counts are small for CI (about a minute in all); a longer campaign::

    DATALOG_FUZZ=long python -m pytest -q tests/datalog/test_fuzz_io.py tests/datalog/test_fuzz.py

(``DATALOG_FUZZ_EXAMPLES=N`` sets the count of every fuzz test instead.)
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import datalog
from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.dialect.io import IO_PARAMETERS, format_rows, parse_value, read_facts
from datalog.errors import DataError, DatalogError
from datalog.repl import Repl
from datalog.repl.commands import COMMANDS

REPO = Path(__file__).parents[2]
LONG = os.environ.get("DATALOG_FUZZ") == "long"


def fuzz(ci: int, long: int) -> settings:
    """``ci`` examples, ``long`` under ``DATALOG_FUZZ=long``."""
    count = os.environ.get("DATALOG_FUZZ_EXAMPLES")
    return settings(max_examples=int(count) if count else long if LONG else ci,
                    deadline=None, suppress_health_check=list(HealthCheck))


TYPES = ("number", "unsigned", "float", "symbol")


def relation(types: tuple[str, ...]) -> SimpleNamespace:
    return SimpleNamespace(name="r", attributes=tuple(f"c{i}" for i in range(len(types))),
                           types=types, arity=len(types))


def directive(params: dict[str, str]) -> SimpleNamespace:
    return SimpleNamespace(kind="input", relation="r", param=params.get)


signatures = st.lists(st.sampled_from(TYPES), max_size=3).map(tuple)
# text that looks like fact files: their separators, digits and signs, and anything
fact_text = st.lists(st.one_of(st.sampled_from(["\t", "\n", "\r\n", "1", "-", "0x", "0b",
                                                "1.5", "inf", "nan", "e9", " ", ",", "u",
                                                "9" * 30, "9" * 5000, "\x00", "\ud800"]),
                               st.text(max_size=8)), max_size=30).map("".join)
delimiters = st.sampled_from(["\t", ",", "|", "\x1f", "::", "\\t", "\\x1f", "\\x", "\\",
                              "\\u00", "\\n", "\\ud800", "é\\t"])
parameters = st.dictionaries(st.sampled_from(["delimiter", "headers"]),
                             st.one_of(delimiters, st.sampled_from(["true", "false", "x"])),
                             max_size=2)


def read(path: str, types: tuple[str, ...], params: dict[str, str]):
    """The rows read, or the DataError; any other exception fails the test."""
    try:
        return read_facts(path, relation(types), directive(params))
    except DataError as error:
        assert str(error)
        return error


@fuzz(300, 20_000)
@given(signatures, st.one_of(fact_text, st.binary(max_size=60)), parameters)
@example(("number",), "9" * 5000 + "\n", {})
@example(("number",), "1\n", {"delimiter": "\\x"})
@example(("symbol",), b"a\xffb\n", {})
def test_any_fact_file_is_rows_or_a_data_error(types, content, params):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "r.facts")
        with open(path, "wb") as handle:
            handle.write(content if isinstance(content, bytes)
                         else content.encode("utf-8", "surrogatepass"))
        rows = read(path, types, params)
    if isinstance(rows, set):
        assert all(len(row) == len(types) for row in rows)


# symbols with any character but a lone surrogate: form feeds, U+2028, group
# separators are data (lines end at \n only); tabs, line breaks, the delimiter,
# a leading byte-order mark and the empty symbol alone are what the writer refuses
symbols = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)),
                            st.sampled_from("\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
                                            "\ufeff,|:\x1f ")), max_size=6)


def values(type_: str):
    if type_ == "number":
        return st.integers(NUMBER_MIN, NUMBER_MAX)
    if type_ == "unsigned":
        return st.integers(0, UNSIGNED_MAX)
    if type_ == "float":
        return st.floats(allow_nan=False)
    return symbols


@st.composite
def tables(draw):
    types = draw(signatures)
    sep = draw(st.sampled_from(["\t", ",", "|", "\x1f", "::", " ", "  "]))
    rows = draw(st.sets(st.tuples(*(values(t) for t in types)), max_size=8))
    headers = draw(st.booleans())
    return types, rows, {"delimiter": sep, "headers": "true" if headers else "false"}


def holdable(rows, types, sep: str, headers: bool) -> bool:
    """Whether the format can hold ``rows``: no symbol with a line break or (in
    its line) the delimiter out of place, no line ending in ``\r``, no
    byte-order mark opening the file, no empty symbol alone on its line."""
    lines = []
    for row in sorted(rows):
        fields = [repr(v) if isinstance(v, float) else str(v) for v in row]
        line = sep.join(fields)
        if "\n" in line or line.endswith("\r") or (types and line.split(sep) != fields):
            return False
        if types == ("symbol",) and line == "":
            return False
        lines.append(line)
    return headers or not types or not lines or not lines[0].startswith("\ufeff")


@fuzz(200, 20_000)
@given(tables())
@example((("symbol", "number"), {("a b", 1), ("", -(2 ** 63))}, {"delimiter": "\t"}))
@example((("symbol",), {("\x0c\u2028\x1c",), ("\x85",)}, {"delimiter": "\t"}))
@example((("symbol", "symbol"), {("a ", "b")}, {"delimiter": "  "}))
@example((("symbol",), {("\ufeffa",)}, {"delimiter": "\t", "headers": "false"}))
def test_rows_written_read_back_the_same_or_the_writer_refuses(table):
    types, rows, params = table
    try:
        text = format_rows(rows, relation(types), directive(params), target="r.facts")
    except DataError as error:
        assert "cannot write `r` to r.facts" in str(error)
        assert not holdable(rows, types, params["delimiter"], params.get("headers") == "true")
        return
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "r.facts")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        back = read(path, types, params)
        assert sorted(map(repr, back)) == sorted(map(repr, rows))  # -0.0 is not 0.0
    assert text == written(rows, types, params)


def written(rows, types, params) -> str:
    """The text owed for rows the format holds, line by line: the header, then
    each row's values (floats in their shortest form) joined by the delimiter."""
    sep = params["delimiter"]
    lines = [sep.join(repr(v) if isinstance(v, float) else str(v) for v in row)
             if types else "()" for row in sorted(rows)]
    if params.get("headers") == "true":
        lines.insert(0, sep.join(f"c{i}" for i in range(len(types))))
    return "".join(line + "\n" for line in lines)


# numbers as a fact file may write them: any base, sign and ASCII blanks read; any
# other character (Unicode digits and blanks, `_`) refused
@fuzz(200, 5_000)
@given(st.integers(NUMBER_MIN, NUMBER_MAX), st.sampled_from(["{}", "{:#x}", "{:#b}", "+{}"]),
       st.text(" \t\x0b\x0c\r", max_size=2), st.text(max_size=2))
def test_integer_text_reads_as_soufflé_reads_it(value, form, blank, noise):
    text = form.format(value) if value >= 0 or form in ("{}",) else str(value)
    assert parse_value(blank + text + blank, "number") == value
    if noise and not noise.strip(" \t\n\x0b\x0c\r").isascii() or "_" in noise:
        try:
            parse_value(text + noise, "number")
        except ValueError:
            return
        raise AssertionError(f"{text + noise!r} was read")


# ------------------------------------------------------------ I/O directive parameters

# parameter values: escapes, NUL bytes, quotes, surrogates, and names that stay
# inside the test's folder (no `/`)
value_pieces = st.sampled_from(["\\\\", "\\\\x", "\\\\x1f", "\\\\u2028", "\\\\ud800", "\\0",
                                "\\t", "\\n", "\\\"", "\\", ".", "..", "é", " ", "true",
                                "stdout", "file", "stdin", "csv", ",", "|", "1"])
param_values = st.lists(st.one_of(value_pieces,
                                  st.text(st.characters(blacklist_characters='/"\\\n'),
                                          max_size=4)), max_size=4).map("".join)
# values the engine accepts, so that runs get as far as reading and writing files
sound_values = {"IO": st.sampled_from(["file", "stdout"]),
                "filename": st.sampled_from(["x.facts", "e.facts", "o.csv", "é.csv"]),
                "delimiter": st.sampled_from(["\\t", ",", "|", "\\x1f", "::", "é"]),
                "headers": st.sampled_from(["true", "false"])}
param_maps = st.dictionaries(
    st.sampled_from(IO_PARAMETERS + ("rfc4180", "compress")), param_values, max_size=2) \
    | st.fixed_dictionaries({}, optional=sound_values)


def directive_text(kind: str, params: dict[str, str]) -> str:
    inside = ", ".join(f'{key}="{value}"' for key, value in params.items()
                       if not (key == "IO" and value.lower() == "stdin"))
    return f".{kind} e({inside})" if inside else f".{kind} e"


@fuzz(40, 3_000)
@given(param_maps, param_maps)
@example({"delimiter": "\\\\x"}, {"filename": "a\\0b"})
@example({}, {"delimiter": "\\\\ud800", "IO": "stdout"})
def test_any_directive_parameters_check_and_run_or_fail_cleanly(inputs, outputs):
    program = (".decl e(x: number, y: symbol)\n" + directive_text("input", inputs) + "\n"
               + directive_text("output", outputs) + '\ne(1, "a b").\n')
    with tempfile.TemporaryDirectory() as directory:
        for name in ("e.facts", "x.facts"):
            Path(directory, name).write_text("2\tb\n")
        path = Path(directory, "p.dl")
        path.write_text(program, encoding="utf-8", errors="surrogatepass")
        out = Path(directory, "out")
        try:
            datalog.run(str(path), directory, str(out))
        except DatalogError as error:
            assert str(error)
            written = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
            assert written == [], "a failed run wrote outputs"


# ------------------------------------------------------------ REPL command lines

PROGRAM = """\
.decl e(x: number, y: symbol)
.decl p(x: number)
.output p
p(x) :- e(x, _).
"""
words = st.sampled_from(["e", "p", "q", "x", "1", "-1", "9" * 5000, '"a"', '"\\ud800"',
                         "saved", "e.facts", "p.dl", "nope.dl", "on", "off", "", ".", "..",
                         "\\", "\x00", "é", '"', "(", ")"])
arguments = st.lists(st.one_of(words, st.text(st.characters(blacklist_characters="/\n"),
                                              max_size=5)), max_size=3).map(" ".join)
statements = st.sampled_from([
    "e(1, \"a\").", "+e(2, \"b\").", "-e(1, \"a\").", "?- p(x).", "?p(1)", "e(1, 2).",
    f"e({'9' * 5000}, \"a\").", "p(x) :- e(x, \"a\").", ".decl q(x: symbol)", ".output e",
    '.output e(delimiter="\\\\x")', '.output e(filename="a\\0b")', "e(1,", "start;",
    "commit;", "rollback;", "commit dump_changes;", "q(x) :- q(x).",
    'insert e(1, "a"), delete e(3, "c");', "insert e(1);", "delete p(1),", "dump e;", "dump;",
    "clear e;", "clear p;", "help", "?- e(x, y), p(x), x > 1.", "?- !e(1, _).", "?- e(x,",
    "#define N 3", "e(N, \"n\").", ":dump e > saved", ":dump > \0", ":limit 1", ":more",
])
lines = st.one_of(statements, st.tuples(st.sampled_from(COMMANDS + (":nope", ":")),
                                        arguments).map(" ".join))
scripts = st.lists(lines, max_size=12).map(lambda ls: [line + "\n" for line in ls])


def repl_session(directory: str, script: list[str]) -> str:
    """Feed ``script`` to a REPL in ``directory``; everything it printed."""
    Path(directory, "p.dl").write_text(PROGRAM)
    Path(directory, "e.facts").write_text("3\tc\n")
    Path(directory, "bad.facts").write_bytes(b"1\t\xff\n")
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(directory)
    try:
        repl = Repl("p.dl", ".", out=out, err=out)
        repl.feed_lines(script)
        repl.feed("?- e(x, y).\n")   # the session is still usable
    finally:
        os.chdir(here)
    return out.getvalue()


@fuzz(40, 3_000)
@given(scripts)
@example([":save saved\n", ":load bad.facts\n", ":load e.facts\n", ":save saved\n"])
@example([":begin\n", "e(5, \"x\").\n", ":save\n", ":commit\n", ":dump e\n"])
@example([":timing on\n"])
def test_random_repl_command_lines_never_escape_the_repl(script):
    with tempfile.TemporaryDirectory() as directory:
        printed = repl_session(directory, script)
    assert "Traceback" not in printed
    assert "internal error" not in printed, printed
    assert re.search(r"\d+ rows?( \(.*\))?$", printed.rstrip()), printed  # :timing on


@fuzz(3, 60)
@given(scripts)
@example([":load nope.dl\n", f"e({'9' * 5000}, \"a\").\n", ":save saved\n", ":dump\n"])
@example([":begin \ud800\n", "?- q(x).\n"])     # a lone surrogate: bytes that are not UTF-8
def test_random_repl_command_lines_through_the_real_command(script):
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "p.dl").write_text(PROGRAM)
        env = dict(os.environ, HOME=directory, PYTHONPATH=str(REPO))
        result = subprocess.run(
            [sys.executable, "-m", "cli", "repl", "p.dl"],
            input="".join(script).encode("utf-8", "surrogatepass"),
            capture_output=True, cwd=directory, env=env, timeout=300, check=False)
    stderr = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert result.returncode in (0, 1), stderr
