"""Colours and long outputs of ``datalog repl`` on a pseudo-terminal, and their
absence through a pipe: the real process, its real output bytes."""

import os

from tests.repl.test_terminal import Terminal
from tests.repl.transcripts import DATA, run_repl

GREEN, RED, YELLOW = "\x1b[32m", "\x1b[31m", "\x1b[33m"


def start(tmp_path, env=None) -> Terminal:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        return Terminal([str(DATA / "tc.dl"), "-F", str(DATA / "facts")],
                           home=tmp_path, cwd=tmp_path)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_changes_errors_and_warnings_are_coloured_on_a_terminal(tmp_path):
    term = start(tmp_path)
    try:
        term.expect("datalog>")
        term.send("edge(3, 4).\r")
        term.expect("committed: 3 inserted")
        term.send("-edge(3, 4).\r")
        term.expect("committed: 0 inserted, 3 retracted")
        term.send("-edge(9, 9).\r")
        term.expect("no such row")
        term.send("edg(1, 2).\r")
        term.expect("undefined relation `edg`")
        term.expect("datalog>")
        term.send(":quit\r")
        assert term.wait() == 0
    finally:
        term.kill()
    assert f"{GREEN}+path(1, 4)\x1b[0m" in term.raw
    assert f"{RED}-path(1, 4)\x1b[0m" in term.raw
    assert f"{YELLOW}warning: -edge(9, 9) changed nothing" in term.raw
    assert f"{RED}<repl>:4:1: error: undefined relation `edg`\x1b[0m" in term.raw


def test_no_colour_with_no_color_set(tmp_path):
    term = start(tmp_path, {"NO_COLOR": "1"})
    try:
        term.expect("datalog>")
        term.send("edge(3, 4).\r")
        term.expect("committed: 3 inserted")
        term.send(":quit\r")
        assert term.wait() == 0
    finally:
        term.kill()
    assert GREEN not in term.raw and "+path(1, 4)" in term.raw


def test_long_outputs_are_cut_on_a_terminal_and_more_shows_them(tmp_path):
    term = start(tmp_path, {"PAGER": "cat"})
    try:
        term.expect("datalog>")
        for i in range(60):       # a chain 10 -> 11 -> ... -> 70
            term.send(f"edge({10 + i}, {11 + i}).\r")
            term.expect("committed")
        term.expect("datalog>")
        begin = len(term.seen)
        term.send("?- path(10, x).\r")
        term.expect("path(10, 60)")
        term.expect("... 10 more (of 60): `:more` shows them all")
        term.expect("60 rows")
        assert "path(10, 61)" not in term.seen[begin:]
        term.send(":more\r")
        term.expect("path(10, 70)")
        term.expect("60 lines")
        term.send(":quit\r")
        assert term.wait() == 0
    finally:
        term.kill()


def test_no_colour_and_no_cut_through_a_pipe(tmp_path):
    lines = "".join(f"edge({10 + i}, {11 + i}).\n" for i in range(60))
    output, status = run_repl([str(DATA / "tc.dl")],
                              lines + "-edge(9, 9).\n?- path(11, x).\nedg(1).\n", tmp_path)
    assert status == 1
    text = "\n".join(output)
    assert "\x1b[" not in text
    assert "path(11, 70)" in text and "more (of" not in text and "no such row" in text
