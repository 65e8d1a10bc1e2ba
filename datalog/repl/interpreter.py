"""The REPL's engine room: executes statements against a :class:`datalog.Program`
and its :class:`~datalog.Session`, and writes what happened.

State: the program's text (:class:`~datalog.repl.program.ProgramText`), the
compiled program and its session, every fact the user asserted or retracted (so a
recompiled program gets them back), and the open transaction, if any.

- A fact statement commits at once, or joins the open transaction (``:begin``).
  After a commit the REPL prints the changes to the *reported* relations (the
  program's ``.output`` relations; all relations if it has none), sorted by
  relation then row, as pasteable statements, then a summary line.
- A rule or directive extends the program: the REPL compiles a new
  :class:`datalog.Program` from the accumulated text, opens a session on it,
  replays every asserted and retracted fact in one transaction, and prints how
  the reported relations differ from before.
- Any error prints its diagnostics (with a caret under the statement) on the
  error stream and changes nothing; :attr:`Repl.failed` remembers that one did.

>>> import io
>>> out = io.StringIO()
>>> repl = Repl(out=out, err=out)
>>> repl.feed_lines([".decl edge(x: number, y: number)", ".output edge",
...                  "edge(1, 2).", "?- edge(x, 2)."])
>>> print(out.getvalue(), end="")
recompiled: 0 inserted, 0 retracted
recompiled: 0 inserted, 0 retracted
+edge(1, 2)
committed: 1 inserted, 0 retracted
edge(1, 2)
1 row
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import IO

import datalog
from datalog.analysis.check import check
from datalog.errors import CheckError, DataError, DatalogError, Diagnostic, ParseError
from datalog.plan.conjunctive import Conjunction
from datalog.plan.lower import fact_row
from datalog.plan.query import Pattern
from datalog.repl.program import REPL_PATH, ProgramText
from datalog.syntax import ast
from datalog.syntax.parser import parse
from datalog.syntax.preprocess import predefined, preprocess
from datalog.syntax.render import (
    format_change,
    format_fact,
    format_ms,
    format_value,
    plural,
    sort_key,
)
from datalog.syntax.statements import Statement, StatementReader, has_toplevel

#: (relation, row) -> +1 (asserted) or -1 (retracted): what the user did, last
#: statement winning, in the order first done.
Changes = dict[tuple[str, tuple], int]

_ADD_IT = "write it without `+`, `-` or `?` to add it to the program"
#: ANSI colours: inserted rows, retracted rows and errors, warnings, notes.
GREEN, RED, YELLOW, DIM = "32", "31", "33", "2"
#: Retracted rows that were not there, each named in a warning up to this many.
_ABSENT_SHOWN = 10


class Repl:
    """One interactive session over a program (``path``, or none: an empty
    program) and the ``.input`` facts of ``fact_dir``. Output goes to ``out``,
    diagnostics to ``err``. ``session_options`` go to every session it makes
    (``spill_threshold=...``), ``program_options`` to every
    :class:`datalog.Program` (``macros=...``, ``include_dirs=...``). Raises
    :class:`DatalogError` if the starting program or its facts cannot be loaded."""

    def __init__(self, path: str | None = None, fact_dir: str | None = None,
                 out: IO[str] | None = None, err: IO[str] | None = None,
                 session_options: dict | None = None, program_options: dict | None = None):
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.fact_dir = fact_dir
        self.session_options = dict(session_options or {})
        self.program_options = dict(program_options or {})
        self.lines: list[str] = []            # the session's input so far
        self.reader = StatementReader()
        self.changes: Changes = {}
        self._undo: list = []                  # the changes' previous weights (a statement's)
        self.pending: Changes | None = None    # the open transaction's changes
        self.timing = False
        self.colour = False                    # ANSI colours (on a terminal)
        self.interactive = False               # on a terminal: `:more` uses a pager
        self.limit: int | None = None          # rows shown per output (`:limit`)
        self.hidden: list[str] = []            # the whole of the last cut output
        self.macros = predefined(self.program_options.get("macros") or {})
        self.failed = False                    # some statement failed
        self.done = False                      # :quit was given
        self.view: datalog.Session | None = None   # `:at N`: the past state queried
        self.view_at: int | None = None
        self.last_delta: datalog.Delta | None = None   # for `:why-changed`
        self._install(ProgramText(path), *self._build(ProgramText(path)))
        for message in self.session.messages:
            self.note(message)

    # ------------------------------------------------------------ input

    def feed(self, line: str) -> None:
        """Read one line of input and execute the statements it completes."""
        self.lines.append(line.rstrip("\r\n"))
        try:
            statements = self.reader.feed(line)
        except Exception as exc:  # a bug in the reader: drop the unfinished statement
            self.reader.reset()
            self.internal_error(exc)
            return
        for statement in statements:
            self.execute(statement)
            if self.done:
                return

    def feed_lines(self, lines: Iterable[str]) -> None:
        """Read lines until they end or ``:quit``; then execute an unfinished
        last statement as it is (which reports what it lacks)."""
        for line in lines:
            self.feed(line)
            if self.done:
                break
        else:
            for statement in self.reader.flush():
                self.execute(statement)
        self.finish()

    def finish(self) -> None:
        """The session ends: say so if an open transaction is dropped; close the
        session's store."""
        if self.pending is not None:
            self.note(f"warning: the open transaction was not committed; "
                      f"{plural(len(self.pending), 'change')} discarded")
            self.pending = None
        self.session.close()

    def interrupted(self) -> None:
        """Ctrl-C stopped a statement midway: the session may be half-way through
        a transaction, so it is rebuilt from the program and the facts committed
        so far (the interrupted statement's are not among them)."""
        self.reader.reset()
        self.session.close()      # a durable session reopens from its store
        self._install(self.text, *self._build(self.text))
        self.note("interrupted: the statement was not applied")

    @property
    def reading(self) -> datalog.Session:
        """The session that queries read: the past one of `:at N`, else the
        live one."""
        return self.view if self.view is not None else self.session

    @property
    def in_transaction(self) -> bool:
        return self.pending is not None

    def relation_names(self) -> list[str]:
        return sorted(self.decls)

    # ------------------------------------------------------------ statements

    def execute(self, statement: Statement) -> bool:
        """Execute one statement; returns whether it succeeded. Whatever goes wrong,
        the session goes on: a :class:`DatalogError` is reported as it is, any
        other exception (a bug) as one line, with the session put back as it was
        before the statement."""
        before = self._state()
        try:
            return self._execute(statement)
        except Exception as exc:
            self._restore(before)
            self.internal_error(exc)
            return False

    def _state(self) -> tuple:
        """What a statement may change (see :meth:`_restore`)."""
        self._undo = []
        return (self.text, self.program, self.session, self.checked,
                None if self.pending is None else dict(self.pending), self.timing)

    def _restore(self, state: tuple) -> None:
        """Put back the session as ``state`` had it. The session object itself may
        be half-way through a change, so it is rebuilt from the program and the
        facts committed before the statement (as after Ctrl-C)."""
        text, program, session, checked, pending, timing = state
        for key, weight in reversed(self._undo):
            self.changes.pop(key, None)
            if weight is not None:
                self.changes[key] = weight
        self._undo = []
        self.pending, self.timing = pending, timing
        self.reader.reset()
        try:
            self._install(text, *self._build(text))
        except Exception:  # the rebuild fails too: keep the objects from before
            self._install(text, program, session, checked)

    def internal_error(self, exc: BaseException) -> None:
        """An exception that is a bug of this program, as one line."""
        message = " ".join(str(exc).split())
        if len(message) > 200:
            message = message[:200] + "..."
        self.failed = True
        self.note(f"error: internal error: {type(exc).__name__}: {message} (the session "
                  "is as it was before the statement; please report this with the input "
                  "that caused it)")

    def _execute(self, statement: Statement) -> bool:
        from datalog.repl.commands import run_command
        try:
            if statement.kind == "meta":
                run_command(self, statement)
            elif statement.kind == "query":
                self.query(statement)
            elif statement.kind in ("assert", "retract"):
                self.assert_facts(statement)
            else:
                self.extend(statement)
            return True
        except DatalogError as error:
            if REPL_PATH in error.sources:
                # show the lines as typed (the parser saw them with `?-`, `+`
                # or `-` blanked out, or among blank lines)
                error.sources[REPL_PATH] = self.sources()[REPL_PATH]
            self.error(error)
            return False

    def assert_facts(self, statement: Statement) -> None:
        """``edge(1, 2).``, ``+edge(1, 2).``, ``-edge(1, 2).``"""
        self.require_live(statement)
        self.update(self.facts(statement))

    def require_live(self, statement: Statement) -> None:
        """Changes need the live session, not the past one of `:at N`."""
        if self.view is not None:
            raise self._statement_error(
                statement, f"viewing the state after transaction {self.view_at}, "
                "which is read-only", "`:at` alone returns to the present")

    def update(self, changes: Changes) -> None:
        """Commit ``changes`` at once, or add them to the open transaction."""
        if self.pending is not None:
            for key, weight in changes.items():
                self.pending.pop(key, None)   # re-insert: the last statement wins
                self.pending[key] = weight
        else:
            self.commit(changes)

    def facts(self, statement: Statement) -> Changes:
        """The changes a fact statement asks for, its errors placed in the
        session's input."""
        return _exactly_placed(self._facts, statement)

    def _facts(self, statement: Statement, exact: bool) -> Changes:
        """The changes a fact statement asks for, parsed, checked and validated."""
        text = statement.text
        sign = -1 if statement.kind == "retract" else 1
        if text[0] in "+-":
            text = " " + text[1:]
        parsed = self._parse_alone(statement, text, exact,
                                   "retracted" if sign < 0 else "asserted")
        if not parsed.facts:
            raise self._statement_error(statement, "expected a fact such as `edge(1, 2).`")
        self._check_facts(parsed)
        sources = dict(parsed.sources)
        changes: Changes = {}
        probe = self.session.transaction()   # validates rows; never committed
        for fact in parsed.facts:
            atom = fact.atom
            row = fact_row(atom, self.types[atom.relation], sources)
            try:
                probe.insert(atom.relation, row)
            except DataError as error:    # a value out of its column's range
                message = error.diagnostics[0].message if error.diagnostics else str(error)
                raise DataError([Diagnostic("error", message, atom.span)], sources) from None
            changes[(atom.relation, row)] = sign
        return changes

    def query(self, statement: Statement) -> None:
        """``?- path(1, x).`` or ``?path(1, x)``: the matching rows, then their
        count; ``?- path(1, x), edge(x, y), y > 3.`` (a conjunction: several
        literals, or a negation, or an atom of an inline relation, evaluated on
        demand): the answers, one ``x = 2, y = 7`` line each, then their count."""
        body = statement.text[2 if statement.text.startswith("?-") else 1:].lstrip()
        name = body.split("(", 1)[0].strip()
        if body.startswith("!") or has_toplevel(body, ",;=<>") or (
                name in self.checked.inlined and "(" in body):
            self._conjunction(statement)
            return
        pattern = _exactly_placed(self._pattern, statement)
        start = time.perf_counter()
        rows = sorted((row for row in self.reading.query(pattern.relation)
                       if pattern.matches(row)), key=sort_key)
        elapsed = time.perf_counter() - start
        self.write_rows([format_fact(pattern.relation, row) for row in rows])
        self.write(plural(len(rows), "row") + self._timing(elapsed))

    def _conjunction(self, statement: Statement) -> None:
        conjunction = _exactly_placed(self._conjunctive, statement)
        start = time.perf_counter()
        answers = self.reading.solve(conjunction).rows
        elapsed = time.perf_counter() - start
        self.write_rows([", ".join(f"{name} = {format_value(value)}"
                                   for name, value in zip(conjunction.variables, row))
                         or "true" for row in sorted(answers, key=sort_key)])
        self.write(plural(len(answers), "answer") + self._timing(elapsed))

    def _conjunctive(self, statement: Statement, exact: bool) -> Conjunction:
        text = statement.text
        skip = 2 if text.startswith("?-") else 1
        padded = statement.padded(" " * skip + text[skip:])
        return Conjunction.parse(self.expand(padded if exact else padded[statement.line - 1:]),
                                 self.checked, REPL_PATH)

    def _pattern(self, statement: Statement, exact: bool) -> Pattern:
        """A query statement's pattern, parsed and checked."""
        text = statement.text
        skip = 2 if text.startswith("?-") else 1
        padded = statement.padded(" " * skip + text[skip:])
        try:
            return Pattern.parse(self.expand(padded if exact else padded[statement.line - 1:]),
                                 self.checked, REPL_PATH, "?- path(1, x).")
        except ParseError as error:   # a rule or directive: say how to add it instead
            first = error.diagnostics[0] if error.diagnostics else None
            if first is None or not first.message.endswith("cannot be queried"):
                raise
            raise ParseError([Diagnostic("error", first.message, first.span, _ADD_IT)],
                             error.sources) from None

    def extend(self, statement: Statement) -> None:
        """A rule or directive: recompile with it and show what changed."""
        self.require_no_transaction(statement, "extending the program")
        self.require_no_store(statement, "extending it")
        self.recompile(self.text.extended(statement),
                       lambda span: span.path == REPL_PATH
                       and statement.line <= span.line <= statement.end_line)
        if statement.text.startswith("#"):    # `#define` / `#undef`: for later lines too
            preprocess(statement.padded(), REPL_PATH, None, self.macros)

    def expand(self, text: str) -> str:
        """``text`` with the macros of ``-M`` and of the `#define` lines typed
        so far expanded."""
        if not self.macros:
            return text
        return preprocess(text, REPL_PATH, None, dict(self.macros)).text

    def recompile(self, text: ProgramText, new: Callable[[ast.Span], bool]) -> None:
        """Compile ``text`` into a new program and session that keep every
        asserted fact, then print how the reported relations changed, after the
        warnings about the new part of the program (where ``new(span)`` holds)."""
        start = time.perf_counter()
        built = self._build(text)
        elapsed = time.perf_counter() - start
        old, shown = self.session, set(self.reported)   # the old session, read after
        checked = built[2]
        self._install(text, *built)
        for warning in checked.warnings:
            # facts come from the prompt: a relation without any is no news here
            if "no facts, rules or input" in warning.message:
                continue
            if warning.span is not None and new(warning.span):
                self.note(warning.format(dict(checked.program.sources)))
        changes = []
        for name in self.reported:
            was = old.query(name) if name in shown else frozenset()
            now = self.session.query(name)
            changes.extend((name, row, 1) for row in now - was)
            changes.extend((name, row, -1) for row in was - now)
        self._print_changes("recompiled", changes, elapsed)

    # ------------------------------------------------------------ transactions

    def commit(self, changes: Changes, show: bool = True) -> None:
        """Apply ``changes`` in one transaction; print the changes to the reported
        relations (unless ``show`` is false) and the summary line."""
        absent = [(relation, row) for (relation, row), weight in changes.items()
                  if weight < 0 and not self.session.contains(relation, row)]
        start = time.perf_counter()
        with self.session.transaction() as tx:
            for (relation, row), weight in changes.items():
                if weight > 0:
                    tx.insert(relation, row)
                else:
                    tx.retract(relation, row)
        elapsed = time.perf_counter() - start
        self.last_delta = tx.delta
        for key, weight in changes.items():
            self._undo.append((key, self.changes.pop(key, None)))
            self.changes[key] = weight
        reported = set(self.reported)
        lines = [(relation, row, weight) for relation, row, weight in tx.delta
                 if relation in reported]
        self._note_lasting(changes)
        self._note_absent(absent)
        self._print_changes("committed", lines, elapsed, show)

    def _note_absent(self, absent: list) -> None:
        """Warn about retracted rows that were not there: nothing to retract."""
        absent.sort(key=lambda key: (key[0], sort_key(key[1])))
        for relation, row in absent[:_ABSENT_SHOWN]:
            self.note(f"warning: {format_change(relation, row, -1)} changed nothing: "
                      f"`{relation}` has no such row")
        if len(absent) > _ABSENT_SHOWN:
            self.note(f"warning: and {len(absent) - _ABSENT_SHOWN} more retracted rows "
                      "that were not there")

    def _note_lasting(self, changes: Changes) -> None:
        """Warn about retracted rows that are still there: a rule derives them or
        the program states them as facts, so retracting them changes nothing."""
        retracted: dict[str, list[tuple]] = {}
        for (relation, row), weight in changes.items():
            if weight < 0:
                retracted.setdefault(relation, []).append(row)
        for relation in sorted(retracted):
            for row in sorted(retracted[relation], key=sort_key):
                if self.session.contains(relation, row):
                    self.note(f"warning: {format_change(relation, row, -1)} changed "
                              "nothing: a rule derives the row or the program states it")

    def _print_changes(self, what: str, changes: list, elapsed: float,
                       show: bool = True) -> None:
        changes.sort(key=lambda c: (c[0], sort_key(c[1]), c[2]))
        if show:
            self.write_rows([self.paint(format_change(relation, row, weight),
                                        GREEN if weight > 0 else RED)
                             for relation, row, weight in changes])
        inserted = sum(1 for c in changes if c[2] > 0)
        self.write(f"{what}: {inserted} inserted, {len(changes) - inserted} retracted"
                   + self._timing(elapsed))

    def require_no_store(self, statement: Statement, doing: str) -> None:
        """A durable session's store belongs to one program text."""
        if self.session_options.get("store") is not None:
            raise self._statement_error(
                statement, f"the program cannot change while it has a store (--store); "
                f"not {doing}", "add the rules to the program file and open the store "
                "with --migrate")

    def require_no_transaction(self, statement: Statement, doing: str) -> None:
        if self.pending is not None:
            raise self._statement_error(
                statement, f"a transaction is open; finish it before {doing}",
                "`:commit` or `:rollback` it first")

    # ------------------------------------------------------------ the program

    def _build(self, text: ProgramText):
        """The program, its session with the user's facts replayed, and the
        checked program (declarations, types, warnings) for ``text``."""
        program = datalog.Program(text.text(), REPL_PATH, **self.program_options)
        checked = program.checked
        session = program.session(self.fact_dir, **self.session_options)
        # a store replays its own log (and the program cannot change under it)
        if self.changes and self.session_options.get("store") is None:
            with session.transaction() as tx:
                for (relation, row), weight in self.changes.items():
                    if weight > 0:
                        tx.insert(relation, row)
                    else:
                        tx.retract(relation, row)
        return program, session, checked

    def _install(self, text: ProgramText, program, session, checked) -> None:
        self.last_delta = None
        self.text = text
        self.program = program
        self.session = session
        self.checked = checked
        self.ast: ast.Module = checked.program
        self.decls = {decl.name: decl for decl in self.ast.relations}
        self.types: dict[str, tuple[str, ...]] = dict(checked.types)
        outputs = self.ast.relations_with("output")
        self.inputs = self.ast.relations_with("input")
        self.outputs = outputs
        self.reported: list[str] = sorted(outputs) if outputs else sorted(self.decls)

    # ------------------------------------------------------------ checking

    def _parse_alone(self, statement: Statement, text: str, exact: bool,
                     what: str) -> ast.Module:
        """Parse one statement on its own; ``exact``: with positions as in the
        session (else its first line is line 1, which parses faster late in a
        long session). ``what`` it is for (``asserted``, ``retracted``,
        ``queried``) words the error if it is not facts."""
        padded = statement.padded(text)
        parsed = parse(self.expand(padded if exact else padded[statement.line - 1:]),
                       REPL_PATH)
        if parsed.rules or parsed.relations or parsed.directives or parsed.types:
            kind = "a rule" if parsed.rules else "a declaration or directive"
            hint = _ADD_IT if statement.text[0] in "+-?" else None
            raise self._statement_error(statement, f"{kind} cannot be {what}", hint)
        return parsed

    def _check_facts(self, parsed: ast.Module) -> None:
        """The front end's checks of the facts, against the program's
        declarations."""
        inlined = self.checked.inlined
        for fact in parsed.facts:
            if fact.atom.relation in inlined:
                raise CheckError([Diagnostic(
                    "error", f"`{fact.atom.relation}` is an inline relation: it is not "
                    "stored, so it takes no facts", fact.atom.span,
                    "its rules are substituted where it is used: change what they read")],
                    dict(parsed.sources))
        alone = ast.Module(types=self.ast.types, relations=self.ast.relations,
                            facts=parsed.facts,
                            sources=tuple(self.ast.sources) + tuple(parsed.sources))
        errors = [d for d in check(alone) if d.severity == "error" and d.span is not None
                  and d.span.path == REPL_PATH]
        if errors:
            raise CheckError(errors, dict(parsed.sources))

    # ------------------------------------------------------------ output

    def write(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def write_rows(self, lines: list[str]) -> None:
        """Lines of one output (rows, answers, changes): all of them, or with a
        `:limit`, the first ones and a count of the rest (`:more` shows all)."""
        if self.limit is None or len(lines) <= self.limit:
            self.out.write("".join(line + "\n" for line in lines))
            self.out.flush()
            return
        self.out.write("".join(line + "\n" for line in lines[:self.limit]))
        self.hidden = lines
        self.write(self.paint(f"... {len(lines) - self.limit} more (of {len(lines)}): "
                              "`:more` shows them all, `:dump REL > FILE` writes a "
                              "relation to a file", DIM))

    def paint(self, text: str, colour: str) -> str:
        """``text`` in ``colour`` (an ANSI code) when colours are on."""
        return f"\x1b[{colour}m{text}\x1b[0m" if self.colour else text

    def note(self, text: str) -> None:
        """A warning or message on the error stream that is not a failure."""
        self.out.flush()
        if text.startswith("warning:"):
            text = self.paint(text, YELLOW)
        elif text.startswith("error:"):
            text = self.paint(text, RED)
        self.err.write(text + "\n")
        self.err.flush()

    def error(self, error: DatalogError) -> None:
        """A failed statement: its diagnostics, the first line of each in red."""
        self.failed = True
        text = str(error)
        if self.colour:
            text = "\n".join(self.paint(line, RED) if ": error: " in line or
                             line.startswith("error: ") else line
                             for line in text.split("\n"))
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()

    def _timing(self, elapsed: float) -> str:
        return f" ({format_ms(elapsed)})" if self.timing else ""

    def _statement_error(self, statement: Statement, message: str,
                         hint: str | None = None) -> DatalogError:
        last = statement.text.split("\n")[0]
        span = ast.Span(REPL_PATH, statement.line, statement.column, statement.line,
                        statement.column + len(last))
        return CheckError([Diagnostic("error", message, span, hint)], self.sources())

    def sources(self) -> dict[str, str]:
        return {REPL_PATH: "\n".join(self.lines)}


def _exactly_placed(read: Callable, statement: Statement):
    """``read(statement, exact=False)``, or if that fails, the error of
    ``read(statement, exact=True)``, whose positions are those of the session."""
    try:
        return read(statement, False)
    except DatalogError:
        return read(statement, True)

