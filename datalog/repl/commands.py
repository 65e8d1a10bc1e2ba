"""The REPL's meta-commands: ``:begin``, ``:commit``, ``:rollback``, ``:dump``,
``:rels``, ``:load``, ``:save``, ``:verify``, ``:at``, ``:why``, ``:whynot``,
``:why-changed``, ``:timing``, ``:limit``, ``:more``, ``:help``, ``:quit`` (``:h``,
``:q``, and ``help``, ``quit``, ``exit`` alone on a line); and DDlog's
``start;``, ``commit;``, ``commit dump_changes;``, ``rollback;``, ``insert R(..);``,
``delete R(..);``, ``dump R;``, ``dump;``, ``clear R;``.

DDlog's ``commit;`` prints only the summary line, as DDlog's own command line
prints nothing for it; ``commit dump_changes;`` and ``:commit`` print the changes
too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from datalog import sandbox
from datalog.dialect.io import format_rows, read_facts, write_files
from datalog.errors import DataError, DatalogError, Diagnostic, did_you_mean
from datalog.repl.program import REPL_PATH
from datalog.syntax import ast
from datalog.syntax.render import format_fact, plural, sort_key
from datalog.syntax.statements import WORDS, Statement, meta_words, split_toplevel

if TYPE_CHECKING:
    from datalog.repl.interpreter import Repl

HELP = """\
Statements (a statement may span lines; it ends with `.`):
  edge(1, 2).   +edge(1, 2).      assert a fact
  -edge(1, 2).                    retract a fact
  ?- path(1, x).   ?path(1, x)    the matching rows, then their count
  ?- path(1, x), edge(x, y), y > 3.
                                  the answers (x = .., y = ..), then their count
  p(x) :- q(x).   .decl ...   .output p
                                  extend the program (recompiles, keeps the facts)
Outside a transaction each fact commits at once; after a commit the changes to the
output relations are printed as +fact / -fact lines, then a summary.
Commands:
  :begin  :commit  :rollback      a transaction (also DDlog's `start;` `commit;`
                                  `commit dump_changes;` `rollback;`)
  :dump [relation] [> FILE]       every row of one relation or of all (to a file)
  :limit N | off                  show the first N rows of longer outputs
  :more                           all of the last output that was cut (a pager)
  :rels                           the relations, their columns and sizes
  :load FILE.dl | FILE.facts      add a program file, or insert a relation's facts
  :save DIR                       write every relation to DIR/<relation>.facts
  :verify                         check every relation against a from-scratch run
  :why fact   :whynot fact        why path(1, 5) holds (its shortest derivation) /
                                  why it does not (where each rule fails)
  :why-changed fact               why the last commit made it appear or disappear
  :at N                           query the state after transaction N (--store);
                                  `:at` alone returns to the present
  :timing on|off                  show how long each statement takes
  :help  help  :h                 this text
  :quit  quit  exit  :q           leave (end of input does too)
DDlog's commands (end with `;`):
  insert R(1, 2), delete R(3, 4);  one transaction (in the open one, if any)
  dump R;   dump;   clear R;       rows of R / of all; retract every row put in R
