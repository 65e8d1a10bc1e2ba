"""Soufflé's fact-file conventions: reading ``.input`` relations, writing
``.output`` relations and ``.printsize`` counts.

- ``.input r`` reads ``DIR/r.facts``: one row per line, columns separated by a tab
  (``delimiter=`` changes it), symbols unquoted as Soufflé writes them; the
  directive's ``filename=`` names another file (relative to ``DIR``) and
  ``headers=true`` skips the first line. Lines end at ``\n`` (a ``\r`` before it
  is dropped) and nowhere else: a form feed, U+2028 or ``\x1c`` is data, as in
  Soufflé. A UTF-8 byte-order mark at the start of the file is skipped. Blank
  lines (ASCII blanks only) are skipped, except for a relation of arity 0, where
  any line is its one empty row, a line that holds the delimiter, and a line of
  spaces for one symbol column.
- Numbers are read as Soufflé reads them: ASCII digits only, decimal with an
  optional sign, ``0x``/``0b`` (no ``1_000``, no Arabic-Indic digits, which
  Python's ``int()`` would take); floats in decimal or exponent form, ``inf`` and
  ``infinity``; ``nan`` is refused (see :mod:`datalog.dialect.functors`: NaN is
  never a value).
- ``.output r`` writes ``DIR/r.csv`` (or ``filename=``), tab separated (or
  ``delimiter=``), rows sorted; ``IO=stdout`` (or the command line's ``-D -``)
  prints the relation to standard output instead. A file is written only when
  it reads back to exactly its rows: a row the format cannot hold (a symbol with
  a line break or the delimiter, ...) is an error naming the relation and the
  file (:func:`unreadable`).
- ``.printsize r`` prints ``r<TAB>count``.
- gzip-compressed fact files, ``rfc4180=true`` quoting, ``compress=true`` and
  ``IO=sqlite`` are :mod:`datalog.dialect.formats`'s.

A value that does not fit its column is a :class:`~datalog.errors.DataError` at
``file:line``:

>>> import tempfile, os
>>> from types import SimpleNamespace
>>> edge = SimpleNamespace(name="edge", attributes=("x", "y"), types=("number", "symbol"),
...                        arity=2)
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
import re
from collections.abc import Iterable
from operator import itemgetter
from typing import Protocol

from datalog import sandbox
from datalog.dialect import records
from datalog.dialect.formats import compress, decompress, quote_rfc4180
from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.dialect.records import is_structured
from datalog.errors import DataError, Diagnostic, Span


class Relation(Protocol):
    """What the conventions read of a relation (the plan's ``RelationPlan`` is one:
    the dialect sits below the plan, so it names only what it reads)."""

    name: str
    attributes: tuple[str, ...]
    types: tuple[str, ...]

    @property
    def arity(self) -> int: ...


class Directive(Protocol):
    """What the conventions read of an I/O directive (the plan's ``IOPlan`` is one):
    its ``kind`` (``input``, ``output``, ``printsize``), ``relation`` and
    parameters."""

    kind: str
    relation: str

    def param(self, key: str, default: str | None = None) -> str | None: ...


#: Parameters of `.input` / `.output` directives that the engine reads; others are
#: accepted with a warning that they are ignored.
IO_PARAMETERS = ("IO", "filename", "delimiter", "headers", "rfc4180", "compress", "dbname",
                 "format")
#: The ``IO=`` kinds each directive supports.
IO_KINDS = {"input": ("file", "stdin", "sqlite", "jsonfile", "json"),
            "output": ("file", "stdout", "sqlite", "jsonfile", "json"),
            "printsize": ("stdout",)}
#: The values of ``format=`` (``IO=json`` and ``IO=jsonfile``).
JSON_FORMATS = ("list", "object")
#: The boolean parameters.
IO_FLAGS = ("headers", "rfc4180", "compress")
#: The values a boolean parameter (``headers=``) may take.
IO_BOOLEANS = ("true", "false", "1", "0", "yes", "no")


def _unescape(text: str) -> str:
    """Python's backslash escapes (``\\t``, ``\\x1f``, ``\\u2028``) resolved; other
    characters kept as they are. ``UnicodeDecodeError`` for a bad escape."""
    if "\\" not in text:
        return text
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


def delimiter_problem(value: str) -> str | None:
    """Why ``delimiter=value`` cannot separate columns, or ``None`` when it can.

    >>> delimiter_problem("\\\\x1f") is None, delimiter_problem("\\\\x")
    (True, 'a bad escape (truncated \\\\xXX escape)')
    """
    try:
        sep = _unescape(value)
    except UnicodeDecodeError as exc:
        return f"a bad escape ({exc.reason})"
    if any(c in sep for c in "\n\r"):
        return "a line break (rows are lines)"
    if not _encodable(sep):
        return "a character that UTF-8 cannot encode"
    return None


def delimiter(io: Directive | None) -> str:
    """The column separator a directive asks for (``\\t`` by default, ``,``
    with ``rfc4180=true``)."""
    value = io.param("delimiter") if io is not None else None
    if not value:
        return "," if rfc4180(io) else "\t"
    problem = delimiter_problem(value)
    if problem is None and rfc4180(io) and '"' in _unescape(value):
        problem = "a quote, which rfc4180=true uses to quote fields"
    if problem is not None:
        raise DataError([Diagnostic(
            "error", f".{io.kind} {io.relation}: delimiter={value!r} holds {problem}", None)])
    return _unescape(value)


def rfc4180(io: Directive | None) -> bool:
    """Whether a directive reads or writes RFC 4180 quoting."""
    return io is not None and is_true(io.param("rfc4180"))


def io_kind(io: Directive) -> str:
    """The directive's ``IO=`` (``file`` by default), lower case."""
    return (io.param("IO") or "file").lower()


def filename_problem(value: str) -> str | None:
    """Why ``filename=value`` cannot name a file, or ``None`` when it may.

    >>> filename_problem("out/r.csv") is None, filename_problem("a\\0b")
    (True, 'a NUL byte')
    """
    if "\0" in value:
        return "a NUL byte"
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        return "a character the file system cannot encode"
    return None


def _filename(io: Directive, default: str) -> str:
    value = io.param("filename") or default
    problem = filename_problem(value)
    if problem is not None:
        raise DataError([Diagnostic(
            "error", f".{io.kind} {io.relation}: filename={value!r} holds {problem}", None)])
    return value


def _encodable(text: str) -> bool:
    """Whether UTF-8 can write ``text`` (a lone surrogate, as invalid UTF-8 read
    with Python's ``surrogateescape`` gives, cannot)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_true(value: str | None) -> bool:
    """A boolean parameter (``headers=true``)."""
    return value is not None and value.strip().lower() in ("true", "1", "yes")


def input_path(io: Directive, fact_dir: str) -> str:
    """The file an ``.input`` directive reads, under ``fact_dir`` (``-`` for
    ``IO=stdin``; the database for ``IO=sqlite``)."""
    if io_kind(io) in ("stdin", "json"):
        return "-"
    if io_kind(io) == "sqlite":
        return os.path.join(fact_dir, _database(io))
    if io_kind(io) == "jsonfile":
        return os.path.join(fact_dir, _filename(io, f"{io.relation}.json"))
    return os.path.join(fact_dir, _filename(io, f"{io.relation}.facts"))


def output_path(io: Directive, output_dir: str, extension: str = "csv") -> str:
    """The file an ``.output`` directive writes, under ``output_dir``
    (``filename=``, else ``<relation>.<extension>``; ``.csv.gz`` with
    ``compress=true``; the database for ``IO=sqlite``)."""
    if io_kind(io) == "sqlite":
        return os.path.join(output_dir, _database(io))
    if io_kind(io) == "jsonfile":
        extension = "json"
    if extension == "csv" and is_true(io.param("compress")):
        extension = "csv.gz"
    return os.path.join(output_dir, _filename(io, f"{io.relation}.{extension}"))


def _database(io: Directive) -> str:
    """``IO=sqlite``'s file: ``filename=``, else ``dbname=``, else
    ``<relation>.sqlite`` (as Soufflé)."""
    name = io.param("filename") or io.param("dbname") or f"{io.relation}.sqlite"
    problem = filename_problem(name)
    if problem is not None:
        raise DataError([Diagnostic(
            "error", f".{io.kind} {io.relation}: dbname={name!r} holds {problem}", None)])
    return name


def check_outputs(outputs: Iterable[Directive], output_dir: str,
                  extension: str = "csv") -> None:
    """Two ``.output`` directives may not write one file (the second would
    silently replace the first)."""
    seen: dict[str, Directive] = {}
    for io in outputs:
        if output_dir == "-" or is_stdout(io):
            continue
        path = os.path.normpath(output_path(io, output_dir, extension))
        if os.path.isdir(path) and extension != "parquet":
            raise DataError([Diagnostic(
                "error", f".output {io.relation}: cannot write {path}: it is a folder",
                None)])
        if path in seen and io_kind(io) == io_kind(seen[path]) == "sqlite":
            continue  # one database, a table each
        if path in seen:
            raise DataError([Diagnostic(
                "error", f".output {seen[path].relation} and .output {io.relation} both "
                         f"write {path}", None, hint="give one of them another filename=")])
        seen[path] = io


def is_stdout(io: Directive) -> bool:
    return io_kind(io) in ("stdout", "json")


def check_io(io: Directive) -> None:
    """Files, SQLite databases, and standard input or output."""
    kind = io_kind(io)
    allowed = IO_KINDS["output" if io.kind == "output" else "input"]
    if kind not in allowed:
        raise DataError([Diagnostic(
            "error", f".{io.kind} {io.relation}: IO={io.param('IO')} is not supported "
                     f"(supported: {', '.join('IO=' + a for a in allowed)})", None)])
    delimiter(io)  # a quote in it under rfc4180=true


def local_reader_only(io: Directive, path: str) -> bool:
    """Whether an input needs this module's reader (Spark's CSV reader cannot
    read it): a SQLite database, RFC 4180 quoting, or a gzip-compressed file
    (recognised by its first bytes, whatever its name)."""
    from datalog.dialect.formats import GZIP_MAGIC

    if io_kind(io) in ("sqlite", "jsonfile", "json") or rfc4180(io):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except (OSError, ValueError):
        return False  # the reader reports it


def local_writer_only(io: Directive) -> str | None:
    """What of an ``.output`` only the local engine writes (``IO=sqlite``,
    ``compress=true``, ``rfc4180=true``), or ``None``."""
    if io_kind(io) in ("sqlite", "json", "jsonfile"):
        return f"IO={io_kind(io)}"
    for flag in ("compress", "rfc4180"):
        if is_true(io.param(flag)):
            return f"{flag}=true"
    return None


#: What counts as blank in a fact file: C's ``isspace`` (Java's ``\s``), not
#: Unicode's (``str.strip()`` would also strip ``\x1c`` or U+2028).
BLANKS = " \t\n\v\f\r"
#: An integer column's text (Spark's reader uses the same expression).
INTEGER_TEXT = r"[ \t\n\x0b\f\r]*(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[+-]?[0-9]+)[ \t\n\x0b\f\r]*"
#: A float column's text: decimal or exponent form, ``inf``, ``infinity``; no NaN.
FLOAT_TEXT = (r"[ \t\n\x0b\f\r]*[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?"
              r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity))[ \t\n\x0b\f\r]*")
_INTEGER = re.compile(INTEGER_TEXT, re.ASCII)
_FLOAT = re.compile(FLOAT_TEXT, re.ASCII)
#: A UTF-8 byte-order mark, skipped at the start of a fact file.
BOM = "\ufeff"


def parse_value(text: str, type_: str):
    """A column value from its text; ``ValueError`` when it does not fit.

    >>> parse_value("-3", "number"), parse_value("2.5", "float"), parse_value("x y", "symbol")
    (-3, 2.5, 'x y')
    >>> for bad in ("1_000", "\u0661", "nan", "0x_1"):
    ...     try:
    ...         parse_value(bad, "float" if bad == "nan" else "number")
    ...     except ValueError:
    ...         print("refused", ascii(bad))
    refused '1_000'
    refused '\\u0661'
    refused 'nan'
    refused '0x_1'
    """
    if is_structured(type_):
        return records.parse(text, type_, parse_value)
    if type_ == "symbol":
        return text
    if type_ == "float":
        if _FLOAT.fullmatch(text) is None:
            raise ValueError(text)
        return float(text)
    if _INTEGER.fullmatch(text) is None:
        raise ValueError(text)
    text = text.strip(BLANKS)
    prefix = text[:2].lower()
    value = int(text[2:], 16 if prefix == "0x" else 2) if prefix in ("0x", "0b") else int(text)
    if type_ == "unsigned" and not 0 <= value <= UNSIGNED_MAX:
        raise ValueError(text)
    if type_ == "number" and not NUMBER_MIN <= value <= NUMBER_MAX:
        raise ValueError(text)
    return value


TYPE_NAMES = {"number": "a number", "unsigned": "an unsigned number",
              "float": "a float", "symbol": "a symbol"}


def wrong_arity(relation: Relation, found: str) -> str:
    """The message for a line of a fact file with ``found`` columns."""
    arity = relation.arity
    return f"`{relation.name}` has {arity} column{'s' if arity != 1 else ''}; found {found}"


def wrong_value(relation: Relation, column: int, found: str) -> str:
    """The message for the text ``found`` in 0-based ``column``, which does not fit."""
    return (f"column {column + 1} ({relation.attributes[column]}) of `{relation.name}` "
            f"is {_type_name(relation.types[column])}; found `{found}`")


def _type_name(type_: str) -> str:
    return records.describe(type_) if is_structured(type_) else TYPE_NAMES[type_]


def data_error(path: str, line: int | None, message: str) -> DataError:
    """A fact file that does not fit its relation, at ``path:line``."""
    return DataError([Diagnostic("error", message,
                                 Span(path, line or 0, 0, line or 0, 0))])


def missing_file(relation: Relation, path: str) -> DataError:
    return DataError([Diagnostic(
        "error", f"cannot open fact file for `{relation.name}`: {path}: no such file", None)])


def read_facts(path: str, relation: Relation, io: Directive | None = None) -> set[tuple]:
    """The rows of a fact file for ``relation`` (see the module docstring)."""
    if path != "-":
        sandbox.check(path, f"fact file for `{relation.name}`")
    if io is not None and io_kind(io) == "sqlite":
        from datalog.dialect.formats import read_sqlite

        return read_sqlite(path, relation, parse_value)
    try:
        if path == "-":
            import sys

            stream, path = sys.stdin, "<stdin>"
            data = stream.buffer.read() if hasattr(stream, "buffer") else \
                stream.read().encode("utf-8", "surrogateescape")  # a text stream
        else:
            with open(path, "rb") as handle:
                data = handle.read()
        data = decompress(data, f"fact file for `{relation.name}`", path)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise missing_file(relation, path) from None
    except (OSError, UnicodeError, ValueError) as exc:  # ValueError: a NUL byte in path
        raise DataError([Diagnostic(
            "error", f"cannot read fact file for `{relation.name}`: {path}: {exc}",
            None)]) from None
    if io is not None and io_kind(io) in ("json", "jsonfile"):
        from datalog.dialect.formats import read_json

        return read_json(text[1:] if text.startswith(BOM) else text, path, relation,
                         parse_value)
    sep = delimiter(io)
    start = 1 if io is not None and is_true(io.param("headers")) else 0
    if rfc4180(io):
        return _read_rfc4180(text, sep, start, path, relation)
    lines = fact_lines(text)
    rows: set[tuple] = set()
    arity = relation.arity
    for number, line in enumerate(lines[start:], start=start + 1):
        if arity == 0:
            rows.add(())
            continue
        if not line.strip(BLANKS) and not (sep in line if arity > 1
                                     else relation.types[0] == "symbol" and line):
            continue  # a blank line; but `\t` is a row of two empty symbols
        fields = line.split(sep)
        rows.add(_row(fields, path, number, relation))
    return rows


def _read_rfc4180(text: str, sep: str, start: int, path: str,
                  relation: Relation) -> set[tuple]:
    """The rows of an ``rfc4180=true`` text (see :mod:`datalog.dialect.formats`)."""
    from datalog.dialect.formats import split_rfc4180

    if text.startswith(BOM):
        text = text[1:]
    if start:
        end = text.find("\n")
        text = "" if end < 0 else text[end + 1:]
    try:
        records = split_rfc4180(text, sep)
    except ValueError as exc:
        line, message = exc.args
        raise data_error(path, line + start, message) from None
    if relation.arity == 0:
        return {()} if records else set()
    return {_row(fields, path, line + start, relation) for line, fields in records}


def _row(fields: list[str], path: str, number: int, relation: Relation) -> tuple:
    """A row from the texts of its fields, checked against ``relation``."""
    arity = relation.arity
    if len(fields) != arity:
        raise data_error(path, number, wrong_arity(relation, str(len(fields))))
    row = []
    for column, (field, type_) in enumerate(zip(fields, relation.types)):
        try:
            row.append(parse_value(field, type_))
        except ValueError:
            raise data_error(path, number, wrong_value(relation, column, field)) from None
    return tuple(row)


def fact_lines(text: str) -> list[str]:
    """The lines of a fact file's text: split at ``\\n`` only, a ``\\r`` before it
    dropped, a byte-order mark at the start skipped.

    >>> fact_lines("\ufeffa\\fb\\x1cc\\u2028d\\r\\ne\\n")
    ['a\\x0cb\\x1cc\\u2028d', 'e']
    """
    if text.startswith(BOM):
        text = text[1:]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def format_value(value) -> str:
    """A value as Soufflé writes it: numbers in decimal, floats in Python's
    shortest round-trip form, symbols as they are."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        return records.format_value(value)
    return str(value)


