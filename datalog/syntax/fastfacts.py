"""Ground facts on lines of their own, read without the LALR parser.

Large programs are mostly facts (``edge(1, 2).``, one per line). The LALR parser
spends some ten microseconds per token on them; a regular expression recognises
such a line as a whole and builds the same :class:`Fact` (same values, same
spans) in a fraction of that. :func:`split_facts` takes those lines out of the
text (leaving blanks, so every other character keeps its line, column and
offset) and returns them as facts; everything else goes to the grammar as before.

A line is taken only when it certainly holds one whole fact: it starts after a
clause has ended (the previous significant character is the ``.`` that ends a
clause, or it is the first line), outside a block comment, is not changed by a
macro, and its arguments are plain literals (numbers, possibly negative, and
strings). The relation may be qualified (``c.r(1).``). A fact between the
clauses of a component (``.comp C { ... }``) is taken too: the parser puts it
back among the component's items by its line.

>>> text, facts = split_facts('e(1, -2).\\ne("a", 0x10).\\np(x) :- e(x, _).', "f.dl", {})
>>> text.split("\\n")
['         ', '             ', 'p(x) :- e(x, _).']
>>> [[a.value for a in f.atom.args] for f in facts], str(facts[1].span)
([[1, -2], ['a', 16]], 'f.dl:2:1')
"""

from __future__ import annotations

import re

from datalog.dialect.functors import MAX_INTEGER_DIGITS
from datalog.syntax.ast import Atom, Constant, Fact, Span

_NUMBER = (r"0[xX][0-9a-fA-F]+u?|0[bB][01]+u?|[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?"
           r"|[0-9]+[eE][+-]?[0-9]+|[0-9]+u?")
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_ARG = rf"(?:-?(?:{_NUMBER})|{_STRING})"
_NAME = r"[A-Za-z_?][\w?]*(?:\.[A-Za-z_?][\w?]*)*"
_FACT = re.compile(
    rf"[ \t]*({_NAME})[ \t]*\([ \t]*({_ARG}(?:[ \t]*,[ \t]*{_ARG})*)?[ \t]*\)"
    rf"[ \t]*\.[ \t]*(?://.*)?$")
_ARGS = re.compile(rf"({_ARG})")
_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//.*|/\*|\*/|\S')

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def unquote(literal: str) -> str:
    """The value of a string literal (with its quotes): escapes resolved; an
    unknown escape such as ``\\.`` stays as written (regular expressions use them)."""
    text = literal[1:-1]
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def constant(text: str, span: Span) -> Constant:
    """The constant a literal's text denotes (a leading ``-`` negates a number)."""
    if text.startswith('"'):
        return Constant(unquote(text), "symbol", span)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("-")
    if "." in body or (("e" in body or "E" in body) and body[:2].lower() != "0x"):
        return Constant(sign * float(body), "float", span)
    kind = "number"
    if body.endswith("u"):
        kind, body = "unsigned", body[:-1]
    prefix = body[:2].lower()
    value = int(body, 16) if prefix == "0x" else int(body, 2) if prefix == "0b" else int(body)
    return Constant(sign * value, kind, span)


def _fact(line: str, number: int, path: str) -> Fact | None:
    m = _FACT.match(line)
    if m is None:
        return None
    args = []
    if m.group(2) is not None:
        base = m.start(2)
        for a in _ARGS.finditer(m.group(2)):
            text = a.group(0)
            if text.startswith("-") and text.endswith("u"):
                return None  # `-1u` is an operator applied to an unsigned literal
            if len(text) > MAX_INTEGER_DIGITS and not text.startswith('"'):
                return None  # out of range: the parser says where
            start = base + a.start() + 1
            args.append(constant(text, Span(path, number, start, number, start + len(text))))
    close = line.index(")", m.end(2) if m.group(2) is not None else m.end(1))
    dot = line.index(".", close)
    start = m.start(1) + 1
    atom = Atom(m.group(1), tuple(args), Span(path, number, start, number, close + 2))
    return Fact(atom, Span(path, number, start, number, dot + 2))


def _scan(line: str, in_comment: bool, last: str | None) -> tuple[bool, str | None]:
    """The block-comment state after ``line`` and its last significant character
    (``last`` if it has none). Inside a block comment only its ``*/`` counts."""
    if not in_comment and '"' not in line and "/" not in line:
        stripped = line.rstrip()
        return False, stripped[-1] if stripped else last
    pos = 0
    while True:
        if in_comment:
            close = line.find("*/", pos)
            if close < 0:
                return True, last
            in_comment, pos = False, close + 2
        m = _PIECES.search(line, pos)
        if m is None or m.group(0).startswith("//"):
            return False, last
        if m.group(0) == "/*":
            in_comment = True
        else:
            last = m.group(0)[-1]
        pos = m.end()


def split_facts(text: str, path: str, columns: dict) -> tuple[str, list[Fact]]:
    """``text`` without the lines that hold a simple fact, and those facts."""
    if "(" not in text:
        return text, []
    lines = text.split("\n")
    facts: list[Fact] = []
    in_comment = False
    last: str | None = "."
    for index, line in enumerate(lines):
        number = index + 1
        if last == "." and not in_comment and number not in columns:
            fact = _fact(line, number, path)
            if fact is not None:
                facts.append(fact)
                lines[index] = " " * len(line)   # offsets stay those of the text
                continue
        in_comment, last = _scan(line, in_comment, last)
    if not facts:
        return text, []
    return "\n".join(lines), facts
