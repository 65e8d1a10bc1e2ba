"""`datalog check` and `datalog graph`, run as the installed command."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.golden import ROOT, cases

PROGRAMS = Path(__file__).parents[2] / "programs"
DATALOG = shutil.which("datalog")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    assert DATALOG is not None, "the datalog command is installed by `pip install -e .`"
    return subprocess.run([DATALOG, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, check=False)


@pytest.mark.parametrize("case", [
    ROOT / "check" / "many_errors",
    ROOT / "check" / "singleton_variable",
    ROOT / "parse" / "missing_dot",
    ROOT / "parse" / "include_error",
    ROOT / "stratify" / "negation_cycle",
], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_prints_the_golden_text(case):
    result = run("check", f"{case.name}.dl", cwd=case)
    assert result.stdout == (case / f"{case.name}.err").read_text()
    has_errors = ": error: " in result.stdout
    assert result.returncode == (1 if has_errors else 0)
    assert result.stderr.startswith(f"{case.name}.dl: ")


def test_clean_program_exits_zero():
    case = ROOT / "check" / "clean"
    result = run("check", "clean.dl", cwd=case)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "clean.dl: ok\n")


def test_warnings_only_exit_zero():
    case = ROOT / "check" / "plan_ignored"
    result = run("check", "plan_ignored.dl", cwd=case)
    assert result.returncode == 0
    assert "warning: `.plan` is ignored" in result.stdout
    assert result.stderr == "plan_ignored.dl: 0 errors, 1 warning\n"


def test_usage_errors_exit_two(tmp_path):
    assert run("check", str(tmp_path / "missing.dl")).returncode == 2
    assert run("check").returncode == 2
    assert run("check", str(tmp_path)).returncode == 2
    assert run("check", "--format", "xml", str(ROOT / "check" / "clean" / "clean.dl")
               ).returncode == 2
    assert run("graph", str(tmp_path / "missing.dl")).returncode == 2


def test_json_format():
    case = ROOT / "check" / "many_errors"
    result = run("check", "--format", "json", "many_errors.dl", cwd=case)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert (report["errors"], report["warnings"]) == (5, 1)
    first = report["diagnostics"][0]
    assert first == {"severity": "error", "message": "undefined relation `edg`",
                     "path": "many_errors.dl", "line": 5, "column": 15, "end_line": 5,
                     "end_column": 24, "hint": "did you mean `edge`?"}


def test_unreadable_bytes_are_an_error_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_bytes(b"\xff\xfe r(1).")
    result = run("check", str(bad))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    assert "cannot read" in result.stdout


@pytest.mark.parametrize("program", sorted(PROGRAMS.glob("*/*.dl")), ids=lambda p: p.stem)
def test_example_programs_check_clean(program):
    result = run("check", str(program))
    assert result.returncode == 0, result.stdout
    assert ": error: " not in result.stdout


def test_graph_prints_strata_as_dot():
    case = ROOT / "stratify" / "stratified_negation"
    result = run("graph", "stratified_negation.dl", cwd=case)
    assert result.returncode == 0
    out = result.stdout
    assert out.startswith("digraph precedence {")
    assert out.rstrip().endswith("}")
    assert 'label="stratum 2 (recursive)";\n    "reach";' in out
    assert '"reach" -> "unreachable" [style=dashed, label="!"];' in out
    assert '"edge" -> "reach";' in out
    # Stratum clusters appear in dependency order.
    assert out.index('"node";') < out.index('"reach";') < out.index('"unreachable";')


def test_graph_marks_unstratifiable_edges():
    case = ROOT / "stratify" / "negation_cycle"
    result = run("graph", "negation_cycle.dl", cwd=case)
    assert result.returncode == 0
    assert '"lose" -> "win" [style=dashed, label="!", color=red, penwidth=2];' in result.stdout


def test_graph_of_a_program_that_does_not_parse():
    case = ROOT / "parse" / "missing_dot"
    result = run("graph", "missing_dot.dl", cwd=case)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (case / "missing_dot.err").read_text()


def test_every_golden_case_is_exercised():
    assert sum(len(cases(kind)) for kind in ("parse", "check", "stratify")) >= 60
