"""Soufflé's other fact formats: gzip-compressed files, RFC 4180 quoting and
SQLite databases (the plain tab-separated format is :mod:`datalog.dialect.io`'s).

- **gzip**: a fact file whose first two bytes are gzip's magic number
  (``1f 8b``) is decompressed before it is read, whatever its name (Soufflé,
  built with zlib, reads a compressed or a plain file the same way; the name
  ``.gz`` is not what decides). ``.output r(compress=true)`` writes gzip, by
  default to ``r.csv.gz``.
- **RFC 4180** (``rfc4180=true``): the delimiter defaults to ``,``; a field that
  starts with ``"`` is quoted: it runs to the next lone ``"``, a doubled ``""``
  in it is one ``"``, and it may hold the delimiter and line breaks; a quoted
  field must be followed by the delimiter or the end of the line. The writer
  quotes every symbol and record (as Soufflé does) and doubles the quotes in
  it, so any symbol can be written and reads back as itself.
- **SQLite** (``IO=sqlite``, ``dbname=`` or ``filename=``, default
  ``<relation>.sqlite``, relative to the fact or output directory): Soufflé's
  layout. ``.output`` keeps the database's other tables and writes, for ``r``, a
  table ``_r`` with columns ``"0"``, ``"1"``, ... (symbols as ids into the
  table ``__SymbolTable(id, symbol)``) and a view ``r`` whose columns are the
  attribute names, symbols resolved. ``.input r`` reads ``SELECT * FROM r``, a
  table or view, its columns in order. Records are stored as their text
  (Soufflé stores an internal id there, meaningless outside the run).
- **JSON** (``IO=jsonfile``, default ``<relation>.json``; ``IO=json``: standard
  input or output): an array of rows, each a list of its columns or, with
  ``format=object``, an object keyed by the attribute names; a record is a
  list (an object keyed by its field names) and ``nil`` is ``null``. The reader
  takes either form. An ADT value is the string of its text (Soufflé's JSON
  writer has none); a float ``inf`` is written ``Infinity``, as Python's JSON.

>>> split_rfc4180('1,"a, ""b"" c"\\n"x\\ny",2\\n', ",")
[(1, ['1', 'a, "b" c']), (2, ['x\\ny', '2'])]
>>> print(quote_rfc4180('say "hi" now'))
"say ""hi"" now"
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import zlib
from collections.abc import Iterable

from datalog.errors import DataError, Diagnostic, Span

#: The first bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"


def decompress(data: bytes, what: str, path: str) -> bytes:
    """``data`` decompressed when it is gzip (by its magic number), else as it
    is; a corrupt or truncated stream is a :class:`DataError` at ``path``."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError([Diagnostic(
            "error", f"cannot read {what}: the file is gzip-compressed but corrupt ({exc})",
            Span(path, 0, 0, 0, 0))]) from None


def compress(text: str) -> bytes:
    """``text`` as UTF-8, gzip-compressed (no time stamp: the same rows give the
    same bytes)."""
    return gzip.compress(text.encode("utf-8"), mtime=0)


def split_rfc4180(text: str, sep: str) -> list[tuple[int, list[str]]]:
    """The records of an RFC 4180 text: ``(line where it starts, fields)``, blank
    lines left out. ``ValueError`` (``(line, message)``) for an unbalanced quote
    or a quoted field followed by something else than the delimiter."""
    records: list[tuple[int, list[str]]] = []
    line, i, n = 1, 0, len(text)
    while i < n:
        end = text.find("\n", i)
        end = n if end < 0 else end
        fields = _fast_record(text[i:end], sep)  # a record on one line, well formed
        if fields is not None:
            start_line, quoted_any = line, True
            i, line = end + 1, line + 1
        else:
            start_line = line
            fields, quoted_any, i, line = _record(text, i, line, sep)
        if not quoted_any and len(fields) == 1 and not fields[0].strip(" \t\v\f\r"):
            continue  # a blank line
        records.append((start_line, fields))
    return records


