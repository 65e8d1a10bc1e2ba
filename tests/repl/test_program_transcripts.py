"""The REPL transcripts in the opening comments of ``programs/*/*.dl``, through the
real ``datalog repl`` process: what the documentation says the REPL prints is what
it prints.

A transcript there shows each statement's change lines (``+path(1, 3)``) or
matching rows, without the summary line that ends each statement's output
(``committed: ...``, ``2 rows``); the REPL's output is cut at those lines into one
piece per statement, and the pieces, summary lines removed, must equal the
transcript's.
"""

import re

import pytest

from tests.programs import example_programs
from tests.repl.transcripts import compare, run_repl

EXAMPLES = [example for example in example_programs() if example.transcript()]
SUMMARY = re.compile(r"^(committed|recompiled): \d+ inserted, \d+ retracted$|^\d+ rows?$")


def test_there_are_examples_with_transcripts():
    assert EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_program_transcript(example, tmp_path):
    steps = example.transcript()
    args = [str(example.path)]
    if example.facts_dir.is_dir():
        args += ["-F", str(example.facts_dir)]
    text = "".join(step.statement + "\n" for step in steps)
    output, status = run_repl(args, text, tmp_path)
    pieces: list[list[str]] = [[]]
    for line in output:
        if SUMMARY.match(line):
            pieces.append([])
        else:
            pieces[-1].append(line)
    assert pieces[-1] == [], f"output after the last statement: {pieces[-1]}"
    assert len(pieces) - 1 == len(steps), "\n".join(output)
    for step, printed in zip(steps, pieces):
        difference = compare(list(step.output), printed)
        assert difference is None, f"after `{step.statement}`:\n{difference}"
    assert status == 0
