"""REPL transcripts: what the user types and what ``datalog repl`` must print.

A transcript ``tests/repl/<case>.txt`` reads like a terminal session:

- ``# args: ARGS``: the arguments after ``datalog repl`` (default none); ``{repo}``
  stands for the repository's root, ``{data}`` for ``tests/repl/data``;
- ``# exit: N``: the exit status expected (default 0);
- any other line starting with ``#`` is a comment;
- ``> text`` (or a lone ``>``) is a line of input, fed to the REPL's standard input;
- every other line is expected output: standard output and standard error merged,
  in order. ``...`` inside an expected line matches any text (timings).

The REPL runs as a real process (the installed ``datalog`` command), in a fresh
temporary directory (so ``:save out`` writes there), with ``$HOME`` pointing at it.
``REPL_REGEN=1 python -m pytest tests/repl`` rewrites the expected output of every
transcript from what the REPL prints (review the diff!).

>>> t = Transcript.parse("# args: p.dl\\n> ?- e(x, y).\\ne(1, 2)\\n1 row\\n")
>>> t.args, t.input, t.expected, t.exit
(['p.dl'], '?- e(x, y).\\n', ['e(1, 2)', '1 row'], 0)
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
REGENERATE = bool(os.environ.get("REPL_REGEN"))


@dataclass
class Transcript:
    args: list[str]
    input: str
    expected: list[str]
    exit: int
    lines: list[str]          # the file's lines, for regeneration

    @classmethod
    def parse(cls, text: str) -> Transcript:
        args: list[str] = []
        exit_status = 0
        inputs: list[str] = []
        expected: list[str] = []
        lines = text.splitlines()
        for line in lines:
            if line.startswith("# args:"):
                args = shlex.split(line[len("# args:"):].format(repo=REPO, data=DATA))
            elif line.startswith("# exit:"):
                exit_status = int(line[len("# exit:"):])
            elif line.startswith("#"):
                continue
            elif line == ">" or line.startswith("> "):
                inputs.append(line[2:])
            else:
                expected.append(line)
        return cls(args, "".join(i + "\n" for i in inputs), expected, exit_status, lines)

    def regenerated(self, cwd: Path) -> str:
        """The transcript's text with the output the REPL prints now, each line of
        output after the line of input that produced it (the REPL runs in this
        process, in ``cwd``, one input line at a time)."""
        import io

        from datalog.errors import DatalogError
        from datalog.repl import Repl

        head = [line for line in self.lines if line.startswith("#")
                and not line.startswith("# exit:")]
        body: list[str] = []
        buffer = io.StringIO()
        previous = os.getcwd()
        os.chdir(cwd)
        try:
            fact_dir = self.args[self.args.index("-F") + 1] if "-F" in self.args else None
            path = self.args[0] if self.args and self.args[0] != "-F" else None
            try:
                repl = Repl(path, fact_dir, out=buffer, err=buffer)
            except DatalogError as error:
                return "\n".join(head + ["# exit: 1"] + _lines(self.input, ">")
                                  + str(error).splitlines()) + "\n"
            for line in self.input.splitlines():
                body.append(f"> {line}".rstrip() if line else ">")
                if not repl.done:
                    repl.feed(line)
                body.extend(_drain(buffer))
            if not repl.done:
                for statement in repl.reader.flush():
                    repl.execute(statement)
            repl.finish()
            body.extend(_drain(buffer))
        finally:
            os.chdir(previous)
        exit_line = ["# exit: 1"] if repl.failed else []
        body = [re.sub(r"\d+\.\d+ ms", "... ms", line) for line in body]
        return "\n".join(head + exit_line + body) + "\n"


def _drain(buffer) -> list[str]:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text.splitlines()


def _lines(text: str, prefix: str) -> list[str]:
    return [f"{prefix} {line}".rstrip() for line in text.splitlines()]


def repl_command() -> list[str]:
    """The installed ``datalog`` command, or the same entry point through this
    Python."""
    found = shutil.which("datalog")
    return [found, "repl"] if found else [sys.executable, "-m", "cli", "repl"]


def run_repl(args: list[str], text: str, cwd: Path,
             timeout: float = 120) -> tuple[list[str], int]:
    """Run ``datalog repl ARGS`` with ``text`` on standard input; its output lines
    (stdout and stderr merged) and exit status."""
    env = dict(os.environ, HOME=str(cwd), PYTHONPATH=str(REPO))
    result = subprocess.run(repl_command() + args, check=False, input=text,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=cwd, env=env, timeout=timeout)
    return result.stdout.splitlines(), result.returncode


def matches(expected: str, actual: str) -> bool:
    """``actual`` is ``expected``, where ``...`` stands for any text."""
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(piece) for piece in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def compare(expected: list[str], actual: list[str]) -> str | None:
    """``None`` if the lines agree, else a readable difference."""
    if len(expected) == len(actual) and all(map(matches, expected, actual)):
        return None
    import difflib
    return "\n".join(difflib.unified_diff(expected, actual, "expected", "actual",
                                          lineterm=""))
