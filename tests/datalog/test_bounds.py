"""Every resource is bounded with a clear error (issue 15, item 5): ``range()``
spans, macro expansion, included files, the width of a diagnostic's line."""

from __future__ import annotations

import os
import time

import pytest

import datalog
from datalog.dialect.functors import RANGE_LIMIT

RANGE = """.decl n(x: number)
.decl r(x: {type})
n(0).
r(x) :- n(_), x = {call}.
"""


@pytest.mark.parametrize(("type_", "call", "says"), [
    ("number", "range(0, 9223372036854775807)", "yields more than 10,000,000 values"),
    ("number", "range(0, -9223372036854775807 - 1, -1)", "yields more than"),
    ("unsigned", "range(0u, 18446744073709551615u)", "yields more than"),
    ("float", "range(1e20, 1e21, 1.0)", "never ends"),
    ("float", "range(0.0, 1e9, 0.5)", "yields more than"),
    ("float", "range(0.0, 1e300, 1e-300)", "never ends"),
])
def test_an_enormous_range_is_an_error_at_its_rule(type_, call, says):
    start = time.monotonic()
    with pytest.raises(datalog.DatalogError) as caught:
        datalog.Program(RANGE.format(type=type_, call=call)).session()
    assert time.monotonic() - start < 10
    text = str(caught.value)
    assert text.startswith("<string>:4:1: error: range(") and says in text


def test_a_range_at_the_limit_is_fine():
    session = datalog.Program(RANGE.format(type="number", call=f"range(0, {RANGE_LIMIT})"
                                           .replace(str(RANGE_LIMIT), "100"))).session()
    assert session.size("r") == 100


def test_a_doubling_macro_is_refused_quickly():
    text = "#define A0 1 + 1\n" + "".join(
        f"#define A{i} A{i - 1} + A{i - 1}\n" for i in range(1, 64)) + \
        ".decl r(x: number)\nr(A63).\n"
    start = time.monotonic()
    with pytest.raises(datalog.DatalogError) as caught:
        datalog.Program(text, "m.dl")
    assert time.monotonic() - start < 10
    assert str(caught.value).startswith(
        "m.dl:66:3: error: this macro expands to more than 1,000,000 characters")


def test_only_regular_files_are_included(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with open(tmp_path / "huge.dl", "wb") as handle:   # sparse: no disk used
        handle.truncate(300 * 2**20)
    for target, says in [("fifo", "it is a FIFO"), ("/dev/zero", "it is a device"),
                         ("huge.dl", "it is larger than 268,435,456 bytes")]:
        (tmp_path / "p.dl").write_text(f'#include "{target}"\n')
        start = time.monotonic()
        with pytest.raises(datalog.DatalogError) as caught:
            datalog.Program.from_file(tmp_path / "p.dl")
        assert time.monotonic() - start < 10
        assert f"p.dl:1:10: error: cannot read included file `{target}`: {says}" \
            in str(caught.value)


def test_a_diagnostic_on_a_long_line_shows_a_window_around_the_caret():
    text = ".decl r(x: number)\n" + "r(1). " * 20_000 + "r(x) :- q(x).\n"
    with pytest.raises(datalog.DatalogError) as caught:
        datalog.Program(text, "l.dl")
    lines = str(caught.value).split("\n")
    assert lines[0] == "l.dl:2:120009: error: undefined relation `q`"
    assert len(lines[1]) < 200 and lines[1].startswith("    ...") and "q(x)" in lines[1]
    assert lines[2].index("^") == lines[1].index("q(x)")


def test_a_form_feed_does_not_end_a_line_of_a_diagnostic():
    with pytest.raises(datalog.DatalogError) as caught:
        datalog.Program(".decl r(x: number)\n// \x0c \u2028 \x1c\nr(x) :- q(x).\n", "f.dl")
    assert str(caught.value).split("\n")[1] == "    r(x) :- q(x)."


# ---------------------------------------------------------------- memory limit

CROSS = """.decl n(x: number)
.decl p(x: number, y: number)
p(x, y) :- n(x), n(y).
"""


def resident() -> int:
    from engine.memory import MemoryBudget

    return MemoryBudget(1).resident()


def test_a_transaction_past_the_memory_limit_fails_and_is_rolled_back():
    session = datalog.Program(CROSS).session(memory_limit=resident() + 150 * 2**20)
    session.insert("n", *[(i,) for i in range(10)])
    before = session.size("p")
    start = time.monotonic()
    with pytest.raises(datalog.DatalogError) as caught:
        session.insert("n", *[(i,) for i in range(10, 4000)])   # 16 million pairs
    assert time.monotonic() - start < 120
    text = str(caught.value)
    assert text.startswith("error: memory limit reached: the process holds ")
    assert "the transaction was rolled back" in text and "--memory-limit" in text
    assert session.size("p") == before == 100 and session.size("n") == 10
    session.insert("n", (10,))                                  # still usable
    assert session.size("p") == 121
    assert not session.verify()


def test_run_with_a_memory_limit_writes_nothing(tmp_path):
    import subprocess

    (tmp_path / "p.dl").write_text(CROSS.replace(".decl p(x: number, y: number)",
                                                 ".decl p(x: number, y: number)\n.output p")
                                   .replace(".decl n(x: number)", ".decl n(x: number)\n"
                                            ".input n"))
    (tmp_path / "n.facts").write_text("".join(f"{i}\n" for i in range(4000)))
    result = subprocess.run(["datalog", "run", "p.dl", "-D", "out", "--memory-limit", "250M"],
                            cwd=tmp_path, capture_output=True, text=True, check=False,
                            timeout=300)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: memory limit reached")
    assert not (tmp_path / "out" / "p.csv").exists()
    bad = subprocess.run(["datalog", "run", "p.dl", "--memory-limit", "lots"], cwd=tmp_path,
                         capture_output=True, text=True, check=False, timeout=300)
    assert bad.returncode == 1 and "a memory limit is a positive size" in bad.stderr


def test_the_repl_with_a_memory_limit_rolls_the_statement_back_and_goes_on(tmp_path):
    import subprocess

    (tmp_path / "p.dl").write_text(CROSS + ".decl seed(n: number)\nn(x) :- seed(k), "
                                   "x = range(0, k).\n")
    statements = "seed(4000).\n?- seed(k).\nseed(3).\n?- p(x, y).\n"
    result = subprocess.run(["datalog", "repl", "p.dl", "--memory-limit", "250M"],
                            cwd=tmp_path, input=statements, capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 1       # one statement failed
    assert "error: memory limit reached" in result.stderr
    assert "the transaction was rolled back" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "0 rows"           # `?- seed(k).`: the failed seed(4000) left nothing
    assert "committed: 13 inserted, 0 retracted" in lines   # seed(3) after it
    assert lines[-1] == "9 rows"          # and the session went on
