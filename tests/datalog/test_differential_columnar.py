"""The columnar operators (engine.operators.columns) against the reference
evaluator: random programs with every batch columnar, and a program at a size
where the default per-batch choice takes the columnar paths."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings

import datalog
from datalog.syntax.parser import parse
from engine import colbatch
from engine.colbatch import columns_from
from tests.datalog.differential import programs, run_differential, transactions
from tests.reference import evaluate


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(max_transactions=6))
def test_incremental_equals_reference_with_every_batch_columnar(text, txs):
    """Symbols, floats, negation and aggregates included: what columns cannot
    hold goes back to rows."""
    with columns_from(0):
        run_differential(text, txs)


SIZED = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl far(x: number, y: number)
.decl sg(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
far(x, y + 1) :- path(x, y), !edge(x, y), x < 20.
sg(x, y) :- edge(p, x), edge(p, y), x != y.
sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).
"""


def test_columnar_paths_taken_by_default_and_equal_to_the_reference():
    """About 2,000 paths and 2,000 same-generation pairs: the recursive
    joins and distincts go columnar (counted); bulk load, a retraction of
    several edges (a past to correct), then their re-insertion with new
    edges."""
    rng = random.Random(5)
    edges = sorted({(rng.randrange(70), rng.randrange(70)) for _ in range(110)})
    removed = edges[::9]
    added = [(rng.randrange(70), rng.randrange(70)) for _ in range(6)]
    ast = parse(SIZED)
    session = datalog.Program(SIZED).session()
    before = dict(colbatch.COUNTS)
    current: set = set()
    for inserts, retracts in ((edges, []), ([], removed), (removed + added, [])):
        with session.transaction() as tx:
            for row in inserts:
                tx.insert("edge", row)
            for row in retracts:
                tx.retract("edge", row)
        current = (current | set(inserts)) - set(retracts)
        expected = evaluate(ast, {"edge": current})
        for name in ("path", "far", "sg"):
            assert session.query(name) == expected[name], name
    assert colbatch.COUNTS["join"] > before["join"]
    assert colbatch.COUNTS["distinct"] > before["distinct"]
