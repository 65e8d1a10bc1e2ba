"""``datalog run``, ``datalog plan`` and ``datalog graph --circuit`` through the
installed command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.programs import example_programs

EXAMPLES = example_programs()

TC = """.decl edge(x: number, y: symbol)
.input edge
.decl path(x: number, y: symbol)
.output path
.printsize path
path(x, y) :- edge(x, y).
"""


def datalog(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=120)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_run_writes_the_expected_files(example, tmp_path):
    result = datalog("run", str(example.path), "-F", str(example.facts_dir),
                     "-D", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    for name in example.outputs():
        expected = (example.expected_dir / f"{name}.csv").read_text()
        assert (tmp_path / f"{name}.csv").read_text() == expected, name


def test_run_stdout_printsize_and_defaults(tmp_path):
    write(tmp_path / "p.dl", TC)
    write(tmp_path / "edge.facts", "2\tb c\n1\ta\n\n")
    result = datalog("run", "p.dl", cwd=tmp_path)          # -F . -D . by default
    assert result.returncode == 0, result.stderr
    assert result.stdout == "path\t2\n"
    assert (tmp_path / "path.csv").read_text() == "1\ta\n2\tb c\n"
    result = datalog("run", "p.dl", "-D", "-", cwd=tmp_path)
    assert result.stdout == ("---------------\npath\n===============\n1\ta\n2\tb c\n"
                             "===============\npath\t2\n")


def test_directive_parameters(tmp_path):
    write(tmp_path / "p.dl", """.decl e(x: number, y: number)
.input e(filename="edges.csv", delimiter=",", headers=true)
.decl o(x: number, y: number)
.output o(IO=stdout)
.decl f(x: number)
.output f(filename="f.txt", delimiter=";")
o(x, y) :- e(x, y).
f(x) :- e(x, _).
""")
    write(tmp_path / "edges.csv", "from,to\n3,4\n1,2\n")
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1\t2\n3\t4\n" in result.stdout
    assert (tmp_path / "out" / "f.txt").read_text() == "1\n3\n"
    assert not (tmp_path / "out" / "o.csv").exists()


@pytest.mark.parametrize("facts, message", [
    ("1\ta\n2\n", "edge.facts:2: error: `edge` has 2 columns; found 1"),
    ("1\ta\nx\tb\n", "edge.facts:2: error: column 1 (x) of `edge` is a number; found `x`"),
    ("1\ta\tz\n", "edge.facts:1: error: `edge` has 2 columns; found 3"),
])
def test_malformed_fact_file(tmp_path, facts, message):
    write(tmp_path / "p.dl", TC)
    write(tmp_path / "edge.facts", facts)
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_input_file_is_named(tmp_path):
    write(tmp_path / "p.dl", TC)
    result = datalog("run", "p.dl", "-F", "nowhere", cwd=tmp_path)
    assert result.returncode == 1
    assert "nowhere/edge.facts" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "path.csv").exists()


def test_program_errors_exit_1_and_usage_errors_exit_2(tmp_path):
    write(tmp_path / "bad.dl", ".decl p(x: number)\np(x) :- q(x).\n")
    result = datalog("run", "bad.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("bad.dl:2:9: error:")
    assert datalog("run", "missing.dl", cwd=tmp_path).returncode == 2
    assert datalog("run", "bad.dl", "--max-iterations", "zero", cwd=tmp_path).returncode == 2
    assert datalog("run", cwd=tmp_path).returncode == 2


def test_max_iterations(tmp_path):
    write(tmp_path / "n.dl", """.decl n(x: number)
.output n
n(0).
n(x + 1) :- n(x), x < 100.
""")
    result = datalog("run", "n.dl", "--max-iterations", "10", "-D", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "iteration limit" in result.stderr and "--max-iterations" in result.stderr
    assert not (tmp_path / "out" / "n.csv").exists()
    result = datalog("run", "n.dl", "--max-iterations", "1000", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0
    assert len((tmp_path / "out" / "n.csv").read_text().splitlines()) == 101


def test_evaluation_error_leaves_no_output(tmp_path):
    write(tmp_path / "d.dl", """.decl a(x: number)
