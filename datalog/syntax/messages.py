"""Syntax errors in words a user understands.

lark reports an unexpected token and the set of terminal names the parser would
have accepted (``RPAR``, ``__ANON_3``, ...). :func:`describe_syntax_error` turns
that into a message (``unexpected `)`; expected a term``), the place to point at
and a hint for the usual slips: a missing ``.`` at the end of a clause, ``:``
written for ``:-``, an unclosed parenthesis, a directive the dialect lacks, an
unterminated string or comment.
"""

from __future__ import annotations

import re

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from datalog.errors import DatalogError

# Terminal names grouped into what a user would call them; a group is named when
# the parser accepts any of its starting terminals.
_ITEM_START = {"DECL", "TYPE", "LEGACY_TYPE", "IO", "PRAGMA", "PLAN"}
_TERM_START = {"NAME", "INT", "FLOAT", "STRING", "PREFIX", "AT", "LPAR", "AGGREGATOR", "LSQB",
               "DOLLAR"}
_NAMES = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
    "AGGREGATOR": "an aggregate", "QUALIFIER": "a qualifier", "DECL": "`.decl`",
    "TYPE": "`.type`", "IO": "`.input`/`.output`", "PRAGMA": "`.pragma`",
    "PLAN": "`.plan`", "LEGACY_TYPE": "`.number_type`", "INFIX": "an operator",
    "CMP": "a comparison", "PREFIX": "`-`", "DOT": "`.`",
    "$END": "end of file",
}
_DIRECTIVES = (".decl", ".type", ".input", ".output", ".printsize", ".pragma", ".plan")


