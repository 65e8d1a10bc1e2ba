"""Plan expressions as Spark Column expressions, with Soufflé's semantics.

The semantics are those of :mod:`datalog.dialect.functors` (the one table the
circuit backend and the reference evaluator use, whose result types this module
reads); this module computes the same values
with Spark's own expressions, so they run in the JVM, fused into whole-stage
code, and work over Spark Connect. No Python UDF is needed.

Values in DataFrames:

==========  ===============  ==================================================
type        Spark type       representation
==========  ===============  ==================================================
number      LongType         the value (64-bit two's complement, wrapping)
unsigned    LongType         the same 64 bits read as unsigned: ``2**64 - 1`` is
                             stored as ``-1``; order, division and text convert
float       DoubleType       the value
symbol      StringType       the value
==========  ===============  ==================================================

Integer arithmetic wraps because the executor runs with
``spark.sql.ansi.enabled=false`` (Java's ``long`` arithmetic). A failing functor
(division by zero, ``to_number("x")``) raises through ``raise_error`` with a
message that :func:`datalog.backends.spark.errors.explain` recognises.

An expression compiles against a :class:`Scope`: the column name and type of
every slot of the current row.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from datalog.backends.spark.errors import FUNCTOR_MARK
from datalog.dialect.functors import COMPARISONS, NAN_RESULT, RANGE_LIMIT
from datalog.plan.expressions import resolve
from datalog.plan.ir import Call, Col, Const, Expr

SIGN_BIT = -(2**63)
TWO_64 = 2**64


def F():
    """``pyspark.sql.functions``, imported when first needed."""
    from pyspark.sql import functions
    return functions


@dataclass(frozen=True)
class Scope:
    """The slots of a row: ``names[i]`` is the DataFrame column holding slot
    ``i`` and ``types[i]`` its primitive type."""

    names: tuple[str, ...]
    types: tuple[str, ...]

    def extend(self, name: str, type_: str) -> Scope:
        return Scope(self.names + (name,), self.types + (type_,))


#: The number of the rule being compiled in ``ProgramPlan.rules()`` ("" for none).
RULE_NUMBER: ContextVar[str] = ContextVar("rule_number", default="")


@contextmanager
def rule_number(number: int | str):
    """Functor errors of expressions compiled inside belong to rule ``number``."""
    token = RULE_NUMBER.set(str(number))
    try:
        yield
    finally:
        RULE_NUMBER.reset(token)


def fail(message) -> Column:  # noqa: F821
    """An expression that raises a functor error with ``message`` (a str or a
    string Column), naming the rule being compiled."""
    f = F()
    text = f.lit(message) if isinstance(message, str) else message
    mark = f"{FUNCTOR_MARK}[{RULE_NUMBER.get()}] "
    return f.raise_error(f.concat(f.lit(mark), text))


def literal(value, type_: str):
    """A constant of ``type_`` (an unsigned constant as its bit pattern)."""
    f = F()
    if type_ in ("number", "unsigned"):
        value = int(value)
        if type_ == "unsigned" and value >= 2**63:
            value -= TWO_64
        return f.lit(value).cast("long")
    if type_ == "float":
        return f.lit(float(value)).cast("double")
    return f.lit(str(value))


def type_of(expr: Expr, scope: Scope, hint: str | None = None) -> str:
    """The primitive type of ``expr``'s value (``hint`` types bare constants).

    >>> scope = Scope(("s0", "s1"), ("unsigned", "symbol"))
    >>> type_of(Call("+", (Col(0), Const(1)), ("unsigned", "unsigned")), scope)
    'unsigned'
    >>> type_of(Call("strlen", (Col(1),), ("symbol",)), scope), type_of(Const(2.5), scope)
    ('number', 'float')
    """
    if isinstance(expr, Col):
        return scope.types[expr.index]
    if isinstance(expr, Const):
        if hint is not None:
            return hint
        value = expr.value
        return "symbol" if isinstance(value, str) else "float" if isinstance(
            value, float) else "number"
    if expr.types:
        return resolve(expr).result
    return arg_type(expr, scope)


def arg_type(call: Call, scope: Scope) -> str:
    """The type a call works in: its first argument's (the plan resolves
    overloads so that arithmetic, ``min``/``max``, ``range`` and comparisons
    take arguments of one type)."""
    if call.types:
        return call.types[0]
    return type_of(call.args[0], scope)


def compile_expr(expr: Expr, scope: Scope, hint: str | None = None):
    """``expr`` as a Spark Column over the slots of ``scope``."""
    f = F()
    if isinstance(expr, Col):
        return f.col(scope.names[expr.index])
    if isinstance(expr, Const):
        return literal(expr.value, type_of(expr, scope, hint))
    t = arg_type(expr, scope)
    types = expr.types or (t,) * len(expr.args)
    args = [compile_expr(a, scope, at) for a, at in zip(expr.args, types)]
    op = expr.op
    if op in ("match", "not_match") and isinstance(expr.args[0], Const) \
            and not is_valid_python_regex(str(expr.args[0].value)):
        return f.lit(op == "not_match")
    if op in COMPARISONS and len(args) == 2:
        return comparison(op, t, *args)
    if len(args) == 1 and op in UNARY:
        return UNARY[op](t, args[0])
    if op in BINARY:
        result = BINARY[op](t, *args)
        return not_nan(result) if t == "float" else result
    if op in FUNCTORS:
        return FUNCTORS[op](t, *args)
    raise ValueError(f"the Spark executor has no implementation of `{op}`")


# ---------------------------------------------------------------- unsigned helpers


def big(n: int):
    """An integer literal of any size as ``decimal(38, 0)`` (py4j passes only
    64-bit ints)."""
    return F().lit(str(n)).cast("decimal(38,0)")


def flip(x):
    """Unsigned order as signed order: flip the sign bit."""
    return x.bitwiseXOR(F().lit(SIGN_BIT).cast("long"))


def unsigned_decimal(x):
    """The unsigned value of a bit pattern as ``decimal(20, 0)``."""
    f = F()
    d = x.cast("decimal(20,0)")
    return f.when(x < 0, d + big(TWO_64)).otherwise(d).cast("decimal(20,0)")


def decimal_to_bits(d):
    """A ``decimal(38, 0)`` in ``[-2**63, 2**64)`` as its 64-bit pattern."""
    f = F()
    return f.when(d >= big(2**63), d - big(TWO_64)).otherwise(d).cast("long")


# ---------------------------------------------------------------- operators


def comparison(op: str, t: str, a, b):
    if op == "contains":
        return b.contains(a)
    if op == "not_contains":
        return ~b.contains(a)
    if op in ("match", "not_match"):
        matched = full_match(a, b)
        return matched if op == "match" else ~matched
    if t == "unsigned" and op not in ("=", "!="):
        a, b = flip(a), flip(b)
    return {"=": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
            "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()


def full_match(pattern, text):
    """``re.fullmatch(pattern, text)``: Java's regex anchored at both ends
    (:func:`compile_expr` turns a constant pattern that Python's ``re`` cannot
    compile into false, as the local engine and Soufflé do)."""
    f = F()
    return f.regexp_like(text, f.concat(f.lit("^(?:"), pattern, f.lit(")\\z")))


def not_nan(x):
    """``x``, or a functor error where it is NaN (never a value: see
    :func:`datalog.dialect.functors.not_nan`)."""
    f = F()
    return f.when(f.isnan(x), fail(NAN_RESULT)).otherwise(x)


def _divide(t, a, b):
    f = F()
    if t == "float":
        quotient = a / b
    elif t == "unsigned":
        # exact: the difference is a multiple of b
        ua, ub = unsigned_decimal(a), unsigned_decimal(b)
        quotient = decimal_to_bits(((ua - f.pmod(ua, ub)) / ub).cast("decimal(38,0)"))
    else:
        quotient = f.call_function("div", a, b)
    return f.when(b == 0, fail("division by zero")).otherwise(quotient)


def _remainder(t, a, b):
    f = F()
    if t == "unsigned":
        rest = decimal_to_bits(f.pmod(unsigned_decimal(a), unsigned_decimal(b))
                               .cast("decimal(38,0)"))
    else:
        rest = a % b
    return f.when(b == 0, fail("division by zero")).otherwise(rest)


def _power(t, a, b):
    f = F()
    if t == "float":
        result = f.pow(a, b)
        finite = ~(f.isnan(a) | f.isnan(b) | (f.abs(a) == float("inf"))
                   | (f.abs(b) == float("inf")))
        return (f.when((a == 0) & (b < 0), fail("0.0 raised to a negative power"))
                .when(finite & f.isnan(result), fail("a power that is not a real number"))
                .when(finite & (f.abs(result) == float("inf")),
                      fail("a power out of the range of float"))
                .otherwise(result))
    # Exact wrapped power by squaring over the 64 bits of the exponent.
    bits = f.sequence(f.lit(0), f.lit(63))
    start = f.struct(f.lit(1).cast("long").alias("r"), a.alias("p"))

    def square(acc, i):
        bit = f.call_function("shiftrightunsigned", b, i).bitwiseAND(
            f.lit(1).cast("long")) != 0
        return f.struct(f.when(bit, acc["r"] * acc["p"]).otherwise(acc["r"]).alias("r"),
                        (acc["p"] * acc["p"]).alias("p"))

    exact = f.aggregate(bits, start, square, lambda acc: acc["r"])
    if t == "unsigned":
        return exact
    one = f.lit(1).cast("long")
    negative = (f.when(a == 0, fail("0 raised to a negative power"))
                .when(a == 1, one)
                .when(a == -1, f.when(b % 2 != 0, -one).otherwise(one))
                .otherwise(f.lit(0).cast("long")))
    return f.when(b < 0, negative).otherwise(exact)


def _shift(kind):
    def shift(t, a, b):
        f = F()
        count = b.bitwiseAND(f.lit(63).cast("long")).cast("int")
        if kind == "bshl":
            return f.call_function("shiftleft", a, count)
        if kind == "bshr" and t == "number":
            return f.call_function("shiftright", a, count)
        return f.call_function("shiftrightunsigned", a, count)
    return shift


def _truth(condition):
    f = F()
    return f.when(condition, f.lit(1)).otherwise(f.lit(0)).cast("long")


BINARY = {
    "+": lambda t, a, b: a + b,
    "-": lambda t, a, b: a - b,
    "*": lambda t, a, b: a * b,
    "/": _divide,
    "%": _remainder,
    "^": _power,
    "band": lambda t, a, b: a.bitwiseAND(b),
    "bor": lambda t, a, b: a.bitwiseOR(b),
    "bxor": lambda t, a, b: a.bitwiseXOR(b),
    "bshl": _shift("bshl"),
    "bshr": _shift("bshr"),
    "bshru": _shift("bshru"),
    "land": lambda t, a, b: _truth((a != 0) & (b != 0)),
    "lor": lambda t, a, b: _truth((a != 0) | (b != 0)),
    "lxor": lambda t, a, b: _truth((a != 0) != (b != 0)),
}

UNARY = {
    "-": lambda t, a: -a,
    "bnot": lambda t, a: F().bitwise_not(a),
    "lnot": lambda t, a: _truth(a == 0),
}


# ---------------------------------------------------------------- functors


def _substr(t, s, i, n):
    f = F()
    length = f.char_length(s).cast("long")
    start = (i + 1).cast("int")
    count = f.least(n, length).cast("int")
    return (f.when((i < 0) | (i > length), f.lit(""))
            .when(n < 0, f.call_function("substring", s, start))
            .otherwise(f.call_function("substring", s, start, count)))


def _ord(t, x):
    f = F()
    if t != "symbol":
        return to_integer(t, x, "number")
    code = f.conv(f.hex(f.encode(x, "UTF-8")), 16, 10).cast("decimal(38,0)")
    return (f.when(f.octet_length(x) > 7,
                   fail(f.concat(f.lit("ord: the symbol '"), x,
                                 f.lit("' is longer than 7 bytes"))))
            .when(f.octet_length(x) == 0, f.lit(0).cast("long"))
            .otherwise(code.cast("long")))


_INTEGER_TEXT = (r"^\s*([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|([0-9]+))\s*$")
_FLOAT_TEXT = (r"^\s*[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
               r"|(?i:inf|infinity))\s*$")


def parse_integer(text, result: str, error=None):
    """A symbol as a ``number``/``unsigned`` bit pattern: a decimal, ``0x`` or
    ``0b`` literal with surrounding blanks; anything else goes to ``error``
    (a function of the message Column; by default a functor error)."""
    f = F()
    error = error or fail
    sign = f.regexp_extract(text, _INTEGER_TEXT, 1)
    hexa = f.regexp_replace(f.regexp_extract(text, _INTEGER_TEXT, 2), "^0+", "")
    binary = f.regexp_replace(f.regexp_extract(text, _INTEGER_TEXT, 3), "^0+", "")
    digits = f.regexp_replace(f.regexp_extract(text, _INTEGER_TEXT, 4), "^0+", "")
    is_hex = f.regexp_extract(text, _INTEGER_TEXT, 2) != ""
    is_bin = f.regexp_extract(text, _INTEGER_TEXT, 3) != ""
    magnitude = (f.when(is_hex & (f.length(hexa) <= 16),
                        f.conv(f.concat(f.lit("0"), hexa), 16, 10).cast("decimal(38,0)"))
                 .when(is_bin & (f.length(binary) <= 64),
                       f.conv(f.concat(f.lit("0"), binary), 2, 10).cast("decimal(38,0)"))
                 .when(~is_hex & ~is_bin & (f.length(digits) <= 30),
                       f.concat(f.lit("0"), digits).cast("decimal(38,0)")))
    value = f.when(sign == "-", -magnitude).otherwise(magnitude)
    low, high = (big(-(2**63)), big(2**63 - 1)) if result == "number" else (
        big(0), big(TWO_64 - 1))
    quoted = f.concat(f.lit(f"to_{result}: '"), text, f.lit("'"))
    return (f.when(~text.rlike(_INTEGER_TEXT),
                   error(f.concat(quoted, f.lit(" is not a number"))))
            .when(value.isNull() | (value < low) | (value > high),
                  error(f.concat(quoted, f.lit(f" is out of range for {result}"))))
            .otherwise(decimal_to_bits(value)))


def parse_float(text, error=None):
    f = F()
    error = error or fail
    return (f.when(~text.rlike(_FLOAT_TEXT),
                   error(f.concat(f.lit("to_float: '"), text, f.lit("' is not a number"))))
            .otherwise(f.trim(text).cast("double")))


def to_integer(t, x, result):
    """``to_number`` / ``to_unsigned`` of a value of type ``t``."""
    f = F()
    if t in ("number", "unsigned"):
        return x
    if t == "symbol":
        return parse_integer(x, result)
    # float: truncate toward zero, wrapped modulo 2**64 like Python's int().
    small = f.abs(x) < float(2**63)
    wrapped = decimal_to_bits(f.pmod(x.cast("decimal(38,0)"),
                                     big(TWO_64))
                              .cast("decimal(38,0)"))
    return (f.when(f.isnan(x) | (f.abs(x) == float("inf")),
                   fail(f.concat(f.lit(f"to_{result}: "), x.cast("string"),
                                 f.lit(" has no integer value"))))
            .when(small, x.cast("long"))
            .when(f.abs(x) >= 1e38, f.lit(0).cast("long"))
            .otherwise(wrapped))


def to_float(t, x):
    if t == "float":
        return x
    if t == "unsigned":
        return unsigned_decimal(x).cast("double")
    if t == "symbol":
        return parse_float(x)
    return x.cast("double")


def text(t: str, x):
    """A value as the text the local engine writes and ``to_string`` gives:
    integers in decimal (unsigned ones unsigned), floats as Python's ``repr``."""
    if t == "symbol":
        return x
    if t == "unsigned":
        return unsigned_decimal(x).cast("string")
    if t == "float":
        return float_text(x)
    return x.cast("string")