def format_rows(rows: Iterable[tuple], relation: Relation,
                io: Directive | None = None, target: str | None = None) -> str:
    """The text of an output file: one line per row, sorted. With ``target`` (the
    file it is for) a row that would not read back as itself is an error
    (:func:`unreadable`)."""
    sep = delimiter(io)
    quoted = rfc4180(io)
    headers = io is not None and is_true(io.param("headers"))
    if relation.arity == 0:
        lines = ["()" for _ in rows]
    else:
        lines, ordered = _sorted_lines(rows, relation, sep, quoted)
        if (target is not None and not quoted
                and not _all_readable(lines, sep, relation.arity, first=not headers)):
            for number, (line, row) in enumerate(zip(lines, ordered)):
                problem = unreadable(line, row, sep, first=number == 0 and not headers)
                if problem is not None:
                    raise unreadable_error(f"cannot write `{relation.name}` to {target}: the "
                                           f"row {_shown(row)}", problem, hinted=io is not None)
    if headers:
        lines.insert(0, sep.join(relation.attributes))
    text = "\n".join(lines) + "\n" if lines else ""
    if not _encodable(text):
        raise _unwritable(text, relation)
    return text


def _sorted_lines(rows: Iterable[tuple], relation: Relation, sep: str,
                  quoted: bool) -> tuple[list[str], Iterable[tuple]]:
    """The lines of ``rows`` (of arity one or more) in sorted order, and the rows in
    that order. A whole column is formatted at once; a relation of one column is
    sorted as values (1-tuples compare slower), one of symbols is joined as it is."""
    if relation.arity == 1:
        values = sorted(row[0] for row in rows)
        return _column_texts(values, relation.types[0], quoted), zip(values)
    ordered = sorted(rows)
    if not quoted and all(type_ == "symbol" for type_ in relation.types):
        return list(map(sep.join, ordered)), ordered
    texts = [_column_texts(list(map(itemgetter(i), ordered)), type_, quoted)
             for i, type_ in enumerate(relation.types)]
    return list(map(sep.join, zip(*texts))), ordered


