"""Checks, types and stratification beyond the golden cases: the API and edge cases."""

from __future__ import annotations

import time

import pytest

from datalog.analysis.check import check, relation_types
from datalog.analysis.frontend import diagnose, load
from datalog.analysis.stratify import dependency_graph, stratify
from datalog.analysis.types import TypeTable
from datalog.errors import CheckError
from datalog.syntax.parser import parse


def messages(text: str, severity: str | None = None) -> list[str]:
    return [d.message for d in check(parse(text)) if severity in (None, d.severity)]


def test_relation_types_resolve_user_types():
    program = parse(".type Id <: number\n.type Alias = Id\n.type U = Id | Alias\n"
                    ".type F <: float\n.decl r(a: Id, b: Alias, c: U, d: F, e: unsigned)")
    assert relation_types(program) == {"r": ("number", "number", "number", "float",
                                             "unsigned")}


def test_relation_types_reject_unknown_types():
    with pytest.raises(CheckError, match="unknown type `Nope`"):
        relation_types(parse(".decl r(a: Nope)"))


def test_type_table_subtypes_and_meets():
    table = TypeTable(parse(".type A <: number\n.type B <: A\n.type C <: number\n"
                            ".type U = B | C\n.type S <: symbol"))
    assert table.is_subtype("B", "A") and table.is_subtype("B", "number")
    assert table.is_subtype("B", "U") and table.is_subtype("C", "U")
    assert not table.is_subtype("A", "B") and not table.is_subtype("U", "C")
    assert table.meet("A", "B") == "B" and table.meet("number", "C") == "C"
    assert table.meet("A", "C") is None and table.meet("S", "number") is None
    assert table.primitive("U") == "number" and table.primitive("S") == "symbol"


def test_all_errors_are_reported_sorted_by_place():
    text = (".decl e(x: number)\n.input e\n.decl p(x: number)\n"
            "p(x) :- q(x).\np(x) :- e(x), e(x, x).\np(y) :- e(x).\n")
    diags = check(parse(text))
    lines = [d.span.line for d in diags]
    assert lines == sorted(lines)
    assert [d.message for d in diags if d.severity == "error"] == [
        "undefined relation `q`", "relation `e` has 1 attribute, got 2 arguments",
        "variable `y` in the head is not bound in the body"]


def test_disjunction_reports_once():
    text = ".decl a(x: number)\n.input a\n.decl b(x: number)\nb(y) :- a(x) ; a(x).\n"
    assert messages(text, "error") == ["variable `y` in the head is not bound in the body"]


def test_aggregate_scopes():
    decls = ".decl e(x: number, y: number)\n.input e\n.decl d(x: number, n: number)\n"
    # x is a grouping variable bound outside; y is local to the aggregate.
    assert messages(decls + "d(x, n) :- e(x, _), n = count : { e(x, _y) }.") == []
    # The same local name in two aggregates is two variables.
    assert messages(decls + "d(a, b) :- a = sum y : { e(_, y) }, b = max y : { e(y, _) }."
                    ) == []
    # A variable used only inside the aggregate is not bound outside it.
    assert messages(decls + "d(x, n) :- n = sum x : { e(x, _) }.", "error") == [
        "variable `x` in the head is not bound in the body"]
    # An aggregate in another's target sees what that aggregate's body binds
    # (as the type checker and the lowering see it): `w` is bound by `w = y`.
    assert messages(decls + "d(x, s) :- e(x, _), s = sum (count : { e(y, z), z < w }) : "
                    "{ e(x, y), w = y }.", "error") == []


def test_deep_expressions_check_quickly():
    chain = "x"
    for _ in range(95):
        chain = f"(1 + {chain})"
    nested = "x"
    for _ in range(45):
        nested = f"min({nested}, 1)"
    text = (".decl r(x: number)\n.input r\n.decl p(x: number)\n"
            f"p(y) :- r(x), y = {chain}.\np(y) :- r(x), y = {nested}.\n")
    start = time.perf_counter()
    assert messages(text) == []
    assert time.perf_counter() - start < 5


def test_stratification_through_several_relations():
    text = (".decl a(x: number)\n.decl b(x: number)\n.decl c(x: number)\n.input a\n"
            "b(x) :- a(x), !c(x).\nc(x) :- b(x).\n")
    with pytest.raises(CheckError, match=r"`b` depends on itself through negation: "
                                         r"b -> !c -> b"):
        stratify(parse(text))
    assert any("b -> !c -> b" in d.message for d in diagnose(parse(text)))


def test_dependency_graph_edge_kinds():
    graph = dependency_graph(parse(
        ".decl a(x: number)\n.decl b(x: number)\n.decl c(x: number)\n"
        "b(x) :- a(x).\nc(n) :- a(x), !b(x), n = count : { b(_) }.\n"))
    assert graph.edges["a", "b"]["kind"] == "positive"
    assert graph.edges["b", "c"]["kind"] == "negative"  # the strongest kind wins
    assert graph.edges["a", "c"]["kind"] == "positive"


def test_load_expands_eqrel_and_keeps_warnings():
    checked = load(".decl same(a: number, b: number) eqrel\n.decl x(a: number)\n"
                   "same(1, 2).\nx(a) :- same(a, b).")
    (same,) = [s for s in checked.strata if s.relations == ("same",)]
    assert same.recursive and len(same.clauses) == 3
    assert [w.message for w in checked.warnings] == ["variable `b` occurs only once"]


def test_load_raises_every_error():
    with pytest.raises(CheckError) as info:
        load(".decl a(x: number)\nb(x) :- a(x).\nc(x) :- a(y).")
    assert len(info.value.errors) == 3  # b and c undefined, x unbound


def test_computed_values_fill_subtype_columns():
    text = (".type Id <: number\n.decl p(x: Id)\n.decl q(x: number)\n.input q\n.output p\n"
            "p(x) :- x = 1.\np(x) :- q(y), x = y + 1.\np(1).\n")
    assert messages(text) == []
    assert messages(text + "p(x) :- q(x).\n") == [
        "`x` has type `number` but column `x` of `p` has type `Id`"]
