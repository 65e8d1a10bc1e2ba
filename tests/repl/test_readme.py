"""The REPL transcript in the README's ``## REPL`` section is what the REPL prints."""

import shlex

from tests.repl.transcripts import REPO, compare, run_repl


def readme_transcript() -> tuple[list[str], str, list[str]]:
    """The command's arguments, the input typed at the prompts, and the expected
    output, from the first code block of the README's REPL section."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## REPL\n"):]
    block = section.split("```\n", 2)[1].splitlines()
    command = block[0]
    assert command.startswith("$ datalog repl ")
    args = shlex.split(command[len("$ datalog repl "):])
    typed, expected = [], []
    for line in block[1:]:
        for prompt in ("datalog> ", "datalog*> "):
            if line.startswith(prompt):
                typed.append(line[len(prompt):])
                break
        else:
            expected.append(line)
    return args, "".join(t + "\n" for t in typed), expected


def test_readme_transcript(tmp_path):
    args, typed, expected = readme_transcript()
    assert typed and expected
    output, status = run_repl([str(REPO / a) if not a.startswith("-") else a
                               for a in args], typed, tmp_path)
    difference = compare(expected, output)
    assert difference is None, difference
    assert status == 1          # the transcript shows an error on purpose