def bind(value, body):
    """``body(v)`` with ``v`` bound to ``value``, evaluated once: a lambda over a
    one-element array. Long expressions that use a value many times stay small
    (whole-stage code is limited to 64 KB per method)."""
    f = F()
    return f.transform(f.array(value), body).getItem(0)


_JAVA_DOUBLE = r"^-?([0-9]*)\.?([0-9]*)(?:E(-?[0-9]+))?$"


def float_text(x):
    """Python's ``repr`` of a double, from Java's shortest digits: fixed
    notation for decimal exponents -4 .. 15, else ``1e+16`` style.

    Java writes ``1.0E-4``, ``1.0E16``, ``0.001``, ``123.45``; Python ``0.0001``,
    ``1e+16``, ``0.001``, ``123.45``. The significant digits are the same (both
    are the shortest that read back as ``x``), only the layout differs.
    """
    f = F()

    def from_java(java):
        whole = f.regexp_extract(java, _JAVA_DOUBLE, 1)
        raw = f.concat(whole, f.regexp_extract(java, _JAVA_DOUBLE, 2))
        exponent = f.coalesce(f.nullif(f.regexp_extract(java, _JAVA_DOUBLE, 3), f.lit("")),
                              f.lit("0")).cast("int")
        parts = f.struct(raw.alias("raw"), (f.length(whole) + exponent).alias("point"))
        finite = bind(parts, lambda p: bind(
            f.struct(f.regexp_replace(f.regexp_replace(p["raw"], "^0+", ""), "0+$", "")
                     .alias("digits"),
                     (p["point"] - f.length(p["raw"])
                      + f.length(f.regexp_replace(p["raw"], "^0+", ""))).alias("point")),
            lambda d: layout(d["digits"], d["point"])))
        sign = f.when(java.startswith("-"), f.lit("-")).otherwise(f.lit(""))
        return (f.when(java == "NaN", f.lit("nan"))
                .when(java == "Infinity", f.lit("inf"))
                .when(java == "-Infinity", f.lit("-inf"))
                .otherwise(f.concat(sign, finite)))

    return bind(x.cast("string"), from_java)


