"""Incremental equals from scratch: random stratified programs, random
transaction sequences, the session checked against the reference evaluator after
every transaction (see :mod:`tests.datalog.differential`)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings

from tests.datalog.differential import (
    MUTUAL_RECURSION,
    MUTUAL_RECURSION_TXS,
    programs,
    run_differential,
    transactions,
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions())
@example(MUTUAL_RECURSION, MUTUAL_RECURSION_TXS)  # a cycle edge retracted
@example(  # aggregates with and without grouping over a symbol relation
    """.decl e(c0: number, c1: number)
.decl v(c0: number)
.decl s(c0: symbol, c1: number)
.decl r0(c0: symbol, c1: number)
r0(a, c) :- s(a, _), c = sum u : { s(a, u) }.
r0("all", c) :- v(_), c = count : { s(_, _) }.
r0(a, m) :- s(a, x), m = max u : { e(x, u) }, m > x.
""",
    [[("insert", "s", ("a", 1)), ("insert", "s", ("a", 2)), ("insert", "v", (0,))],
     [("insert", "e", (1, 4)), ("insert", "s", ("a", 1))], [("retract", "s", ("a", 2))],
     [("retract", "e", (1, 4)), ("retract", "s", ("b", 0))]])
def test_incremental_equals_reference(text, txs):
    run_differential(text, txs)

