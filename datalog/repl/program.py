"""The REPL's program: the file it started from, plus what the user added.

The session's input is a virtual file named ``<repl>``. Statements that extend the
program (rules, ``.decl``, ``.output``, ...) keep their place in it: the program
text handed to :class:`datalog.Program` is the session's input with every other
line blanked, followed by an ``#include`` of the starting file and of each file
loaded with ``:load``. So the parser, the checks and the compiler report every
position exactly where the user typed it (``<repl>:12:9``) or in the file it
comes from, and a new statement is checked against everything before it.

>>> from datalog.syntax.statements import Statement
>>> text = ProgramText(base=None)
>>> text.extended(Statement(".decl e(x: number)", 2, 1, "program")).text()
'\\n.decl e(x: number)\\n'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from datalog.syntax.statements import Statement

#: The name of the session's input in diagnostics.
REPL_PATH = "<repl>"


@dataclass(frozen=True)
class ProgramText:
    """The pieces of the REPL's program: the starting file (``None`` for none),
    the statements added at the prompt, and the files loaded with ``:load``, in
    order. File paths are kept as the user wrote them: ``<repl>`` has no folder,
    so they are included relative to the working directory, and diagnostics name
    them as written."""

    base: str | None
    statements: tuple[Statement, ...] = ()
    loaded: tuple[str, ...] = ()

    def extended(self, statement: Statement) -> ProgramText:
        return replace(self, statements=self.statements + (statement,))

    def with_file(self, path: str) -> ProgramText:
        return replace(self, loaded=self.loaded + (path,))

    def text(self) -> str:
        """The program as one text whose lines are the lines of ``<repl>``."""
        lines: list[str] = []
        for statement in self.statements:
            padded = statement.padded().split("\n")
            if len(lines) < len(padded):
                lines.extend([""] * (len(padded) - len(lines)))
            first = statement.line - 1
            # several statements may share a line: overlay the padded text
            for offset, piece in enumerate(padded[first:]):
                number = first + offset
                lines[number] = _overlay(lines[number], piece)
        files = ([self.base] if self.base else []) + list(self.loaded)
        lines.extend(f'#include "{_quote(path)}"' for path in files)
        return "\n".join(lines) + "\n"


def _overlay(old: str, new: str) -> str:
    """``new`` written over ``old`` where ``new`` is not blank: statements on one
    line occupy disjoint columns."""
    width = max(len(old), len(new))
    old, new = old.ljust(width), new.ljust(width)
    return "".join(n if n != " " else o for o, n in zip(old, new)).rstrip()


def _quote(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
