"""``--sandbox DIR`` (issue 15, item 6): no file outside the allowed folders is
read or written -- ``#include``, ``filename=``, the program itself, ``-F``,
``-D``, ``:load``, ``:save`` -- and no diagnostic shows a byte of one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import datalog

SECRET = "the secret text"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    box, outside = tmp_path / "box", tmp_path / "outside"
    (box / "facts").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.dl").write_text(f"{SECRET} (\n")
    (outside / "n.facts").write_text(f"{SECRET}\n")
    (box / "facts" / "n.facts").write_text("1\n2\n")
    (box / "link.dl").symlink_to(outside / "secret.dl")
    return tmp_path


def run(tree: Path, program: str, *extra: str) -> subprocess.CompletedProcess:
    (tree / "box" / "p.dl").write_text(program)
    return subprocess.run(["datalog", "run", "box/p.dl", "-F", "box/facts", "-D", "box/out",
                           "--sandbox", "box", *extra], cwd=tree, capture_output=True,
                          text=True, check=False, timeout=120)


DECL = ".decl n(x: number)\n"


@pytest.mark.parametrize(("program", "what"), [
    ('#include "../outside/secret.dl"\n' + DECL, "included file `../outside/secret.dl`"),
    ('#include "link.dl"\n' + DECL, "included file `link.dl`"),
    (DECL + '.input n(filename="../../outside/n.facts")\n', "fact file for `n`"),
    (DECL + ".input n\n.output n(filename=\"../../outside/o.csv\")\n", "output"),
])
def test_nothing_outside_the_sandbox_is_read_or_written(tree, program, what):
    result = run(tree, program)
    assert result.returncode == 1, result.stderr
    assert f"{what} outside the sandbox" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert not (tree / "outside" / "o.csv").exists()


def test_inside_the_sandbox_everything_works(tree):
    result = run(tree, DECL + ".input n\n.output n\n")
    assert result.returncode == 0, result.stderr
    assert (tree / "box" / "out" / "n.csv").read_text() == "1\n2\n"


def test_the_folders_given_on_the_command_line_are_confined_too(tree):
    outside_program = subprocess.run(
        ["datalog", "run", "outside/secret.dl", "--sandbox", "box"], cwd=tree,
        capture_output=True, text=True, check=False, timeout=120)
    assert outside_program.returncode == 1
    assert "program file outside the sandbox" in outside_program.stderr
    assert SECRET not in outside_program.stderr
    result = run(tree, DECL + ".input n\n.output n\n", "-D", "outside/o")
    assert result.returncode == 1 and "output outside the sandbox" in result.stderr
    assert not (tree / "outside" / "o").exists()


def test_the_repl_confines_load_and_save(tree):
    (tree / "box" / "p.dl").write_text(DECL + ".input n\n")
    script = ":load outside/secret.dl\n:load outside/n.facts\n:save outside/saved\n" \
             ":save box/saved\n"
    result = subprocess.run(["datalog", "repl", "box/p.dl", "-F", "box/facts", "--sandbox",
                             "box"], cwd=tree, input=script, capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 1
    assert result.stderr.count("outside the sandbox") == 3, result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert not (tree / "outside" / "saved").exists()
    assert (tree / "box" / "saved" / "n.facts").read_text() == "1\n2\n"


def test_a_program_with_a_sandbox_confines_its_sessions(tree):
    program = datalog.Program(DECL + ".input n\n", sandbox=[tree / "box"])
    assert program.session(tree / "box" / "facts").size("n") == 2
    with pytest.raises(datalog.DatalogError, match="fact file for `n` outside the sandbox"):
        program.session(tree / "outside")
    with pytest.raises(datalog.DatalogError, match="outside the sandbox"):
        datalog.Program('#include "../outside/secret.dl"\n', str(tree / "box" / "p.dl"),
                        sandbox=[tree / "box"])