def layout(digits, point):
    """Significant ``digits`` with the decimal point after ``point`` of them,
    laid out as Python's ``repr`` does."""
    f = F()
    n = f.length(digits)
    e = point - 1
    scientific = f.concat(
        f.substring(digits, 1, 1),
        f.when(n > 1, f.concat(f.lit("."), f.call_function("substring", digits, f.lit(2))))
        .otherwise(f.lit("")),
        f.lit("e"), f.when(e < 0, f.lit("-")).otherwise(f.lit("+")),
        f.lpad(f.abs(e).cast("string"), 2, "0"))  # lpad cuts: 3 digits kept below
    scientific = f.when(f.abs(e) >= 100, f.concat(
        f.substring(scientific, 1, f.length(scientific) - 2), f.abs(e).cast("string"))
    ).otherwise(scientific)
    fixed = (f.when(point <= 0, f.concat(f.lit("0."), f.repeat(f.lit("0"), -point), digits))
             .when(point >= n, f.concat(digits, f.repeat(f.lit("0"), point - n), f.lit(".0")))
             .otherwise(f.concat(f.call_function("substring", digits, f.lit(1), point),
                                 f.lit("."), f.call_function("substring", digits, point + 1))))
    return (f.when(n == 0, f.lit("0.0"))
            .when((point < -3) | (point > 16), scientific)
            .otherwise(fixed))


