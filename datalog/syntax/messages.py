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
_ITEM_START = {"DECL", "TYPE", "LEGACY_TYPE", "IO", "PRAGMA", "PLAN", "FUNCTOR", "COMP",
               "INIT", "OVERRIDE"}
_TERM_START = {"NAME", "QNAME", "INT", "FLOAT", "STRING", "PREFIX", "AT", "LPAR", "AGGREGATOR",
               "LSQB", "DOLLAR"}
_NAMES = {
    "NAME": "a name", "QNAME": "a qualified name", "INT": "a number", "FLOAT": "a number",
    "STRING": "a string",
    "AGGREGATOR": "an aggregate", "QUALIFIER": "a qualifier", "DECL": "`.decl`",
    "TYPE": "`.type`", "IO": "`.input`/`.output`", "PRAGMA": "`.pragma`",
    "PLAN": "`.plan`", "COMP": "`.comp`", "INIT": "`.init`", "OVERRIDE": "`.override`",
    "LEGACY_TYPE": "`.number_type`", "INFIX": "an operator",
    "CMP": "a comparison", "PREFIX": "`-`", "DOT": "`.`", "FUNCTOR": "`.functor`",
    "STATEFUL": "`stateful`", "CHOICE_DOMAIN": "`choice-domain`",
    "$END": "end of file",
}
_DIRECTIVES = (".decl", ".type", ".input", ".output", ".printsize", ".limitsize",
               ".functor", ".pragma", ".plan", ".comp", ".init", ".override")


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
        names -= _ITEM_START | {"NAME", "QNAME"}
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


def _unlisted(expected: set[str]) -> set[str]:
    """``expected`` without the rare continuations error messages do not list:
    after a head (where ``:-`` may follow), the ``<=`` of a subsumption rule."""
    return expected - {"CMP"} if "IF" in expected else expected


class _Token(str):
    """A token's text, type and end, with lines counted in the whole text."""

    type: str
    end_line: int
    end_column: int


#: How many lines before an error are lexed again to find the token before it.
_LOOKBACK_LINES = 60

