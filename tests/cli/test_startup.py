"""Start-up: ``import datalog`` and a small ``datalog run`` import no heavy module they
do not use. numpy is for the columnar paths only (``engine.lazy``), networkx only for
naming a cycle in an error (the strata and a circuit's order are :mod:`engine.graphs`),
lark for parsing, pandas/pyarrow/polars for frames, pyspark for Spark; each costs
0.03-0.1 s at every start.

The modules a run imported are read from the real command's ``-X importtime`` log
(``PYTHONPROFILEIMPORTTIME``)."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "networkx", "lark", "pandas", "pyarrow", "polars", "pyspark")
#: The project's own modules that a run does not need: imported where used
#: (``datalog explain``, ``Session.explain``), not by ``import datalog``.
LAZY = {"datalog.explain"}

SMALL = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl lonely(x: number)
.decl degree(x: number, n: number)
.decl name(x: number, s: symbol)
edge(1, 2). edge(2, 3). edge(3, 1). edge(4, 4). edge(5, 1).
name(1, "one"). name(6, "six").
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
lonely(x) :- name(x, _), !path(_, x).
degree(x, n) :- edge(x, _), n = count : { edge(x, _) }.
.output path
.output lonely
.output degree
"""


def imported_by(command: list[str], cwd: Path) -> tuple[set[str], str]:
    """The modules ``command`` (a Python program) imported, and what it printed."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    out = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", out.stderr,
                             re.MULTILINE))
    assert "datalog.api" in modules and "engine.circuit" in modules  # the log was read
    return modules, out.stdout


def heavy(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} & set(HEAVY)


def test_import_datalog_imports_no_heavy_module():
    code = ("import sys, datalog, datalog.api, cli; "
            f"print(sorted(m for m in {(*HEAVY, *LAZY)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_small_run_does_not_import_numpy(tmp_path):
    (tmp_path / "small.dl").write_text(SMALL)
    modules, stdout = imported_by(["datalog", "run", "small.dl", "-D", "-"], tmp_path)
    assert "lonely\n===============\n6\n" in stdout
    assert "degree\n===============\n1\t1\n2\t1\n3\t1\n4\t1\n5\t1\n" in stdout
    assert heavy(modules) == {"lark"}
    assert not modules & LAZY


def test_a_run_that_goes_columnar_imports_numpy_then(tmp_path):
    """The control: a closure with deltas of thousands of rows takes the columnar
    paths, and numpy comes in for them."""
    rng = random.Random(5)
    edges = sorted({(rng.randrange(300), rng.randrange(300)) for _ in range(600)})
    (tmp_path / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    (tmp_path / "tc.dl").write_text(""".decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
""")
    modules, stdout = imported_by(["datalog", "run", "tc.dl"], tmp_path)
    assert stdout == "path\t49132\n"
    assert heavy(modules) == {"lark", "numpy"}


def test_the_grammar_analysis_is_cached_between_runs(tmp_path):
    """lark's LALR analysis of the grammar is kept in the user's cache folder; a run that
    loads it parses, and reports a syntax error, exactly as the run that built it."""
    (tmp_path / "small.dl").write_text(SMALL)
    (tmp_path / "bad.dl").write_text(".decl d(x: number, c: number)\n"
                                     "d(x, c1) < d(x, c2) :- c1 > c2.\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    cache = tmp_path / "cache" / "datalog-circuits" / "grammar.lalr"

    def run(*args):
        done = subprocess.run(["datalog", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, timeout=60)
        return done.returncode, done.stdout, done.stderr

    first = run("run", "small.dl", "-D", "-"), run("check", "bad.dl")
    assert cache.stat().st_size > 0
    built = cache.stat().st_mtime_ns
    second = run("run", "small.dl", "-D", "-"), run("check", "bad.dl")
    assert cache.stat().st_mtime_ns == built  # loaded, not rebuilt
    assert second == first
    assert "lonely\n===============\n6\n" in first[0][1]
    assert "bad.dl:2:10: error: unexpected `<`" in first[1][1] + first[1][2]