def _variadic(kind):
    def extreme(t, *args):
        f = F()
        pick = f.least if kind == "min" else f.greatest
        if len(args) == 1:
            return args[0]
        if t == "unsigned":
            return flip(pick(*[flip(a) for a in args]))
        return pick(*args)
    return extreme


FUNCTORS = {
    "cat": lambda t, *args: F().concat(*args),
    "strlen": lambda t, s: F().char_length(s).cast("long"),
    "substr": _substr,
    "ord": _ord,
    "to_number": lambda t, x: to_integer(t, x, "number"),
    "to_unsigned": lambda t, x: to_integer(t, x, "unsigned"),
    "to_float": to_float,
    "to_string": text,
    "min": _variadic("min"),
    "max": _variadic("max"),
}


def range_values(call: Call, scope: Scope):
    """``range(lo, hi[, step])`` as an array Column, to be exploded: from ``lo``
    towards ``hi`` (excluded) by ``step`` (default 1 or -1); a zero step gives
    ``[lo]`` unless ``lo == hi``. Float ranges accumulate ``x += step`` as the
    local engine does."""
    f = F()
    t = arg_type(call, scope)
    args = [compile_expr(a, scope, t) for a in call.args]
    lo, hi = args[0], args[1]
    step = args[2] if len(args) == 3 else f.when(lo <= hi, f.lit(1)).otherwise(
        f.lit(-1)).cast("double" if t == "float" else "long")
    empty = f.array().cast(f"array<{'double' if t == 'float' else 'bigint'}>")
    going = ((step > 0) & (lo < hi)) | ((step < 0) & (lo > hi))
    if t == "float":
        count = f.ceil((hi - lo) / step).cast("int") + 2
        accumulated = f.aggregate(
            f.sequence(f.lit(1), f.greatest(count, f.lit(1))), f.array(lo),
            lambda acc, _: f.concat(acc, f.array(f.element_at(acc, -1) + step)))
        values = f.filter(accumulated, lambda v: f.when(step > 0, v < hi).otherwise(v > hi))
    else:
        values = f.sequence(lo, hi - f.signum(step).cast("long"), step)
    if t == "float":
        size = f.ceil((hi - lo) / step)
        endless = f.isnan(size) | (f.abs(size) == float("inf")) | (lo + step == lo)
    else:
        def exact(x):
            return unsigned_decimal(x) if t == "unsigned" else x.cast("decimal(20,0)")
        size = f.ceil((exact(hi) - exact(lo)) / exact(step))
        endless = f.lit(False)
    shown = f.concat(f.lit("range("), text(t, lo), f.lit(", "), text(t, hi), f.lit(", "),
                     text(t, step), f.lit(") "))
    return (f.when((step == 0) & (lo != hi), f.array(lo))
            .when(going & endless, fail(f.concat(shown, f.lit("never ends"))))
            .when(going & (size > RANGE_LIMIT), fail(f.concat(shown, f.lit(
                f"yields more than {RANGE_LIMIT:,} values, the limit of one range"))))
            .when(going, values)
            .otherwise(empty))


def is_valid_python_regex(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True
