"""The operator and functor tables: C-like integer semantics at 64 bits, typing,
and the edge cases where we chose a behaviour (see the module docstring)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from datalog.dialect.functors import (
    BINARY_OPS,
    COMPARISONS,
    FUNCTORS,
    NEGATED_CONSTRAINTS,
    NUMBER_MAX,
    NUMBER_MIN,
    UNARY_OPS,
    UNSIGNED_MAX,
    FunctorError,
)
from datalog.errors import EvaluationError

numbers = st.integers(NUMBER_MIN, NUMBER_MAX)
unsigneds = st.integers(0, UNSIGNED_MAX)
NN = ("number", "number")
UU = ("unsigned", "unsigned")


def binary(op, types=NN):
    return BINARY_OPS[op].resolve(types)


@given(numbers, numbers.filter(lambda b: b != 0))
def test_division_and_remainder_agree_like_c(a, b):
    q, r = binary("/")(a, b), binary("%")(a, b)
    # C: a == (a / b) * b + a % b, |r| < |b|, r has the sign of a (or is 0).
    assert binary("+")(binary("*")(q, b), r) == a
    assert abs(r) < abs(b)
    assert r == 0 or (r < 0) == (a < 0)


@given(st.sampled_from(sorted(BINARY_OPS)), numbers, numbers)
def test_integer_results_stay_in_64_bits(op, a, b):
    overload = binary(op)
    if overload is None:
        return
    try:
        result = overload(a, b)
    except FunctorError:
        assert op in "/%^" and (b == 0 or (op == "^" and a == 0))
        return
    assert NUMBER_MIN <= result <= NUMBER_MAX


@given(st.sampled_from(sorted(BINARY_OPS)), unsigneds, unsigneds)
def test_unsigned_results_stay_in_64_bits(op, a, b):
    overload = binary(op, UU)
    if overload is None:
        return
    try:
        result = overload(a, b)
    except FunctorError:
        return
    assert 0 <= result <= UNSIGNED_MAX


def test_overflow_wraps():
    assert binary("+")(NUMBER_MAX, 1) == NUMBER_MIN
    assert binary("*")(2**62, 4) == 0
    assert binary("/")(NUMBER_MIN, -1) == NUMBER_MIN
    assert binary("^")(2, 64) == 0
    assert binary("bshl")(1, 63) == NUMBER_MIN
    assert binary("bshl")(1, 64) == 1   # shift count modulo 64
    assert UNARY_OPS["-"].resolve(("number",))(NUMBER_MIN) == NUMBER_MIN


@given(st.sampled_from("+-*"), st.sampled_from([NN, UU]), st.data())
def test_inline_arithmetic_equals_the_function(op, types, data):
    # generated code writes + - * on integers in place of a call (Overload.inline)
    overload = binary(op, types)
    values = numbers if types == NN else unsigneds
    a, b = data.draw(values), data.draw(values)
    assert overload.inline is not None
    assert eval(overload.inline.format(repr(a), repr(b))) == overload(a, b)
    assert binary(op, ("float", "float")).inline is None   # NaN is checked by the call


def test_generated_rules_wrap_inline_arithmetic():
    import datalog

    session = datalog.Program("""
        .decl n(x: number)
        .decl u(x: unsigned)
        .decl r(x: number, y: number, z: number)
        .decl s(x: unsigned, y: unsigned)
        r(x + 1, x - (-x) - 2, x * x) :- n(x).
        s(x - 1u, x * 2u) :- u(x).
    """).session()
    session.insert("n", (NUMBER_MAX,))
    session.insert("u", (0,))
    assert session.query("r") == {(NUMBER_MIN, -4, 1)}
    assert session.query("s") == {(UNSIGNED_MAX, 0)}


def test_powers():
    power = binary("^")
    assert power(3, 4) == 81
    assert [power(2, -1), power(1, -5), power(-1, -3), power(-1, -2)] == [0, 1, -1, 1]
    with pytest.raises(FunctorError):
        power(0, -1)
    assert binary("^", ("float", "float"))(2.0, 0.5) == pytest.approx(2 ** 0.5)


def test_float_division_by_zero_is_an_error_not_inf():
    with pytest.raises(FunctorError, match="division by zero"):
        binary("/", ("float", "float"))(1.0, 0.0)


def test_functor_error_is_an_evaluation_error():
    assert issubclass(FunctorError, EvaluationError)


def test_typing_of_every_operator():
    assert BINARY_OPS["%"].result_type(("float", "float")) is None
    assert BINARY_OPS["band"].result_type(UU) == "unsigned"
    assert BINARY_OPS["+"].result_type(("number", "unsigned")) is None
    assert UNARY_OPS["-"].result_type(("unsigned",)) is None
    assert FUNCTORS["strlen"].result_type(("symbol",)) == "number"
    assert FUNCTORS["cat"].result_type(("symbol",) * 5) == "symbol"
    assert FUNCTORS["cat"].result_type(("symbol", "number")) is None
    assert FUNCTORS["cat"].result_type(()) is None
    assert FUNCTORS["to_float"].result_type(("number",)) == "float"
    assert FUNCTORS["range"].result_type(("float",) * 3) == "float"
    assert FUNCTORS["range"].result_type(("number",) * 4) is None
    assert FUNCTORS["range"].multi and not FUNCTORS["max"].multi
    for table in (BINARY_OPS, UNARY_OPS, FUNCTORS, COMPARISONS):
        for name, op in table.items():
            assert op.name == name and op.overloads and op.summary


def test_conversions():
    to = {name: FUNCTORS[name] for name in ("to_number", "to_unsigned", "to_float",
                                             "to_string")}
    assert to["to_number"].resolve(("symbol",))("-42") == -42
    assert to["to_number"].resolve(("symbol",))("0b101") == 5
    assert to["to_number"].resolve(("unsigned",))(UNSIGNED_MAX) == -1
    assert to["to_unsigned"].resolve(("number",))(-1) == UNSIGNED_MAX
    assert to["to_float"].resolve(("symbol",))("1e3") == 1000.0
    assert to["to_string"].resolve(("number",))(-7) == "-7"
    for bad in ("", "abc", "1.5", "1_000", "0x"):
        with pytest.raises(FunctorError, match="is not a number"):
            to["to_number"].resolve(("symbol",))(bad)
    with pytest.raises(FunctorError, match="out of range"):
        to["to_number"].resolve(("symbol",))(str(2**63))
    with pytest.raises(FunctorError):
        to["to_unsigned"].resolve(("symbol",))("-1")
    with pytest.raises(FunctorError):
        to["to_float"].resolve(("symbol",))("nan")
    with pytest.raises(FunctorError):
        to["to_number"].resolve(("float",))(float("inf"))


def test_substr_edges():
    substr = FUNCTORS["substr"].resolve(("symbol", "number", "number"))
    assert substr("hello", 0, 5) == "hello"
    assert substr("hello", 3, 100) == "lo"
    assert substr("hello", 5, 1) == ""
    assert substr("hello", 2, -1) == "llo"
    assert substr("hello", -1, 2) == ""


@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-5, 5))
def test_range_matches_soufflé(lo, hi, step):
    rng = FUNCTORS["range"].resolve(("number",) * 3)
    values = list(rng(lo, hi, step))
    if step == 0:
        assert values == ([lo] if lo != hi else [])
    else:
        assert values == list(range(lo, hi, step))
    two = list(FUNCTORS["range"].resolve(NN)(lo, hi))
    assert two == list(range(lo, hi, 1 if lo <= hi else -1))


def test_constraints_and_their_negations():
    for name, negated in NEGATED_CONSTRAINTS.items():
        for args in ((1, 2), (2, 2), (3, 2)):
            if COMPARISONS[name].resolve(("number", "number")) is None:
                args = tuple(str(a) for a in args)
                types = ("symbol", "symbol")
            else:
                types = ("number", "number")
            holds = COMPARISONS[name].resolve(types)(*args)
            assert holds != COMPARISONS[negated].resolve(types)(*args)


def test_match_is_a_full_match_and_bad_patterns_never_match():
    match = COMPARISONS["match"].resolve(("symbol", "symbol"))
    assert match("a.*", "abc") and not match("b", "abc")
    assert not match("(", "(")
