"""The reference evaluator itself: each feature of the dialect on a tiny program
whose answer is worked out by hand, plus transitive closure against a plain
Python closure on random graphs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datalog.errors import EvaluationError
from datalog.syntax.parser import parse
from tests.reference import evaluate, strata


def run(text: str, **inputs) -> dict:
    return evaluate(parse(text), inputs)


EDGE = ".decl edge(x: number, y: number)\n"


def test_transitive_closure_with_a_cycle():
    out = run(EDGE + """
        .decl path(x: number, y: number)
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), edge(y, z).
    """, edge={(1, 2), (2, 1), (2, 3)})
    assert out["path"] == {(1, 2), (2, 1), (2, 3), (1, 1), (2, 2), (1, 3)}


@settings(max_examples=50, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_transitive_closure_equals_a_python_closure(edges):
    closure = set(edges)
    while True:
        more = {(a, d) for a, b in closure for c, d in edges if b == c} - closure
        if not more:
            break
        closure |= more
    out = run(EDGE + """
        .decl path(x: number, y: number)
        path(x, y) :- edge(x, y).
        path(x, z) :- edge(x, y), path(y, z).
    """, edge=edges)
    assert out["path"] == closure


def test_facts_with_constant_expressions_and_multiple_heads():
    out = run("""
        .decl a(x: number)
        .decl b(x: number)
        .decl c(x: symbol)
        a(1 + 2 * 3). c(cat("x", "y")).
        a(x), b(x + 1) :- a(x), x < 7.
    """)
    assert out["a"] == {(7,)} and out["b"] == set() and out["c"] == {("xy",)}
    out = run("""
        .decl a(x: number)
        .decl b(x: number)
        a(1).
        a(x), b(x) :- x = 5.
    """)
    assert out["a"] == {(1,), (5,)} and out["b"] == {(5,)}


def test_disjunction():
    out = run(EDGE + """
        .decl r(x: number)
        r(x) :- edge(x, 1) ; edge(1, x).
    """, edge={(5, 1), (1, 6), (7, 8)})
    assert out["r"] == {(5,), (6,)}


def test_stratified_negation_reads_the_complete_lower_stratum():
    # `unreached` is written before the rules of `reach`, and still sees all of it.
    out = run(EDGE + """
        .decl node(x: number)
        .decl reach(x: number)
        .decl unreached(x: number)
        unreached(x) :- node(x), !reach(x).
        reach(1).
        reach(y) :- reach(x), edge(x, y).
        node(x) :- edge(x, _) ; edge(_, x).
    """, edge={(1, 2), (2, 3), (4, 5)})
    assert out["unreached"] == {(4,), (5,)}
    order = [sorted(s) for s in strata(parse(EDGE + """
        .decl reach(x: number)
        .decl unreached(x: number)
        unreached(x) :- edge(x, _), !reach(x).
        reach(y) :- reach(x), edge(x, y).
    """))]
    assert order.index(["reach"]) < order.index(["unreached"])


def test_negation_with_wildcards_and_constants():
    out = run(EDGE + """
        .decl sink(x: number)
        .decl not_to_one(x: number)
        sink(y) :- edge(_, y), !edge(y, _).
        not_to_one(x) :- edge(x, _), !edge(x, 1).
    """, edge={(1, 2), (2, 1), (2, 3), (3, 4)})
    assert out["sink"] == {(4,)}
    assert out["not_to_one"] == {(1,), (3,)}


def test_mutual_recursion():
    out = run("""
        .decl even(x: number)
        .decl odd(x: number)
        even(0).
        odd(x + 1) :- even(x), x < 5.
        even(x + 1) :- odd(x), x < 5.
    """)
    assert out["even"] == {(0,), (2,), (4,)} and out["odd"] == {(1,), (3,), (5,)}


AGG = """
    .decl emp(name: symbol, dept: symbol, salary: number)
    .decl dept(d: symbol)
    .decl stats(d: symbol, n: number, total: number)
    .decl lo(d: symbol, s: number)
    .decl avg(d: symbol, s: float)
    stats(d, n, t) :- dept(d), n = count : { emp(_, d, _) }, t = sum s : emp(_, d, s).
    lo(d, m) :- dept(d), m = min s : { emp(_, d, s) }.
    avg(d, m) :- dept(d), m = mean s : { emp(_, d, s) }.