A `#define NAME value` line applies to every later line, facts and queries too."""

#: Every meta-command, for completion and "did you mean".
COMMANDS = (":begin", ":commit", ":rollback", ":dump", ":rels", ":load", ":save",
            ":verify", ":at", ":why", ":whynot", ":why-changed", ":timing", ":limit",
            ":more", ":help", ":quit")


def run_command(repl: Repl, statement: Statement) -> None:
    """Execute a meta-command statement (raises :class:`DatalogError`)."""
    words = meta_words(statement.text)
    name, args = WORDS.get(words[0], words[0]), words[1:]
    if name in (":dump", ":clear") and args and statement.text[0] != ":":
        args = [arg for arg in (args[0].rstrip(";").strip(),) if arg]   # DDlog's `dump R;`
    handler = _HANDLERS.get(name)
    if handler is None:
        raise _error(statement, f"unknown command `{name}`",
                     did_you_mean(name, COMMANDS) or "`:help` lists the commands",
                     repl.sources())
    arity = _ARGUMENTS[name]
    if not arity[0] <= len(args) <= arity[1]:
        usage = _USAGE[name]
        raise _error(statement, f"`{name}` takes {usage}", f"write `{name} {usage}`"
                     if arity[1] else f"write `{name}`", repl.sources())
    handler(repl, statement, args)


def _begin(repl: Repl, statement: Statement, args: list[str]) -> None:
    if repl.pending is not None:
        raise _error(statement, "a transaction is already open",
                     "`:commit` or `:rollback` it first", repl.sources())
    repl.pending = {}


def _commit(repl: Repl, statement: Statement, args: list[str]) -> None:
    if repl.pending is None:
        raise _error(statement, "no transaction is open", "`:begin` opens one",
                     repl.sources())
    # DDlog's plain `commit;` prints no changes; `commit dump_changes;` does
    show = not statement.text.startswith("commit") or "dump_changes" in statement.text
    # A commit that fails closes the transaction: nothing of it took effect.
    pending, repl.pending = repl.pending, None
    try:
        repl.commit(pending, show=show)
    except DatalogError as error:
        raise type(error)([*error.diagnostics, Diagnostic(
            "error", f"the transaction was rolled back: none of its "
                     f"{plural(len(pending), 'change')} took effect",
            hint="fix what failed, then `:begin` again")], error.sources) from None


def _rollback(repl: Repl, statement: Statement, args: list[str]) -> None:
    if repl.pending is None:
        raise _error(statement, "no transaction is open", "`:begin` opens one",
                     repl.sources())
    dropped = len(repl.pending)
    repl.pending = None
    repl.write(f"rolled back: {plural(dropped, 'change')} discarded")


def _dump(repl: Repl, statement: Statement, args: list[str]) -> None:
    target = None
    if ">" in args:            # `:dump [relation] > FILE`
        at = args.index(">")
        if at != len(args) - 2:
            raise _error(statement, "`>` takes one file name", "write `:dump path > FILE`",
                         repl.sources())
        target, args = args[-1], args[:at]
    if len(args) > 1:
        raise _error(statement, "`:dump` takes [relation] [> FILE]", None, repl.sources())
    names = [_relation(repl, statement, args[0])] if args else repl.relation_names()
    lines = [format_fact(name, row) for name in names
             for row in sorted(repl.reading.query(name), key=sort_key)]
    if target is None:
        repl.write_rows(lines)
        repl.write(plural(len(lines), "row"))
        return
    try:
        write_files({target: "".join(line + ".\n" for line in lines)})
    except OSError as exc:
        raise _error(statement, f"cannot write {target}: {exc.strerror or exc}", None,
                     repl.sources(), word=target) from None
    repl.write(f"wrote {plural(len(lines), 'row')} to {target}")


def _more(repl: Repl, statement: Statement, args: list[str]) -> None:
    """The whole of the last output that `:limit` cut: through the pager
    (``$PAGER``) on a terminal, else written out."""
    if not repl.hidden:
        repl.write("nothing more to show: no output was cut since the last `:more`")
        return
    lines, repl.hidden = repl.hidden, []
    if repl.interactive:
        import pydoc

        pydoc.pager(_COLOURS.sub("", "\n".join(lines)) + "\n")
    else:
        repl.out.write("".join(line + "\n" for line in lines))
    repl.write(plural(len(lines), "line"))


def _limit(repl: Repl, statement: Statement, args: list[str]) -> None:
    word = args[0]
    if word == "off":
        repl.limit = None
        repl.write("limit off: every row is shown")
        return
    if not (word.isascii() and word.isdigit()) or len(word) > 9 or int(word) == 0:
        raise _error(statement, f"`:limit` takes a number of rows or `off`, not `{word}`",
                     None, repl.sources(), word=word)
    repl.limit = int(word)
    repl.write(f"limit {repl.limit}: longer outputs show their first {repl.limit} rows")


def _update(repl: Repl, statement: Statement, args: list[str]) -> None:
    """DDlog's ``insert R(1, 2), delete R(3, 4);``: one transaction (or part
    of the open one)."""
    repl.require_live(statement)
    text = statement.text.rstrip()
    if not text.endswith(";"):
        raise _error(statement, "DDlog's updates end with `;`",
                     f"write `{text};`", repl.sources())
    changes = {}
    for offset, piece in split_toplevel(text[:-1], ","):
        match = _UPDATE.match(piece)
        if match is None:
            column = offset + len(piece) - len(piece.lstrip())
            raise _error(Statement(piece.strip(), statement.line, statement.column + column,
                                   "meta"),
                         "expected `insert R(...)` or `delete R(...)`", None, repl.sources())
        atom = piece[match.end():].rstrip()
        kind = "assert" if match.group(1) == "insert" else "retract"
        fact = Statement(atom + ".", statement.line, statement.column + offset + match.end(),
                         kind)
        changes.update(repl.facts(fact))
    repl.update(changes)


def _clear(repl: Repl, statement: Statement, args: list[str]) -> None:
    """DDlog's ``clear R;``: retract every row inserted into ``R``."""
    repl.require_live(statement)
    if not args:
        raise _error(statement, "`clear` takes a relation", "write `clear R;`",
                     repl.sources())
    name = _relation(repl, statement, args[0])
    repl.update({(name, row): -1 for row in sorted(repl.session.inputs(name), key=sort_key)})


