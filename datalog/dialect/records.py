"""Records and algebraic data types: their types, their values at run time, and
how Soufflé writes and reads them.

Types. A column type is a ``str`` naming it (``"number"``, ``"symbol"``, ...). A
record type or an algebraic data type (ADT) is a :class:`RecordType` or an
:class:`ADTType`: a ``str`` subclass, equal to (and hashing as) its name, that
also carries its definition, so that every stage that passes column types along
(the plan, the circuit, fact files, the API) passes the structure with them.
Field types are column types themselves; a recursive type refers to itself.

Values. Soufflé interns records as numbers; here they are structural values,
so that equality, hashing and retraction are exact and need no table:

- a record is a Python ``tuple`` of its field values (``[1, "a"]`` is
  ``(1, "a")``), and ``nil`` is the empty tuple ``()``;
- an ADT value is an :class:`ADTValue`: a tuple subclass holding the branch name
  and then the fields (``$Cons(1, $Nil)`` is ``ADTValue(("Cons", 1,
  ADTValue(("Nil",))))``). It equals the plain tuple with the same items, so the
  API accepts ``("Cons", 1, ("Nil",))``.

Order. Values of one type are ordered as tuples: a record field by field with
``nil`` first, an ADT value by branch name (Soufflé numbers the branches in the
order of their names) and then field by field. Sorted outputs use this order;
Soufflé's own order of records is that of their internal numbers.

Text. Soufflé's fact files and outputs write a record ``[1, a]`` (fields
separated by ``, ``, symbols as they are; here one that would not read back is
quoted), ``nil``, and an ADT value ``$Cons(1,
$Nil)`` (a branch without fields without parentheses). On reading, a symbol in a
record is either double-quoted (with backslash escapes) or runs up to the next
``,`` or closing bracket. The REPL and the ``.dl`` text write symbols quoted
(``[1, "a"]``), as a program would.

>>> pair = RecordType("Pair", (("a", "number"), ("b", "symbol")))
>>> value = parse("[1, hello world]", pair, _primitive)
>>> value, format_value(value), format_literal(value)
((1, 'hello world'), '[1, hello world]', '[1, "hello world"]')
>>> lst = RecordType("List")
>>> lst.fields = (("head", "number"), ("tail", lst))
>>> format_value(parse("[1, [2, nil]]", lst, _primitive))
'[1, [2, nil]]'
>>> e = ADTType("E", {"A": (("x", "number"),), "B": ()})
>>> parse("$A(3)", e, _primitive), format_value(parse(" $B", e, _primitive))
($A(3), '$B')
"""

from __future__ import annotations

from collections.abc import Callable

PRIMITIVES = ("number", "unsigned", "float", "symbol")


class RecordType(str):
    """A record type: its name, and ``fields``, ``(name, column type)`` pairs."""

    fields: tuple[tuple[str, str], ...]

    def __new__(cls, name: str, fields: tuple[tuple[str, str], ...] = ()):
        self = super().__new__(cls, name)
        self.fields = fields
        return self


class ADTType(str):
    """An algebraic data type: its name, and ``branches``, branch name ->
    ``(name, column type)`` pairs of its fields."""

    branches: dict[str, tuple[tuple[str, str], ...]]

    def __new__(cls, name: str, branches: dict | None = None):
        self = super().__new__(cls, name)
        self.branches = dict(branches or {})
        return self


class ADTValue(tuple):
    """A value of an ADT: ``(branch, field, ...)``; written ``$branch(field, ...)``."""

    __slots__ = ()

    @property
    def branch(self) -> str:
        return self[0]

    def __repr__(self) -> str:
        return format_literal(self)


def is_structured(type_: str) -> bool:
    """Whether a column type is a record type or an ADT."""
    return isinstance(type_, (RecordType, ADTType))


def describe(type_: str) -> str:
    """``a record of type `Pair```: the kind of value a column of ``type_`` holds."""
    if isinstance(type_, RecordType):
        return f"a record of type `{type_}`"
    return f"a value of type `{type_}`"


# ---------------------------------------------------------------- writing


def format_value(value) -> str:
    """A value as Soufflé writes it in a file: symbols as they are, except that
    one the reader would not get back (holding ``,`` ``]`` ``)`` ``"`` or ``\\``,
    starting with a space, or empty) is double-quoted with backslash escapes.

    >>> format_value(("a b", "x, y", ""))
    '[a b, "x, y", ""]'
    """
    return _format(value, _file_symbol)


