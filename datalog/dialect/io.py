"""Soufflé's fact-file conventions: reading ``.input`` relations, writing
``.output`` relations and ``.printsize`` counts.

- ``.input r`` reads ``DIR/r.facts``: one row per line, columns separated by a tab
  (``delimiter=`` changes it), symbols unquoted as Soufflé writes them; the
  directive's ``filename=`` names another file (relative to ``DIR``) and
  ``headers=true`` skips the first line. Blank lines are skipped (except for a
  relation of arity 0, where any line is its one empty row).
- ``.output r`` writes ``DIR/r.csv`` (or ``filename=``), tab separated (or
  ``delimiter=``), rows sorted; ``IO=stdout`` (or the command line's ``-D -``)
  prints the relation to standard output instead.
- ``.printsize r`` prints ``r<TAB>count``.

A value that does not fit its column is a :class:`~datalog.errors.DataError` at
``file:line``:

>>> import tempfile, os
>>> from datalog.plan.ir import RelationPlan
>>> edge = RelationPlan("edge", ("x", "y"), ("number", "symbol"))
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "edge.facts"), "w").write("1\\ta\\n2\\tb c\\n")
>>> sorted(read_facts(os.path.join(d, "edge.facts"), edge))
[(1, 'a'), (2, 'b c')]
>>> _ = open(os.path.join(d, "bad.facts"), "w").write("1\\ta\\nx\\tb\\n")
>>> read_facts(os.path.join(d, "bad.facts"), edge)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
datalog.errors.DataError: .../bad.facts:2: error: column 1 (x) of `edge` is a number; found `x`
>>> format_rows([(2, "b"), (1, "a")], edge)
'1\\ta\\n2\\tb\\n'
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.errors import DataError, Diagnostic
from datalog.syntax.ast import Span

if TYPE_CHECKING:  # the plan's types, read by attribute only: the dialect sits below the plan
    from datalog.plan.ir import IOPlan, RelationPlan


#: Parameters of `.input` / `.output` directives that the engine reads; others are
#: accepted with a warning that they are ignored.
IO_PARAMETERS = ("IO", "filename", "delimiter", "headers")
#: The ``IO=`` kinds each directive supports.
IO_KINDS = {"input": ("file", "stdin"), "output": ("file", "stdout"),
            "printsize": ("stdout",)}
#: The values a boolean parameter (``headers=``) may take.
IO_BOOLEANS = ("true", "false", "1", "0", "yes", "no")


def _unescape(text: str) -> str:
    return text.encode("utf-8").decode("unicode_escape") if "\\" in text else text


def delimiter(io: IOPlan | None) -> str:
    """The column separator a directive asks for (``\\t`` by default)."""
    value = io.param("delimiter") if io is not None else None
    return _unescape(value) if value else "\t"


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("true", "1", "yes")


def input_path(io: IOPlan, fact_dir: str) -> str:
    """The file an ``.input`` directive reads, under ``fact_dir`` (``-`` for
    ``IO=stdin``)."""
    if (io.param("IO") or "").lower() == "stdin":
        return "-"
    filename = io.param("filename") or f"{io.relation}.facts"
    return os.path.join(fact_dir, filename)


def output_path(io: IOPlan, output_dir: str) -> str:
    """The file an ``.output`` directive writes, under ``output_dir``."""
    filename = io.param("filename") or f"{io.relation}.csv"
    return os.path.join(output_dir, filename)


def is_stdout(io: IOPlan) -> bool:
    return (io.param("IO") or "").lower() == "stdout"


def check_io(io: IOPlan) -> None:
    """Only files (and standard output for ``.output``) are supported."""
    kind = (io.param("IO") or "file").lower()
    allowed = IO_KINDS["output" if io.kind == "output" else "input"]
    if kind not in allowed:
        raise DataError([Diagnostic(
            "error", f".{io.kind} {io.relation}: IO={io.param('IO')} is not supported "
                     f"(supported: {', '.join('IO=' + a for a in allowed)})", None)])


def parse_value(text: str, type_: str):
    """A column value from its text; ``ValueError`` when it does not fit.

    >>> parse_value("-3", "number"), parse_value("2.5", "float"), parse_value("x y", "symbol")
    (-3, 2.5, 'x y')
    """
    if type_ == "symbol":
        return text
    text = text.strip()
    if type_ == "float":
        return float(text)
    value = int(text, 0) if text[:2].lower() in ("0x", "0b") else int(text)
    if type_ == "unsigned" and not 0 <= value <= UNSIGNED_MAX:
        raise ValueError(text)
    if type_ == "number" and not NUMBER_MIN <= value <= NUMBER_MAX:
        raise ValueError(text)
    return value


_TYPE_NAMES = {"number": "a number", "unsigned": "an unsigned number",
               "float": "a float", "symbol": "a symbol"}


def read_facts(path: str, relation: RelationPlan, io: IOPlan | None = None) -> set[tuple]:
    """The rows of a fact file for ``relation`` (see the module docstring)."""
    try:
        if path == "-":
            import sys

            text, path = sys.stdin.read(), "<stdin>"
        else:
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
    except FileNotFoundError:
        raise DataError([Diagnostic(
            "error", f"cannot open fact file for `{relation.name}`: {path}: "
                     f"no such file", None)]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError([Diagnostic(
            "error", f"cannot read fact file for `{relation.name}`: {path}: {exc}",
            None)]) from None
    sep = delimiter(io)
    lines = text.splitlines()
    start = 1 if io is not None and _truthy(io.param("headers")) else 0
    rows: set[tuple] = set()
    arity = relation.arity
    for number, line in enumerate(lines[start:], start=start + 1):
        if arity == 0:
            rows.add(())
            continue
        if not line.strip() and not (arity == 1 and relation.types[0] == "symbol"
                                     and line):
            continue
        fields = line.split(sep)
        if len(fields) != arity:
            _fail(path, number, f"`{relation.name}` has {arity} column"
                                f"{'s' if arity != 1 else ''}; found {len(fields)}")
        row = []
        for column, (field, type_, name) in enumerate(
                zip(fields, relation.types, relation.attributes), start=1):
            try:
                row.append(parse_value(field, type_))
            except ValueError:
                _fail(path, number, f"column {column} ({name}) of `{relation.name}` is "
                                    f"{_TYPE_NAMES[type_]}; found `{field}`")
        rows.add(tuple(row))
    return rows


def _fail(path: str, line: int, message: str) -> None:
    raise DataError([Diagnostic("error", message, Span(path, line, 0, line, 0))])


def format_value(value) -> str:
    """A value as Soufflé writes it: numbers in decimal, floats in Python's
    shortest round-trip form, symbols as they are."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def format_rows(rows: Iterable[tuple], relation: RelationPlan,
                io: IOPlan | None = None) -> str:
    """The text of an output file: one line per row, sorted."""
    sep = delimiter(io)
    lines = [sep.join(format_value(v) for v in row) for row in sorted(rows)]
    if relation.arity == 0:
        lines = ["()" for _ in lines]
    if io is not None and _truthy(io.param("headers")):
        lines.insert(0, sep.join(relation.attributes))
    return "".join(line + "\n" for line in lines)


def format_stdout(rows: Iterable[tuple], relation: RelationPlan,
                  io: IOPlan | None = None) -> str:
    """A relation printed to standard output, framed as Soufflé does."""
    rule = "=" * 15
    return (f"{'-' * 15}\n{relation.name}\n{rule}\n"
            f"{format_rows(rows, relation, io)}{rule}\n")


def write_files(contents: dict[str, str]) -> None:
    """Write several files all or nothing as far as the file system allows: each
    goes to a temporary file in its directory first; they are renamed into place
    only once all were written."""
    temps: list[tuple[str, str]] = []
    try:
        for path, text in contents.items():
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=directory, prefix=".datalog-", suffix=".tmp")
            temps.append((temp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        for temp, path in temps:
            os.replace(temp, path)
    except OSError as exc:
        for temp, _ in temps:
            if os.path.exists(temp):
                os.unlink(temp)
        raise DataError([Diagnostic("error", f"cannot write output: {exc}", None)]) \
            from None
