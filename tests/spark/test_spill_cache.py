"""Batched lookups and the cache of spilled traces (``engine.spark.spill_cache``),
on a real local Spark: a join sends at most one request per iteration, warm
keys send none, and answers stay exact under random updates, evictions and
failed transactions, against an in-memory session."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import datalog
from cli import main
from engine.operators.join import JoinNode, TraceNode
from engine.spark.spill import SpillingTrace

NONLINEAR = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), path(y, z).
"""

LINEAR = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def _cache(session):
    caches = {id(n.trace.cache): n.trace.cache for n in session._circuit.all_nodes
              if isinstance(n, TraceNode) and isinstance(n.trace, SpillingTrace)}
    assert len(caches) == 1          # one cache, shared by every spilled trace
    return next(iter(caches.values()))


def test_a_join_sends_one_request_per_iteration(spark, monkeypatch):
    # path ⋈ path: both sides spilled; without a cache every lookup misses, so
    # each iteration with both differences non-empty would take two requests
    # if the sides were looked up one by one.
    session = datalog.Program(NONLINEAR).session(spill_threshold=0, spill_cache=0)
    cache = _cache(session)
    calls = []
    original = JoinNode.join_spilled

    def counted(self, out, a, b, i):
        before = cache.requests
        original(self, out, a, b, i)
        spilled = sum(1 for delta, trace in ((a, self.right_trace), (b, self.left_trace))
                      if delta and isinstance(trace, SpillingTrace) and trace.part is not None)
        calls.append((spilled, cache.requests - before))

    monkeypatch.setattr(JoinNode, "join_spilled", counted)
    with session.transaction() as tx:
        tx.insert("edge", *[(n, n + 1) for n in range(6)])
    session.insert("edge", (6, 0))
    session.retract("edge", (3, 4))
    assert all(sent <= 1 for _, sent in calls), calls
    assert (2, 1) in calls                     # both sides read Spark, in one request
    assert cache.requests == sum(sent for _, sent in calls) > 3
    memory = datalog.Program(NONLINEAR).session()
    with memory.transaction() as tx:
        tx.insert("edge", *[(n, n + 1) for n in range(6)], (6, 0))
        tx.retract("edge", (3, 4))
    assert session.query("path") == memory.query("path")


def test_warm_keys_send_no_request(spark):
    session = datalog.Program(LINEAR).session(spill_threshold=0)
    cache = _cache(session)
    with session.transaction() as tx:
        tx.insert("edge", *[(n, (n * 3 + 1) % 9) for n in range(9)])
    session.retract("edge", (2, 7))
    session.insert("edge", (2, 7))
    cold = cache.requests
    assert cold > 0
    for _ in range(2):
        session.retract("edge", (2, 7))
        session.insert("edge", (2, 7))
    assert cache.requests == cold            # the same keys again: all from the cache
    assert 0 < cache.rows <= cache.budget


def test_a_cache_of_no_rows_still_answers_exactly(spark):
    memory, spilled = (datalog.Program(LINEAR).session(**options)
                       for options in ({}, {"spill_threshold": 0, "spill_cache": 0}))
    for session in (memory, spilled):
        with session.transaction() as tx:
            tx.insert("edge", (1, 2), (2, 3), (3, 1))
        session.retract("edge", (2, 3))
    assert spilled.query("path") == memory.query("path")
    assert _cache(spilled).rows == 0


edges = st.tuples(st.integers(0, 5), st.integers(0, 5))
updates = st.lists(st.lists(st.tuples(st.booleans(), edges), min_size=1, max_size=3),
                   min_size=1, max_size=6)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(updates)
# (1, 2)'s paths go, then a lookup of key 1 must not see them: a stale group
# of key 1 would bring back (0, 3)
@example([[(False, (0, 1))], [(True, (1, 3))], [(True, (0, 1))], [(False, (1, 2))],
          [(True, (2, 0))]])
# 5 hops: rolled back after paths into key 2, cached at iteration 0 (5 -> 0 ->
# 1 -> 2, ...), were spilled; reading key 2 again must not find them
@example([[(True, (2, 3)), (True, (3, 4)), (True, (5, 0))], [(True, (2, 4))],
          [(False, (0, 1)), (True, (4, 0))]])
def test_cache_stays_exact_under_random_updates(spark, txs):
    # max_iterations 5: a path of 5 hops makes the transaction fail and roll
    # back (in every session alike), so rollbacks meet the cache too. Budgets:
    # 2 rows evicts nearly everything at once, 40 some, the default nothing.
    memory = datalog.Program(LINEAR).session(max_iterations=5)
    spilled = {budget: datalog.Program(LINEAR).session(max_iterations=5, spill_threshold=1,
                                                       spill_cache=budget)
               for budget in (2, 40, 1_000_000)}
    sessions = [memory, *spilled.values()]
    for tx in [[(True, (0, 1)), (True, (1, 2)), (True, (4, 5))]] + txs:
        outcomes = []
        for session in sessions:
            try:
                with session.transaction() as t:
                    for insert, edge in tx:
                        (t.insert if insert else t.retract)("edge", edge)
                outcomes.append("ok")
            except datalog.DatalogError as error:
                outcomes.append(type(error).__name__)
        assert len(set(outcomes)) == 1, (tx, outcomes)
        for session in spilled.values():
            assert session.query("path") == memory.query("path"), tx
    for budget, session in spilled.items():
        assert _cache(session).rows <= budget
    assert _cache(spilled[1_000_000]).rows > 0


def test_spill_cache_needs_a_threshold_and_a_row_count(spark):
    program = datalog.Program(LINEAR)
    with pytest.raises(datalog.DatalogError, match="spill_cache is for spilled traces"):
        program.session(spill_cache=10)
    with pytest.raises(datalog.DatalogError, match="spill_cache must be a number of rows"):
        program.session(spill_threshold=0, spill_cache=-1)
    result = CliRunner().invoke(main, ["repl", "--spill-cache", "10"], input="")
    assert result.exit_code == 2 and "--spill-cache needs --spill-threshold" in result.output


def test_repl_with_spill_cache(spark):
    script = LINEAR + "edge(1, 2). edge(2, 3).\n-edge(1, 2).\nedge(1, 2).\n?- path(1, x).\n"
    result = CliRunner().invoke(main, ["repl", "--spill-threshold", "0", "--spill-cache", "5"],
                                input=script)
    assert result.exit_code == 0, result.output
    assert "path(1, 2)" in result.output and "path(1, 3)" in result.output
