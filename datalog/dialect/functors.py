"""The meaning of every operator, functor and constraint of the dialect.

One set of tables, used by the checks (unknown functor, arity, types), the compiler,
the Spark executor and the reference evaluator of the tests, so that all of them
compute the same thing:

- :data:`BINARY_OPS`: the infix operators ``+ - * / % ^``, ``band bor bxor bshl
  bshr bshru`` and ``land lor lxor``;
- :data:`UNARY_OPS`: the prefix operators ``-``, ``bnot``, ``lnot``;
- :data:`FUNCTORS`: the named functors ``cat strlen substr ord to_number to_string
  to_float to_unsigned min max range``;
- :data:`COMPARISONS`: the constraints ``= != < <= > >=`` and the string
  constraints ``contains``, ``match`` (and their negations ``not_contains``,
  ``not_match``), which Soufflé, too, treats as binary constraints, not functors.

Each entry is an :class:`Operator`: its arity range and its *overloads*, one per
accepted tuple of primitive argument types (``number``, ``unsigned``, ``float``,
``symbol``), each with its result type and its Python implementation. Resolve the
overload once, from the argument types, then call it on values:

>>> plus = BINARY_OPS["+"].resolve(("number", "number"))
>>> plus.result, plus(2, 3)
('number', 5)
>>> BINARY_OPS["+"].result_type(("float", "float"))
'float'
>>> BINARY_OPS["+"].result_type(("number", "symbol")) is None
True
>>> FUNCTORS["cat"].resolve(("symbol",) * 3)("a", "b", "c")
'abc'
>>> list(FUNCTORS["range"].resolve(("number", "number"))(1, 4))
[1, 2, 3]

Values are Python ``int`` (``number`` and ``unsigned``), ``float`` and ``str``.

Semantics, and where they differ from Soufflé (a Soufflé built with
``-DRAM_DOMAIN_SIZE=64`` is the model; its default build uses 32 bits):

- **Integers are 64 bits, wrapping.** ``number`` is a signed 64-bit two's
  complement integer, ``unsigned`` an unsigned 64-bit one; every operator result is
  wrapped into that range (``1u - 2u`` is ``2**64 - 1``). We chose a fixed width
  over unbounded Python integers because ``unsigned`` arithmetic needs one, because
  results must agree with Spark's 64-bit ``LongType`` columns, and because it makes
  results identical to a 64-bit Soufflé. ``float`` is a 64-bit IEEE double.
- **Division** ``/`` and **remainder** ``%`` truncate toward zero, as in C
  (``-7 / 2 = -3``, ``-7 % 2 = -1``). **Division by zero** (integer or float) raises
  :class:`FunctorError` instead of crashing (Soufflé: ``SIGFPE``) or producing
  ``inf``/``nan`` (``nan`` is not equal to itself, which would break set semantics).
- **NaN is never a value.** A float operation or aggregate whose result is NaN
  (``inf - inf``, ``0.0 * inf``, the sum of ``inf`` and ``-inf``) raises
  :class:`FunctorError` at its rule (:func:`not_nan`); fact files, the API and
  ``to_float`` refuse ``nan``. A row holding NaN could never be retracted (NaN is
  not equal to itself), so the place that would make one fails instead, in both
  backends. ``inf``, ``-inf`` and ``-0.0`` are values.
- **Shifts** take the shift count modulo 64 (as Soufflé's generated code and Java
  do); ``bshr`` shifts arithmetically on ``number``, ``bshru`` logically.
- **Powers** ``^`` on integers are exact (then wrapped); a negative exponent gives
  the truncated real result (``2 ^ -1 = 0``, ``-1 ^ -1 = -1``); ``0 ^ -1`` raises.
- **Logical operators** yield ``1`` or ``0``.
- ``match(pattern, text)`` uses Python's :func:`re.fullmatch` (Soufflé uses C++
  ``std::regex`` with ECMAScript syntax; the common subset agrees); an invalid
  pattern makes the constraint false, as in Soufflé (which also prints a warning).
- ``contains(needle, haystack)`` holds when ``needle`` is a substring of ``haystack``.
- ``substr(s, i, n)``: the ``n`` characters of ``s`` from index ``i``, fewer at the
  end of the string; a negative ``n`` means "to the end"; an index outside
  ``0..strlen(s)`` gives ``""`` (both as Soufflé, which also prints a warning).
  Indices count Unicode characters (Soufflé counts bytes).
- ``to_number``, ``to_unsigned`` and ``to_float`` of a symbol accept the whole
  string (surrounding blanks allowed) as a decimal, ``0x`` or ``0b`` literal (a
  float literal for ``to_float``); anything else raises :class:`FunctorError`
  (Soufflé aborts). Float to integer conversion truncates toward zero.
- ``to_string`` of a float is Python's shortest round-trip text (``2.0``, ``0.1``).
- ``ord(x)`` of a number is the number itself; of a symbol it is the integer whose
  big-endian UTF-8 bytes are the symbol (``ord("A") = 65``). Soufflé returns the
  symbol's index in its symbol table (order of first appearance), which depends on
  evaluation order and cannot be reproduced incrementally; ours is deterministic
  and injective but may exceed 64 bits for long symbols.
- ``cat``, ``min`` and ``max`` take one or more arguments (Soufflé also parses
  ``cat()``); ``min``/``max`` work on any one type, symbols compared by code point.
- ``range(lo, hi[, step])`` yields ``lo, lo + step, ...`` up to but excluding
  ``hi``; without a step it counts up by 1 when ``lo <= hi`` and down by 1
  otherwise; a zero step yields ``lo`` once if ``lo != hi`` (all as Soufflé). One
  call yields at most :data:`RANGE_LIMIT` values (10 million): a larger span, an
  infinite bound or a float step too small to advance is a :class:`FunctorError`.
- Conversions to the same type (``to_number`` of a number) are accepted as the
  identity; Soufflé rejects them as type errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from datalog.errors import EvaluationError

NUMERIC_TYPES = ("number", "unsigned", "float")
INTEGRAL_TYPES = ("number", "unsigned")
ALL_TYPES = ("number", "unsigned", "float", "symbol")

WIDTH = 64
_MODULUS = 1 << WIDTH
_MASK = _MODULUS - 1
_SIGN = 1 << (WIDTH - 1)
NUMBER_MIN, NUMBER_MAX = -_SIGN, _SIGN - 1
UNSIGNED_MAX = _MASK
#: More significant digits than any 64-bit value has in any base (it has at most 64
#: binary digits): a longer integer text is out of range without being converted
#: (Python refuses to convert a decimal text of more than 4300 digits).
MAX_INTEGER_DIGITS = 64


def integer_value(digits: str, base: int = 10) -> int | None:
    """The value of the unsigned integer text ``digits`` in ``base``; ``None`` when it
    has more than :data:`MAX_INTEGER_DIGITS` significant digits (out of every range).

    >>> integer_value("00ff", 16), integer_value("9" * 5000)
    (255, None)
    """
    significant = digits.lstrip("0")
    if len(significant) > MAX_INTEGER_DIGITS:
        return None
    return int(significant or "0", base)


class FunctorError(EvaluationError):
    """A functor or operator could not produce a value (division by zero, a symbol
    that is not a number). Evaluators catch it and raise an
    :class:`~datalog.errors.EvaluationError` naming the place in the program."""


def wrap_number(value: int) -> int:
    """``value`` as a signed 64-bit integer (two's complement wrap-around).

    >>> wrap_number(2**63), wrap_number(-1)
    (-9223372036854775808, -1)
    """
    value &= _MASK
    return value - _MODULUS if value & _SIGN else value


def wrap_unsigned(value: int) -> int:
    """``value`` as an unsigned 64-bit integer.

    >>> wrap_unsigned(-1) == 2**64 - 1
    True
    """
    return value & _MASK


#: The message of a float operation whose result is NaN.
NAN_RESULT = "a float operation gives NaN (not a number), never a value,"


def not_nan(value) -> float:
    """``value`` as a float; :class:`FunctorError` if it is NaN. NaN is never a
    value: a row holding it could never be retracted (NaN is not equal to
    itself), so the operation that produces it fails instead.

    >>> not_nan(float("inf")) - 1
    inf
    >>> not_nan(float("inf") - float("inf"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    datalog.dialect.functors.FunctorError: error: a float operation gives NaN ...
    """
    value = float(value)
    if value != value:
        raise FunctorError(NAN_RESULT)
    return value


WRAP = {"number": wrap_number, "unsigned": wrap_unsigned, "float": not_nan}


# ---------------------------------------------------------------- tables


@dataclass(frozen=True)
class Overload:
    """One typing of an operator: ``params`` are the argument types (for a
    variadic overload, the one type every argument has), ``result`` the result
    type, ``function`` the implementation on Python values. For a multi-valued
    operator (``range``) ``function`` returns an iterator of results.
    ``inline``: the same as a Python expression over the argument expressions
    ``{0}``, ``{1}``, ... (``str.format``), which generated code writes in
    place of a call (``None``: call ``function``)."""

    params: tuple[str, ...]
    result: str
    function: Callable[..., Any]
    variadic: bool = False
    inline: str | None = None

    def accepts(self, types: Sequence[str]) -> bool:
        if self.variadic:
            return all(t == self.params[0] for t in types)
        return tuple(types) == self.params

    def __call__(self, *args: Any) -> Any:
        return self.function(*args)


@dataclass(frozen=True)
class Operator:
    """An operator, functor or constraint: its ``name``, the number of arguments
    it takes (``min_arity`` to ``max_arity``; ``None`` means no upper bound), its
    overloads, and whether it is ``multi``-valued (yields several results)."""

    name: str
    min_arity: int
    max_arity: int | None
    overloads: tuple[Overload, ...]
    multi: bool = False
    summary: str = ""

    def accepts_arity(self, n: int) -> bool:
        """Whether ``n`` arguments are allowed.

        >>> FUNCTORS["substr"].accepts_arity(3), FUNCTORS["substr"].accepts_arity(2)
        (True, False)
        """
        return n >= self.min_arity and (self.max_arity is None or n <= self.max_arity)

    def arity_text(self) -> str:
        """How many arguments, in words, for error messages.

        >>> FUNCTORS["range"].arity_text(), FUNCTORS["cat"].arity_text()
        ('2 or 3 arguments', 'at least 1 argument')
        """
        lo, hi = self.min_arity, self.max_arity
        noun = "argument" if (hi if hi is not None else lo) == 1 else "arguments"
        if hi is None:
            return f"at least {lo} {noun}"
        if lo == hi:
            return f"{lo} {noun}"
        if hi == lo + 1:
            return f"{lo} or {hi} {noun}"
        return f"{lo} to {hi} {noun}"

    def resolve(self, types: Sequence[str]) -> Overload | None:
        """The overload taking arguments of ``types``, or ``None``.

        >>> BINARY_OPS["/"].resolve(("number", "number"))(-7, 2)
        -3
        """
        if not self.accepts_arity(len(types)):
            return None
        for overload in self.overloads:
            if overload.accepts(types):
                return overload
        return None

    def result_type(self, types: Sequence[str]) -> str | None:
        """The result type for arguments of ``types`` (``None``: no such overload).

        >>> FUNCTORS["max"].result_type(("symbol", "symbol"))
        'symbol'
        >>> FUNCTORS["strlen"].result_type(("number",)) is None
        True
        """
        overload = self.resolve(types)
        return overload.result if overload is not None else None

    def signatures(self) -> list[str]:
        """The accepted typings as text, for "no overload" error messages.

        >>> FUNCTORS["substr"].signatures()
        ['substr(symbol, number, number) -> symbol']
        """
        out = []
        for o in self.overloads:
            params = f"{o.params[0]}, ..." if o.variadic else ", ".join(o.params)
            out.append(f"{self.name}({params}) -> {o.result}")
        return out


def _mono(types: Iterable[str], arity: int, make: Callable[[str], Callable],
          inline: str | None = None) -> tuple:
    """One overload per type ``t`` taking ``arity`` arguments of ``t`` and
    returning ``t``, implemented by ``make(t)``; ``inline`` (an expression over
    ``{0}``, ``{1}``, see :class:`Overload`) is wrapped to ``t``'s 64 bits for
    ``number`` and ``unsigned``."""
    return tuple(Overload((t,) * arity, t, make(t),
                          inline=_inline_wrap(t, inline) if inline is not None else None)
                 for t in types)


def _inline_wrap(t: str, expression: str) -> str | None:
    """``expression`` wrapped to ``t`` as :data:`WRAP` does, without a call (a
    call costs more than the arithmetic on a loop's one row); ``None`` for a
    float (NaN is an error: the call checks it).

    >>> number = _inline_wrap("number", "{0} + {1}")
    >>> eval(number.format("9223372036854775807", "1")) == wrap_number(2**63)
    True
    >>> eval(_inline_wrap("unsigned", "{0} - {1}").format("0", "1")) == UNSIGNED_MAX
    True
    """
    if t == "number":
        return f"((({expression}) + {_SIGN}) & {_MASK}) - {_SIGN}"
    if t == "unsigned":
        return f"(({expression}) & {_MASK})"
    return None


# ---------------------------------------------------------------- arithmetic


def _wrapped(op: Callable[[Any, Any], Any]) -> Callable[[str], Callable]:
    def make(t: str) -> Callable:
        wrap = WRAP[t]
        return lambda a, b: wrap(op(a, b))
    return make


def _check_divisor(b: Any) -> None:
    if b == 0:
        raise FunctorError("division by zero")


def _div(t: str) -> Callable:
    def div(a, b):
        _check_divisor(b)
        if t == "float":
            return not_nan(a / b)
        q = abs(a) // abs(b)
        return WRAP[t](q if (a < 0) == (b < 0) else -q)
    return div


def _mod(t: str) -> Callable:
    def mod(a, b):
        _check_divisor(b)
        r = abs(a) % abs(b)
        return WRAP[t](-r if a < 0 else r)
    return mod


def _pow(t: str) -> Callable:
    def power(a, b):
        if t == "float":
            try:
                result = float(a) ** b
            except (ZeroDivisionError, OverflowError) as exc:
                raise FunctorError(f"{a} ^ {b}: {exc}") from None
            if isinstance(result, complex):
                raise FunctorError(f"{a} ^ {b} is not a real number")
            return not_nan(result)
        if b >= 0:
            return WRAP[t](pow(a, b, _MODULUS))
        if a == 0:
            raise FunctorError("0 raised to a negative power")
        # |a| >= 2 gives a fraction that truncates to 0; 1 and -1 stay on the unit.
        return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
    return power


def _shift(kind: str) -> Callable[[str], Callable]:
    def make(t: str) -> Callable:
        def shift(a, b):
            b &= WIDTH - 1
            if kind == "bshl":
                return WRAP[t](a << b)
            if kind == "bshr" and t == "number":
                return a >> b
            return WRAP[t](wrap_unsigned(a) >> b)
        return shift
    return make


def _truth(x: Any) -> int:
    return 1 if x else 0


#: Infix operators by name.
BINARY_OPS: dict[str, Operator] = {
    op.name: op for op in (
        Operator("+", 2, 2, _mono(NUMERIC_TYPES, 2, _wrapped(lambda a, b: a + b),
                                     "({0}) + ({1})"),
                 summary="addition"),
        Operator("-", 2, 2, _mono(NUMERIC_TYPES, 2, _wrapped(lambda a, b: a - b),
                                     "({0}) - ({1})"),
                 summary="subtraction"),
        Operator("*", 2, 2, _mono(NUMERIC_TYPES, 2, _wrapped(lambda a, b: a * b),
                                     "({0}) * ({1})"),
                 summary="multiplication"),
        Operator("/", 2, 2, _mono(NUMERIC_TYPES, 2, _div),
                 summary="division, truncating toward zero on integers"),
        Operator("%", 2, 2, _mono(INTEGRAL_TYPES, 2, _mod),
                 summary="remainder, with the sign of the dividend"),
        Operator("^", 2, 2, _mono(NUMERIC_TYPES, 2, _pow), summary="power"),
        Operator("band", 2, 2, _mono(INTEGRAL_TYPES, 2, _wrapped(lambda a, b: a & b)),
                 summary="bitwise and"),
        Operator("bor", 2, 2, _mono(INTEGRAL_TYPES, 2, _wrapped(lambda a, b: a | b)),
                 summary="bitwise or"),
        Operator("bxor", 2, 2, _mono(INTEGRAL_TYPES, 2, _wrapped(lambda a, b: a ^ b)),
                 summary="bitwise exclusive or"),
        Operator("bshl", 2, 2, _mono(INTEGRAL_TYPES, 2, _shift("bshl")),
                 summary="shift left (count modulo 64)"),
        Operator("bshr", 2, 2, _mono(INTEGRAL_TYPES, 2, _shift("bshr")),
                 summary="shift right, arithmetic on number (count modulo 64)"),
        Operator("bshru", 2, 2, _mono(INTEGRAL_TYPES, 2, _shift("bshru")),
                 summary="shift right, logical (count modulo 64)"),
        Operator("land", 2, 2, _mono(INTEGRAL_TYPES, 2,
                                     lambda t: lambda a, b: _truth(a and b)),
                 summary="logical and: 1 or 0"),
        Operator("lor", 2, 2, _mono(INTEGRAL_TYPES, 2,
                                    lambda t: lambda a, b: _truth(a or b)),
                 summary="logical or: 1 or 0"),
        Operator("lxor", 2, 2, _mono(INTEGRAL_TYPES, 2,
                                     lambda t: lambda a, b: _truth(bool(a) != bool(b))),
                 summary="logical exclusive or: 1 or 0"),
    )
}


def _neg(t: str) -> Callable:
    return lambda a: WRAP[t](-a)


def _bnot(t: str) -> Callable:
    return lambda a: WRAP[t](~a)


#: Prefix operators by name. Unsigned values have no negation (as in Soufflé).
UNARY_OPS: dict[str, Operator] = {
    op.name: op for op in (
        Operator("-", 1, 1, _mono(("number", "float"), 1, _neg), summary="negation"),
        Operator("bnot", 1, 1, _mono(INTEGRAL_TYPES, 1, _bnot), summary="bitwise not"),
        Operator("lnot", 1, 1, _mono(INTEGRAL_TYPES, 1, lambda t: lambda a: _truth(not a)),
                 summary="logical not: 1 or 0"),
    )
}


# ---------------------------------------------------------------- functors


_INTEGER_TEXT = re.compile(r"\s*([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|([0-9]+))\s*")
_FLOAT_TEXT = re.compile(
    r"\s*[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
    r"|inf|infinity)\s*", re.IGNORECASE)


def _parse_integer(text: str, result: str) -> int:
    m = _INTEGER_TEXT.fullmatch(text)
    if m is None:
        raise FunctorError(f"to_{result}: {text!r} is not a number")
    sign, hexa, binary, decimal = m.groups()
    value = integer_value(hexa, 16) if hexa else integer_value(binary, 2) if binary \
        else integer_value(decimal)
    low, high = (NUMBER_MIN, NUMBER_MAX) if result == "number" else (0, UNSIGNED_MAX)
    if value is None or not low <= (-value if sign == "-" else value) <= high:
        shown = repr(text) if len(text) <= 40 else f"a text of {len(text)} characters"
        raise FunctorError(f"to_{result}: {shown} is out of range for {result}")
    value = -value if sign == "-" else value
    return value


def _parse_float(text: str) -> float:
    if _FLOAT_TEXT.fullmatch(text) is None:
        raise FunctorError(f"to_float: {text!r} is not a number")
    return float(text)


def _float_to_integer(value: float, result: str) -> int:
    if math.isnan(value) or math.isinf(value):
        raise FunctorError(f"to_{result}: {value} has no integer value")
    return WRAP[result](int(value))


def _to_string(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _substr(s: str, index: int, length: int) -> str:
    if not 0 <= index <= len(s):
        return ""
    return s[index:] if length < 0 else s[index:index + length]


def _ord(value: Any) -> int:
    if isinstance(value, str):
        return int.from_bytes(value.encode("utf-8"), "big")
    return int(value) if not isinstance(value, float) else _float_to_integer(value, "number")


#: The most values one call of ``range`` may yield (a larger span is an error,
#: not a run that fills the memory).
RANGE_LIMIT = 10_000_000


def range_size(lo, hi, step) -> float:
    """How many values ``range(lo, hi, step)`` yields (``inf`` for a float range
    that never ends)."""
    if step == 0:
        return 1 if lo != hi else 0
    if (step > 0 and lo >= hi) or (step < 0 and lo <= hi):
        return 0
    if isinstance(step, float) or isinstance(lo, float):
        span = (hi - lo) / step
        if span != span or span == math.inf or lo + step == lo:
            return math.inf  # an infinite bound, or a step too small to advance
        return math.ceil(span)
    return -((lo - hi) // step)


def _range(t: str) -> Callable:
    def values(lo, hi, step=None) -> Iterator:
        if step is None:
            step = 1 if lo <= hi else -1
        size = range_size(lo, hi, step)
        if size > RANGE_LIMIT:
            shown = "never ends" if size == math.inf else \
                f"yields more than {RANGE_LIMIT:,} values, the limit of one range"
            raise FunctorError(f"range({lo}, {hi}, {step}) {shown}")
        return generate(lo, hi, step)

    def generate(lo, hi, step) -> Iterator:
        if step == 0:
            if lo != hi:
                yield lo
            return
        x = lo
        while (x < hi) if step > 0 else (x > hi):
            yield x
            x += step
    return values


def _autoinc_unbound() -> int:
    raise FunctorError("autoinc() is evaluated in a session's rules")


def _conversions(name: str, result: str, sources: dict[str, Callable]) -> Operator:
    overloads = tuple(Overload((source,), result, fn) for source, fn in sources.items())
    return Operator(name, 1, 1, overloads, summary=f"convert to {result}")


#: Named functors. ``range`` is multi-valued: its overloads return iterators.
FUNCTORS: dict[str, Operator] = {
    op.name: op for op in (
        Operator("cat", 1, None,
                 (Overload(("symbol",), "symbol", lambda *xs: "".join(xs), variadic=True),),
                 summary="concatenation of symbols"),
        Operator("strlen", 1, 1, (Overload(("symbol",), "number", len),),
                 summary="length in characters"),
        Operator("substr", 3, 3,
                 (Overload(("symbol", "number", "number"), "symbol", _substr),),
                 summary="substr(s, index, length): part of a symbol"),
        Operator("ord", 1, 1, tuple(Overload((t,), "number", _ord) for t in ALL_TYPES),
                 summary="an integer identifying the value"),
        _conversions("to_number", "number", {
            "number": lambda a: a,
            "unsigned": wrap_number,
            "float": lambda a: _float_to_integer(a, "number"),
            "symbol": lambda a: _parse_integer(a, "number"),
        }),
        _conversions("to_unsigned", "unsigned", {
            "number": wrap_unsigned,
            "unsigned": lambda a: a,
            "float": lambda a: _float_to_integer(a, "unsigned"),
            "symbol": lambda a: _parse_integer(a, "unsigned"),
        }),
        _conversions("to_float", "float", {
            "number": float, "unsigned": float, "float": lambda a: a,
            "symbol": _parse_float,
        }),
        _conversions("to_string", "symbol", {
            "number": _to_string, "unsigned": _to_string, "float": _to_string,
            "symbol": lambda a: a,
        }),
        Operator("min", 1, None,
                 tuple(Overload((t,), t, lambda *xs: min(xs), variadic=True)
                       for t in ALL_TYPES),
                 summary="the least argument"),
        Operator("max", 1, None,
                 tuple(Overload((t,), t, lambda *xs: max(xs), variadic=True)
                       for t in ALL_TYPES),
                 summary="the greatest argument"),
        Operator("range", 2, 3,
                 _mono(NUMERIC_TYPES, 2, _range) + _mono(NUMERIC_TYPES, 3, _range),
                 multi=True, summary="range(lo, hi[, step]): every value from lo up to hi"),
        # The counter's state is a session's: the executors bind it
        # (datalog.dialect.user_functors.AutoInc); this entry types the call.
        Operator("autoinc", 0, 0, (Overload((), "number", _autoinc_unbound),),
                 summary="a new number for each binding of the rule: 0, 1, 2, ..."),
    )
}


# ---------------------------------------------------------------- constraints


_PATTERNS: dict[str, re.Pattern | None] = {}


def _match(pattern: str, text: str) -> bool:
    if pattern not in _PATTERNS:
        try:
            _PATTERNS[pattern] = re.compile(pattern)
        except re.error:
            _PATTERNS[pattern] = None
    compiled = _PATTERNS[pattern]
    return compiled is not None and compiled.fullmatch(text) is not None


def _contains(needle: str, haystack: str) -> bool:
    return needle in haystack


def _ordered(fn: Callable[[Any, Any], bool]) -> tuple[Overload, ...]:
    return tuple(Overload((t, t), "bool", fn) for t in ALL_TYPES)


def _strings(fn: Callable[[str, str], bool]) -> tuple[Overload, ...]:
    return (Overload(("symbol", "symbol"), "bool", fn),)


#: Constraints by name: each overload returns a Python ``bool`` (result type
# ``"bool"``). Ordered comparisons work on every type; symbols compare by code point.
COMPARISONS: dict[str, Operator] = {
    op.name: op for op in (
        Operator("=", 2, 2, _ordered(lambda a, b: a == b), summary="equal"),
        Operator("!=", 2, 2, _ordered(lambda a, b: a != b), summary="not equal"),
        Operator("<", 2, 2, _ordered(lambda a, b: a < b), summary="less than"),
        Operator("<=", 2, 2, _ordered(lambda a, b: a <= b), summary="at most"),
        Operator(">", 2, 2, _ordered(lambda a, b: a > b), summary="greater than"),
        Operator(">=", 2, 2, _ordered(lambda a, b: a >= b), summary="at least"),
        Operator("contains", 2, 2, _strings(_contains),
                 summary="contains(needle, haystack): needle is a substring of haystack"),
        Operator("not_contains", 2, 2, _strings(lambda a, b: not _contains(a, b)),
                 summary="!contains(needle, haystack)"),
        Operator("match", 2, 2, _strings(_match),
                 summary="match(pattern, text): the regular expression matches all of text"),
        Operator("not_match", 2, 2, _strings(lambda a, b: not _match(a, b)),
                 summary="!match(pattern, text)"),
    )
}

#: The constraint that holds exactly when the key does not (for ``!match(..)``).
NEGATED_CONSTRAINTS = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
                       "contains": "not_contains", "not_contains": "contains",
                       "match": "not_match", "not_match": "match"}


def type_of_value(value: Any) -> str:
    """The primitive type a Python value denotes (``int`` reads as ``number``).

    >>> type_of_value(1), type_of_value(1.5), type_of_value("a")
    ('number', 'float', 'symbol')
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not values of the dialect")
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "symbol"
    raise TypeError(f"{value!r} is not a value of the dialect")


__test__ = {
    "BINARY_OPS": """
>>> [BINARY_OPS[op].resolve(("number", "number"))(-7, 2) for op in "/%"]
[-3, -1]
>>> BINARY_OPS["-"].resolve(("unsigned", "unsigned"))(1, 2) == 2**64 - 1
True
>>> BINARY_OPS["bshr"].resolve(("number", "number"))(-8, 1)
-4
>>> BINARY_OPS["bshru"].resolve(("number", "number"))(-8, 60)
15
>>> BINARY_OPS["lxor"].resolve(("number", "number"))(3, 0)
1
>>> BINARY_OPS["/"].resolve(("number", "number"))(1, 0)
Traceback (most recent call last):
    ...
datalog.dialect.functors.FunctorError: error: division by zero
""",
    "UNARY_OPS": """
>>> UNARY_OPS["-"].resolve(("number",))(5), UNARY_OPS["lnot"].resolve(("number",))(0)
(-5, 1)
>>> UNARY_OPS["bnot"].resolve(("unsigned",))(0) == 2**64 - 1
True
""",
    "FUNCTORS": """
>>> call = lambda name, types, *args: FUNCTORS[name].resolve(types)(*args)
>>> call("substr", ("symbol", "number", "number"), "hello", 1, 3)
'ell'
>>> call("substr", ("symbol", "number", "number"), "hello", 9, 1)
''
>>> call("to_number", ("symbol",), " 0x1F "), call("to_number", ("float",), -2.7)
(31, -2)
>>> call("to_string", ("float",), 2.0), call("ord", ("symbol",), "A")
('2.0', 65)
>>> call("min", ("number",) * 3, 3, 1, 2), call("max", ("symbol",) * 2, "ab", "b")
(1, 'b')
>>> list(call("range", ("number",) * 2, 3, 0)), list(call("range", ("number",) * 3, 0, 7, 3))
([3, 2, 1], [0, 3, 6])
>>> list(call("range", ("float",) * 3, 0.0, 1.0, 0.25))
[0.0, 0.25, 0.5, 0.75]
>>> call("to_number", ("symbol",), "12abc")
Traceback (most recent call last):
    ...
datalog.dialect.functors.FunctorError: error: to_number: '12abc' is not a number
""",
    "COMPARISONS": """
>>> COMPARISONS["<"].resolve(("symbol", "symbol"))("apple", "banana")
True
>>> COMPARISONS["match"].resolve(("symbol", "symbol"))("a.*", "abba")
True
>>> COMPARISONS["match"].resolve(("symbol", "symbol"))("b", "abba")
False
>>> COMPARISONS["contains"].resolve(("symbol", "symbol"))("bb", "abba")
True
""",
}