def _rels(repl: Repl, statement: Statement, args: list[str]) -> None:
    table = []
    for name in repl.relation_names():
        decl = repl.decls[name]
        columns = ", ".join(f"{a.name}: {a.type}" for a in decl.attributes)
        roles = [role for role, names in (("input", repl.inputs), ("output", repl.outputs))
                 if name in names]
        size = repl.reading.size(name)
        table.append((f"{name}({columns})", " ".join(roles), plural(size, "row")))
    if not table:
        repl.write("no relations")
        return
    widths = [max(len(row[i]) for row in table) for i in range(2)]
    for signature, roles, size in table:
        cells = [signature.ljust(widths[0])] + ([roles.ljust(widths[1])] if widths[1] else [])
        repl.write("  ".join(cells + [size]))


def _confined(repl: Repl, statement: Statement, path: str, what: str) -> None:
    """Refuse ``path`` outside the program's sandbox, at the statement."""
    try:
        with sandbox.active(getattr(repl.program, "sandbox", None)):
            sandbox.check(path, what)
    except sandbox.SandboxError as error:
        diagnostic = error.diagnostics[0]
        raise _error(statement, diagnostic.message, diagnostic.hint, repl.sources(),
                     word=path) from None


def _load(repl: Repl, statement: Statement, args: list[str]) -> None:
    path = args[0]
    _confined(repl, statement, path, "`:load` file")
    if not os.path.isfile(path):
        raise _error(statement, f"no such file: {path}", None, repl.sources(), word=path)
    if path.endswith(".dl"):
        repl.require_no_transaction(statement, "loading a program file")
        repl.require_no_store(statement, "loading a program file")
        repl.recompile(repl.text.with_file(path), lambda span: span.path == path)
        return
    if not path.endswith((".facts", ".csv", ".tsv")):
        raise _error(statement, f"cannot load `{path}`",
                     "`:load` takes a program (.dl) or a relation's facts (.facts)",
                     repl.sources(), word=path)
    relation = os.path.splitext(os.path.basename(path))[0]
    if relation not in repl.decls:
        raise _error(statement, f"`{path}` names no relation: `{relation}` is not declared",
                     did_you_mean(relation, repl.decls), repl.sources())
    rows = read_facts(path, repl.program.plan.relations[relation])
    changes = {(relation, row): 1 for row in sorted(rows, key=sort_key)}
    if repl.pending is not None:
        for key in changes:
            repl.pending.pop(key, None)
            repl.pending[key] = 1
        repl.write(f"loaded {plural(len(rows), 'row')} into the transaction")
    else:
        repl.commit(changes)


def _save(repl: Repl, statement: Statement, args: list[str]) -> None:
    directory = args[0]
    _confined(repl, statement, directory, "`:save` folder")
    files = {}
    total = 0
    for name in repl.relation_names():
        rows = repl.session.query(name)
        path = os.path.join(directory, f"{name}.facts")
        try:
            files[path] = format_rows(rows, repl.program.plan.relations[name], target=path)
        except DataError as error:
            raise _error(statement, error.diagnostics[0].message.replace(
                "cannot write", "cannot save", 1), error.diagnostics[0].hint,
                repl.sources()) from None
        total += len(rows)
    write_files(files, directory)
    repl.write(f"saved {plural(len(files), 'relation')} ({plural(total, 'row')}) "
               f"to {directory}")


def _verify(repl: Repl, statement: Statement, args: list[str]) -> None:
    """Differences are a failure: the report, then an error (exit status 1)."""
    result = repl.reading.verify()
    if result:
        repl.write(str(result))
        raise _error(statement, "the incremental state differs from a from-scratch "
                     "evaluation", None, repl.sources())
    repl.write(str(result))


def _fact_argument(statement: Statement) -> str:
    """The rest of the command's line: a fact such as ``path(1, "a b")``."""
    return statement.text.split(None, 1)[1].strip().rstrip(".")


def _answer(repl: Repl, statement: Statement, ask: Callable[[str], object]) -> None:
    """Write ``ask(fact)``; its error, placed under the fact."""
    fact = _fact_argument(statement)
    try:
        answer = ask(fact)
    except DatalogError as error:
        first = error.diagnostics[0] if error.diagnostics else None
        message = first.message if first is not None else str(error)
        hint = first.hint if first is not None else None
        raise _error(statement, message, hint, repl.sources(), word=fact) from None
    repl.write(str(answer))