def _terminal_text(lark: Lark, name: str) -> str:
    if name in _NAMES:
        return _NAMES[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    if pattern.type == "str":
        return f"`{pattern.value}`"
    return name.lower()


def _expected_text(lark: Lark, expected: set[str]) -> str:
    names = set(expected)
    words: list[str] = []
    if names & _ITEM_START and "NAME" in names:
        words.append("a declaration, a directive, a fact or a rule")
        names -= _ITEM_START | {"NAME"}
    if len(names & _TERM_START) >= 4:
        if "BANG" in names:
            words.append("a literal (an atom, a negated atom or a comparison)")
            names.discard("BANG")
        else:
            words.append("a term")
        names -= _TERM_START
    punctuation = sorted((_terminal_text(lark, n) for n in names),
                         key=lambda w: (not w.startswith("`"), len(w), w))
    words = punctuation + words
    words = list(dict.fromkeys(words))
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _acceptable(e: UnexpectedToken) -> set[str]:
    """The terminals the parser would really accept: lark's ``expected`` is the
    lookahead set of the state, which after a default reduction is too broad; the
    interactive parser tries each terminal on a copy of the parser state."""
    expected = set(e.expected or ())
    parser = getattr(e, "interactive_parser", None)
    if parser is None:
        return expected
    try:
        accepts = set(parser.accepts())
    except (DatalogError, UnexpectedInput):  # a trial reduction failed: keep lark's set
        return expected
    return accepts or expected


class _Token(str):
    """A token's text, type and end, with lines counted in the whole text."""

    type: str
    end_line: int
    end_column: int


#: How many lines before an error are lexed again to find the token before it.
_LOOKBACK_LINES = 60


def _previous_token(lark: Lark, text: str, pos: int) -> _Token | None:
    """The last token before ``pos`` (for "missing `.`" hints), or None. Only the
    last lines before ``pos`` are lexed, so reporting many errors in a large file
    stays linear."""
    start = pos
    for _ in range(_LOOKBACK_LINES):
        start = text.rfind("\n", 0, start)
        if start <= 0:
            start = 0
            break
    skipped_lines = text.count("\n", 0, start)
    last = None
    try:
        for token in lark.lex(text[start:pos]):
            last = token
    except UnexpectedInput:
        pass
    if last is None:
        return None
    out = _Token(str(last))
    out.type = last.type
    out.end_line = last.end_line + skipped_lines
    out.end_column = last.end_column
    return out


def _end_of_text(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        stripped = lines[i].rstrip()
        if stripped:
            return i + 1, len(stripped) + 1
    return 1, 1


def describe_syntax_error(e: UnexpectedInput, text: str, lark: Lark):
    """``(message, hint, (line, column, end_column))`` for a lark error on ``text``."""
    if isinstance(e, UnexpectedCharacters):
        return _unexpected_character(e, text, lark)
    if isinstance(e, UnexpectedToken):
        return _unexpected_token(e, text, lark)
    line, column = _end_of_text(text)
    return "unexpected end of file", None, (line, column, column + 1)


def _unexpected_character(e: UnexpectedCharacters, text: str, lark: Lark):
    pos = e.pos_in_stream
    line, column = e.line, e.column
    rest = text[pos:]
    if rest.startswith('"'):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        return ("unterminated string", "a string ends with `\"` on the line where it starts",
                (line, column, column + (end - pos)))
    if rest.startswith("/*"):
        return ("unterminated comment", "a `/*` comment ends with `*/`",
                (line, column, column + 2))
    special = _special(rest, line, column)
    if special is not None:
        return special
    char = rest[:1] or " "
    shown = {"\t": "tab", "\n": "end of line"}.get(char, f"`{char}`")
    expected = _expected_text(lark, set(e.allowed or ()))
    hint = None
    if char == "|":
        hint = "write disjunction in a body with `;`"
    elif char == "&":
        hint = "write conjunction with `,` (bitwise and is `band`, logical and `land`)"
    elif char == "'":
        hint = "strings are written in double quotes"
    message = f"unexpected character {shown}"
    if expected and hint is None:
        message += f"; expected {expected}"
    return message, hint, (line, column, column + 1)


def _special(rest: str, line: int, column: int):
    """Errors recognised from the text itself: unterminated comments, unknown
    directives."""
    if rest.startswith("/*"):
        return ("unterminated comment", "a `/*` comment ends with `*/`",
                (line, column, column + 2))
    m = re.match(r"\.[A-Za-z_]\w*", rest)
    if m and m.group(0) not in _DIRECTIVES:
        word = m.group(0)
        hint = "the dialect's directives are " + ", ".join(f"`{d}`" for d in _DIRECTIVES)
        if word in (".comp", ".init", ".functor", ".override", ".limitsize"):
            hint = f"`{word}` is not supported by this engine"
        return (f"unknown directive `{word}`", hint, (line, column, column + len(word)))
    return None


_TERM_END = ("NAME", "INT", "FLOAT", "STRING", "RPAR")


def _unexpected_token(e: UnexpectedToken, text: str, lark: Lark):
    token = e.token
    expected = _acceptable(e)
    at_end = token.type == "$END"
    kind = token.type
    if not at_end and token.start_pos is not None:
        special = _special(text[token.start_pos:], token.line, token.column)
        if special is not None:
            return special
    prev = _previous_token(lark, text, len(text) if at_end else token.start_pos)
    expected_words = _expected_text(lark, expected)
    if at_end:
        line, column = _end_of_text(text)
        what = "end of file"
        width = 1
    else:
        line, column = token.line, token.column
        what = _describe_token(token)
        width = max(1, len(str(token))) if token.end_line == token.line else 1
        # The fallback lexer may split a two-character symbol (`:-` read as `:`).
        pair = re.match(r":-|<:|!=|<=|>=", text[token.start_pos:])
        if pair is not None and len(str(token)) < 2:
            what, width = f"`{pair.group(0)}`", 2
            kind = {":-": "IF", "<:": "SUBTYPE"}.get(pair.group(0), "CMP")
    message = f"unexpected {what}"
    if expected_words:
        message += f"; expected {expected_words}"
    hint = None
    new_line = prev is not None and not at_end and token.line > prev.end_line
    if "DOT" in expected and (at_end or new_line):
        hint = ("is the `.` at the end of the last clause missing?" if at_end else
                "is the `.` at the end of the previous clause missing?")
        message = f"expected `.` at the end of the clause, found {what}"
        if new_line:
            # Point at where the `.` belongs: just after the previous token.
            line, column, width = prev.end_line, prev.end_column, 1
    elif kind == "COLON" and "IF" in expected:
        hint = "a rule is written `head :- body.`"
    elif "RPAR" in expected and (at_end or kind in ("DOT", "IF", "RBRACE")):
        hint = "is a `)` missing?"
    elif "RBRACE" in expected and (at_end or kind == "DOT"):
        hint = "is a `}` missing?"
    elif kind == "VBAR":
        hint = "write disjunction in a body with `;`"
    elif kind == "IF" and prev is not None and prev.type == "RPAR":
        hint = "a rule has one `:-`; is a `.` missing before it?"
    elif "COLON" in expected and not at_end and re.search(
            r"\b(min|max)\s+\(", text[text.rfind("\n", 0, token.start_pos) + 1:
                                      token.start_pos]):
        hint = ("`min (` and `max (` with a space start an aggregate (`max x : { ... }`); "
                "the functor is written `max(a, b)`")
    elif prev is not None and prev.type == "AGGREGATOR" and kind != "COLON":
        hint = f"`{prev}` is an aggregate keyword; it cannot name a variable"
    elif kind == "AGGREGATOR":
        hint = f"`{token}` is an aggregate keyword; rename the variable"
    elif kind == "QUALIFIER":
        hint = f"`{token}` is a qualifier keyword here"
    elif kind in ("EQ", "EQUAL") and prev is not None and prev.type == "NAME" \
            and "LPAR" in expected:
        hint = "a relation's arguments are written in parentheses: `r(x, y)`"
    elif "LPAR" in expected and prev is not None and prev.type == "NAME":
        hint = f"an atom needs parentheses, even without arguments: `{prev}()`"
    return message, hint, (line, column, column + width)


def _describe_token(token) -> str:
    value = str(token)
    if token.type == "NAME":
        return f"name `{value}`"
    if token.type in ("INT", "FLOAT"):
        return f"number `{value}`"
    if token.type == "STRING":
        return f"string {value}"
    if token.type in ("AGGREGATOR", "QUALIFIER"):
        return f"keyword `{value}`"
    return f"`{value}`"
