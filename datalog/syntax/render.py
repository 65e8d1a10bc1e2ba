"""How the REPL writes values, facts and changes: as ``.dl`` text, so that any line
it prints can be pasted back in.

A symbol is quoted with the escapes the ``.dl`` lexer reads (``\\"``, ``\\\\``,
``\\n``, ``\\t``, ``\\r``); an ``unsigned`` value keeps its ``u`` suffix only where
the reader would otherwise take it for a ``number`` (never: a ``number`` literal
is accepted in an ``unsigned`` column), so it is written plainly; a float is
written as Python's shortest round-trip text (``2.0``, ``1e+21``), which the
lexer reads back.

>>> format_fact("edge", (1, "a \\"b\\"", 2.0))
'edge(1, "a \\\\"b\\\\"", 2.0)'
>>> format_change("path", (1, 3), -1)
'-path(1, 3)'
"""

from __future__ import annotations

from collections.abc import Iterable

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def format_value(value: object) -> str:
    """One value as a ``.dl`` literal.

    >>> [format_value(v) for v in (3, -4, 0.5, 1e21, "x\\ty")]
    ['3', '-4', '0.5', '1e+21', '"x\\\\ty"']
    """
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):   # a record or an ADT value
        from datalog.dialect.records import format_literal

        return format_literal(value)
    return str(value)


def format_row(row: Iterable[object]) -> str:
    return ", ".join(format_value(v) for v in row)


def format_fact(relation: str, row: Iterable[object]) -> str:
    """``relation(v1, v2)``: the fact as it would be written in a program."""
    return f"{relation}({format_row(row)})"


def format_change(relation: str, row: Iterable[object], weight: int) -> str:
    """``+relation(..)`` for an inserted row, ``-relation(..)`` for a retracted
    one: the REPL statement that would make the same change."""
    return ("+" if weight > 0 else "-") + format_fact(relation, row)


def sort_key(row: tuple) -> tuple:
    """Rows of one relation are mutually comparable; this key also orders rows
    whose columns mix ints and floats, and keeps the sort total should values of
    different kinds meet."""
    return tuple((isinstance(v, str), v) for v in row)


def plural(count: int, noun: str) -> str:
    """``count noun`` with the noun in the plural unless the count is one.

    >>> plural(1, "row"), plural(2, "row")
    ('1 row', '2 rows')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_ms(seconds: float) -> str:
    """A duration for the summary line.

    >>> format_ms(0.0123456)
    '12.35 ms'
    """
    return f"{seconds * 1000:.2f} ms"
