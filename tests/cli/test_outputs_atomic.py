"""``datalog run`` replaces its outputs all or nothing (issue 15, item 3): killed
with SIGKILL at any moment, then recovered as the next run recovers, the outputs
are all old or all new, and no temporary file is left (journal design:
:mod:`datalog.dialect.journal`)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datalog.dialect.journal import JOURNAL, recover

OUTPUTS = ("a", "b", "c", "d")
PROGRAM = """
.decl e(x: number, tag: symbol)
.input e
.decl a(x: number, tag: symbol)
.decl b(x: number, tag: symbol)
.decl c(x: number, tag: symbol)
.decl d(x: number, tag: symbol)
.output a
.output b
.output c(filename="sub/c.csv")
.output d
a(x, t) :- e(x, t).
b(x + 1, t) :- e(x, t).
c(x * 2, t) :- e(x, t).
d(x - 1, t) :- e(x, t).
"""
ROWS = 8_000


def facts(folder: Path, tag: str) -> None:
    (folder / "e.facts").write_text("".join(f"{i}\t{tag}\n" for i in range(ROWS)))


def tags(out: Path) -> set[str]:
    """The tags the output files hold; every file must be complete."""
    seen = set()
    for name in OUTPUTS:
        path = out / ("sub/c.csv" if name == "c" else f"{name}.csv")
        lines = path.read_text().splitlines()
        assert len(lines) == ROWS, (name, len(lines))
        seen |= {line.split("\t")[1] for line in lines}
    return seen


def leftovers(out: Path) -> list[str]:
    return [str(p) for p in out.rglob(".datalog-*")] + (
        [JOURNAL] if (out / JOURNAL).exists() else [])


def run(tmp_path: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(["datalog", "run", "p.dl", "-F", "facts", "-D", str(out)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_killed_runs_leave_all_old_or_all_new_outputs(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "facts").mkdir()
    out = tmp_path / "out"
    facts(tmp_path / "facts", "v0")
    start = time.monotonic()
    assert run(tmp_path, out).wait(timeout=300) == 0
    duration = time.monotonic() - start
    assert tags(out) == {"v0"}
    current, outcomes = "v0", {"old": 0, "new": 0}
    rng = random.Random(15)
    for attempt in range(1, 13):
        tag = f"v{attempt}"
        facts(tmp_path / "facts", tag)
        process = run(tmp_path, out)
        # late in the run, where the outputs are written, most of the time
        time.sleep(duration * rng.uniform(0.5, 1.1))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        recover(str(out))  # what the next run does first
        assert not leftovers(out)
        seen = tags(out)
        assert seen in ({current}, {tag}), (attempt, seen)
        outcomes["new" if seen == {tag} else "old"] += 1
        current = seen.pop()
    assert run(tmp_path, out).wait(timeout=300) == 0   # the last facts, run to the end
    assert tags(out) == {tag} and not leftovers(out)
    print(outcomes)


CRASH = r"""
import os, signal, sys
from datalog.dialect import journal
limit, calls = int(sys.argv[2]), [0]
real = os.replace
def replace(src, dst):
    if calls[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
    calls[0] += 1
    real(src, dst)
os.replace = replace
out = sys.argv[1]
journal.replace_all({os.path.join(out, n + ".csv"): "new\n" * 1000
                     for n in ("a", "b", "c")}, out)
"""


@pytest.mark.parametrize("crash_at", range(5))
def test_a_kill_at_every_rename_is_recovered(tmp_path, crash_at):
    """The renames are the journal's (1) and the three outputs' (2-4): a kill
    before each, recovered, gives all old (before the journal) or all new."""
    out = tmp_path / "out"
    out.mkdir()
    for name in "abc":
        (out / f"{name}.csv").write_text("old\n")
    result = subprocess.run([sys.executable, "-c", CRASH, str(out), str(crash_at)],
                            capture_output=True, check=False, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert result.returncode == (-signal.SIGKILL if crash_at < 4 else 0), result.stderr
    recover(str(out))
    texts = {(out / f"{name}.csv").read_text() for name in "abc"}
    assert texts == ({"old\n"} if crash_at == 0 else {"new\n" * 1000})
    assert sorted(os.listdir(out)) == ["a.csv", "b.csv", "c.csv"]


def test_an_output_that_is_a_folder_fails_before_anything_is_replaced(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "facts").mkdir()
    facts(tmp_path / "facts", "v0")
    out = tmp_path / "out"
    (out / "sub" / "c.csv").mkdir(parents=True)
    (out / "a.csv").write_text("old\n")
    result = subprocess.run(["datalog", "run", "p.dl", "-F", "facts", "-D", "out"],
                            cwd=tmp_path, capture_output=True, text=True, check=False,
                            timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "c.csv: it is a folder" in result.stderr
    assert (out / "a.csv").read_text() == "old\n"
    assert not leftovers(out)


CRASH_WRITING = r"""
import os, signal, sys, tempfile
from datalog.dialect import journal
limit, calls = int(sys.argv[2]), [0]
real = tempfile.mkstemp
def mkstemp(*args, **kwargs):
    if calls[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
    calls[0] += 1
    return real(*args, **kwargs)
tempfile.mkstemp = mkstemp
out = sys.argv[1]
journal.replace_all({os.path.join(out, name): "new\n" * 1000
                     for name in ("a.csv", "sub/b.csv", "c.csv")}, out)
"""


@pytest.mark.parametrize("crash_at", range(4))
def test_a_kill_while_writing_leaves_no_temporary_file_in_any_folder(tmp_path, crash_at):
    """Killed before each temporary file (three outputs, one in a subfolder,
    then the journal's), the outputs stay old and recovery leaves no temporary
    file, also in the subfolder that no journal names yet."""
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    for name in ("a.csv", "sub/b.csv", "c.csv"):
        (out / name).write_text("old\n")
    result = subprocess.run([sys.executable, "-c", CRASH_WRITING, str(out), str(crash_at)],
                            capture_output=True, check=False, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert result.returncode == -signal.SIGKILL, result.stderr
    recover(str(out))
    assert {(out / name).read_text() for name in ("a.csv", "sub/b.csv", "c.csv")} == {"old\n"}
    assert not leftovers(out)
