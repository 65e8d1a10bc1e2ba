"""Diagnostics and the project's one error family.

A :class:`Diagnostic` is a message about a place in the source. Its text is what
the command line prints::

    prog.dl:7:14: error: undefined relation `edg`
        path(x, y) :- edg(x, y).
                      ^~~
    hint: did you mean `edge`?

Every error the library raises is a :class:`DatalogError` (or a subclass); its
``str()`` is that same text, and it carries the first diagnostic's ``path``,
``line`` and ``column`` for tools.

>>> d = Diagnostic("error", "undefined relation `edg`", Span("p.dl", 1, 15, 1, 18),
...                hint="did you mean `edge`?")
>>> print(d.format({"p.dl": "path(x, y) :- edg(x, y)."}))
p.dl:1:15: error: undefined relation `edg`
    path(x, y) :- edg(x, y).
                  ^~~
hint: did you mean `edge`?
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Span:
    """Where a node's text is: file path, 1-based line and column of its first
    character, and line and column just past its last character."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """``severity`` is ``error`` or ``warning``; ``span`` may be ``None`` for a
    message about no particular place (a missing file given on the command line);
    a span with ``line == 0`` names a file only, and ``column == 0`` a line only
    (``facts.tsv:3: error: ...``)."""

    severity: str
    message: str
    span: Span | None = None
    hint: str | None = None

    def location(self) -> str:
        span = self.span
        if span is None:
            return ""
        if span.line <= 0:
            return f"{span.path}: "
        if span.column <= 0:
            return f"{span.path}:{span.line}: "
        return f"{span.path}:{span.line}:{span.column}: "

    def format(self, sources: Mapping[str, str] | None = None) -> str:
        """The diagnostic as text; with the source text of its file in
        ``sources`` (path -> text) it shows the line and a caret under the span."""
        lines = [f"{self.location()}{self.severity}: {self.message}"]
        span = self.span
        text = (sources or {}).get(span.path) if span is not None else None
        if text is not None and span.line > 0 and span.column > 0:
            source_line = _line(text, span.line)
            if source_line is not None:
                source_line = source_line.expandtabs(1)
                if span.end_line == span.line and span.end_column > span.column:
                    width = span.end_column - span.column
                else:
                    width = max(1, len(source_line) - span.column + 1)
                shown, column, width = _window(source_line, span.column - 1, width)
                lines.append("    " + shown)
                lines.append("    " + " " * column + "^" + "~" * (width - 1))
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        span = self.span
        return {
            "severity": self.severity,
            "message": self.message,
            "path": span.path if span else None,
            "line": span.line if span else None,
            "column": span.column if span else None,
            "end_line": span.end_line if span else None,
            "end_column": span.end_column if span else None,
            "hint": self.hint,
        }


#: A source line longer than this is shown as a window around the caret.
SHOWN_LINE = 120


def _line(text: str, number: int) -> str | None:
    """Line ``number`` (1-based) of a program's text, as the parser counts lines
    (at ``\\n`` only: a form feed or U+2028 does not end a line)."""
    start = 0
    for _ in range(number - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    if start >= len(text):  # after the last line break: no line
        return None
    end = text.find("\n", start)
    line = text[start:] if end < 0 else text[start:end]
    return line[:-1] if line.endswith("\r") else line


def _window(line: str, column: int, width: int) -> tuple[str, int, int]:
    """``line`` cut to about :data:`SHOWN_LINE` characters around ``column``
    (0-based) with ``...`` where it was cut, the caret's column in it and the
    caret's width.

    >>> _window("x" * 1000 + "error" + "y" * 1000, 1000, 5)[1:]
    (43, 5)
    >>> _window("short", 1, 2)
    ('short', 1, 2)
    """
    if len(line) <= SHOWN_LINE:
        return line, column, width
    start = max(0, column - 40)
    end = min(len(line), start + SHOWN_LINE)
    width = max(1, min(width, end - column))
    prefix = "..." if start > 0 else ""
    suffix = "..." if end < len(line) else ""
    return prefix + line[start:end] + suffix, column - start + len(prefix), width


class DatalogError(Exception):
    """Every error this library raises on purpose. ``str(error)`` is the text the
    CLI prints (each diagnostic with its source line and caret). ``path``, ``line``
    and ``column`` locate the first error (``None`` where there is no place)."""

    def __init__(self, diagnostics: Iterable[Diagnostic] | str,
                 sources: Mapping[str, str] | None = None):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("error", diagnostics)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.sources = dict(sources or {})
        super().__init__(self.text())

    def text(self) -> str:
        return "\n".join(d.format(self.sources) for d in self.diagnostics)

    def __str__(self) -> str:
        return self.text()

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def _first(self) -> Span | None:
        for d in self.errors or self.diagnostics:
            return d.span
        return None

    @property
    def path(self) -> str | None:
        span = self._first()
        return span.path if span else None

    @property
    def line(self) -> int | None:
        span = self._first()
        return span.line if span and span.line > 0 else None

    @property
    def column(self) -> int | None:
        span = self._first()
        return span.column if span and span.column > 0 else None


class ParseError(DatalogError):
    """The text is not a program of the dialect (syntax, ``#include``, macros)."""


class CheckError(DatalogError):
    """The program parses but is wrong: undefined relations, arity or type
    mismatches, unbound variables, stratification cycles through negation."""


class DataError(DatalogError):
    """A fact file or a row handed to a session does not fit its relation."""


class EvaluationError(DatalogError):
    """Evaluation could not finish: an iteration limit, a failing functor."""


class StoreError(DatalogError):
    """A session's store (``store=DIR``) cannot be opened or written: another
    program's store, a damaged log, a full disk."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, if one is close enough.

    >>> did_you_mean("edg", ["edge", "path"])
    'did you mean `edge`?'
    """
    match = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{match[0]}`?" if match else None
