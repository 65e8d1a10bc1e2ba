"""Query patterns for :meth:`datalog.Session.query`: ``path`` or ``path(1, x, _)``.

A pattern names a relation and, optionally, one argument per column: a constant
(``12``, ``-3``, ``7u``, ``2.5``, ``"text"``) that the column must equal, a variable
(a name) that binds the column (a variable used twice requires equal columns), or
``_`` (anything).

>>> from datalog.plan.ir import RelationPlan
>>> rels = {"path": RelationPlan("path", ("x", "y"), ("number", "number"))}
>>> parse_pattern("path(1, x)", rels)
('path', (((0, 1),), ()))
>>> parse_pattern("path(x, x)", rels)
('path', ((), ((0, 1),)))
>>> parse_pattern("path", rels)
('path', ())
"""

from __future__ import annotations

import re

from datalog.errors import DataError, Diagnostic, did_you_mean

_TOKEN = re.compile(r'''\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<float>[+-]?\d+\.\d*(?:[eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+)
  | (?P<unsigned>\d+u)
  | (?P<number>[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+))
  | (?P<name>[A-Za-z_?][A-Za-z0-9_?]*)
  | (?P<punct>[(),])
)''', re.VERBOSE)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text[1:-1])


def _error(pattern: str, message: str, hint: str | None = None) -> DataError:
    return DataError([Diagnostic("error", f"query `{pattern}`: {message}", None, hint)])


def parse_pattern(pattern: str, relations) -> tuple[str, tuple]:
    """``(relation, tests)``: ``tests`` is ``()`` for a bare relation name, else
    ``(consts, equal)`` with ``consts`` the ``(column, value)`` pairs and ``equal``
    the ``(column, column)`` pairs a matching row must satisfy."""
    tokens, position = [], 0
    text = pattern.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise _error(pattern, f"unexpected text at `{text[position:]}`")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    if not tokens or tokens[0][0] != "name":
        raise _error(pattern, "expected a relation name")
    name = tokens[0][1]
    if name not in relations:
        raise _error(pattern, f"no relation `{name}`", did_you_mean(name, relations))
    if len(tokens) == 1:
        return name, ()
    args, rest = [], tokens[1:]
    if rest[0] != ("punct", "(") or rest[-1] != ("punct", ")"):
        raise _error(pattern, "expected `relation(arg, ...)`")
    inner = rest[1:-1]
    for i, token in enumerate(inner):
        if i % 2 == 1:
            if token != ("punct", ","):
                raise _error(pattern, "expected `,` between arguments")
        elif token[0] == "punct":
            raise _error(pattern, f"unexpected `{token[1]}`")
        else:
            args.append(token)
    if inner and len(inner) % 2 == 0:
        raise _error(pattern, "an argument is missing after `,`")
    relation = relations[name]
    if len(args) != relation.arity:
        raise _error(pattern, f"`{name}` has {relation.arity} columns; the pattern "
                              f"gives {len(args)}")
    consts, equal, seen = [], [], {}
    for column, ((kind, token), type_) in enumerate(zip(args, relation.types)):
        if kind == "name":
            if token == "_":
                continue
            if token in seen:
                equal.append((seen[token], column))
            else:
                seen[token] = column
            continue
        value = _value(kind, token)
        if type_ == "float" and isinstance(value, int):
            value = float(value)
        expected = {"number": int, "unsigned": int, "float": float, "symbol": str}[type_]
        if not isinstance(value, expected):
            raise _error(pattern, f"column {column + 1} of `{name}` is {type_}; "
                                  f"got {token}")
        consts.append((column, value))
    return name, (tuple(consts), tuple(equal))


def _value(kind: str, token: str):
    if kind == "string":
        return _unquote(token)
    if kind == "float":
        return float(token)
    if kind == "unsigned":
        return int(token[:-1])
    return int(token, 0)