def _file_symbol(text: str) -> str:
    if text and not any(c in text for c in ',])"\\') and not text[0].isspace():
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def format_literal(value) -> str:
    """A value as ``.dl`` text: symbols quoted, as a program writes them."""
    return _format(value, lambda s: '"' + "".join(_ESCAPES.get(c, c) for c in s) + '"')


def _format(value, symbol: Callable[[str], str]) -> str:
    if isinstance(value, ADTValue):
        if len(value) == 1:
            return f"${value[0]}"
        return f"${value[0]}({', '.join(_format(v, symbol) for v in value[1:])})"
    if isinstance(value, tuple):
        if not value:
            return "nil"
        return f"[{', '.join(_format(v, symbol) for v in value)}]"
    if isinstance(value, str):
        return symbol(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


# ---------------------------------------------------------------- reading


def parse(text: str, type_: str, primitive: Callable[[str, str], object]):
    """The value of type ``type_`` written ``text`` (Soufflé's format, above);
    ``primitive(text, type)`` reads a number. Raises ``ValueError``."""
    value, end = _read(text, 0, type_, primitive, "")
    if text[end:].strip():
        raise ValueError(text)
    return value


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _expect(text: str, pos: int, char: str) -> int:
    pos = _skip(text, pos)
    if not text.startswith(char, pos):
        raise ValueError(text)
    return pos + 1


def _read(text: str, pos: int, type_: str, primitive, stops: str):
    pos = _skip(text, pos)
    if isinstance(type_, RecordType):
        if text.startswith("nil", pos):
            return (), pos + 3
        pos = _expect(text, pos, "[")
        values = []
        for i, (_, field_type) in enumerate(type_.fields):
            if i:
                pos = _expect(text, pos, ",")
            value, pos = _read(text, pos, field_type, primitive, ",]")
            values.append(value)
        return tuple(values), _expect(text, pos, "]")
    if isinstance(type_, ADTType):
        pos = _expect(text, pos, "$")
        start = pos
        while pos < len(text) and (text[pos].isalnum() or text[pos] in "_?"):
            pos += 1
        name = text[start:pos]
        if name not in type_.branches:
            raise ValueError(text)
        fields = type_.branches[name]
        if not fields:
            after = _skip(text, pos)
            if text.startswith("()", after):
                pos = after + 2
            return ADTValue((name,)), pos
        pos = _expect(text, pos, "(")
        values = [name]
        for i, (_, field_type) in enumerate(fields):
            if i:
                pos = _expect(text, pos, ",")
            value, pos = _read(text, pos, field_type, primitive, ",)")
            values.append(value)
        return ADTValue(values), _expect(text, pos, ")")
    if type_ == "symbol":
        if text.startswith('"', pos):
            return _quoted(text, pos)
        end = len(text)
        for stop in stops:
            found = text.find(stop, pos)
            if found >= 0:
                end = min(end, found)
        return text[pos:end], end
    end = pos
    while end < len(text) and text[end] not in stops and not text[end].isspace():
        end += 1
    return primitive(text[pos:end], type_), end


def _quoted(text: str, pos: int) -> tuple[str, int]:
    out = []
    pos += 1
    while pos < len(text):
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            out.append(text[pos + 1])
            pos += 2
        elif char == '"':
            return "".join(out), pos + 1
        else:
            out.append(char)
            pos += 1
    raise ValueError(text)


# ---------------------------------------------------------------- checking


def validate(value, type_: str, check_primitive: Callable[[object, str], object]):
    """``value`` as a value of the structured ``type_`` (a plain tuple taken as an
    ADT value where one is expected), or ``ValueError``; ``check_primitive(v,
    type)`` checks (and converts) a value of a primitive type."""
    if isinstance(type_, RecordType):
        if not isinstance(value, (tuple, list)) or isinstance(value, ADTValue):
            raise ValueError(value)
        if len(value) == 0:
            return ()
        if len(value) != len(type_.fields):
            raise ValueError(value)
        return tuple(_validate_field(v, t, check_primitive)
                     for v, (_, t) in zip(value, type_.fields))
    if not isinstance(value, (tuple, list)) or not value or value[0] not in type_.branches:
        raise ValueError(value)
    fields = type_.branches[value[0]]
    if len(value) != len(fields) + 1:
        raise ValueError(value)
    return ADTValue((value[0], *(_validate_field(v, t, check_primitive)
                                 for v, (_, t) in zip(value[1:], fields))))


def _validate_field(value, type_: str, check_primitive):
    if is_structured(type_):
        return validate(value, type_, check_primitive)
    return check_primitive(value, type_)


def _primitive(text: str, type_: str):
    """Numbers for the examples above (the I/O module passes its own reader)."""
    return float(text) if type_ == "float" else int(text)