# Strings, comments (a `/*` that nothing closes runs to the end) and the text between.
_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|[^"/]+|/', re.DOTALL)


def _block_comment(text: str, pos: int) -> re.Match | None:
    """The ``/* */`` comment that holds ``pos`` (or starts there), or None.

    >>> text = 'a("/*"). /* b(1).\\n c(2). */ d(3).'
    >>> _block_comment(text, text.index("c")).group(0)
    '/* b(1).\\n c(2). */'
    >>> _block_comment(text, 3) is None, _block_comment(text, text.index("d")) is None
    (True, True)
    """
    for m in _PIECES.finditer(text):
        if m.start() > pos:
            return None
        if pos < m.end() and m.group(0).startswith("/*"):
            return m
    return None


def unterminated_comment(text: str, pos: int) -> int | None:
    """Where a ``/*`` that no ``*/`` closes starts, when the token the parser
    rejected at ``pos`` is its ``/`` or its ``*`` (finding no comment there, the
    lexer read them as operators); None otherwise.

    >>> unterminated_comment("p(x) :- q(x), y = x /* to do", 21)
    20
    >>> unterminated_comment("p(x) :- q(x), y = /* to do */* 2.", 29) is None  # a `*` after it
    True
    """
    for start in (pos, pos - 1):
        if start >= 0 and text.startswith("/*", start) and text.find("*/", start + 2) < 0:
            comment = _block_comment(text, start)
            if comment is not None and comment.start() == start:
                return start
    return None


def _previous_token(lark: Lark, text: str, pos: int) -> _Token | None:
    """The last token before ``pos`` (for "missing `.`" hints), or None. The text
    is lexed backwards in windows of a few lines (each from the start of the block
    comment it begins in, if it does), up to the first window holding a token, so
    reporting many errors in a large file stays linear."""
    end = pos
    while end > 0:
        start = end
        for _ in range(_LOOKBACK_LINES):
            start = text.rfind("\n", 0, start)
            if start <= 0:
                start = 0
                break
        if start and "*/" in text[start:end]:
            comment = _block_comment(text, start)
            if comment is not None:
                start = comment.start()
        last = None
        try:
            for token in lark.lex(text[start:end]):
                last = token
        except UnexpectedInput:
            pass
        if last is not None:
            out = _Token(str(last))
            out.type = last.type
            out.end_line = last.end_line + text.count("\n", 0, start)
            # a window may start inside a line (at a comment): columns of its first line
            shift = start - (text.rfind("\n", 0, start) + 1) if last.end_line == 1 else 0
            out.end_column = last.end_column + shift
            return out
        end = start
    return None


def _end_of_text(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        stripped = lines[i].rstrip()
        if stripped:
            return i + 1, len(stripped) + 1
    return 1, 1


def describe_syntax_error(e: UnexpectedInput, text: str, lark: Lark,
                          interactive: bool = False):
    """``(message, hint, (line, column, end_column))`` for a lark error on ``text``;
    ``interactive``: the text was typed at the REPL's prompt (hints may name its
    commands)."""
    if isinstance(e, UnexpectedCharacters):
        return _unexpected_character(e, text, lark)
    if isinstance(e, UnexpectedToken):
        return _unexpected_token(e, text, lark, interactive)
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
    comment = unterminated_comment(text, pos)
    if comment is not None:
        return _unterminated(line, column - (pos - comment))
    special = _qualified(text, pos, line, column) or _special(rest, line, column)
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


def _qualified(text: str, pos: int, line: int, column: int):
    """A dotted name where only a plain one fits (``.decl a.b(...)``, a variable
    ``x.y``): qualified names name the relations of component instances."""
    name = re.match(r"\.[A-Za-z_?][\w?]*", text[pos:])
    before = re.search(r"[A-Za-z_?][\w?]*\Z", text[:pos])   # \Z: not before a newline
    if name is None or before is None or name.group(0)[1:] in _KEYWORDS:
        return None
    whole = before.group(0) + name.group(0)
    return (f"a qualified name (`{whole}`) cannot stand here",
            "a dotted name is a relation (or type) of a component instance, used in atoms "
            "and directives; declare it inside a `.comp` and instantiate it with `.init`",
            (line, column - len(before.group(0)), column + len(name.group(0))))


#: Words after a `.` that start a directive rather than continue a name.
_KEYWORDS = {d[1:] for d in _DIRECTIVES} | {"number_type", "symbol_type", "functor",
                                            "limitsize"}


def _unterminated(line: int, column: int):
    """The error of a ``/*`` at ``line``, ``column`` that no ``*/`` closes."""
    return ("unterminated comment", "a `/*` comment ends with `*/`", (line, column, column + 2))


def _special(rest: str, line: int, column: int):
    """Errors recognised from the text itself: unknown directives."""
    m = re.match(r"\.[A-Za-z_]\w*", rest)
    if m and m.group(0) not in _DIRECTIVES:
        word = m.group(0)
        hint = "the dialect's directives are " + ", ".join(f"`{d}`" for d in _DIRECTIVES)
        return (f"unknown directive `{word}`", hint, (line, column, column + len(word)))
    return None


_TERM_END = ("NAME", "INT", "FLOAT", "STRING", "RPAR")


_WORDS = re.compile(r'\s*("(?:[^"\\\n]|\\.)*"|-?[0-9][\w.]*|[_a-zA-Z?][\w?]*)')


def _words_after(text: str, pos: int) -> list[str] | None:
    """The names, numbers and strings from ``pos`` to the end of its line (a
    final ``.`` or ``?`` aside), or None when anything else is there.

    >>> _words_after('show path 1 "a".', 5)
    ['path', '1', '"a"']
    >>> _words_after("path 1, 2", 5) is None
    True
    """
    end = text.find("\n", pos)
    line = text[pos:len(text) if end < 0 else end].rstrip().rstrip(".?")
    words, k = [], 0
    while k < len(line):
        m = _WORDS.match(line, k)
        if m is None:
            return None
        words.append(m.group(1))
        k = m.end()
    return words or None


#: The words that may follow a declaration (grammar.lark's QUALIFIER).
QUALIFIERS = ("brie", "btree", "btree_delete", "eqrel", "inline", "no_inline", "magic",
              "no_magic", "overridable", "input", "output", "printsize")


def _unknown_qualifier(text: str, prev: _Token | None):
    """A word after a declaration's `)` that is no qualifier (``.decl r(x:
    number) inlne``): the parser read it as the start of an atom."""
    if prev is None or prev.type != "NAME":
        return None
    column = prev.end_column - len(prev)
    before = text.split("\n")[prev.end_line - 1][:column - 1]
    if not re.match(r"\s*\.decl\b.*\)(\s+[A-Za-z_]\w*)*\s+$", before):
        return None
    from datalog.errors import did_you_mean

    hint = did_you_mean(str(prev), QUALIFIERS) or \
        f"a declaration's qualifiers are {', '.join(f'`{q}`' for q in QUALIFIERS)}"
    return (f"unknown qualifier `{prev}`", hint,
            (prev.end_line, column, prev.end_column))


def _unexpected_token(e: UnexpectedToken, text: str, lark: Lark, interactive: bool = False):
    token = e.token
    expected = _acceptable(e)
    at_end = token.type == "$END"
    kind = token.type
    if not at_end and token.start_pos is not None:
        comment = unterminated_comment(text, token.start_pos)
        if comment is not None:
            return _unterminated(token.line, token.column - (token.start_pos - comment))
        special = _qualified(text, token.start_pos, token.line, token.column) or \
            _special(text[token.start_pos:], token.line, token.column)
        if special is not None:
            return special
    prev = _previous_token(lark, text, len(text) if at_end else token.start_pos)
    expected_words = _expected_text(lark, _unlisted(expected))
    if at_end:    # just after the last token (not after a comment)
        line, column = (prev.end_line, prev.end_column) if prev is not None else \
            _end_of_text(text)
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
    if prev is not None and prev.type == "CHOICE_DOMAIN":
        return (f"expected a domain after `choice-domain`, found {what}",
                "a domain is an attribute, `choice-domain x`, or several, "
                "`choice-domain (x, y)`; separate domains with `,`",
                (prev.end_line, prev.end_column - len(prev), prev.end_column))
    unknown = _unknown_qualifier(text, prev) if "LPAR" in expected else None
    if unknown is not None:
        return unknown
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
    elif "RPAR" in expected and new_line and kind in _TERM_START:
        hint = f"is a `)` missing at the end of line {prev.end_line}?"
        line, column, width = prev.end_line, prev.end_column, 1
        message = f"expected `)`, found {what} on the next line"
    elif "RPAR" in expected and (at_end or kind in ("DOT", "IF", "RBRACE")):
        hint = "is a `)` missing?"
    elif "COMMA" in expected and "RPAR" in expected and kind in _TERM_START \
            and prev is not None and prev.type in _TERM_END:
        hint = f"is a `,` missing between `{prev}` and `{token}`?"
    elif "DOT" in expected and str(token) == "?":
        hint = "a query is written `?- path(1, x).` or `?path(1, x)`"
    elif "DOT" in expected and kind == "NAME" and prev is not None and prev.type == "RPAR" \
            and str(token).isidentifier():
        hint = f"is a `.` missing before `{token}`?"
    elif "RBRACE" in expected and (at_end or kind == "DOT"):
        hint = "is a `}` missing?"
    elif "IF" in expected and "CMP" in expected and kind in ("CMP", "LANGLE", "RANGLE"):
        hint = "a subsumption rule is written `r(a) <= r(b) :- body.`"
    elif expected == {"IF"} and kind == "DOT":
        hint = "a subsumption rule has a body: `r(a) <= r(b) :- body.`"
    elif kind in ("NAME", "LPAR") and not new_line and \
            re.search(r"\bchoice-domain\b[^\n]*$", text[:token.start_pos]):
        hint = "separate the domains with `,`: `choice-domain x, (y, z)`"
    elif prev is not None and prev.type == "NAME" and re.search(
            r"\bchoice-domain\b.*\s$",
            text.split("\n")[prev.end_line - 1][:prev.end_column - 1 - len(prev)]):
        hint = f"separate the domains with `,`: `choice-domain ..., {prev}`"
    elif kind == "VBAR":
        hint = "write disjunction in a body with `;`"
    elif "RANGLE" in expected and kind in ("LANGLE", "CMP") and str(token) == "<":
        before = re.search(r"([A-Za-z_?][\w?]*)\s*$", text[:token.start_pos])
        inner = before.group(1) if before else "C"
        hint = (f"a type argument is one name: declare `.comp My{inner} : {inner}<...> {{ }}` "
                f"and pass `My{inner}`")
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
    elif "LPAR" in expected and prev is not None and prev.type == "NAME" \
            and kind in ("NAME", "INT", "FLOAT", "STRING"):
        # two words in a row: `path 1 2`, or a command word at the prompt
        message = f"unexpected {what} after `{prev}`; expected `(`"
        words = _words_after(text, token.start_pos)
        atom = f"`{prev}({', '.join(words)})`" if words else f"`{prev}(...)`"
        hint = f"an atom is written with parentheses and commas: {atom}"
        if interactive:
            hint = f"commands start with `:` (`:help` lists them); {hint}"
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