def _column_texts(column: list, type_: str, quoted: bool) -> list[str]:
    """:func:`format_value` of each value of ``column``, a column of ``type_``
    (symbols and records quoted when ``quoted``): numbers and symbols in one call."""
    if type_ == "symbol" and not quoted:   # symbols are written as they are
        return column
    kinds = set(map(type, column))
    if kinds == {int}:
        return list(map(str, column))
    if kinds == {float}:
        return list(map(repr, column))
    if quoted:
        return [quote_rfc4180(format_value(v)) if isinstance(v, (str, tuple))
                else format_value(v) for v in column]
    return list(map(format_value, column))


def _all_readable(lines: list[str], sep: str, arity: int, first: bool) -> bool:
    """Whether every line (of ``arity`` values joined by ``sep``) reads back as its
    row, from counts over the whole text; ``False`` when it cannot tell (then
    :func:`unreadable` looks at each line). A one-character delimiter occurs in a
    line exactly ``arity - 1`` times when no value holds it."""
    if len(sep) != 1 or sep in "\r\n":
        return False
    text = "\n".join(lines)
    return (text.count("\n") == len(lines) - 1           # no value holds a line break
            and "\r\n" not in text and not text.endswith("\r")
            and not (first and text.startswith(BOM))
            and text.count(sep) == len(lines) * (arity - 1)
            and (arity > 1 or "" not in lines))


