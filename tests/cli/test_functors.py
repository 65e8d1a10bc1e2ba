"""``--functors MODULE.py`` through the installed ``datalog`` command: run, check,
repl and explain; a module that cannot be loaded; the Spark engine's refusal;
``autoinc()`` in ``datalog run``."""

from __future__ import annotations

import subprocess
from pathlib import Path

PROGRAM = """.functor score(x: number, s: symbol): number
.functor shout(s: symbol): symbol
.decl item(x: number, s: symbol)
.input item
.decl scored(x: number, w: number)
.output scored
.decl loud(s: symbol)
.output loud
scored(x, @score(x, s)) :- item(x, s).
loud(@shout(s)) :- item(_, s).
"""

MODULE = """import math  # a module's other names are not functors of the program


def score(x, s):
    if s == "bad":
        raise ValueError("bad item " + str(x))
    return x * 100 + len(s)


def shout(s):
    return s.upper() + "!"
"""


def datalog(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, check=False, timeout=120)


def setup(tmp_path: Path, facts: str = "1\tab\n2\tc\n") -> None:
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "fns.py").write_text(MODULE)
    (tmp_path / "item.facts").write_text(facts)


def test_run_binds_the_module_callables_by_name(tmp_path):
    setup(tmp_path)
    result = datalog("run", "p.dl", "--functors", "fns.py", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "scored.csv").read_text() == "1\t102\n2\t201\n"
    assert (tmp_path / "out" / "loud.csv").read_text() == "AB!\nC!\n"


def test_a_raising_functor_fails_the_run_at_the_rule_and_writes_nothing(tmp_path):
    setup(tmp_path, facts="1\tab\n2\tbad\n")
    result = datalog("run", "p.dl", "--functors", "fns.py", "-D", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "p.dl:9:1: error: functor `@score` raised ValueError: bad item 2 in "), result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_without_functors_the_declaration_is_the_error(tmp_path):
    setup(tmp_path)
    result = datalog("run", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("p.dl:1:1: error: functor `@score` has no implementation")
    assert "p.dl:2:1: error: functor `@shout` has no implementation" in result.stderr
    # check: the program is valid; with --functors, the module must have them all
    assert datalog("check", "p.dl", cwd=tmp_path).returncode == 0
    assert datalog("check", "p.dl", "--functors", "fns.py", cwd=tmp_path).returncode == 0
    (tmp_path / "half.py").write_text("def score(x, s):\n    return x\n")
    result = datalog("check", "p.dl", "--functors", "half.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "p.dl:2:1: error: functor `@shout` has no implementation" in result.stdout


def test_a_module_that_cannot_be_loaded_is_a_located_error(tmp_path):
    setup(tmp_path)
    (tmp_path / "broken.py").write_text("def score(x, s)\n    return x\n")
    result = datalog("run", "p.dl", "--functors", "broken.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path / 'broken.py'}:1:") or \
        result.stderr.startswith("broken.py:1:"), result.stderr
    assert "cannot load functors" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "raises.py").write_text("raise RuntimeError('not today')\n")
    result = datalog("check", "p.dl", "--functors", "raises.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot load functors from raises.py: RuntimeError: not today" in result.stderr


def test_the_repl_takes_functors_and_survives_a_failing_one(tmp_path):
    setup(tmp_path, facts="")
    session = '+item(1, "ab").\n+item(2, "bad").\n?- scored(x, w)\n+item(3, "d").\n'
    result = datalog("repl", "p.dl", "--functors", "fns.py", cwd=tmp_path, stdin=session)
    assert "+scored(1, 102)" in result.stdout
    assert "functor `@score` raised ValueError: bad item 2" in result.stderr
    assert "scored(1, 102)\n1 row" in result.stdout        # the failed insert changed nothing
    assert "+scored(3, 301)" in result.stdout
    assert result.returncode == 1                           # a statement failed


def test_explain_and_plan_take_functors(tmp_path):
    setup(tmp_path)
    result = datalog("explain", "p.dl", "--functors", "fns.py", "-F", ".", "scored(2, 201)",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "item(2, \"c\")" in result.stdout
    result = datalog("plan", "p.dl", "--functors", "fns.py", cwd=tmp_path)
    assert result.returncode == 0 and "@score(#0, #1)" in result.stdout


def test_the_spark_engine_refuses_them_before_starting_spark(tmp_path):
    setup(tmp_path)
    result = datalog("run", "p.dl", "--functors", "fns.py", "--engine", "spark", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("p.dl:9:1: error: the user-defined functor `@score` is "
                                    "evaluated by the local engine only"), result.stderr


def test_autoinc_numbers_each_binding_once(tmp_path):
    (tmp_path / "ids.dl").write_text(
        ".decl name(s: symbol)\n.input name\n.decl id(n: number, s: symbol)\n.output id\n"
        "id(autoinc(), s) :- name(s).\n")
    (tmp_path / "name.facts").write_text("ann\nbob\ncyd\n")
    result = datalog("run", "ids.dl", "-D", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines() if "\t" in line]
    assert sorted(int(n) for n, _ in rows) == [0, 1, 2]
    assert sorted(s for _, s in rows) == ["ann", "bob", "cyd"]