def _fast_record(row: str, sep: str) -> list[str] | None:
    """The fields of ``row`` when it holds a whole, well-formed record with at
    least one quoted field (else ``None``: :func:`_record` reads it, and says
    what is wrong)."""
    if row.endswith("\r"):
        row = row[:-1]
    if '"' not in row or row.count('"') % 2 or "\r" in row:
        return None
    pieces = row.split(sep)
    fields: list[str] = []
    k = 0
    while k < len(pieces):
        piece = pieces[k]
        if piece.startswith('"'):
            while piece.count('"') % 2 and k + 1 < len(pieces):  # a quoted delimiter
                k += 1
                piece += sep + pieces[k]
            inner = piece[1:-1]
            if len(piece) < 2 or not piece.endswith('"') or '"' in inner.replace('""', ""):
                return None
            fields.append(inner.replace('""', '"'))
        elif '"' in piece:
            return None
        else:
            fields.append(piece)
        k += 1
    return fields


def _record(text: str, i: int, line: int, sep: str) -> tuple[list[str], bool, int, int]:
    """One record read character by character from ``text[i:]`` (quoted fields
    may span lines): its fields, whether one was quoted, and where and on which
    line the next record starts."""
    n = len(text)
    start_line = line
    fields: list[str] = []
    quoted_any = False
    while True:  # one field per turn
        if i < n and text[i] == '"':
            quoted_any = True
            i += 1
            parts = []
            while True:
                close = text.find('"', i)
                if close < 0:
                    raise ValueError(start_line, "a quoted field has no closing quote")
                parts.append(text[i:close])
                line += text.count("\n", i, close)
                if text.startswith('"', close + 1):
                    parts.append('"')
                    i = close + 2
                    continue
                i = close + 1
                break
            fields.append("".join(parts))
            if i < n and not text.startswith(sep, i) and text[i] not in "\r\n":
                raise ValueError(line, "a quoted field is followed by "
                                       f"{text[i]!r}, not the delimiter")
            if text.startswith("\r", i) and i + 1 == n:
                i += 1  # a last line ending in `\r`, which is dropped
            if text.startswith("\r\n", i) or text.startswith("\n", i) or i >= n:
                i += 2 if text.startswith("\r\n", i) else 1
                return fields, quoted_any, i, line + 1
            if text[i] == "\r":
                raise ValueError(line, "a quoted field is followed by '\\r'")
            i += len(sep)
            continue
        end = text.find("\n", i)
        end = n if end < 0 else end
        stop = text.find(sep, i, end)
        if stop < 0:
            field = text[i:end]
            fields.append(field[:-1] if field.endswith("\r") else field)
            return fields, quoted_any, end + 1, line + 1
        fields.append(text[i:stop])
        i = stop + len(sep)


