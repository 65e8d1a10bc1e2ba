"""Folders a program may read and write, for applications that run untrusted
programs (``datalog run --sandbox DIR``, ``Program(..., sandbox=[DIR])``).

Paths follow Soufflé's rules everywhere: ``#include "f"`` is relative to the
including file, then to each ``-I`` folder; ``filename=`` is relative to ``-F``
(inputs) or ``-D`` (outputs) and may be absolute or climb with ``..``; ``:load``
and ``:save`` take paths as typed. Under a sandbox, every file the engine opens
on a program's behalf -- the program file, each included file, each fact file,
each output and ``:save`` file -- must lie, after symbolic links are resolved,
inside one of the sandbox's folders; anything else is refused *before it is
opened*, so no byte of it can appear in a diagnostic.

The sandbox in force is a context variable (:func:`active`): a
:class:`~datalog.Program` made with ``sandbox=`` puts it in force while it reads
its files, and its sessions, runs and the REPL while they read and write theirs.

>>> import tempfile, os
>>> inside = tempfile.mkdtemp()
>>> with active([inside]):
...     check(os.path.join(inside, "a.facts"), "fact file")
...     check("/etc/passwd", "fact file")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
datalog.sandbox.SandboxError: error: /etc/passwd: fact file outside the sandbox (allowed: ...)
hint: under --sandbox, files may be read and written only inside its folders
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Sequence

from datalog.errors import DataError, Diagnostic, Span

_ACTIVE: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "datalog_sandbox", default=None)


class SandboxError(DataError):
    """A file outside the sandbox's folders was asked for."""


def folders(sandbox: Sequence[str | os.PathLike] | str | os.PathLike | None
            ) -> tuple[str, ...] | None:
    """A sandbox's folders, resolved (``None``: no sandbox)."""
    if sandbox is None:
        return None
    if isinstance(sandbox, (str, os.PathLike)):
        sandbox = [sandbox]
    resolved = tuple(os.path.realpath(os.fspath(folder)) for folder in sandbox)
    if not resolved:
        raise DataError("a sandbox needs at least one folder")
    return resolved


@contextlib.contextmanager
def active(sandbox: Sequence[str | os.PathLike] | str | os.PathLike | None) -> Iterator[None]:
    """Put ``sandbox`` (folders, or ``None`` for none) in force for the block;
    an enclosing sandbox stays in force too (the block may only narrow it)."""
    allowed = folders(sandbox)
    outer = _ACTIVE.get()
    if allowed is None:
        yield
        return
    if outer is not None:
        allowed = tuple(f for f in allowed if _within(f, outer)) or outer
    token = _ACTIVE.set(allowed)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def current() -> tuple[str, ...] | None:
    """The folders of the sandbox in force, or ``None``."""
    return _ACTIVE.get()


def _within(path: str, allowed: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
               for folder in allowed)


def check(path: str | os.PathLike, what: str, span: Span | None = None) -> None:
    """Refuse ``path`` (a ``what``: "fact file", "output", ...) unless the
    sandbox in force allows it (no sandbox allows everything)."""
    allowed = _ACTIVE.get()
    if allowed is None:
        return
    shown = os.fspath(path)
    if "\0" not in shown and _within(os.path.realpath(shown), allowed):
        return
    location = "" if span is not None else f"{shown}: "
    raise SandboxError([Diagnostic(
        "error", f"{location}{what} outside the sandbox (allowed: {', '.join(allowed)})",
        span, hint="under --sandbox, files may be read and written only inside its folders")])