.output a
.decl b(x: number)
.output b
a(1).
a(0).
b(10 / x) :- a(x).
""")
    result = datalog("run", "d.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert "d.dl:7:1: error: division by zero" in result.stderr
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "b.csv").exists()


def test_plan_and_circuit_graph():
    example = next(e for e in EXAMPLES if e.name == "transitive_closure")
    result = datalog("plan", str(example.path))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "recursive stratum" in text and "join " in text and "circuit:" in text
    assert ":-" in text                      # rules label their nodes
    assert "edge by [0]" in text or "path by [1]" in text   # shared indexes
    result = datalog("graph", str(example.path), "--circuit")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("digraph") and "cluster" in result.stdout
    result = datalog("plan", str(example.path), "--code")
    assert "def _f" in result.stdout


def test_output_headers_and_unsupported_io(tmp_path):
    write(tmp_path / "h.dl", """.decl e(src: number, dst: number)
.input e
.decl o(src: number, dst: number)
.output o(headers=true, delimiter=",")
o(x, y) :- e(x, y).
""")
    write(tmp_path / "e.facts", "1\t2\n")
    result = datalog("run", "h.dl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o.csv").read_text() == "src,dst\n1,2\n"
    write(tmp_path / "s.dl", ".decl e(x: number)\n.input e(IO=sqlite)\n")
    result = datalog("run", "s.dl", cwd=tmp_path)
    assert result.returncode == 1 and "IO=sqlite" in result.stderr
    write(tmp_path / "i.dl", """.decl e(x: number, y: symbol)
.input e(IO=stdin)
.decl o(x: number, y: symbol)
.output o(IO=stdout)
o(x, y) :- e(x, y).
""")
    result = subprocess.run(["datalog", "run", "i.dl"], input="2\tb\n1\ta\n",
                            capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "1\ta\n2\tb\n" in result.stdout


def test_every_output_directive_is_honoured_and_files_are_0644(tmp_path):
    write(tmp_path / "m.dl", '.decl p(x: number)\np(1).\n.output p\n.output p(IO=stdout)\n'
                             '.output p(filename="q.csv")\n')
    result = subprocess.run("umask 022 && datalog run m.dl", shell=True, capture_output=True,
                            text=True, cwd=tmp_path, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "---------------\np\n===============\n1\n===============\n"
    for name in ("p.csv", "q.csv"):
        assert (tmp_path / name).read_text() == "1\n"
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name


def test_two_outputs_writing_one_file_is_an_error(tmp_path):
    write(tmp_path / "c.dl", '.decl p(x: number)\np(1).\n.output p\n'
                             '.decl q(x: number)\nq(2).\n.output q(filename="p.csv")\n')
    result = datalog("run", "c.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: .output p and .output q both write p.csv")
    assert not (tmp_path / "p.csv").exists()


def test_a_program_given_as_a_command_gets_a_hint(tmp_path):
    write(tmp_path / "m.dl", ".decl p(x: number)\n")
    result = datalog("m.dl", cwd=tmp_path)
    assert result.returncode == 2
    assert "run it with `datalog run m.dl`" in result.stderr


def test_ctrl_c_exits_130_with_one_line_and_no_output(tmp_path):
    import signal
    import time

    # a counter to a billion: ~80 minutes of iterations, so the signal always
    # comes inside the evaluation (a chain's closure of 4.5 million paths,
    # used before, came to finish within the 5 seconds)
    write(tmp_path / "count.dl", ".decl c(n: number)\n.output c\n"
                                 "c(0).\nc(n + 1) :- c(n), n < 1000000000.\n")
    process = subprocess.Popen(["datalog", "run", "count.dl"], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(5)   # started, and well inside the evaluation
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err == "datalog: interrupted\n" and out == ""
    assert [p.name for p in tmp_path.iterdir()] == ["count.dl"]
