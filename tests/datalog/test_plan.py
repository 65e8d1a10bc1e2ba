"""Lowering to the relational plan: join order, pushed-down filters and
constants, hoisted aggregates and ranges (the plan text is the contract the
executors and ``datalog plan`` read)."""

from __future__ import annotations

import pytest

from datalog.analysis.frontend import load
from datalog.errors import CheckError
from datalog.plan.ir import Aggregate, Antijoin, Assign, Filter, Join, Scan
from datalog.plan.lower import plan_program

DECLS = """
.decl e(x: number, y: number)
.decl v(x: number)
.decl s(a: symbol, x: number)
.decl f(x: float)
.decl out(x: number, y: number)
.decl fo(x: float)
"""


def rule(text: str):
    plan = plan_program(load(DECLS + text))
    (stratum,) = [s for s in plan.strata if s.rules]
    return stratum.rules[0]


def steps(text: str) -> list[str]:
    return [line.strip() for line in rule(text).describe().splitlines()[1:]]


def test_each_atom_joins_on_bound_variables():
    # v(z) shares nothing with e(x, y) until the second e binds z.
    assert steps("out(x, z) :- v(z), e(x, y), e(y, z).") == [
        "scan v -> [0]",
        "join e on e.1 = #0 -> +[0]",
        "join e on e.1 = #1 -> +[0]",
        "head (#2, #0)",
    ]


def test_the_most_constrained_atom_starts_and_constants_become_keys():
    assert steps('out(x, y) :- e(x, y), s("a", y).') == [
        "scan s where s.0 = 'a' -> [1]",
        "join e on e.1 = #0 -> +[0]",
        "head (#1, #0)",
    ]


def test_filters_and_negations_as_early_as_their_variables_are_bound():
    assert steps("out(x, y) :- e(x, y), e(y, z), x < 3, !v(x), z != y.") == [
        "scan e -> [0, 1]",
        "filter (#0 < 3)",
        "antijoin v on v.0 = #0",
        "join e on e.0 = #1 -> +[1]",
        "filter (#2 != #1)",
        "head (#0, #1)",
    ]


def test_equality_with_a_constant_is_substituted():
    r = rule("out(x, y) :- x = 4, e(x, y).")
    assert r.steps == (Scan("e", (1,), ((0, 4),)),)
    assert r.describe().splitlines()[-1] == "  head (4, #0)"


def test_assignments_and_ranges_bind_new_slots():
    r = rule("out(x, y) :- v(x), y = x * 2 + 1.")
    assert [type(s) for s in r.steps] == [Scan, Assign]
    r = rule("out(x, y) :- x = range(0, 3), e(x, y).")
    assert isinstance(r.steps[0], Assign) and r.steps[0].multi
    assert isinstance(r.steps[1], Join) and r.steps[1].key_columns() == (0,)


def test_numeric_constants_take_the_float_context():
    assert steps("fo(y) :- f(x), x > 1, y = x + 2.") == [
        "scan f -> [0]",
        "filter (#0 > 1.0)",
        "let #1 = (#0 + 2.0)",
        "head (#1)",
    ]


def test_aggregates_are_correlated_through_their_seed():
    r = rule("out(x, c) :- v(x), c = count : { e(x, _) }.")
    scan, agg = r.steps
    assert isinstance(agg, Aggregate) and agg.kind == "count" and agg.seed == (0,)
    assert agg.body == (Join("e", ((0, agg.body[0].keys[0][1]),), ()),)
    # a variable used only inside the aggregate is local to it
    r = rule("out(n, m) :- n = count : { e(x, _) }, m = max y : { e(x, y) }.")
    assert [s.seed for s in r.steps] == [(), ()]


def test_negation_keys_skip_wildcards():
    r = rule("out(x, y) :- e(x, y), !e(y, _).")
    assert r.steps[1] == Antijoin("e", ((0, r.steps[1].keys[0][1]),))


def test_ungrounded_variables_are_check_errors():
    with pytest.raises(CheckError):
        rule("out(x, y) :- v(x), y < x.")


def test_filter_steps_are_filters():
    r = rule('out(x, x) :- v(x), x != 2.')
    assert isinstance(r.steps[1], Filter)


def test_a_fact_is_evaluated_in_its_columns_type():
    plan = plan_program(load(DECLS + "fo(3 / 2). fo(1.5 + 1). v(7 - 2 * 3)."))
    assert plan.facts["fo"] == {(1.5,), (2.5,)} and plan.facts["v"] == {(1,)}


@pytest.mark.parametrize(("fact", "term", "message"), [
    ("fo(range(1, 3)).", "range(1, 3)", "`range` yields several values"),
    ("v(1 + range(1, 3)).", "range(1, 3)", "`range` yields several values"),
    ("v(2 * (1 / 0)).", "2 * (1 / 0)", "division by zero"),   # the argument
])
def test_a_fact_that_is_not_one_value_is_an_error_at_its_term(fact, term, message):
    with pytest.raises(CheckError) as caught:
        plan_program(load(DECLS + fact))
    (diagnostic,) = caught.value.diagnostics
    assert message in diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.column) == (DECLS.count("\n") + 1,
                                                              fact.index(term) + 1)
