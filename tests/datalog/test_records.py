"""Records and algebraic data types, end to end.

- Golden evaluations: each folder ``tests/records/<case>/`` holds ``<case>.dl``
  (its outputs printed with ``IO=stdout``), maybe ``facts/`` (its ``.input``
  files) and ``<case>.out``: what ``datalog run <case>.dl -F facts -D -`` prints.
  ``DATALOG_REGEN=1`` rewrites the ``.out`` files (review the diff).
- The API: rows with records and ADT values inserted, retracted and queried as
  tuples; bad rows rejected and the session unchanged.
- Incremental differential: random transactions over programs that build, take
  apart and compare records and ADT values (through recursion, negation and
  aggregates); after each one the session equals a fresh session given all the
  inputs at once, and the reported delta is exactly the change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.analysis.frontend import load
from datalog.dialect.records import ADTValue
from datalog.errors import DatalogError, EvaluationError
from tests.datalog.test_fuzz import pipeline
from tests.golden import assert_golden, cases, run_output

ROOT = Path(__file__).resolve().parent.parent / "records"
CASES = cases("records")


# ---------------------------------------------------------------- golden


def test_there_are_cases():
    assert len(CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_evaluation(case: Path):
    assert_golden(case, run_output(case))


# ---------------------------------------------------------------- API

PROGRAM = """
.type Pair = [a: number, b: symbol]
.type List = [head: number, tail: List]
.type Option = None {} | Some {value: Pair}
.decl item(p: Pair, l: List, o: Option)
.decl first(x: number, s: symbol)
first(x, s) :- item(_, _, $Some([x, s])).
.decl heads(x: number)
heads(x) :- item(_, [x, _], _).
"""


def test_rows_are_tuples_and_adt_values():
    session = datalog.Program(PROGRAM).session()
    row = ((1, "a"), (2, (3, ())), ("Some", (4, "d")))
    delta = session.insert("item", row)
    assert delta.inserted["first"] == {(4, "d")}
    assert delta.inserted["heads"] == {(2,)}
    (stored,) = session.query("item")
    assert stored == row
    assert isinstance(stored[2], ADTValue) and repr(stored[2]) == '$Some([4, "d"])'
    assert session.query('item([1, "a"], _, $Some([4, "d"]))') == {row}
    assert session.query("item(_, nil, _)") == frozenset()
    delta = session.retract("item", row)
    assert delta.retracted["first"] == {(4, "d")} and not session.query("heads")


@pytest.mark.parametrize("row, message", [
    (((1, "a"), (2, 3), ("None",)), "column l of `item` is List"),
    (((1, 2), (), ("None",)), "column p of `item` is Pair"),
    (((1, "a"), (), ("Other",)), "column o of `item` is Option"),
    (((1, "a"), (), ("Some", (1, "a"), 2)), "column o of `item` is Option"),
    (((1, "a", 3), (), ("None",)), "column p of `item` is Pair"),
])
def test_bad_rows_change_nothing(row, message):
    session = datalog.Program(PROGRAM).session()
    session.insert("item", ((1, "a"), (), ("None",)))
    with pytest.raises(datalog.DatalogError, match=message):
        session.insert("item", row)
    assert session.query("item") == {((1, "a"), (), ("None",))}


def test_spark_engine_refuses_records_with_a_located_error(tmp_path):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    with pytest.raises(datalog.DatalogError) as info:
        datalog.run(str(program), str(tmp_path), "-", engine="spark")
    text = str(info.value)
    assert text.startswith(f"{program}:5:12: error: the Spark engine cannot evaluate records")
    assert "local engine" in text
    with pytest.raises(datalog.DatalogError, match="traces cannot spill to Spark with records"):
        datalog.Program(PROGRAM).session(spill_threshold=10)


# ---------------------------------------------------------------- incremental

PATHS = """
.type Pair = [from: number, to: number]
.type List = [head: number, tail: List]
.type Shape = Circle {r: number} | Rect {w: number, h: number} | Dot {}
.decl n(x: number)
.decl edge(p: Pair)
.decl shape(s: Shape, tag: symbol)
.decl path(p: Pair)
path(p) :- edge(p).
path([x, z]) :- path([x, y]), edge([y, z]).
.decl list(l: List, k: number)
list(nil, 0).
list([x, l], k + 1) :- list(l, k), k < 3, n(x), (l = nil ; l = [h, _], x < h).
.decl elem(x: number)
elem(x) :- list([x, _], _).
.decl area(s: Shape, a: number)
area($Circle(r), 3 * r * r) :- shape($Circle(r), _).
area(s, w * h) :- shape(s, _), s = $Rect(w, h).
area($Dot, 0) :- shape($Dot(), _).
.decl unreached(p: Pair)
unreached([x, y]) :- n(x), n(y), !path([x, y]).
.decl big(s: Shape)
big(s) :- area(s, a), a > 3.
.decl paths(c: number)
paths(c) :- c = count : { path(_) }.
.decl tagged(t: symbol, s: Shape)
tagged(t, s) :- shape(s, t), s != $Dot.
"""

EXPRESSIONS = """
.type Expr = Num {n: number} | Add {l: Expr, r: Expr} | Neg {e: Expr}
.decl leaf(n: number)
.decl root(e: Expr)
.decl expr(e: Expr)
expr($Num(n)) :- leaf(n).
expr(e) :- root(e).
expr(l), expr(r) :- expr($Add(l, r)).
expr(x) :- expr($Neg(x)).
.decl value(e: Expr, v: number)
value($Num(n), n) :- expr($Num(n)).
value(e, a + b) :- expr(e), e = $Add(l, r), value(l, a), value(r, b).
value(e, -a) :- expr(e), e = $Neg(x), value(x, a).
.decl zero(e: Expr)
zero(e) :- value(e, 0), !leaf(0).
"""

NUMBERS = st.integers(0, 3)


def _shape():
    return st.one_of(st.builds(lambda r: ("Circle", r), NUMBERS),
                     st.builds(lambda w, h: ("Rect", w, h), NUMBERS, NUMBERS),
                     st.just(("Dot",)))


def _expr(depth: int = 2):
    leaf = st.builds(lambda n: ("Num", n), NUMBERS)
    if depth == 0:
        return leaf
    inner = _expr(depth - 1)
    return st.one_of(leaf, st.builds(lambda a, b: ("Add", a, b), inner, inner),
                     st.builds(lambda a: ("Neg", a), inner))


ROWS = {
    PATHS: {"n": st.tuples(NUMBERS),
            "edge": st.tuples(st.tuples(NUMBERS, NUMBERS)),
            "shape": st.tuples(_shape(), st.sampled_from(("a", "b")))},
    EXPRESSIONS: {"leaf": st.tuples(NUMBERS), "root": st.tuples(_expr())},
}


@st.composite
def scenario(draw):
    """A program and transactions over a few rows of each input (so that rows
    come back and go again)."""
    text = draw(st.sampled_from(sorted(ROWS)))
    pools = {name: draw(st.lists(rows, min_size=1, max_size=4))
             for name, rows in ROWS[text].items()}
    changes = st.tuples(st.sampled_from(sorted(pools)), st.booleans())
    txs = []
    for _ in range(draw(st.integers(1, 8))):
        tx = []
        for relation, insert in draw(st.lists(changes, min_size=1, max_size=5)):
            tx.append((relation, draw(st.sampled_from(pools[relation])), insert))
        txs.append(tx)
    return text, txs


def _contents(session) -> dict:
    return {name: session.query(name) for name in session.program.relations}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_incremental_equals_from_scratch(case):
    text, txs = case
    program = datalog.Program(text)
    session = program.session()
    inputs: dict[str, set] = {}
    before = _contents(session)
    for tx in txs:
        with session.transaction() as t:
            for relation, row, insert in tx:
                if insert:
                    t.insert(relation, row)
                else:
                    t.retract(relation, row)
        for relation, row, insert in tx:         # the last change of a row wins
            rows = inputs.setdefault(relation, set())
            (rows.add if insert else rows.discard)(row)
        scratch = program.session()
        with scratch.transaction() as s:
            for relation, rows in inputs.items():
                for row in rows:
                    s.insert(relation, row)
        after = _contents(session)
        assert after == _contents(scratch), (text, tx)
        for name in after:
            assert t.delta.inserted[name] == after[name] - before[name], name
            assert t.delta.retracted[name] == before[name] - after[name], name
        before = after


# ---------------------------------------------------------------- fact files

#: Symbols a line of a fact file can hold (no tab, no line break).
SYMBOLS = st.text(st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters="\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=6)


def _value(type_):
    from datalog.dialect.records import RecordType

    if type_ == "symbol":
        return SYMBOLS
    if type_ == "number":
        return st.integers(-(2 ** 63), 2 ** 63 - 1)
    if type_ == "float":
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(type_, RecordType):
        fields = [t for _, t in type_.fields]
        if type_ in fields:      # recursive: a short list
            return st.recursive(st.just(()), lambda rest: st.tuples(
                *[rest if t == type_ else _value(t) for t in fields]), max_leaves=3)
        return st.one_of(st.just(()), st.tuples(*map(_value, fields)))
    return st.one_of(*[st.tuples(st.just(name), *map(_value, (t for _, t in fields)))
                       .map(ADTValue) for name, fields in type_.branches.items()])


FILE_PROGRAM = """
.type Pair = [a: symbol, b: float]
.type List = [head: symbol, tail: List]
.type Tag = Named {name: symbol, p: Pair} | Plain {}
.decl r(p: Pair, l: List, t: Tag, n: number)
"""


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fact_files_read_back_what_is_written(tmp_path_factory, data):
    from datalog.dialect.io import format_rows, read_facts

    relation = datalog.Program(FILE_PROGRAM).plan.relations["r"]
    rows = data.draw(st.sets(st.tuples(*map(_value, relation.types)), max_size=5))
    path = tmp_path_factory.mktemp("facts") / "r.facts"
    path.write_text(format_rows(rows, relation), encoding="utf-8")
    assert read_facts(str(path), relation) == rows


# ---------------------------------------------------------------- fuzz

FUZZ_TYPES = """.type P = [a: number, b: symbol]
.type L = [h: number, t: L]
.type E = A {x: number} | B {} | C {p: P, e: E}
"""
FUZZ_COLUMNS = ["number", "symbol", "P", "L", "E"]


@st.composite
def fuzz_terms(draw, depth=0):
    kinds = ["var", "var", "num", "str", "nil", "_"]
    if depth < 3:
        kinds += ["record", "record", "ctor", "ctor", "as", "op"]
    kind = draw(st.sampled_from(kinds))
    if kind == "var":
        return draw(st.sampled_from(["x", "y", "z", "p", "l", "e"]))
    if kind == "num":
        return str(draw(st.integers(0, 3)))
    if kind == "str":
        return '"s"'
    if kind in ("nil", "_"):
        return kind
    args = draw(st.lists(fuzz_terms(depth + 1), max_size=3))
    if kind == "record":
        return f"[{', '.join(args)}]"
    if kind == "ctor":
        name = draw(st.sampled_from(["A", "B", "C", "D"]))
        return f"${name}({', '.join(args)})" if args or draw(st.booleans()) else f"${name}"
    if kind == "as":
        return f"as({draw(fuzz_terms(depth + 1))}, {draw(st.sampled_from(FUZZ_COLUMNS))})"
    return f"({draw(fuzz_terms(depth + 1))} + {draw(fuzz_terms(depth + 1))})"


VARIABLES = {"number": ["x", "y"], "symbol": ["s"], "P": ["p"], "L": ["l"], "E": ["e"]}


@st.composite
def typed_terms(draw, type_: str, depth=0, holes=False, ground=False):
    """Mostly a term of ``type_`` (a variable of that type, a constant, a record
    or constructor of it; no variable if ``ground``), sometimes any term."""
    if not ground and draw(st.integers(0, 29)) == 0:
        return draw(fuzz_terms(depth))
    if holes and draw(st.integers(0, 5)) == 0:
        return "_"
    if not ground and (draw(st.booleans()) or depth >= 3):
        return draw(st.sampled_from(VARIABLES[type_]))
    if ground and depth >= 3:
        return {"number": "1", "symbol": '"s"', "P": "nil", "L": "nil", "E": "$B"}[type_]
    sub = lambda t: typed_terms(t, depth + 1, holes, ground)  # noqa: E731
    if type_ == "number":
        return draw(st.one_of(st.just("1"), sub("number").map(lambda t: f"({t} + 1)")))
    if type_ == "symbol":
        return '"s"'
    if type_ == "P":
        record = f"[{draw(sub('number'))}, {draw(sub('symbol'))}]"
        return draw(st.sampled_from(["nil", record, f"as({record}, P)"]))
    if type_ == "L":
        return draw(st.sampled_from(["nil", f"[{draw(sub('number'))}, {draw(sub('L'))}]"]))
    return draw(st.sampled_from(["$B", "$B()", f"$A({draw(sub('number'))})",
                                 f"$C({draw(sub('P'))}, {draw(sub('E'))})"]))


@st.composite
def fuzz_programs(draw):
    lines = [FUZZ_TYPES]
    columns = {}
    for name in ("r", "s", "t"):
        columns[name] = draw(st.lists(st.sampled_from(FUZZ_COLUMNS), min_size=1, max_size=2))
        lines.append(f".decl {name}"
                     f"({', '.join(f'c{i}: {t}' for i, t in enumerate(columns[name]))})")

    def atom(name, holes, bound=None):
        args = []
        for t in columns[name]:
            arg = draw(typed_terms(t, holes=holes))
            if bound is not None and arg in VARIABLES[t]:
                bound.setdefault(t, set()).add(arg)
            args.append(arg)
        return f"{name}({', '.join(args)})"

    for _ in range(draw(st.integers(1, 5))):
        head = draw(st.sampled_from(sorted(columns)))
        body = []
        bound: dict[str, set] = {}
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["atom", "atom", "atom", "neg", "eq", "ne"]))
            if kind == "atom":
                body.append(atom(draw(st.sampled_from(sorted(columns))), True, bound))
            elif kind == "neg":
                body.append("!" + atom(draw(st.sampled_from(sorted(columns))), False))
            else:
                type_ = draw(st.sampled_from(FUZZ_COLUMNS))
                op = "=" if kind == "eq" else "!="
                body.append(f"{draw(typed_terms(type_, holes=op == '='))} {op} "
                            f"{draw(typed_terms(type_))}")
        # The head: a variable the body's atoms bind, or a constant term.
        args = [draw(st.sampled_from(sorted(bound[t]))) if bound.get(t) and draw(st.booleans())
                else draw(typed_terms(t, ground=True)) for t in columns[head]]
        clause = f"{head}({', '.join(args)})"
        lines.append(f"{clause} :- {', '.join(body)}." if body else f"{clause}.")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_programs())
def test_random_record_programs_check_and_run_agree(text):
    """Only located errors escape; a program that checks also compiles and runs
    (``datalog check`` and ``datalog run`` agree on what is valid)."""
    pipeline(text)
    try:
        load(text, "fuzz.dl")
    except DatalogError:
        return
    program = datalog.Program(text, "fuzz.dl")       # plans what checks
    try:
        session = program.session(max_iterations=30)
    except EvaluationError as e:                      # a divergent recursion, or 1 / 0
        assert e.diagnostics[0].span is not None, str(e)
        return
    for name in program.relations:
        session.query(name)