def quote_rfc4180(text: str) -> str:
    """A field quoted as RFC 4180 does: in ``"``, its quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


# -- SQLite -------------------------------------------------------------------

#: The table of symbols in Soufflé's SQLite layout.
SYMBOL_TABLE = "__SymbolTable"


def _name(identifier: str) -> str:
    """An SQL identifier quoted."""
    return '"' + identifier.replace('"', '""') + '"'


def file_error(path: str, message: str) -> DataError:
    return DataError([Diagnostic("error", message, Span(path, 0, 0, 0, 0))])


def read_sqlite(path: str, relation, parse) -> set[tuple]:
    """The rows of ``relation`` in the SQLite database ``path`` (its table or view
    named after the relation); ``parse(text, type)`` reads a value from text."""
    name = relation.name
    if not os.path.exists(path):
        raise file_error(path, f"cannot open the SQLite database for `{name}` (IO=sqlite): "
                                 "no such file")
    try:
        db = sqlite3.connect(f"file:{_uri(path)}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise file_error(path, f"cannot open the SQLite database for `{name}`: {exc}") \
            from None
    try:
        found = db.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view')"
                           " AND name = ?", (name,)).fetchone()[0]
        if not found:
            raise file_error(path, f"the SQLite database has no table or view `{name}` "
                                     f"(the relation `{name}` is read from it)")
        cursor = db.execute(f"SELECT * FROM {_name(name)}")
        width = len(cursor.description)
        if relation.arity == 0:  # written as one column `unit`
            return {()} if cursor.fetchone() is not None else set()
        if width != relation.arity:
            raise file_error(path, f"the table `{name}` has {width} column"
                                     f"{'s' if width != 1 else ''}; `{name}` has "
                                     f"{relation.arity}")
        rows: set[tuple] = set()
        for number, values in enumerate(cursor, start=1):
            rows.add(tuple(_value(path, relation, number, column, value, parse)
                           for column, value in enumerate(values)))
        return rows
    except sqlite3.Error as exc:
        raise file_error(path, f"cannot read `{name}` from the SQLite database: {exc}") \
            from None
    finally:
        db.close()


def _value(path, relation, number, column, value, parse):
    type_ = relation.types[column]
    where = (f"row {number} of the table `{relation.name}`, column {column + 1} "
             f"({relation.attributes[column]})")
    if value is None or isinstance(value, bytes):
        raise file_error(path, f"{where} holds {'NULL' if value is None else 'a blob'}")
    if type_ == "symbol":
        return value if isinstance(value, str) else repr(value) if isinstance(value, float) \
            else str(value)
    text = repr(value) if isinstance(value, float) else str(value)
    try:
        result = parse(text, type_)
    except ValueError:
        raise file_error(path, f"{where} is `{text}`, which does not fit its type "
                                 f"`{type_}`") from None
    return result


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))


class SQLiteOutput:
    """The relations one run writes into one SQLite database: called with a
    temporary path, it copies the database there (if it exists) and writes each
    relation's table and view, in one transaction."""

    def __init__(self, final: str):
        self.final = final
        self.relations: dict[str, tuple] = {}

    def add(self, relation, rows: Iterable[tuple], format_value) -> None:
        self.relations[relation.name] = (relation, sorted(rows), format_value)

    def __call__(self, temp: str) -> None:
        if os.path.exists(self.final):
            shutil.copyfile(self.final, temp)
        db = sqlite3.connect(temp)
        try:
            # no rollback journal beside the temporary file: a crash leaves only
            # the temporary file, which the output journal's recovery removes
            db.execute("PRAGMA journal_mode = MEMORY")
            with db:
                db.execute(f"CREATE TABLE IF NOT EXISTS {_name(SYMBOL_TABLE)} "
                           "(id INTEGER PRIMARY KEY, symbol TEXT UNIQUE)")
                for relation, rows, format_value in self.relations.values():
                    _write_relation(db, relation, rows, format_value)
        except (sqlite3.Error, OverflowError) as exc:
            raise OSError(f"cannot write the SQLite database {self.final}: {exc}") from None
        finally:
            db.close()


def _write_relation(db, relation, rows, format_value) -> None:
    name, arity = relation.name, relation.arity
    table = _name("_" + name)
    columns = [_name(str(i)) for i in range(arity)]
    db.execute(f"DROP VIEW IF EXISTS {_name(name)}")
    db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute(f"CREATE TABLE {table} ({', '.join(c + ' INTEGER' for c in columns)})"
               if arity else f"CREATE TABLE {table} (unit INTEGER)")
    symbols: dict[str, int] = {}

    def symbol_id(text: str) -> int:
        if text not in symbols:
            db.execute(f"INSERT OR IGNORE INTO {_name(SYMBOL_TABLE)} (symbol) VALUES (?)",
                       (text,))
            symbols[text] = db.execute(f"SELECT id FROM {_name(SYMBOL_TABLE)} "
                                       "WHERE symbol = ?", (text,)).fetchone()[0]
        return symbols[text]

    stored = []
    for row in rows:
        stored.append(tuple(
            symbol_id(value) if type_ == "symbol"
            else format_value(value) if isinstance(value, tuple) else value
            for value, type_ in zip(row, relation.types)))
    if arity:
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * arity)})", stored)
    else:
        db.executemany(f"INSERT INTO {table} VALUES (1)", [()] * len(stored))
    picks, sources, joins = [], [table], []
    for i, (attribute, type_) in enumerate(zip(relation.attributes, relation.types)):
        if type_ == "symbol":
            alias = _name(f"_symtab_{i}")
            picks.append(f"{alias}.symbol AS {_name(attribute)}")
            sources.append(f"{_name(SYMBOL_TABLE)} AS {alias}")
            joins.append(f"{table}.{columns[i]} = {alias}.id")
        else:
            picks.append(f"{table}.{columns[i]} AS {_name(attribute)}")
    where = f" WHERE {' AND '.join(joins)}" if joins else ""
    db.execute(f"CREATE VIEW {_name(name)} AS SELECT {', '.join(picks) or 'unit'} "
               f"FROM {', '.join(sources)}{where}")


# -- JSON ---------------------------------------------------------------------


