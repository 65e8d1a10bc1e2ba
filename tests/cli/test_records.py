"""``datalog run`` (the installed command) on a program with records and ADTs:
fact files in, output files out, as Soufflé writes them; a bad value in a fact
file is reported at its line; ``datalog check`` locates a typed error."""

from __future__ import annotations

import subprocess
from pathlib import Path

PROGRAM = """.type Point = [x: number, y: number]
.type Path = [step: Point, rest: Path]
.type Move = Stay {} | Go {to: Point, label: symbol}
.decl move(from: Point, m: Move)
.input move
.decl reach(from: Point, to: Point)
reach(p, p) :- move(p, _).
reach(p, r) :- reach(p, q), move(q, $Go(r, _)).
.decl route(from: Point, p: Path)
route(p, [p, nil]) :- move(p, $Stay).
route(p, [p, rest]) :- move(p, $Go(q, _)), route(q, rest).
.decl labels(l: symbol)
labels(l) :- move(_, $Go(_, l)).
.output reach
.output route(filename="routes.tsv")
.output labels(IO=stdout)
"""

FACTS = """[0, 0]\t$Go([1, 0], "east, then")
[1, 0]\t$Go([1, 1], north)
[1, 1]\t$Stay
"""


def datalog(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=120)


def test_run_reads_and_writes_records_and_adts(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "move.facts").write_text(FACTS)
    result = datalog("run", "p.dl", "-F", "facts", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == ("---------------\nlabels\n===============\neast, then\nnorth\n"
                             "===============\n")
    assert (tmp_path / "out" / "reach.csv").read_text() == (
        "[0, 0]\t[0, 0]\n[0, 0]\t[1, 0]\n[0, 0]\t[1, 1]\n"
        "[1, 0]\t[1, 0]\n[1, 0]\t[1, 1]\n[1, 1]\t[1, 1]\n")
    assert (tmp_path / "out" / "routes.tsv").read_text() == (
        "[0, 0]\t[[0, 0], [[1, 0], [[1, 1], nil]]]\n"
        "[1, 0]\t[[1, 0], [[1, 1], nil]]\n"
        "[1, 1]\t[[1, 1], nil]\n")


def test_a_bad_value_in_a_fact_file_is_located(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "move.facts").write_text("[0, 0]\t$Stay\n[0, 1]\t$Fly\n")
    result = datalog("run", "p.dl", "-D", "-", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("./move.facts:2: error: column 2 (m) of `move` is a value "
                                    "of type `Move`; found `$Fly`")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_check_locates_a_record_of_the_wrong_arity(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM + "move([1, 2, 3], $Stay).\n")
    result = datalog("check", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("p.dl:17:6: error: a record of 3 fields where `Point` "
                                    "has 2 fields\n    move([1, 2, 3], $Stay).\n         ^~~~~~~~~")


def test_verify_applies_transactions_with_records(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "move.facts").write_text(FACTS)
    (tmp_path / "tx.txt").write_text(':begin\n-move([1, 1], $Stay).\n'
                                     '+move([1, 1], $Go([0, 0], "back")).\n:commit\n'
                                     '+move([5, 5], $Stay()).\n')
    result = datalog("run", "p.dl", "--verify", "tx.txt", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2 transactions of tx.txt applied incrementally" in result.stderr
    assert (tmp_path / "out" / "routes.tsv").read_text() == "[5, 5]\t[[5, 5], nil]\n"
    assert "[1, 1]\t[0, 0]\n" in (tmp_path / "out" / "reach.csv").read_text()