def output_file(files: dict, io: Directive, rows: Iterable[tuple], relation: Relation,
                output_dir: str) -> None:
    """Add to ``files`` (path -> text, bytes or a writer, for :func:`write_files`)
    what ``io``, an ``.output`` to a file or database, writes of ``rows``."""
    path = output_path(io, output_dir)
    if io_kind(io) == "sqlite":
        from datalog.dialect.formats import SQLiteOutput

        database = files.get(path)
        if not isinstance(database, SQLiteOutput):
            database = files[path] = SQLiteOutput(path)
        database.add(relation, rows, format_value)
        return
    if io_kind(io) == "jsonfile":
        text = format_json_rows(rows, relation, io)
    else:
        text = format_rows(rows, relation, io, target=path)
    files[path] = compress(text) if is_true(io.param("compress")) else text


def unreadable(line: str, row: tuple, sep: str, first: bool = False) -> str | None:
    """What in ``line``, the text of ``row``, would not read back as ``row``, or
    ``None`` (``first``: the file's first line).

    >>> unreadable("a\\tb", ("a", "b"), "\\t"), unreadable("a\\nb\\tc", ("a\\nb", "c"), "\\t")
    (None, 'a line break')
    >>> unreadable("a   b", ("a ", "b"), "  ")   # splits as 'a', ' b'
    "the delimiter '  '"
    """
    if "\n" in line:
        return "a line break"
    if line.endswith("\r"):
        return "a carriage return at the end of its line"
    if first and line.startswith(BOM):
        return "a byte-order mark at the start of the file (readers skip it)"
    if line.split(sep) != [format_value(v) for v in row]:
        return "a tab (the delimiter)" if sep == "\t" else f"the delimiter {sep!r}"
    if line == "" and len(row) == 1:
        return "nothing: an empty symbol alone on its line is a blank line, which readers skip"
    return None


