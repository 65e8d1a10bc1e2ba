"""A line of progress at the terminal while a statement runs long.

When a statement has been running for more than a second at the terminal,
one line says for how long and how to stop it, updated every second; it is
erased before the statement writes anything, and when it ends (also by
Ctrl-C). Through a pipe nothing is shown: the REPL only uses this when its
input and output are a terminal.
"""

from __future__ import annotations

import threading
import time
from typing import IO

ERASE = "\r\x1b[K"


class Progress:
    """``with Progress(repl, stream):`` shows the line on ``stream`` while the
    block runs longer than ``after`` seconds. The REPL's output streams are
    wrapped for the block's duration, so any write erases the line first and
    stops it (the statement is then answering)."""

    def __init__(self, repl, stream: IO[str], after: float = 1.0, every: float = 1.0):
        self.repl, self.stream = repl, stream
        self.after, self.every = after, every
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._shown = False

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._streams = self.repl.out, self.repl.err
        self.repl.out, self.repl.err = (_Erasing(s, self) for s in self._streams)
        self._thread = threading.Thread(target=self._run, name="repl-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        self._thread.join()
        self.repl.out, self.repl.err = self._streams

    def stop(self) -> None:
        """Erase the line, and show it no more."""
        with self._lock:
            self._stop.set()
            self._erase()

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                seconds = time.monotonic() - self._start
                self.stream.write(f"{ERASE}running for {seconds:.0f} s (Ctrl-C stops it)")
                self.stream.flush()
                self._shown = True
            if self._stop.wait(self.every):
                return

    def _erase(self) -> None:
        if self._shown:
            self.stream.write(ERASE)
            self.stream.flush()
            self._shown = False


class _Erasing:
    """A stream whose first write stops the progress line (erasing it)."""

    def __init__(self, stream: IO[str], progress: Progress):
        self._stream, self._progress = stream, progress

    def write(self, text: str) -> int:
        self._progress.stop()
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
