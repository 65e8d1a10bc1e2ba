"""Every transcript ``tests/repl/*.txt`` through the real ``datalog repl`` process
(see :mod:`tests.repl.transcripts` for the format)."""

import shutil
from pathlib import Path

import pytest

from tests.repl.transcripts import DATA, REGENERATE, Transcript, compare, run_repl

CASES = sorted(Path(__file__).resolve().parent.glob("*.txt"))


def _workdir(tmp_path: Path) -> Path:
    """A fresh directory holding a copy of ``tests/repl/data`` (the REPL may
    write into it)."""
    work = tmp_path / "work"
    shutil.copytree(DATA, work)
    return work


def test_there_are_transcripts():
    assert len(CASES) >= 8


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_transcript(case: Path, tmp_path: Path):
    transcript = Transcript.parse(case.read_text())
    if REGENERATE:
        case.write_text(transcript.regenerated(_workdir(tmp_path / "regen")))
        transcript = Transcript.parse(case.read_text())
    output, status = run_repl(transcript.args, transcript.input, _workdir(tmp_path))
    difference = compare(transcript.expected, output)
    assert difference is None, f"{case.name}:\n{difference}"
    assert status == transcript.exit, f"{case.name}: exit status {status}"
