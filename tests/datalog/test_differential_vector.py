"""Filters and arithmetic on columns (engine.vector) against the reference
evaluator: random programs with arithmetic heads, assignments and comparisons,
every batch columnar; a program at a size where the default thresholds take
the vectorised path; and a division by zero met on columns, which gives the
row path's located error and changes nothing."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.errors import DatalogError
from engine import colbatch
from engine.colbatch import columns_from
from tests.datalog.differential import INPUTS, closure, run_differential, transactions

DECLS = "".join(f".decl {name}({', '.join(f'c{i}: {t}' for i, t in enumerate(types))})\n"
                for name, types in INPUTS.items())


@st.composite
def numeric(draw, names, depth: int = 2) -> str:
    """A number expression over the variables ``names`` (never divides by 0)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([*names, "3", "-2", "0"]))
    left, right = draw(numeric(names, depth - 1)), draw(numeric(names, depth - 1))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "band", "bor", "bxor", "bshl",
                               "bshr", "land", "lxor", "min", "max", "neg"]))
    if op in ("/", "%"):
        return f"({left} {op} (({right} band 3) + 1))"
    if op in ("min", "max"):  # (parenthesised: `0 + min(x, y) <= x` does not parse)
        return f"({op}({left}, {right}))"
    if op == "neg":
        return f"(-{left})"
    return f"({left} {op} {right})"


@st.composite
def comparison(draw, names) -> str:
    op = draw(st.sampled_from(["<", "<=", "!=", "=", ">", ">="]))
    return f"{draw(numeric(names, 1))} {op} {draw(numeric(names, 1))}"


@st.composite
def arithmetic_programs(draw) -> str:
    x = ("x", "y", "z")
    floats = draw(st.sampled_from(["p + q", "p * q - 1.0", "p / (q + 1.0)", "-p"]))
    lines = [
        ".decl r0(x: number, y: number)",
        f"r0(x, {draw(numeric(x))}) :- e(x, y), e(y, z), {draw(comparison(x))}.",
        ".decl r1(a: symbol, p: float)",
        f"r1(a, {floats}) :- f(a, p), f(a, q), p {draw(st.sampled_from(['<', '!=']))} q.",
        ".decl r2(a: symbol, x: number)",
        f"r2(a, x) :- s(a, x), s(b, y), a {draw(st.sampled_from(['=', '!=', '<']))} b, "
        f"{draw(comparison(x[:2]))}.",
        ".decl r3(x: number, y: number)",
        f"r3(x, y) :- r0(x, z), y = {draw(numeric(('x', 'z')))}, {draw(comparison(x))}.",
        ".decl r4(x: number, y: number)",
        "r4(x, y) :- e(x, y).",
        f"r4(x, z) :- r4(x, y), e(y, z), {draw(comparison(x))}.",
        ".decl r5(x: number, u: unsigned)",
        "r5(x, to_unsigned(x) * 3u + to_unsigned(y)) :- r4(x, y), x != y.",
    ]
    return DECLS + "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(arithmetic_programs(), transactions(max_transactions=5))
def test_arithmetic_and_filters_on_columns_equal_the_reference(text, txs):
    """A cycle of ``e`` first, so that ``r4`` (recursive: its batches leave
    the stratum in columns) is never empty and ``r5``'s stage runs on them."""
    before = colbatch.COUNTS["linear"]
    cycle = [("insert", "e", (0, 1)), ("insert", "e", (1, 2)), ("insert", "e", (2, 0))]
    with columns_from(0):
        run_differential(text, [cycle, *txs])
    assert colbatch.COUNTS["linear"] > before   # stages ran on columns


PROGRAM = """.decl edge(x: number, y: number)
.decl reach(x: number, y: number)
.decl cyclic(x: number)
.decl far(x: number, d: number)
.decl odd(x: number, y: number)
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
cyclic(x) :- reach(x, x).
far(x, (y - x) / 7) :- reach(x, y), x != y, y % 3 = 1.
odd(x, y) :- reach(x, y), z = x bxor y, z band 1 = 1, x < y.
"""


def expected(edges: set) -> dict:
    successors, reach = closure(edges)
    trunc = lambda a, b: abs(a) // b * (1 if a >= 0 else -1)  # noqa: E731 (C division)
    return {"reach": reach, "cyclic": {(x,) for x, y in reach if x == y},
            "far": {(x, trunc(y - x, 7)) for x, y in reach if x != y and y % 3 == 1},
            "odd": {(x, y) for x, y in reach if (x ^ y) & 1 and x < y}}


def test_filters_and_maps_go_columnar_by_default_and_equal_plain_loops():
    """A random graph of 300 nodes, 500 edges: ``reach`` leaves its stratum
    as a columnar batch of tens of thousands of rows, and the filters and
    arithmetic of ``cyclic``, ``far`` and ``odd`` run on its columns
    (counted); then a retraction and a re-insertion."""
    rng = random.Random(3)
    edges = sorted({(rng.randrange(300), rng.randrange(300)) for _ in range(500)})
    removed = edges[::50]
    session = datalog.Program(PROGRAM).session()
    before = colbatch.COUNTS["linear"]
    current: set = set()
    for inserts, retracts in ((edges, []), ([], removed), (removed, [])):
        with session.transaction() as tx:
            tx.insert("edge", *inserts)
            tx.retract("edge", *retracts)
        current = (current | set(inserts)) - set(retracts)
        want = expected(current)
        for name, rows in want.items():
            assert session.query(name) == rows, name
    assert len(want["reach"]) > colbatch.THRESHOLD
    assert colbatch.COUNTS["linear"] >= before + 3


DIVIDE = """.decl e(x: number, y: number)
.decl c(x: number, y: number)
.decl q(x: number, y: number)
c(x, y) :- e(x, y).
c(x, y) :- c(x, y), e(y, x).
q(x, y / (x - 5)) :- c(x, y).
"""


@pytest.mark.parametrize("threshold", [None, 0])
def test_a_division_by_zero_on_columns_is_the_row_paths_located_error(threshold):
    """``c`` leaves its recursive stratum as a columnar batch (9,000 rows:
    columnar by default too); the one with ``x = 5`` fails on columns and is
    run per row, which raises the row path's located error; the session
    keeps its state."""
    linear = colbatch.COUNTS["linear"]
    with columns_from(threshold):
        session = datalog.Program(DIVIDE).session()
        with session.transaction() as tx:
            for y in range(9000):
                tx.insert("e", (4, y))
        kept = session.query("q")
        batches = colbatch.COUNTS["row_batches"]
        with pytest.raises(DatalogError) as error:
            with session.transaction() as tx:
                for y in range(9000):
                    tx.insert("e", (5, y))
        assert session.query("q") == kept
        assert session.query("c") == {(4, y) for y in range(9000)}
    assert colbatch.COUNTS["linear"] > linear     # the first batch, on columns
    assert colbatch.COUNTS["row_batches"] == batches + 1
    message = str(error.value)
    assert "division by zero" in message and "<string>:6:1" in message
    small = datalog.Program(DIVIDE).session()
    with pytest.raises(DatalogError) as rows_error:
        with small.transaction() as tx:
            tx.insert("e", (5, 1))
    assert str(rows_error.value) == message
