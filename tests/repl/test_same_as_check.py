"""A rule or directive typed at the REPL is reported exactly as ``datalog check``
reports the same text in a file: same messages, places, source lines, carets and
hints (only the file's name differs: ``<repl>``)."""

import shutil
import subprocess
import sys

import pytest

from tests.repl.transcripts import run_repl

SESSIONS = {
    "undefined relations": [".decl e(x: number)", "p(x) :- e(x), !q(x)."],
    "type mismatch": [".decl e(x: number)", ".decl s(x: symbol)", "s(x) :- e(x)."],
    "unbound head variable": [".decl e(x: number)", ".decl p(x: number, y: number)",
                              "p(x, y) :-", "  e(x)."],
    "syntax": [".decl e(x: number)", "e(x) :- e(x) e(x)."],
    "negation cycle": [".decl p(x: number)", ".decl q(x: number)", "p(1).",
                       "p(x) :- q(x), !p(x).", "q(x) :- p(x)."],
}


def _check(path) -> list[str]:
    found = shutil.which("datalog")
    command = [found] if found else [sys.executable, "-m", "cli"]
    result = subprocess.run(command + ["check", str(path)], capture_output=True, text=True,
                            check=False, timeout=120)
    return (result.stdout + result.stderr).splitlines()


def error_blocks(lines: list[str]) -> list[list[str]]:
    """The error diagnostics among ``lines``: each its ``place: error: ...`` line
    with the source line, caret and hint that follow it."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if ": error: " in line or ": warning: " in line:
            current = [line] if ": error: " in line else None
            if current is not None:
                blocks.append(current)
        elif current is not None and line.startswith(("    ", "hint: ")):
            current.append(line)
        else:
            current = None
    return blocks


@pytest.mark.parametrize("name", SESSIONS)
def test_repl_errors_are_those_of_check(name, tmp_path):
    lines = SESSIONS[name]   # only the last statement is wrong
    program = tmp_path / "s.dl"
    program.write_text("".join(line + "\n" for line in lines))
    expected = error_blocks([line.replace(str(program), "<repl>")
                             for line in _check(program)])
    output, status = run_repl([], "".join(line + "\n" for line in lines), tmp_path)
    assert status == 1
    assert expected
    assert error_blocks(output) == expected
