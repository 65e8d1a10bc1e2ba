"""An aggregate whose body starts with the atom the rule scans (``c(x, n) :-
e(x, _), n = count : { e(x, _) }.``: Soufflé's way to write a group-by) needs
no join of its seeds with that relation: every row of it meets its seed
(datalog.backends.circuit.compile.scan_is_first_join). Such programs, and
near misses that must keep the join, against the reference evaluator over
random transactions, on rows and with every batch columnar; and the rewrite
taken exactly where it applies."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import datalog
from datalog.backends.circuit import compile
from engine.colbatch import columns_from
from tests.datalog.differential import run_differential, transactions

DECLS = """.decl e(x: number, y: number)
.decl v(x: number)
.decl s(a: symbol, x: number)
.decl f(a: symbol, p: float)
.decl c(x: number, n: number)
.decl m(a: symbol, p: float)
"""

#: (rule, whether the join is left out)
RULES = [
    ("c(x, n) :- e(x, _), n = count : { e(x, _) }.", True),
    ("c(x, n) :- e(x, _), n = sum y : { e(x, y) }.", True),
    ("c(y, n) :- e(_, y), n = min x : { e(x, y) }.", True),
    ("c(x, n) :- e(x, 2), n = count : { e(x, 2) }.", True),
    ("c(x, n) :- e(x, _), n = count : { e(x, y), y > 1 }.", True),
    ("c(x, n) :- e(x, _), n = max z : { e(x, y), e(y, z) }.", True),
    ("c(x, n) :- e(x, _), n = count : { e(x, y), !v(y) }.", True),
    ("c(x, n) :- e(x, y), n = sum z : { e(x, z) }, y < 3.", False),  # filtered seeds
    ("c(x, n) :- e(x, x), n = count : { e(x, _) }.", False),   # fewer seeds
    ("c(x, n) :- e(x, 1), n = count : { e(x, _) }.", False),
    ("c(x, n) :- e(x, _), n = count : { e(_, x) }.", False),   # another column
    ("c(x, n) :- v(x), e(x, _), n = count : { e(x, _) }.", False),
    ("c(x, n) :- e(x, _), x > 1, n = count : { e(x, _) }.", False),
    ("m(a, p) :- f(a, _), p = sum q : { f(a, q) }.", True),
    ("m(a, p) :- s(a, _), p = mean x : { s(a, x) }.", True),
]


def program_of(rule: str) -> str:
    return DECLS + rule + "\n"


def joins(rule: str) -> int:
    """The join nodes of the rule's circuit."""
    text = datalog.Program(program_of(rule)).describe()
    return sum(" operator join " in line for line in text.splitlines())


@pytest.mark.parametrize(("rule", "rewritten"), RULES)
def test_the_join_is_left_out_exactly_where_every_row_meets_its_seed(rule, rewritten):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compile, "scan_is_first_join", lambda scan, step: None)
        before = joins(rule)
    assert joins(rule) == before - rewritten


@pytest.mark.parametrize("columnar", [False, True], ids=["rows", "columns"])
@pytest.mark.parametrize("rule", [r for r, _ in RULES])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(txs=transactions(max_transactions=8))
def test_incremental_equals_reference(rule, columnar, txs):
    with columns_from(0 if columnar else None):
        run_differential(program_of(rule), txs)