def unreadable_error(what: str, problem: str, hinted: bool) -> DataError:
    """The error for a row (``what`` names it and the file) that holds
    ``problem``; ``hinted``: suggest another ``delimiter=`` when it is the
    delimiter."""
    return DataError([Diagnostic(
        "error", f"{what} holds {problem}, which a fact file cannot hold (it would read "
                 "back as another row)", None,
        hint="the plain fact format has no quoting or escapes"
             + ("; choose another delimiter=, or" if "delimiter" in problem and hinted
                else ";") + " write it with rfc4180=true, which quotes fields")])


def _shown(row: tuple) -> str:
    text = ascii(row)
    return text if len(text) <= 80 else text[:77] + "..."


def _unwritable(text: str, relation: Relation) -> DataError:
    """The error for an output text that UTF-8 cannot encode: the first line that
    holds such a character, shown with escapes."""
    line = next(line for line in text.split("\n") if not _encodable(line))
    bad = next(c for c in line if not _encodable(c))
    shown = ascii(line) if len(line) <= 60 else ascii(line[:60]) + "..."
    return DataError([Diagnostic(
        "error", f"cannot write `{relation.name}`: the row {shown} holds U+{ord(bad):04X}, "
                 "which UTF-8 cannot encode", None,
        hint="a lone surrogate comes from input that was not valid UTF-8")])


