"""Vectorised expressions (engine.vector, from datalog.backends.circuit.vectorise)
against the row path: random typed expressions over random columns, evaluated
per row by the plan's evaluator (Soufflé's semantics, datalog.dialect.functors)
and on the whole batch by numpy. Whenever the columns give an answer it is the
rows' answer; when a row raises (division by zero, NaN) the columns fall back.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from datalog.backends.circuit.vectorise import expression, stage_program
from datalog.dialect.functors import FunctorError
from datalog.plan.expressions import evaluate
from datalog.plan.ir import Assign, Call, Col, Const, Filter, Pack
from engine import vector
from engine.colbatch import ColBatch

TYPES = ("number", "unsigned", "float", "symbol")
#: The columns of every batch: two of each type.
COLUMNS = ("number", "number", "unsigned", "unsigned", "float", "float", "symbol", "symbol")
MIN, MAX = -(1 << 63), (1 << 63) - 1

numbers = st.one_of(st.integers(-5, 5), st.sampled_from([MIN, MAX, MIN + 1, MAX - 1, 64, -64]),
                    st.integers(MIN, MAX))
unsigneds = st.one_of(st.integers(0, 5), st.sampled_from([0, 1 << 63, (1 << 64) - 1, MAX]),
                      st.integers(0, (1 << 64) - 1))
floats = st.one_of(st.sampled_from([0.0, -0.0, 1.5, -2.5, math.inf, -math.inf, 1e300, 7.0]),
                   st.floats(allow_nan=False, width=64))
symbols = st.sampled_from(["a", "b", "", "ab", "B", "é", "a\x00", "12", " 0x1F", "-3"])
VALUES = {"number": numbers, "unsigned": unsigneds, "float": floats, "symbol": symbols}

ARITHMETIC = ["+", "-", "*", "/", "^"]
INTEGRAL = ["%", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor"]


def expressions(kind: str, depth: int = 3):
    """A random plan expression of type ``kind`` over the columns ``COLUMNS``."""
    slots = [i for i, t in enumerate(COLUMNS) if t == kind]
    leaves = st.one_of(st.sampled_from(slots).map(Col), VALUES[kind].map(Const))
    if depth == 0:
        return leaves
    sub = expressions(kind, depth - 1)
    options = [leaves]
    if kind == "symbol":   # functors of text: a Python call per distinct argument tuple
        small = st.integers(-1, 4).map(Const)
        return st.one_of(
            leaves,
            st.tuples(sub, sub).map(lambda t: Call("cat", t, ("symbol",) * 2)),
            st.tuples(sub, small, small).map(
                lambda t: Call("substr", t, ("symbol", "number", "number"))),
            st.sampled_from(("number", "unsigned", "float")).flatmap(
                lambda source: expressions(source, depth - 1).map(
                    lambda e: Call("to_string", (e,), (source,)))),
            st.tuples(sub, sub).map(lambda t: Call("max", t, ("symbol",) * 2)))
    binary = ARITHMETIC + (INTEGRAL if kind != "float" else [])
    options.append(st.tuples(st.sampled_from(binary), sub, sub).map(
        lambda t: Call(t[0], (t[1], t[2]), (kind, kind))))
    unary = ["bnot", "lnot"] if kind != "float" else []
    unary += ["-"] if kind != "unsigned" else []
    options.append(st.tuples(st.sampled_from(unary), sub).map(
        lambda t: Call(t[0], (t[1],), (kind,))))
    options.append(st.lists(sub, min_size=1, max_size=3).flatmap(
        lambda args: st.sampled_from(["min", "max"]).map(
            lambda op: Call(op, tuple(args), (kind,) * len(args)))))
    target = {"number": "to_number", "unsigned": "to_unsigned", "float": "to_float"}[kind]
    for source in ("number", "unsigned", "float"):
        options.append(expressions(source, depth - 1).map(
            lambda e, source=source: Call(target, (e,), (source,))))
    if kind == "number":
        options.append(expressions("float", depth - 1).map(
            lambda e: Call("ord", (e,), ("float",))))
        for name in ("strlen", "to_number", "ord"):
            options.append(expressions("symbol", depth - 1).map(
                lambda e, name=name: Call(name, (e,), ("symbol",))))
    return st.one_of(options)


def conditions():
    return st.sampled_from(TYPES).flatmap(lambda kind: st.tuples(
        st.sampled_from(["=", "!=", "<", "<=", ">", ">="]
                        + (["contains", "not_match"] if kind == "symbol" else [])),
        expressions(kind, 2), expressions(kind, 2)).map(
            lambda t: Call(t[0], (t[1], t[2]), (kind, kind))))


rows = st.tuples(*(VALUES[t] for t in COLUMNS))
tables = st.dictionaries(rows, st.integers(-3, 3).filter(bool), min_size=1, max_size=12)


def per_row(condition, assigned: list, project: list, table: dict):
    """The stage on rows, as the row path computes it: ``None`` when a row
    raises (the located error of the row path)."""
    out: dict = {}
    try:
        for row, weight in table.items():
            if not evaluate(condition, row):
                continue
            for expr in assigned:
                row = row + (evaluate(expr, row),)
            row = tuple(evaluate(e, row) for e in project)
            out[row] = out.get(row, 0) + weight
            if not out[row]:
                del out[row]
    except FunctorError:
        return None
    return out


def may_fall_back(expr) -> bool:
    """Whether ``expr`` holds an operation the columns hand to the rows even
    when the rows compute it: a float power (of a value that is not finite,
    or overflowing), a float converted to an integer out of ``int64``, the
    ``ord`` of a symbol (past 64 bits for long ones)."""
    if not isinstance(expr, Call):
        return False
    if (expr.op == "^" and expr.types[0] == "float") or (
            expr.op in ("to_number", "to_unsigned", "ord") and expr.types[0] == "float") \
            or (expr.op == "ord" and expr.types[0] == "symbol"):
        return True
    return any(may_fall_back(a) for a in expr.args)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(conditions(), st.lists(st.sampled_from(("number", "unsigned", "float")).flatmap(
    expressions), min_size=1, max_size=2), tables, st.data())
@example(Call("!=", (Col(0), Col(1)), ("number", "number")),
         [Call("/", (Col(0), Col(1)), ("number", "number"))],
         {(MIN, -1, 0, 0, 0.0, 0.0, "a", "a"): 1, (-7, 2, 0, 0, 0.0, 0.0, "a", "a"): 1,
          (7, -2, 0, 0, 0.0, 0.0, "a", "a"): 1, (-7, -2, 0, 0, 0.0, 0.0, "a", "b"): 1},
         None)
def test_vectorised_stage_equals_rows(condition, assigned, table, data):
    width = len(COLUMNS) + len(assigned)
    project = [Col(i) for i in range(width)]
    if data is not None:
        project = data.draw(st.lists(st.sampled_from(project), min_size=1, max_size=4))
    program = stage_program(None, [Filter(condition)] + [Assign(e) for e in assigned],
                            project=project)
    batch = ColBatch.from_rows(table)
    expected = per_row(condition, assigned, project, table)
    assert program is not None   # every operator generated has a columnar form
    try:
        found = vector.run(program, batch)
    except vector.Fallback:
        assert expected is None or any(map(may_fall_back, [condition, *assigned]))
        return
    assert expected is not None, "the rows raise: the columns must fall back"
    assert dict(found) == expected
    if found:   # the kinds from_rows would choose
        assert found.kinds == ColBatch.from_rows(dict(found)).kinds


@pytest.mark.parametrize("expr", [
    Call("range", (Col(0), Col(1)), ("number", "number")),
    Call("@f", (Col(0),), ("number",)),
    Call("autoinc", (), ()),
    Pack(None, (Col(0), Col(1))),
])
def test_expressions_without_columnar_form_stay_on_rows(expr):
    assert expression(expr) is None


def test_wrapping_and_c_division_on_columns():
    """The cases the dialect documents, on columns."""
    table = {(MAX, 1, -7, 2): 1, (MIN, -1, 7, -2): 1}
    batch = ColBatch.from_rows(table)
    items = [Call(op, (Col(a), Col(b)), ("number", "number"))
             for op, a, b in (("+", 0, 1), ("/", 0, 1), ("/", 2, 3), ("%", 2, 3),
                              ("bshr", 2, 3), ("bshru", 2, 3), ("^", 2, 3))]
    program = stage_program(None, [], project=items)
    assert sorted(vector.run(program, batch)) == sorted(
        tuple(evaluate(e, row) for e in items) for row in table)
    assert sorted(vector.run(program, batch)) == [
        (MIN, MAX, -3, -1, -2, (1 << 62) - 2, 49), (MAX, MIN, -3, 1, 0, 0, 0)]


def test_integer_overflow_raises_no_numpy_warning():
    batch = ColBatch.from_rows({(MAX, MIN): 1})
    program = stage_program(None, [], project=[
        Call("*", (Col(0), Col(0)), ("number", "number")),
        Call("-", (Col(1), Const(1)), ("number", "number")),
        Call("-", (Col(1),), ("number",))])
    with np.errstate(all="raise"):
        assert dict(vector.run(program, batch)) == {(1, MAX, MIN): 1}


def test_steps_after_a_filter_that_drops_every_row():
    """Later steps run on no rows: ranking symbols, a call, arithmetic."""
    batch = ColBatch.from_rows({(1, "a", "b"): 1, (2, "c", "c"): 1})
    program = stage_program(None, [
        Filter(Call("=", (Col(0), Const(9)), ("number", "number"))),
        Filter(Call("<", (Col(1), Col(2)), ("symbol", "symbol"))),
        Assign(Call("strlen", (Col(1),), ("symbol",))),
        Assign(Call("/", (Col(0), Col(3)), ("number", "number")))],
        project=[Col(4), Col(1)])
    assert dict(vector.run(program, batch)) == {}