def to_json(value, type_: str, objects: bool):
    """A value as Soufflé's JSON writer gives it: numbers and strings as they are,
    a record as a list of its fields (an object keyed by the field names when
    ``objects``), ``nil`` as ``null``; an ADT value (which Soufflé's writer does
    not take) as the string of its text."""
    from datalog.dialect.records import ADTType, RecordType, format_value

    if isinstance(type_, RecordType):
        if value == ():
            return None
        fields = [to_json(v, t, objects) for v, (_, t) in zip(value, type_.fields)]
        return dict(zip((n for n, _ in type_.fields), fields)) if objects else fields
    if isinstance(type_, ADTType):
        return format_value(value)
    return value


def format_json(rows: Iterable[tuple], relation, objects: bool) -> str:
    """The text of ``IO=jsonfile``: ``[`` rows separated by ``,`` and a line
    break ``]``, a row a list (``format=list``) or an object keyed by the
    attribute names (``format=object``).

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(attributes=("x", "s"), types=("number", "symbol"), arity=2)
    >>> print(format_json([(2, 'b "q"'), (1, "a")], r, objects=False), end="")
    [[1, "a"],
    [2, "b \\"q\\""]]
    >>> print(format_json([(1, "a")], r, objects=True), end="")
    [{"x": 1, "s": "a"}]
    """
    import json

    lines = []
    for row in sorted(rows):
        if relation.arity == 0:
            lines.append("null")
            continue
        values = [to_json(v, t, objects) for v, t in zip(row, relation.types)]
        item = dict(zip(relation.attributes, values)) if objects else values
        lines.append(json.dumps(item, ensure_ascii=False))
    return "[" + ",\n".join(lines) + "]\n"


def read_json(text: str, path: str, relation, parse) -> set[tuple]:
    """The rows of an ``IO=jsonfile`` text: an array of rows, each a list of the
    columns in order or an object keyed by the attribute names (all of them);
    ``parse(text, type)`` reads an ADT value from its text."""
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError([Diagnostic("error", f"not valid JSON: {exc.msg}",
                                    Span(path, exc.lineno, exc.colno, exc.lineno,
                                         exc.colno))]) from None
    if not isinstance(data, list):
        raise file_error(path, f"the JSON for `{relation.name}` is not an array of rows")
    if relation.arity == 0:
        return {()} if data else set()
    rows = set()
    for number, item in enumerate(data, start=1):
        where = f"row {number} of the JSON for `{relation.name}`"
        if isinstance(item, dict):
            if set(item) != set(relation.attributes):
                raise file_error(path, f"{where} has the keys {sorted(item)}; "
                                         f"`{relation.name}` has {list(relation.attributes)}")
            item = [item[a] for a in relation.attributes]
        if not isinstance(item, list) or len(item) != relation.arity:
            raise file_error(path, f"{where} is not a list of {relation.arity} values "
                                     "nor an object keyed by the attribute names")
        try:
            rows.add(tuple(from_json(v, t, parse) for v, t in zip(item, relation.types)))
        except ValueError as exc:
            raise file_error(path, f"{where}: {exc.args[0]}") from None
    return rows


def from_json(value, type_: str, parse):
    """A column value from JSON (``ValueError`` with a message when it does not
    fit ``type_``)."""
    from datalog.dialect.records import ADTType, RecordType, describe

    def wrong():
        return ValueError(f"{json_text(value)} is not {describe(type_)}"
                          if isinstance(type_, (RecordType, ADTType))
                          else f"{json_text(value)} does not fit `{type_}`")

    if isinstance(type_, RecordType):
        if value is None:
            return ()
        if isinstance(value, dict):
            if set(value) != {n for n, _ in type_.fields}:
                raise wrong()
            value = [value[n] for n, _ in type_.fields]
        if not isinstance(value, list) or len(value) != len(type_.fields):
            raise wrong()
        return tuple(from_json(v, t, parse) for v, (_, t) in zip(value, type_.fields))
    if isinstance(type_, ADTType) or type_ == "symbol":
        if not isinstance(value, str):
            raise wrong()
        try:
            return value if type_ == "symbol" else parse(value, type_)
        except ValueError:
            raise wrong() from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong()
    if type_ == "float":
        if value != value:
            raise wrong()
        return float(value)
    if not isinstance(value, int):
        raise wrong()
    try:
        return parse(str(value), type_)  # the range check
    except ValueError:
        raise wrong() from None


def json_text(value) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