def format_stdout(rows: Iterable[tuple], relation: Relation,
                  io: Directive | None = None) -> str:
    """A relation printed to standard output, framed as Soufflé does (JSON, for
    ``IO=json`` and ``IO=jsonfile``, as it is)."""
    if io is not None and io_kind(io) in ("json", "jsonfile"):
        return format_json_rows(rows, relation, io)
    text = format_rows(rows, relation, io)
    if io is not None and is_true(io.param("headers")):  # inside the frame's head
        header, text = text.split("\n", 1)
        return frame_stdout(f"{relation.name}\n{header}", text)
    return frame_stdout(relation.name, text)


def format_json_rows(rows: Iterable[tuple], relation: Relation, io: Directive) -> str:
    """``rows`` as ``IO=json`` writes them (:func:`datalog.dialect.formats.format_json`)."""
    from datalog.dialect.formats import format_json

    text = format_json(rows, relation, (io.param("format") or "list").lower() == "object")
    if not _encodable(text):
        raise _unwritable(text, relation)
    return text


def frame_stdout(name: str, text: str) -> str:
    """The lines ``text`` of relation ``name`` framed for standard output."""
    rule = "=" * 15
    return f"{'-' * 15}\n{name}\n{rule}\n{text}{rule}\n"


def write_files(contents: dict[str, str], folder: str | None = None) -> None:
    """Write several files all or nothing (:mod:`datalog.dialect.journal`: each
    to a temporary file beside it, then a journal in ``folder``, then the
    renames); a crash in between is finished by the next call for ``folder``.
    ``folder`` defaults to the folder the paths share. Files get the usual
    permissions (``0666`` less the umask: ``0644`` under umask ``022``)."""
    from datalog.dialect.journal import recover, replace_all

    for path in contents:
        sandbox.check(path, "output")
    if folder is not None:
        sandbox.check(folder, "output folder")
    try:
        if not contents:
            if folder is not None:
                recover(folder)
            return
        if folder is None:
            folder = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in contents])
        replace_all(contents, folder)
    except (OSError, UnicodeError, ValueError) as exc:
        raise DataError([Diagnostic("error", f"cannot write output: {exc}", None)]) \
            from None
