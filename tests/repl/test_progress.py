"""A statement that runs long shows a line of progress at the terminal, erased
before its answer; through a pipe nothing of the kind is written."""

from tests.repl.test_terminal import Terminal
from tests.repl.transcripts import run_repl

COUNTER = """.decl c(n: number)
.decl top(n: number)
c(n + 1) :- c(n), n < 600000.
top(n) :- c(n), n >= 600000.
"""
# 600,000 iterations: several seconds, well past the one second after which the
# progress line shows, however fast the machine (150,000 once took under one)


def test_a_long_statement_shows_progress_then_its_answer(tmp_path):
    program = tmp_path / "count.dl"
    program.write_text(COUNTER)
    term = Terminal([str(program)], home=tmp_path, cwd=tmp_path)
    try:
        term.expect("datalog>")
        term.send("c(0).\r")
        term.expect("running for", timeout=120)
        term.expect("committed: 600002 inserted", timeout=300)
        term.send("?- top(n).\r")
        term.expect("top(600000)")
        term.send(":quit\r")
        assert term.wait() == 0
    finally:
        term.kill()
    answer = term.raw.index("+c(")
    shown = term.raw.rindex("(Ctrl-C stops it)", 0, answer)
    # the progress line was erased (carriage return, erase to the end of the
    # line) before the statement's first line of output
    assert "\r\x1b[K" in term.raw[shown:answer]


def test_no_progress_through_a_pipe(tmp_path):
    program = tmp_path / "count.dl"
    program.write_text(COUNTER)
    lines, status = run_repl([str(program)], "c(0).\n", cwd=tmp_path)
    assert status == 0 and "committed: 600002 inserted, 0 retracted" in lines
    assert not any("running for" in line for line in lines)