def _why(repl: Repl, statement: Statement, args: list[str]) -> None:
    _answer(repl, statement, repl.reading.explain)


def _whynot(repl: Repl, statement: Statement, args: list[str]) -> None:
    _answer(repl, statement, repl.reading.why_not)


def _why_changed(repl: Repl, statement: Statement, args: list[str]) -> None:
    if repl.last_delta is None:
        raise _error(statement, "no transaction has been committed since the program "
                     "was (re)compiled", None, repl.sources())
    _answer(repl, statement, repl.last_delta.explain)


def _at(repl: Repl, statement: Statement, args: list[str]) -> None:
    if not args or args[0] == "now":
        repl.view = repl.view_at = None
        repl.write("at the present: statements apply to the live session")
        return
    word = args[0]
    if not word.isdigit():
        raise _error(statement, f"`:at` takes a transaction number, not `{word}`", None,
                     repl.sources(), word=word)
    if repl.session.committed is None:
        raise _error(statement, "time travel needs a durable session",
                     "start the REPL with `--store DIR`", repl.sources())
    number = int(word)
    last = repl.session.committed
    if number > last:
        raise _error(statement, f"no transaction {number}: the store holds "
                     f"transactions 0 to {last}", None, repl.sources(), word=word)
    repl.view = repl.session.at(number)
    repl.view_at = number
    repl.write(f"at transaction {number} of {last}: queries read that state (read-only); "
               "`:at` returns to the present")


def _timing(repl: Repl, statement: Statement, args: list[str]) -> None:
    if args[0] not in ("on", "off"):
        raise _error(statement, f"`:timing` takes `on` or `off`, not `{args[0]}`", None,
                     repl.sources(), word=args[0])
    repl.timing = args[0] == "on"
    repl.write(f"timing {args[0]}")


def _help(repl: Repl, statement: Statement, args: list[str]) -> None:
    repl.write(HELP)


def _quit(repl: Repl, statement: Statement, args: list[str]) -> None:
    repl.done = True


_UPDATE = re.compile(r"\s*(insert|delete)\s+")
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")

_HANDLERS: dict[str, Callable] = {
    ":begin": _begin, ":commit": _commit, ":rollback": _rollback, ":dump": _dump,
    ":rels": _rels, ":load": _load, ":save": _save, ":verify": _verify, ":at": _at,
    ":why": _why, ":whynot": _whynot, ":why-changed": _why_changed,
    ":timing": _timing, ":limit": _limit, ":more": _more,
    ":help": _help, ":quit": _quit,
    # DDlog's `insert ...;`, `delete ...;`, `clear R;` (`dump R;` is `:dump R`)
    ":insert": _update, ":delete": _update, ":clear": _clear,
}
_ARGUMENTS = {":begin": (0, 0), ":commit": (0, 0), ":rollback": (0, 0), ":dump": (0, 3),
              ":limit": (1, 1), ":more": (0, 0), ":insert": (0, 99), ":delete": (0, 99),
              ":clear": (0, 1),
              ":rels": (0, 0), ":load": (1, 1), ":save": (1, 1), ":verify": (0, 0),
              ":at": (0, 1), ":why": (1, 99), ":whynot": (1, 99), ":why-changed": (1, 99),
              ":timing": (1, 1),
              ":help": (0, 0), ":quit": (0, 0)}
_USAGE = {":begin": "no arguments", ":commit": "no arguments", ":rollback": "no arguments",
          ":dump": "[relation] [> FILE]", ":limit": "N|off", ":more": "no arguments",
          ":insert": "R(...);", ":delete": "R(...);", ":clear": "R;", ":rels": "no arguments",
          ":load": "FILE",
          ":save": "DIR", ":verify": "no arguments", ":at": "[N]", ":why": "FACT",
          ":whynot": "FACT", ":why-changed": "FACT", ":timing": "on|off", ":help": "no arguments",
          ":quit": "no arguments"}


def _relation(repl: Repl, statement: Statement, name: str) -> str:
    if name not in repl.decls:
        raise _error(statement, f"undefined relation `{name}`",
                     did_you_mean(name, repl.decls), repl.sources(), word=name)
    return name


def _error(statement: Statement, message: str, hint: str | None,
           sources: dict[str, str], word: str | None = None) -> DatalogError:
    """An error about a meta-command, the caret under ``word`` if given (else the
    whole command)."""
    first = statement.text.split("\n")[0]
    start = first.rfind(word) if word else 0
    start = max(start, 0)
    length = len(word) if word else len(first)
    column = statement.column + start
    span = ast.Span(REPL_PATH, statement.line, column, statement.line, column + length)
    return DatalogError([Diagnostic("error", message, span, hint)], sources)
