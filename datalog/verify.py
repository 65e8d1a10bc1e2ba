"""Checking a session against a from-scratch evaluation, and transaction files.

:func:`verify` (``session.verify()``, the REPL's ``:verify``) evaluates the
program anew, in memory, over the session's current inputs, and compares every
relation with the session's incrementally maintained rows. The answer is a
:class:`Verification`: false when nothing differs, like an empty
:class:`~datalog.Delta`; else it lists, relation by relation, the rows the
session lacks (``missing``) and the rows it has but should not (``extra``).

>>> import datalog
>>> session = datalog.Program('''
...     .decl link(x: symbol, y: symbol)
...     .decl reach(x: symbol, y: symbol)
...     reach(x, y) :- link(x, y).
...     reach(x, z) :- reach(x, y), link(y, z).
... ''').session()
>>> _ = session.insert("link", ("a", "b"), ("b", "c"))
>>> _ = session.retract("link", ("a", "b"))
>>> result = session.verify()
>>> bool(result), str(result)
(False, 'verified: every relation equals its from-scratch evaluation (2 relations, 2 rows)')

A **transaction file** (``datalog run --verify FILE``) is written in the REPL's
statement syntax: ``+edge(1, 2).`` (or ``edge(1, 2).``) inserts, ``-edge(1, 2).``
retracts; a fact on its own is one transaction, and the facts between ``:begin``
and ``:commit`` (DDlog's ``start;`` / ``commit;`` too) are one; ``//`` and
``/* */`` comments and blank lines are skipped. Nothing else may appear.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from datalog.errors import CheckError, DatalogError, Diagnostic
from datalog.rows import Rows, sorted_rows


class Verification:
    """The differences between a session and a from-scratch evaluation of its
    program over the same inputs: ``missing`` and ``extra`` map relation names
    to rows (an absent relation reads as empty). Iterating yields
    ``(relation, row, +1 | -1)``: ``+1`` a missing row, ``-1`` an extra one.
    ``str()`` is a report, one relation per paragraph."""

    def __init__(self, missing: dict[str, frozenset], extra: dict[str, frozenset],
                 relations: int = 0, rows: int = 0):
        self.missing = Rows(missing)
        self.extra = Rows(extra)
        self._checked = (relations, rows)

    @property
    def relations(self) -> tuple[str, ...]:
        """The relations that differ, sorted."""
        return tuple(sorted({*self.missing, *self.extra}))

    def __bool__(self) -> bool:
        return bool(self.missing) or bool(self.extra)

    def __iter__(self) -> Iterator[tuple[str, tuple, int]]:
        for name in self.relations:
            for row in sorted_rows(self.missing[name]):
                yield name, row, 1
            for row in sorted_rows(self.extra[name]):
                yield name, row, -1

    def __repr__(self) -> str:
        return f"Verification(missing={self.missing!r}, extra={self.extra!r})"

    def __str__(self) -> str:
        from datalog.syntax.render import format_fact, plural

        if not self:
            relations, rows = self._checked
            return ("verified: every relation equals its from-scratch evaluation "
                    f"({plural(relations, 'relation')}, {plural(rows, 'row')})")
        lines = [f"verify found differences in {plural(len(self.relations), 'relation')}:"]
        for name in self.relations:
            missing, extra = self.missing[name], self.extra[name]
            lines.append(f"{name}: {len(missing)} missing, {len(extra)} extra")
            lines += [f"  missing {format_fact(name, row)}" for row in sorted_rows(missing)]
            lines += [f"  extra   {format_fact(name, row)}" for row in sorted_rows(extra)]
        return "\n".join(lines)


def verify(session) -> Verification:
    """``session.verify()``: see the module docstring."""
    fresh = type(session)(session.program, max_iterations=session._max_iterations,
                    _initial=session._inputs)
    missing, extra = {}, {}
    rows = 0
    for name, now in session._contents.items():
        expected = fresh._contents[name]
        rows += len(expected)
        if now != expected:
            missing[name] = frozenset(expected - now)
            extra[name] = frozenset(now - expected)
    return Verification(missing, extra, len(session._contents), rows)


# ---------------------------------------------------------------- transaction files


@dataclass
class FileTransaction:
    """One transaction of a transaction file: where it starts (line) and its
    changes, relation -> row -> inserted?, in the order written (the last
    statement about a row wins)."""

    line: int
    changes: dict[str, dict[tuple, bool]] = field(default_factory=dict)


def read_transactions(path: str, session) -> list[FileTransaction]:
    """The transactions of the file at ``path`` (format in the module
    docstring), each row checked against ``session``'s relations. Raises a
    located :class:`DatalogError` for anything else."""
    from datalog.analysis.check import check
    from datalog.plan.lower import fact_row
    from datalog.syntax.parser import parse
    from datalog.syntax.statements import StatementReader, meta_words

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatalogError(f"cannot read the transaction file {path}: {exc}") from None
    sources = {path: text}
    checked = session.program.checked
    declarations = checked.program
    reader = StatementReader()
    transactions: list[FileTransaction] = []
    open_block: FileTransaction | None = None
    statements = []
    for line in text.split("\n"):
        statements += reader.feed(line)
    statements += reader.flush()
    probe = session.transaction(dry_run=True)

    def error(statement, message, hint=None):
        first = statement.text.split("\n")[0]
        from datalog.syntax.ast import Span
        span = Span(path, statement.line, statement.column, statement.line,
                    statement.column + len(first))
        return CheckError([Diagnostic("error", message, span, hint)], sources)

    for statement in statements:
        if statement.kind == "meta":
            word = meta_words(statement.text)[0]
            if word == ":begin":
                if open_block is not None:
                    raise error(statement, "a transaction is already open",
                                "`:commit` it first")
                open_block = FileTransaction(statement.line)
            elif word == ":commit":
                if open_block is None:
                    raise error(statement, "no transaction is open", "`:begin` opens one")
                transactions.append(open_block)
                open_block = None
            else:
                raise error(statement, f"`{word}` cannot appear in a transaction file",
                            "it holds facts (`+edge(1, 2).`, `-edge(1, 2).`) and "
                            "`:begin` / `:commit`")
            continue
        if statement.kind not in ("assert", "retract"):
            what = "query" if statement.kind == "query" else "rule or directive"
            raise error(statement, f"a {what} cannot appear in a transaction file",
                        "it holds facts (`+edge(1, 2).`, `-edge(1, 2).`) and "
                        "`:begin` / `:commit`")
        body = statement.text
        if body[0] in "+-":
            body = " " + body[1:]
        parsed = parse(statement.padded(body), path)
        if parsed.rules or parsed.relations or parsed.directives or parsed.types \
                or not parsed.facts:
            raise error(statement, "expected a fact such as `+edge(1, 2).`")
        from datalog.syntax import ast
        alone = ast.Module(types=declarations.types, relations=declarations.relations,
                            facts=parsed.facts,
                            sources=tuple(declarations.sources) + ((path, text),))
        errors = [d for d in check(alone) if d.severity == "error" and d.span is not None
                  and d.span.path == path]
        if errors:
            raise CheckError(errors, sources)
        target = open_block if open_block is not None else FileTransaction(statement.line)
        for fact in parsed.facts:
            atom = fact.atom
            row = fact_row(atom, checked.types[atom.relation], sources)
            try:
                probe.insert(atom.relation, row)
            except DatalogError as exc:
                message = exc.diagnostics[0].message if exc.diagnostics else str(exc)
                raise DatalogError([Diagnostic("error", message, atom.span)], sources) \
                    from None
            rows = target.changes.setdefault(atom.relation, {})
            rows.pop(row, None)
            rows[row] = statement.kind == "assert"
        if open_block is None:
            transactions.append(target)
    if open_block is not None:
        raise DatalogError([Diagnostic("error", "the transaction opened here is never "
                                       "committed", _line_span(path, open_block.line),
                                       "end it with `:commit`")], sources)
    return transactions


def _line_span(path: str, line: int):
    from datalog.syntax.ast import Span

    return Span(path, line, 0, line, 0)


@dataclass
class VerifiedRun:
    """What ``datalog run --verify`` did: the session after the last
    transaction, how many transactions it applied, and the first verification
    that found a difference (``None``: every one passed) with the line of its
    transaction."""

    session: object
    transactions: int
    failed: Verification | None = None
    line: int | None = None


def run_transactions(session, path: str) -> VerifiedRun:
    """Apply the transactions of the file at ``path`` to ``session`` one by one,
    verifying after the initial load and after each; stop at the first
    difference."""
    transactions = read_transactions(path, session)
    result = session.verify()
    if result:
        return VerifiedRun(session, 0, result, 0)
    for count, transaction in enumerate(transactions, 1):
        with session.transaction() as tx:
            for relation, rows in transaction.changes.items():
                for row, present in rows.items():
                    (tx.insert if present else tx.retract)(relation, row)
        result = session.verify()
        if result:
            return VerifiedRun(session, count, result, transaction.line)
    return VerifiedRun(session, len(transactions))


def describe(run: VerifiedRun, path: str) -> str:
    """The line ``datalog run --verify`` prints on standard error."""
    from datalog.syntax.render import plural

    if run.failed is None:
        return (f"verified: {plural(run.transactions, 'transaction')} of "
                f"{os.fspath(path)} applied incrementally; after the initial load and "
                "after each, every relation equals its from-scratch evaluation")
    where = ("after the initial load" if run.line == 0
             else f"after the transaction at {path}:{run.line}")
    return f"{where}: {run.failed}"