"""


def test_aggregates_are_correlated_and_count_every_solution():
    out = run(AGG, dept={("a",), ("b",), ("empty",)},
              emp={("x", "a", 10), ("y", "a", 10), ("z", "a", 40), ("w", "b", 5)})
    # two employees earn 10 in `a`: both count, both are summed
    assert out["stats"] == {("a", 3, 60), ("b", 1, 5), ("empty", 0, 0)}
    # min and mean of nothing have no value: no row for `empty`
    assert out["lo"] == {("a", 10), ("b", 5)}
    assert out["avg"] == {("a", 20.0), ("b", 5.0)}


def test_aggregate_without_grouping_and_max_over_an_expression():
    out = run(EDGE + """
        .decl n(c: number)
        .decl far(m: number)
        n(c) :- c = count : edge(_, _).
        far(m) :- m = max x + y : { edge(x, y) }.
    """, edge={(1, 2), (5, 1)})
    assert out["n"] == {(2,)} and out["far"] == {(6,)}


def test_literals_wait_for_their_variables():
    out = run(EDGE + """
        .decl r(x: number, y: number)
        r(x, y) :- y = x * 10, x > 1, edge(x, _).
    """, edge={(1, 2), (2, 3), (3, 1)})
    assert out["r"] == {(2, 20), (3, 30)}


def test_range_and_string_functors():
    out = run("""
        .decl r(x: number)
        .decl s(x: symbol, n: number)
        .decl down(x: number)
        r(x) :- x = range(0, 10, 3).
        down(x) :- x = range(3, 0).
        s(w, strlen(w)) :- r(x), w = cat("n", to_string(x)), !match("n[0-3]", w).
    """)
    assert out["r"] == {(0,), (3,), (6,), (9,)}
    assert out["down"] == {(3,), (2,), (1,)}
    assert out["s"] == {("n6", 2), ("n9", 2)}


def test_numeric_literals_take_the_type_of_their_context():
    out = run("""
        .decl f(x: float)
        .decl u(x: unsigned)
        .decl g(x: float)
        .decl v(x: unsigned)
        f(1). u(0).
        g(x / 2) :- f(x).
        v(x - 1) :- u(x).
    """)
    assert out["f"] == {(1.0,)} and isinstance(next(iter(out["f"]))[0], float)
    assert out["g"] == {(0.5,)}
    assert out["v"] == {(2**64 - 1,)}


def test_functor_errors_name_the_place():
    with pytest.raises(EvaluationError) as caught:
        run(EDGE + ".decl r(x: number)\nr(x / y) :- edge(x, y).", edge={(1, 0)})
    assert "division by zero" in str(caught.value)
    assert (caught.value.line, caught.value.column) == (3, 3)


def test_unbound_head_variables_and_unknown_inputs_are_errors():
    with pytest.raises(EvaluationError, match="not bound"):
        run(EDGE + ".decl r(x: number)\nr(z) :- edge(_, _).", edge={(1, 2)})
    with pytest.raises(EvaluationError, match="undeclared"):
        run(EDGE, nope={(1,)})


def test_input_rows_must_fit_their_relation():
    with pytest.raises(EvaluationError, match="has 3 values"):
        run(EDGE, edge={(1, 2, 3)})


def test_eqrel_relations_are_equivalence_closures():
    out = run("""
        .decl same(a: number, b: number) eqrel
        .decl link(a: number, b: number)
        .decl other(a: number)
        same(1, 2). same(3, 2).
        same(a, b) :- link(a, b).
        other(a) :- same(a, 1), a != 1.
    """, link={(5, 4), (4, 3)})
    group = {1, 2, 3, 4, 5}
    assert out["same"] == {(a, b) for a in group for b in group}
    assert out["other"] == {(a,) for a in group - {1}}


def test_nested_aggregates_and_aggregates_in_the_head():
    out = run("""
        .decl e(x: number, y: number)
        .decl n(c: number)
        .decl busiest(c: number)
        e(1, 2). e(1, 3). e(2, 3). e(4, 1).
        n(count : { e(_, y) }) :- e(_, y), y > 2.
        // the largest out-degree: max over sources x of the count of x's edges
        busiest(m) :- m = max c : { e(x, _), c = count : { e(x, _) } }.
    """)
    # in the head, y groups: the edges into 3 (the only y > 2) are counted
    assert out["n"] == {(2,)} and out["busiest"] == {(2,)}


def test_aggregate_bodies_with_negation_and_comparisons():
    out = run("""
        .decl e(x: number, y: number)
        .decl blocked(x: number)
        .decl n(x: number, c: number)
        e(1, 2). e(1, 3). e(1, 4). e(2, 9).
        blocked(3).
        n(x, c) :- e(x, _), c = count : { e(x, y), !blocked(y), y < 9 }.
    """)
    assert out["n"] == {(1, 2), (2, 0)}


def test_sums_of_floats_and_unsigned():
    out = run("""
        .decl f(x: float)
        .decl u(x: unsigned)
        .decl t(a: float, b: unsigned)
        f(0.5). f(1.25). u(1). u(2).
        t(a, b) :- a = sum x : f(x), b = sum y : u(y).
    """)
    assert out["t"] == {(1.75, 3)}


def test_an_aggregate_target_shadows_a_variable_outside():
    out = run(EDGE + """
        .decl top(x: number, m: number)
        top(x, m) :- edge(x, _), m = max x : edge(_, x).
        .decl self(a: number)
        self(a) :- a = max a : edge(a, _).
    """, edge={(1, 5), (2, 3)})
    assert out["top"] == {(1, 5), (2, 5)}
    assert out["self"] == {(2,)}
