"""Where the REPL's lines come from: a terminal (prompt_toolkit, with history,
completion, a continuation prompt, colours and outputs cut at
:data:`TERMINAL_LIMIT` rows) or anything else (a pipe, a file: no prompts, no
colours, every row; exit status 1 if a statement failed). ``NO_COLOR`` set in
the environment turns the colours off.

On a terminal the history lives in ``~/.datalog_history`` (``$HOME`` decides where
``~`` is); Tab completes meta-commands, directive keywords, relation names and,
after ``:load`` / ``:save``, file names. The prompt is ``datalog>`` (``datalog*>``
while a transaction is open) and ``...>`` while a statement continues.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import IO

from datalog.errors import DatalogError
from datalog.repl.commands import COMMANDS
from datalog.repl.interpreter import Repl
from datalog.repl.progress import Progress

HISTORY_FILE = ".datalog_history"
#: On a terminal, an output longer than this many rows shows its first ones and
#: a count (`:more` shows all; `:limit` changes it).
TERMINAL_LIMIT = 50
DIRECTIVES = (".decl", ".type", ".input", ".output", ".printsize", ".pragma", ".comp",
              ".init", ".override", ".functor", ".limitsize")
# A word being typed: a command, a directive or a relation name, qualified
# (`roads.re`, `roads.`) when it names a relation of a component instance.
_WORD = re.compile(r"[.:]?[A-Za-z_?][\w?]*(?:\.[A-Za-z_?][\w?]*)*\.?$|[.:]$")
_PATH_COMMAND = re.compile(r"^\s*:(load|save)\s+(\S*)$")


def run(path: str | None = None, fact_dir: str | None = None,
        stdin: IO[str] | None = None, stdout: IO[str] | None = None,
        stderr: IO[str] | None = None, session_options: dict | None = None,
        program_options: dict | None = None) -> int:
    """Run a session over ``path`` (and ``fact_dir``) until the input ends or
    ``:quit``; returns the exit status. ``session_options`` go to every
    session (``spill_threshold=...``), ``program_options`` to every program
    (``macros=...``, ``include_dirs=...``).

    >>> import io
    >>> out = io.StringIO()
    >>> run(stdin=io.StringIO(".decl e(x: number)\\ne(1). e(2).\\n?- e(x).\\ne(1, 2).\\n"),
    ...     stdout=out, stderr=out)
    1
    >>> print(out.getvalue(), end="")
    recompiled: 0 inserted, 0 retracted
    +e(1)
    committed: 1 inserted, 0 retracted
    +e(2)
    committed: 1 inserted, 0 retracted
    e(1)
    e(2)
    2 rows
    <repl>:4:1: error: relation `e` has 1 attribute, got 2 arguments
        e(1, 2).
        ^~~~~~~
    hint: declared at <repl>:1:1
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    try:
        repl = Repl(path, fact_dir, out=stdout, err=stderr,
                    session_options=session_options, program_options=program_options)
    except DatalogError as error:
        stderr.write(str(error) + "\n")
        return 1
    if _is_terminal(stdin) and _is_terminal(stdout):
        repl.interactive = True
        repl.colour = not os.environ.get("NO_COLOR")
        repl.limit = TERMINAL_LIMIT
        interactive(repl)
        return 0
    try:
        repl.feed_lines(stdin)
    except KeyboardInterrupt:
        stderr.write("interrupted\n")
        return 130
    return 1 if repl.failed else 0


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def prompts(repl: Repl) -> tuple[str, str]:
    """The prompt for a new statement and the one for a continued statement.

    >>> class R: in_transaction = True
    >>> prompts(R())
    ('datalog*> ', '      ... ')
    """
    main = "datalog*> " if repl.in_transaction else "datalog> "
    return main, " " * (len(main) - 4) + "... "


def history_path() -> str:
    return os.path.join(os.path.expanduser("~"), HISTORY_FILE)


def interactive(repl: Repl) -> None:
    """Read lines with prompt_toolkit until end of input (Ctrl-D) or ``:quit``;
    Ctrl-C abandons the statement being typed."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    path = history_path()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
        history = FileHistory(path)
    except OSError as exc:
        repl.note(f"warning: no history ({path}: {exc.strerror})")
        history = InMemoryHistory()
    session = PromptSession(history=history, completer=_completer(repl),
                            complete_while_typing=False)
    repl.write("datalog repl: statements end with `.`; `:help` lists the commands")
    while not repl.done:
        main, continued = prompts(repl)
        try:
            line = session.prompt(continued if repl.reader.pending else main)
        except KeyboardInterrupt:
            repl.reader.reset()
            continue
        except EOFError:
            break
        try:
            with Progress(repl, repl.err):
                repl.feed(line)
        except KeyboardInterrupt:
            repl.interrupted()
    if not repl.done:
        for statement in repl.reader.flush():
            repl.execute(statement)
    repl.finish()


def candidates(repl: Repl, before_cursor: str) -> tuple[str, list[str]]:
    """What Tab may complete: the word being typed and the words it may become.

    >>> class R:
    ...     def relation_names(self): return ["edge", "path"]
    >>> candidates(R(), "?- pa")
    ('pa', ['path'])
    >>> candidates(R(), ":du")
    (':du', [':dump'])
    >>> candidates(R(), ":dump e")
    ('e', ['edge'])
    >>> class C:
    ...     def relation_names(self): return ["roads.edge", "roads.reach", "round_trip"]
    >>> candidates(C(), "?- roads.re"), candidates(C(), "ro")[1]
    (('roads.re', ['roads.reach']), ['roads.edge', 'roads.reach', 'round_trip'])
    """
    match = _WORD.search(before_cursor)
    word = match.group(0) if match else ""
    if word.startswith(":"):
        pool: Iterable[str] = COMMANDS if before_cursor.strip() == word else ()
    elif word.startswith("."):
        pool = DIRECTIVES if before_cursor.strip() == word else ()
    else:
        pool = repl.relation_names()
    return word, [c for c in pool if c.startswith(word)]


def _completer(repl: Repl):
    from prompt_toolkit.completion import Completer, Completion, PathCompleter
    from prompt_toolkit.document import Document

    paths = PathCompleter(expanduser=True)

    class ReplCompleter(Completer):
        def get_completions(self, document, complete_event):
            before = document.text_before_cursor
            match = _PATH_COMMAND.match(before)
            if match:
                typed = match.group(2)
                yield from paths.get_completions(Document(typed, len(typed)),
                                                 complete_event)
                return
            word, words = candidates(repl, before)
            for candidate in words:
                yield Completion(candidate, start_position=-len(word))

    return ReplCompleter()
