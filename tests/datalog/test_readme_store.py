"""The Python example of the README's section on verify, dry runs, durable
sessions and time travel runs and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import os
import runpy

from tests.repl.transcripts import REPO, matches


def section_code() -> str:
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Verify, dry run, durable sessions, time travel\n"):]
    return section.split("```python\n", 1)[1].split("```\n", 1)[0]


def test_readme_example(tmp_path, monkeypatch):
    code = section_code()
    os.symlink(REPO / "programs", tmp_path / "programs")
    monkeypatch.chdir(tmp_path)
    example = tmp_path / "example.py"
    example.write_text(code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(example))
    assert out.getvalue().splitlines() == [
        "[('backup',), ('db',)]",
        "verified: every relation equals its from-scratch evaluation (8 relations, 28 rows)",
        "[('printer',)]",
        out.getvalue().splitlines()[3]]
    assert matches("reopened net.store: replayed 2 transactions (the snapshot of "
                   "transaction 0, then 2 from the log) in ... ms",
                   out.getvalue().splitlines()[3])
