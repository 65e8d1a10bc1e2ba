"""``datalog repl`` on a pseudo-terminal: the prompt, the continuation prompt,
Tab completion and the history file, through the real process and prompt_toolkit.

The screen is read with its escape sequences removed; prompt_toolkit draws a
prompt's trailing blank by moving the cursor, so the prompts are expected
without it (``datalog>``, ``...``).
"""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from tests.repl.transcripts import DATA, REPO, repl_command

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]|\r")


class Terminal:
    """A process on a pseudo-terminal; :meth:`expect` waits for text to appear on
    its screen (escape sequences removed)."""

    def __init__(self, args: list[str], home: Path, cwd: Path):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        env = dict(os.environ, HOME=str(home), TERM="xterm", PYTHONPATH=str(REPO),
                   PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100", LINES="24")
        self.process = subprocess.Popen(repl_command() + args, stdin=slave, stdout=slave,
                                        stderr=slave, cwd=cwd, env=env,
                                        start_new_session=True)
        os.close(slave)
        self.seen = ""        # everything read, escapes removed
        self.raw = ""         # everything read, as it came
        self.position = 0     # how far expect() has consumed

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:       # the process closed the terminal
            return False
        if not data:
            return False
        text = data.decode("utf-8", "replace")
        self.raw += text
        self.seen += _ANSI.sub("", text)
        return True

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            found = self.seen.find(text, self.position)
            if found >= 0:
                self.position = found + len(text)
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not seen; screen so far:\n{self.seen}")
            self._read(0.2)

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        status = self.process.wait(timeout=5)
        os.close(self.master)
        return status

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def terminal(tmp_path):
    started = []

    def start(*args: str) -> Terminal:
        term = Terminal([str(DATA / "tc.dl"), "-F", str(DATA / "facts"), *args],
                        home=tmp_path, cwd=tmp_path)
        started.append(term)
        return term

    yield start
    for term in started:
        term.kill()


def test_prompt_completion_continuation_and_history(terminal, tmp_path):
    term = terminal()
    term.expect("datalog>")
    # Tab completes the relation name: `pa` becomes `path`
    term.send("?- pa\t")
    term.expect("path")
    term.send("(1, x).\r")
    term.expect("path(1, 3)")
    term.expect("2 rows")
    term.expect("datalog>")
    # a statement over two lines gets the continuation prompt
    term.send("edge(3,\r")
    term.expect("...")
    term.send("4).\r")
    term.expect("+path(3, 4)")
    term.expect("committed: 3 inserted, 0 retracted")
    term.expect("datalog>")
    # a meta-command is completed too; the prompt shows the open transaction
    term.send(":beg\t")
    term.expect(":begin")     # completion runs in the background: wait for it
    term.send("\r")
    term.expect("datalog*>")
    term.send(":rollback\r")
    term.expect("rolled back")
    term.expect("datalog>")
    # an error does not end the session
    term.send("edg(1, 2).\r")
    term.expect("undefined relation `edg`")
    term.expect("datalog>")
    term.send(":quit\r")
    assert term.wait() == 0

    history = (tmp_path / ".datalog_history").read_text()
    assert "?- path(1, x)." in history
    assert ":quit" in history

    # a new session reads the history: Up recalls the last line (`:quit`)
    again = terminal()
    again.expect("datalog>")
    again.send("\x1b[A")
    again.expect(":quit")
    again.send("\r")
    assert again.wait() == 0


def test_ctrl_c_drops_the_statement_and_ctrl_d_ends_the_session(terminal):
    term = terminal()
    term.expect("datalog>")
    term.send("edge(7,\r")
    term.expect("...")
    term.send("\x03")
    term.expect("datalog>")
    term.send("?- path(7, x).\r")
    term.expect("0 rows")
    term.expect("datalog>")   # type only at a prompt (else the tty eats Ctrl-D)
    term.send("\x04")
    assert term.wait() == 0
