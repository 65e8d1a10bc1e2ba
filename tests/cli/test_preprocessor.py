"""Soufflé's preprocessor flags ``-M`` and ``-I``, and ``-w``, through the installed
``datalog`` command (run, check, plan, graph, repl)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

PROGRAM = """#include <lib.dl>
.decl r(x: number)
.output r(IO=stdout)
#if defined(DEBUG) && LEVEL >= 2
r(LEVEL).
#elif defined DEBUG
r(1).
#else
r(0).
#endif
r(BASE).
.decl unused(x: number)
"""


def datalog(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, check=False, timeout=120)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lib.dl").write_text("#define BASE 100\n")
    return tmp_path


def rows(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.isdigit()]


@pytest.mark.parametrize("flags, expected", [
    (["-M", "DEBUG LEVEL=3"], ["3", "100"]),
    (["-M", "DEBUG", "-M", "LEVEL=1"], ["1", "100"]),
    (["--macro=LEVEL=5"], ["0", "100"]),
])
def test_run_macros_and_include_dirs(folder, flags, expected):
    result = datalog("run", "p.dl", *flags, "-I", "inc", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert rows(result.stdout) == expected


def test_run_prints_warnings_on_stderr_unless_w(folder):
    result = datalog("run", "p.dl", "-I", "inc", cwd=folder)
    assert result.returncode == 0
    assert "p.dl:12:1: warning: relation `unused` has no facts" in result.stderr
    assert "warning" not in result.stdout and rows(result.stdout) == ["0", "100"]
    quiet = datalog("run", "-w", "p.dl", "-I", "inc", cwd=folder)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == result.stdout


def test_include_dir_is_needed_for_angle_include(folder):
    result = datalog("run", "p.dl", cwd=folder)
    assert result.returncode == 1
    assert "p.dl:1:10: error: cannot read included file `lib.dl`" in result.stderr


def test_check_with_macros_include_dirs_and_w(folder):
    result = datalog("check", "p.dl", "-I", "inc", "-M", "DEBUG", cwd=folder)
    assert result.returncode == 0 and "warning" in result.stdout
    quiet = datalog("check", "-w", "p.dl", "-I", "inc", cwd=folder)
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert "p.dl: ok" in quiet.stderr


def test_plan_and_graph_take_the_flags(folder):
    plan = datalog("plan", "p.dl", "-I", "inc", "-M", "DEBUG LEVEL=7", cwd=folder)
    assert plan.returncode == 0 and "r" in plan.stdout, plan.stderr
    graph = datalog("graph", "p.dl", "-I", "inc", cwd=folder)
    assert graph.returncode == 0 and graph.stdout.startswith("digraph"), graph.stderr
    missing = datalog("graph", "p.dl", cwd=folder)
    assert missing.returncode == 1 and "lib.dl" in missing.stderr


@pytest.mark.parametrize("word", ["1X", "A-B=2", "=3"])
def test_bad_macro_word_is_a_usage_error(folder, word):
    result = datalog("run", "p.dl", "-I", "inc", "-M", word, cwd=folder)
    assert result.returncode == 2 and f"`{word}` is not NAME or NAME=VALUE" in result.stderr


def test_missing_include_dir_is_a_usage_error(folder):
    result = datalog("run", "p.dl", "-I", "nowhere", cwd=folder)
    assert result.returncode == 2 and "nowhere" in result.stderr


def test_repl_with_macros_through_a_pipe(folder):
    result = datalog("repl", "p.dl", "-M", "DEBUG LEVEL=4", "-I", "inc", cwd=folder,
                     stdin=".decl s(x: number)\ns(x + 1) :- r(x), x < LEVEL * 10.\n"
                           "r(LEVEL + 1).\n?- r(x).\n?- s(x).\n")
    assert result.returncode == 0, result.stderr
    assert "+r(5)" in result.stdout  # a fact at the prompt sees the -M macros
    assert {"r(4)", "r(5)", "r(100)"} <= set(result.stdout.splitlines())
    assert "s(5)" in result.stdout and "s(6)" in result.stdout  # so do rules
