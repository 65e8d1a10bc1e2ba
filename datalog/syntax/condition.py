"""The integer expressions of ``#if`` and ``#elif``, as the C preprocessor reads them.

:func:`tokens` splits the text after the directive into :class:`Token`\\ s with
their columns; the preprocessor replaces ``defined X`` / ``defined(X)`` and the
macros, then :func:`evaluate` computes the value: decimal and hex literals, the
unary ``! ~ - +``, the binary ``* / % + - << >> < <= > >= == != & ^ | && ||``
with C's precedence, parentheses and ``?:``. An identifier left after expansion
is 0, as in C. Arithmetic is on 64-bit signed integers (C's ``intmax_t``);
division truncates toward zero. ``&&``, ``||`` and ``?:`` evaluate only the
operand they need, so ``0 && 1 / 0`` is 0. Errors are :class:`ConditionError`
with the columns of the offending token.

>>> evaluate(tokens("1 + 2 * 3 == 7 && (0x10 >> 2) % 3 == 1", 1))
1
>>> evaluate(tokens("-7 / 2 ? ~0 : 5", 1))
-1
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*(?![\w.])|([A-Za-z_]\w*)"
                    r"|(&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%<>&^|!~()?:,])|(\S))")

_BINARY = {  # operator -> precedence (higher binds tighter)
    "*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8,
    "<": 7, "<=": 7, ">": 7, ">=": 7, "==": 6, "!=": 6,
    "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}
_TERNARY = 0  # `?:` binds loosest, right to left


@dataclass(frozen=True)
class Token:
    """``kind`` is ``number``, ``name`` or ``op``; ``start``/``end`` are 1-based
    columns in the line (end exclusive); ``value`` is a number's value."""

    kind: str
    text: str
    start: int
    end: int
    value: int = 0


class ConditionError(Exception):
    """A malformed or undefined ``#if`` expression, at ``start``-``end``."""

    def __init__(self, message: str, start: int, end: int, hint: str | None = None):
        super().__init__(message)
        self.message, self.start, self.end, self.hint = message, start, end, hint


def tokens(text: str, column: int) -> list[Token]:
    """The tokens of ``text``, whose first character is at ``column``."""
    out = []
    pos = 0
    while pos < len(text) and text[pos:].strip():
        m = _TOKEN.match(text, pos)
        start = column + m.start(m.lastindex)
        end = column + m.end()
        if m.group(1) is not None:
            digits = m.group(1)
            value = int(digits, 16) if digits[:2].lower() == "0x" else \
                int(digits, 8) if digits.startswith("0") and len(digits) > 1 and \
                digits.isdigit() and set(digits) <= set("01234567") else int(digits)
            out.append(Token("number", m.group(0).strip(), start, end, _wrap(value)))
        elif m.group(2) is not None:
            out.append(Token("name", m.group(2), start, end))
        elif m.group(3) is not None:
            out.append(Token("op", m.group(3), start, end))
        else:
            raise ConditionError(f"unexpected character `{m.group(4)}` in the expression",
                                 start, start + 1)
        pos = m.end()
    return out


def _wrap(value: int) -> int:
    """``value`` as a 64-bit signed integer."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def evaluate(toks: list[Token], end: int | None = None) -> int:
    """The value of the expression ``toks`` (names count as 0); ``end`` is the
    column after the expression, where a missing operand is reported."""
    if not toks:
        column = end if end is not None else 1
        raise ConditionError("missing expression", column, column + 1)
    parser = _Parser(toks, end if end is not None else toks[-1].end)
    value = parser.expression(_TERNARY, True)
    if parser.pos < len(toks):
        tok = toks[parser.pos]
        what = "`)` without `(`" if tok.text == ")" else f"`{tok.text}`"
        raise ConditionError(f"unexpected {what} in the expression", tok.start, tok.end,
                             hint="expected an operator or the end of the line")
    return value


class _Parser:
    def __init__(self, toks: list[Token], end: int):
        self.toks, self.pos, self.end = toks, 0, end

    def peek(self) -> Token | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def expect(self, text: str, opened: Token) -> None:
        tok = self.peek()
        if tok is None or tok.text != text:
            start, end = (tok.start, tok.end) if tok else (self.end, self.end + 1)
            found = f"`{tok.text}`" if tok else "the end of the line"
            raise ConditionError(f"expected `{text}`, found {found}", start, end,
                                 hint=f"for the `{opened.text}` at column {opened.start}")
        self.pos += 1

    def expression(self, level: int, live: bool) -> int:
        """An expression whose binary operators bind at least as tightly as
        ``level``; ``live`` is False in an operand that is not evaluated."""
        value = self.unary(live)
        while (tok := self.peek()) is not None and tok.kind == "op":
            if tok.text == "?" and level <= _TERNARY:
                self.pos += 1
                yes = self.expression(_TERNARY, live and value != 0)
                self.expect(":", tok)
                no = self.expression(_TERNARY, live and value == 0)
                value = yes if value != 0 else no
                continue
            precedence = _BINARY.get(tok.text)
            if precedence is None or precedence < max(level, 1):
                break
            self.pos += 1
            if tok.text == "&&":
                right = self.expression(precedence + 1, live and value != 0)
                value = int(value != 0 and right != 0)
            elif tok.text == "||":
                right = self.expression(precedence + 1, live and value == 0)
                value = int(value != 0 or right != 0)
            else:
                right = self.expression(precedence + 1, live)
                value = _binary(tok, value, right, live)
        return value

    def unary(self, live: bool) -> int:
        tok = self.peek()
        if tok is None:
            raise ConditionError("the expression ends early: expected a number",
                                 self.end, self.end + 1)
        self.pos += 1
        if tok.kind == "number":
            return tok.value
        if tok.kind == "name":
            return 0
        if tok.text == "(":
            value = self.expression(_TERNARY, live)
            self.expect(")", tok)
            return value
        if tok.text in ("!", "~", "-", "+"):
            value = self.unary(live)
            return {"!": int(value == 0), "~": ~value, "-": _wrap(-value),
                    "+": value}[tok.text]
        raise ConditionError(f"expected a number, found `{tok.text}`", tok.start, tok.end)


def _binary(tok: Token, left: int, right: int, live: bool) -> int:
    op = tok.text
    if op in ("/", "%"):
        if right == 0:
            if not live:
                return 0
            raise ConditionError("division by zero in the expression", tok.start, tok.end)
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        return _wrap(quotient) if op == "/" else _wrap(left - right * quotient)
    if op in ("<<", ">>"):
        if not 0 <= right < 64:
            if not live:
                return 0
            raise ConditionError(f"shift by {right} (out of 0..63)", tok.start, tok.end)
        return _wrap(left << right) if op == "<<" else left >> right
    return {
        "*": lambda: _wrap(left * right), "+": lambda: _wrap(left + right),
        "-": lambda: _wrap(left - right), "<": lambda: int(left < right),
        "<=": lambda: int(left <= right), ">": lambda: int(left > right),
        ">=": lambda: int(left >= right), "==": lambda: int(left == right),
        "!=": lambda: int(left != right), "&": lambda: left & right,
        "^": lambda: left ^ right, "|": lambda: left | right,
    }[op]()
