"""Reading the REPL's input: lines -> complete statements -> kinds.

A *statement* is what the REPL executes at once. It may span lines; it ends

- at a ``.`` outside strings, comments and brackets that is followed by the end of
  the line, a blank or a comment (``edge(1, 2).``, a rule, ``?- path(1, x).``);
  a ``.`` between digits (``1.5``) or before a name (``.decl``) does not end it;
- at the end of a line whose brackets are balanced, for the statements that have
  no terminator: directives (``.decl e(x: number)``, ``.output e``), ``#define``,
  meta-commands (``:dump path``), DDlog commands (``commit;``) and queries written
  ``?path(1, x)``.

A line may hold several statements (``edge(1, 2). edge(2, 3).``). Each
:class:`Statement` keeps the line and column where it starts in the session's
input, so diagnostics point into the text as the user typed it.

>>> reader = StatementReader()
>>> reader.feed("edge(1, 2). +edge(2,")
[Statement(text='edge(1, 2).', line=1, column=1, kind='assert')]
>>> reader.pending
True
>>> reader.feed("  3).")
[Statement(text='+edge(2,\\n  3).', line=1, column=13, kind='assert')]
>>> [s.kind for s in reader.feed(".decl p(x: number) // a directive")]
['program']
>>> [s.kind for s in reader.feed("?- path(1, x).")]
['query']
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

#: DDlog's command-line transaction commands, accepted as synonyms of meta-commands.
DDLOG_COMMANDS = {
    "start": ":begin",
    "commit": ":commit",
    "commit dump_changes": ":commit",
    "rollback": ":rollback",
}
_DDLOG = re.compile(r"^(start|commit(?:\s+dump_changes)?|rollback)\s*;$")
#: Words alone on a line that leave or ask for help, as other REPLs take them.
WORDS = {"exit": ":quit", "quit": ":quit", "help": ":help", ":q": ":quit", ":h": ":help"}
_WORD_LINE = re.compile(r"^(exit|quit|help)\s*[;.]?$")
#: DDlog's update and relation commands, which end with `;`: `insert R(1, 2);`,
#: `delete R(1, 2);` (several joined by `,`), `dump R;`, `dump;`, `clear R;`.
_DDLOG_LINE = re.compile(r"^(?:(?:insert|delete)\s+[A-Za-z_?]|(?:dump|clear)\b\s*[A-Za-z_?;])")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


@dataclass(frozen=True)
class Statement:
    """One statement of the session: its text (lines joined by ``\\n``, without
    the leading blanks of its first line), where it starts (1-based line and
    column of the session input) and its kind:

    - ``meta``: a meta-command such as ``:dump path`` (DDlog's ``commit;`` too);
    - ``query``: ``?- path(1, x).`` or ``?path(1, x)``;
    - ``assert`` / ``retract``: ``edge(1, 2).`` or ``+edge(1, 2).`` / ``-edge(1, 2).``;
    - ``program``: rules, directives, declarations: text that extends the program.
    """

    text: str
    line: int
    column: int
    kind: str

    def padded(self, text: str | None = None) -> str:
        """``text`` (by default the statement's own) placed at the statement's
        line and column, so that a parser reading it reports positions in the
        session's input."""
        return "\n" * (self.line - 1) + " " * (self.column - 1) + (
            self.text if text is None else text)

    @property
    def end_line(self) -> int:
        return self.line + self.text.count("\n")


def classify(text: str) -> str:
    """The kind of a complete statement (see :class:`Statement`).

    >>> [classify(t) for t in [":rels", "commit dump_changes;", "?path(1, x)",
    ...  "-edge(1, 2).", "edge(1, 2).", "p(x) :- q(x).", ".output p"]]
    ['meta', 'meta', 'query', 'retract', 'assert', 'program', 'program']
    """
    if text.startswith(":") and not text.startswith(":-"):
        return "meta"
    if _DDLOG.match(text) or _WORD_LINE.match(text) or _DDLOG_LINE.match(text):
        return "meta"
    if text.startswith("?"):
        return "query"
    if text.startswith("+"):
        return "assert"
    if text.startswith("-") and not text.startswith("-:"):
        return "retract"
    if text.startswith((".", "#")) or _has_toplevel_turnstile(text):
        return "program"
    return "assert"


def meta_words(text: str) -> list[str]:
    """A meta-command's words, DDlog commands translated: ``commit dump_changes;``
    -> ``[':commit']``.

    >>> meta_words(":dump  path")
    [':dump', 'path']
    >>> meta_words("commit;")
    [':commit']
    >>> meta_words(':save "my dir"')
    [':save', 'my dir']
    >>> meta_words("exit"), meta_words("insert edge(1, 2), delete edge(2, 3);")
    ([':quit'], [':insert', 'edge(1, 2), delete edge(2, 3);'])
    """
    match = _DDLOG.match(text)
    if match:
        return [DDLOG_COMMANDS[" ".join(match.group(1).split())]]
    match = _WORD_LINE.match(text)
    if match:
        return [WORDS[match.group(1)]]
    if _DDLOG_LINE.match(text):
        word = text.split(None, 1)[0].rstrip(";")
        return [f":{word}", text[len(word):].strip()]
    try:
        return shlex.split(text)      # `:load "my file.dl"`
    except ValueError:                # an unbalanced quote: take the words as they are
        return text.split()


def has_toplevel(text: str, chars: str) -> bool:
    """Whether one of ``chars`` occurs in ``text`` outside strings, comments
    and brackets (a query with a top-level ``,`` is a conjunction).

    >>> has_toplevel('p(1, x), q(x)', ","), has_toplevel('p(1, "a,b")', ",")
    (True, False)
    """
    scanner = _Scanner()
    i = 0
    while i < len(text):
        if scanner.plain(text[i]) and scanner.depth == 0 and text[i] in chars and \
                not text.startswith(("//", "/*"), i):
            return True
        i += scanner.step(text, i)
    return False


def split_toplevel(text: str, separator: str) -> list[tuple[int, str]]:
    """``text`` cut at each ``separator`` outside strings, comments and
    brackets: ``(offset, piece)`` pairs.

    >>> split_toplevel('insert r(1, ","), delete r(2)', ",")
    [(0, 'insert r(1, ",")'), (17, ' delete r(2)')]
    """
    scanner = _Scanner()
    pieces, start, i = [], 0, 0
    while i < len(text):
        if scanner.plain(text[i]) and scanner.depth == 0 and text[i] == separator:
            pieces.append((start, text[start:i]))
            start = i + 1
        i += scanner.step(text, i)
    pieces.append((start, text[start:]))
    return pieces


def _has_toplevel_turnstile(text: str) -> bool:
    scanner = _Scanner()
    for i, char in enumerate(text):
        if scanner.plain(char) and char == ":" and text[i + 1:i + 2] == "-":
            return True
        scanner.step(text, i)
    return False


class _Scanner:
    """Tracks whether a position is inside a string or a comment, and the depth of
    brackets, as the text is read one character at a time."""

    def __init__(self) -> None:
        self.string = False       # inside "..."
        self.escape = False       # just after a backslash inside a string
        self.block = False        # inside /* ... */
        self.line_comment = False  # inside // ... (until the end of the line)
        self.depth = 0

    def plain(self, char: str) -> bool:
        """Whether ``char`` (not yet stepped over) is program text, not part of a
        string or comment."""
        return not (self.string or self.block or self.line_comment)

    def step(self, text: str, i: int) -> int:
        """Consume ``text[i]``; returns how many characters were consumed (2 for
        comment delimiters)."""
        char = text[i]
        nxt = text[i + 1:i + 2]
        if self.line_comment:
            if char == "\n":
                self.line_comment = False
            return 1
        if self.block:
            if char == "*" and nxt == "/":
                self.block = False
                return 2
            return 1
        if self.string:
            if self.escape:
                self.escape = False
            elif char == "\\":
                self.escape = True
            elif char == '"' or char == "\n":
                self.string = False
            return 1
        if char == '"':
            self.string = True
        elif char == "/" and nxt == "/":
            self.line_comment = True
            return 2
        elif char == "/" and nxt == "*":
            self.block = True
            return 2
        elif char in _OPENERS:
            self.depth += 1
        elif char in _CLOSERS:
            self.depth = max(0, self.depth - 1)
        return 1


class StatementReader:
    """Cuts the session's input into statements, one line at a time (see the
    module's docstring for where a statement ends)."""

    def __init__(self) -> None:
        self.line = 0             # number of lines fed so far
        self._scanner = _Scanner()
        self._parts: list[str] = []   # lines (or the tail of one) of the statement
        self._start: tuple[int, int] | None = None

    @property
    def pending(self) -> bool:
        """Whether a statement has started and not yet ended (the terminal shows
        the continuation prompt)."""
        return self._start is not None or self._scanner.block

    def reset(self) -> None:
        """Drop the statement being read (Ctrl-C on the terminal)."""
        self._scanner = _Scanner()
        self._parts = []
        self._start = None

    def feed(self, line: str) -> list[Statement]:
        """Read one line of input (without its newline); returns the statements
        it completes, in order."""
        self.line += 1
        line = line.rstrip("\r\n")
        scanner = self._scanner
        scanner.line_comment = False
        statements: list[Statement] = []
        begin = 0                 # where the current statement's text starts in line
        i = 0
        while i < len(line):
            char = line[i]
            if self._start is None:
                if char.isspace() or not scanner.plain(char) or line.startswith(
                        ("//", "/*"), i):
                    i += scanner.step(line, i)
                    continue
                self._start = (self.line, i + 1)
                begin = i
                rest = line[i:].strip()
                if char == ":" and line[i + 1:i + 2] != "-" or _DDLOG.match(rest) or \
                        _WORD_LINE.match(rest) or _DDLOG_LINE.match(rest):
                    # a meta-command takes the rest of the line, comments and all
                    statements.append(self._finish(line[i:].rstrip()))
                    scanner.line_comment = False
                    return statements
            if scanner.plain(char) and char == "." and scanner.depth == 0 and \
                    self._terminates(line, i):
                statements.append(self._finish(line[begin:i + 1]))
                i += 1
                begin = i
                continue
            i += scanner.step(line, i)
        scanner.string = False    # a string never spans lines
        if self._start is not None:
            tail = line[begin:]
            if self._ends_at_line_end("".join(self._parts) + tail):
                statements.append(self._finish(tail.rstrip()))
            else:
                self._parts.append(tail + "\n")
        return statements

    def _terminates(self, line: str, i: int) -> bool:
        before = line[i - 1:i]
        after = line[i + 1:i + 2]
        if before.isdigit() and after.isdigit():
            return False
        if not self._parts and line[:i].strip() == "" and after.isalpha():
            return False          # the dot of a directive: .decl
        return after == "" or after.isspace() or line.startswith(("//", "/*"), i + 1)

    def _ends_at_line_end(self, text: str) -> bool:
        """Statements without a terminator end with their line once their
        brackets are balanced and no string or block comment is open."""
        scanner = self._scanner
        if scanner.depth or scanner.string or scanner.block:
            return False
        head = text.lstrip()
        if head.startswith("?") and text.rstrip().endswith((",", ";")):
            return False          # a conjunctive query continues on the next line
        return head.startswith((".", "#", "?"))

    def _finish(self, tail: str) -> Statement:
        return self._finish_text("".join(self._parts) + tail)

    def _finish_text(self, text: str) -> Statement:
        line, column = self._start
        self._parts = []
        self._start = None
        self._scanner.depth = 0
        return Statement(text, line, column, classify(text))

    def flush(self) -> list[Statement]:
        """At the end of the input: the unfinished statement, if any, as it is
        (executing it reports what is missing)."""
        text = "".join(self._parts).rstrip()
        if self._start is None or not text:
            self.reset()
            return []
        statement = self._finish_text(text)
        self.reset()
        return [statement]
