"""Aggregates through the installed `datalog` command: `check` and `run` agree on
whether a program is valid (and on its errors), and `run --verify` finds the
incremental answers of aggregate scopes equal to a from-scratch evaluation.

The programs are valid and invalid uses of aggregate scoping (locals, shadowing,
witnesses, nesting, an aggregate that needs its own result), each a few lines
over one shared set of declarations and facts, plus the golden cases of
``tests/aggregates`` and ``tests/check/aggregate_*``."""

from __future__ import annotations

import re

import pytest

from tests.cli.test_check import run
from tests.golden import ROOT

HEADER = """\
.decl e(x: number, y: number)
.decl node(x: number)
.decl f(p: symbol, x: number)
.decl g(p: symbol)
.decl w(s: symbol)
.decl o(a: number)
.decl o2(a: number, b: number)
.decl os(a: symbol)
.decl osn(a: symbol, b: number)
e(1, 2). e(1, 3). e(2, 3). e(4, 1).
node(1). node(2). node(3). node(4). node(5).
f("ann", 30). f("bob", 25). f("cy", 25). f("dee", 41).
g("bob"). w("pear"). w("apple").
o(0). o2(0, 0). os("-"). osn("-", 0).
.output o, o2, os, osn
"""

#: (rule, valid?) -- each rule is added to HEADER to make one program.
RULES = [
    ("o(a) :- a = max a : e(a, _).", True),
    ("o(n) :- n = count : { e(x, y), !node(y), x > 0 }.", True),
    ("o2(x, m) :- node(x), m = max x : e(_, x).", True),
    ("osn(p, n) :- n = min x : f(p, x).", True),
    ("osn(p, n) :- n = max x + 1 : f(p, x), !g(p).", True),
    ("os(p) :- _ = min x : f(p, x).", True),
    ("os(p) :- _ = p, f(p, _).", False),
    ("o(s) :- s = sum c : { node(x), c = count : { e(x, _) } }.", True),
    ("o(s) :- s = sum (x * count : { e(x, _) }) : node(x).", True),
    ("o(n) :- n = max x : { node(x), x < max x : node(x) }.", True),
    ("os(m) :- m = max s : { w(s), s < \"b\" }.", True),
    ("osn(p, n) :- n = sum x : f(p, x).", False),
    ("o(c) :- c = count : { node(x) }, x > 0.", False),
    ("o(c) :- c = count : { !node(y) }.", False),
    ("o(n) :- n = count : { node(x), x < n }.", False),
    ("o2(a, b) :- a = count : { node(x), x < b }, b = count : { node(y), y < a }.", False),
    ("o(s) :- s = sum y : e(_, _).", False),
    ("o(c) :- c = count : { _ = min x : f(p, x), p != \"ann\" }.", False),
    ("os(m) :- m = sum s : w(s).", False),
    ("os(s) :- s = \"a\" + \"b\".", False),
]

GOLDEN = [*sorted((ROOT / "aggregates").iterdir()),
          *sorted(p for p in (ROOT / "check").iterdir() if p.name.startswith("aggregate_"))]


def errors(text: str) -> list[str]:
    """The error lines of diagnostics text, in order."""
    return [line for line in text.splitlines() if re.search(r":\d+:\d+: error: ", line)]


def agree(folder, name: str, valid: bool | None) -> None:
    checked = run("check", f"{name}.dl", cwd=folder)
    ran = run("run", f"{name}.dl", "-D", "-", cwd=folder)
    assert checked.returncode in (0, 1) and ran.returncode in (0, 1), (checked, ran)
    assert checked.returncode == ran.returncode, (checked.stdout, ran.stderr)
    assert errors(checked.stdout) == errors(ran.stderr)
    assert "Traceback" not in ran.stderr + checked.stderr
    if valid is not None:
        assert checked.returncode == (0 if valid else 1), checked.stdout


@pytest.mark.parametrize("rule, valid", RULES, ids=[r for r, _ in RULES])
def test_check_and_run_agree(tmp_path, rule, valid):
    (tmp_path / "p.dl").write_text(HEADER + rule + "\n")
    agree(tmp_path, "p", valid)


@pytest.mark.parametrize("case", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_and_run_agree_on_the_golden_cases(case):
    agree(case, case.name, None)


def test_run_verify_finds_incremental_scopes_equal_to_from_scratch(tmp_path):
    program = tmp_path / "p.dl"
    program.write_text("""\
.decl f(p: symbol, x: number)
.input f
.decl youngest(p: symbol, n: number)
youngest(p, n) :- n = min x : f(p, x).
.decl top(a: number)
top(a) :- a = max a : f(_, a).
.decl widest(n: number)
widest(n) :- n = max c : { f(p, _), c = count : { f(p, _) } }.
.output youngest, top, widest
""")
    (tmp_path / "f.facts").write_text("ann\t30\nbob\t25\n")
    (tmp_path / "tx.txt").write_text(
        '+f("cy", 25).\n-f("bob", 25).\n+f("ann", 20).\n-f("ann", 20).\n'
        ':begin\n-f("cy", 25).\n+f("dee", 30).\n:commit\n-f("ann", 30).\n')
    result = run("run", "p.dl", "-F", ".", "-D", "out", "--verify", "tx.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # the outputs are those after the last transaction
    assert (tmp_path / "out" / "youngest.csv").read_text() == "dee\t30\n"
