"""Long, thin loops (a few rows per iteration, the short paths of the child
operators and the generated iteration: tests/engine/test_small_iterations.py)
against the reference evaluator: counters whose bound and steps the
transactions change, and a closure, through random transactions; and a
counter whose iterations are checked to take the short paths."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import datalog
from engine import colbatch
from engine.logtrace import LogTrace, RowLog
from engine.node import Export
from engine.operators.distinct import DistinctTraceNode
from engine.operators.join import NestedJoinNode
from engine.operators.sealed import SealedRuns
from tests.datalog.differential import run_differential, transactions

LOOPS = """
.decl e(x: number, y: number)
.decl v(x: number)
.decl s(a: symbol, x: number)
.decl f(a: symbol, p: float)
.decl c(n: number)
c(0).
c(n + 1) :- c(n), v(b), n < 4 * b.
.decl d(n: number, k: number)
d(0, 0).
d(n + y, k + 1) :- d(n, k), e(x, y), x < y, n + y < 12.
d(n + x, k) :- d(n, k), s(_, x), x > 0, n + x < 9.
.decl reach(x: number, y: number)
reach(x, y) :- e(x, y).
reach(x, z) :- reach(x, y), e(y, z).
.decl odd(n: number)
.decl even(n: number)
even(0).
odd(n + 1) :- even(n), c(n).
even(n + 1) :- odd(n), c(n), !v(n).
.decl t(a: symbol, n: number)
t(a, 0) :- s(a, _).
t(a, n + 1) :- t(a, n), v(b), n < b.
"""


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(transactions(max_transactions=8))
def test_thin_loops_equal_the_reference(txs):
    run_differential(LOOPS, txs)


def test_a_counter_takes_the_short_paths(monkeypatch):
    calls = {"join": 0, "join general": 0, "distinct": 0, "distinct rows": 0}

    def counting(cls, method, name):
        original = getattr(cls, method)

        def wrapper(self, *args):
            calls[name] += 1
            return original(self, *args)

        monkeypatch.setattr(cls, method, wrapper)

    counting(NestedJoinNode, "evaluate", "join")
    counting(NestedJoinNode, "evaluate_general", "join general")
    counting(DistinctTraceNode, "evaluate", "distinct")
    counting(DistinctTraceNode, "few_rows", "distinct rows")
    made = DistinctTraceNode.one_for

    def one_for(self, ready):  # (the generated loop's one-row formula: counted too)
        one = made(self, ready)

        def counted(row, w, i):
            calls["distinct rows"] += 1
            return one(row, w, i)

        return counted

    monkeypatch.setattr(DistinctTraceNode, "one_for", one_for)
    program = datalog.Program("""
        .decl bound(n: number)
        .decl c(n: number)
        c(0).
        c(n + 1) :- c(n), bound(b), n < b.
    """)
    session = program.session()
    looped = colbatch.COUNTS["loop_iterations"]
    session.insert("bound", (300,))
    assert session.query("c") == {(n,) for n in range(301)}
    # iteration 0 (the seed and the bound) and the empty last one aside,
    # every iteration took the short paths (the join's inline in the
    # generated loop: engine.schedule.Iteration.loop)
    looped = colbatch.COUNTS["loop_iterations"] - looped
    assert calls["join"] + looped >= 300 and calls["join general"] <= 2, calls
    assert calls["distinct rows"] >= 300, calls
    session.retract("bound", (300,))
    session.insert("bound", (120,))
    assert session.query("c") == {(n,) for n in range(121)}


def logged_from(monkeypatch, rows: int, keep: bool) -> None:
    """Key-less join traces go into logs of arrays (engine.logtrace) from
    iteration 0 once an epoch appended ``rows`` rows (``keep``: and stay
    there at commit, however small), and so do an Export's small batches."""
    monkeypatch.setattr(colbatch, "LONG_LOOP", 0)
    monkeypatch.setattr(colbatch, "LOG_FROM", rows)
    monkeypatch.setattr(colbatch, "EXPORT_LOG_FROM", rows)   # an epoch's difference: logged too
    if keep:
        monkeypatch.setattr(colbatch, "SMALL_STATE", 0)


THIN_ROWS = colbatch.THIN_ROWS


def sealed_from(monkeypatch, rows: int, keep: bool) -> None:
    """Distinct Traces seal their rows into runs (engine.operators.sealed) at
    every iteration once the epoch's dict holds ``rows`` (``keep``: and stay
    sealed at commit, however small)."""
    monkeypatch.setattr(colbatch, "LONG_LOOP", 0)
    monkeypatch.setattr(colbatch, "SEAL_ROWS", rows)
    monkeypatch.setattr(colbatch, "THIN_ROWS", 1 << 20)
    monkeypatch.setattr(DistinctTraceNode, "seal_mask", 0)
    if keep:
        monkeypatch.setattr(colbatch, "SMALL_STATE", 0)


@pytest.mark.parametrize("keep", [True, False], ids=["keep", "back"])
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(transactions(max_transactions=8))
def test_thin_loops_with_logged_and_sealed_traces_equal_the_reference(keep, txs):
    with pytest.MonkeyPatch.context() as monkeypatch:
        logged_from(monkeypatch, 2, keep=keep)
        sealed_from(monkeypatch, 2, keep=keep)
        run_differential(LOOPS, txs)


def test_a_long_counter_logs_and_seals_its_traces(monkeypatch):
    logged_from(monkeypatch, 50, keep=False)
    sealed_from(monkeypatch, 64, keep=False)
    monkeypatch.setattr(colbatch, "THIN_ROWS", THIN_ROWS)  # the default: a counter is thin
    seals = []
    original_seal = SealedRuns.seal
    monkeypatch.setattr(SealedRuns, "seal", lambda self, store: seals.append(len(store))
                        or original_seal(self, store))
    logged = []   # the lengths of the Export's logs read as a columnar batch
    original_batch = RowLog.batch
    monkeypatch.setattr(RowLog, "batch", lambda self: logged.append(len(self))
                        or original_batch(self))
    appends = []  # the iterations of the rows the log trace held (read as it seals them)
    original = LogTrace._seal
    monkeypatch.setattr(LogTrace, "_seal", lambda self: appends.extend(self.log[-2] if self.log
                                                                       else ()) or original(self))
    program = datalog.Program("""
        .decl bound(n: number)
        .decl c(n: number)
        c(0).
        c(n + 1) :- c(n), bound(b), n < b.
    """)
    session = program.session()
    session.insert("bound", (300,))
    assert session.query("c") == {(n,) for n in range(301)}
    assert len(appends) >= 240 and appends[-1] == 301, appends[-3:]  # (c(300) fed back)
    assert len(seals) >= 4 and set(seals[:4]) == {64}, seals
    assert logged and logged[-1] >= 250, logged
    with session.transaction() as tx:
        tx.retract("bound", (300,))
        tx.insert("bound", (120,))
    assert session.query("c") == {(n,) for n in range(121)}
    session.insert("bound", (200,))   # the past in dicts again (small), logged again
    assert session.query("c") == {(n,) for n in range(201)}
    assert appends[-1] == 201


def counting_sums(monkeypatch) -> tuple[list, list]:
    """The sizes of the epoch sums Distinct Traces give their Exports (read
    off the trace: engine.node.Export, ``summed``), and the number of rows
    each Export had summed when its Distinct went to packed runs (add_up)."""
    sums, adds = [], []
    original_sum = DistinctTraceNode.epoch_sum

    def epoch_sum(self):
        found = original_sum(self)
        sums.append(len(found))
        kinds.append(type(found).__name__)
        return found

    kinds = epoch_sum.kinds = []
    monkeypatch.setattr(DistinctTraceNode, "epoch_sum", epoch_sum)
    original_add = Export.add_up
    monkeypatch.setattr(Export, "add_up", lambda self: adds.append(
        len(self.reads[0].trace.cur)) or original_add(self))
    return sums, adds


COUNTER = """
    .decl start(n: number)
    .decl bound(n: number)
    .decl c(n: number)
    c(n) :- start(n).
    c(n + 1) :- c(n), bound(b), n < b.
"""


@pytest.mark.parametrize("sealed", [False, True], ids=["dicts", "sealed"])
def test_a_loop_with_no_past_reads_its_epoch_sum_off_the_distinct(monkeypatch, sealed):
    # c's Distinct Trace has no earlier epoch in the transaction that starts it:
    # once the loop is long and thin, its Export reads the epoch's sum off the
    # trace (rows of positive weight) at the end, instead of adding 301 one-row
    # outputs up
    monkeypatch.setattr(colbatch, "EXPORT_LOG_FROM", 50)  # (a long thin loop from 50 rows)
    if sealed:
        logged_from(monkeypatch, 50, keep=False)
        sealed_from(monkeypatch, 64, keep=False)
        monkeypatch.setattr(colbatch, "THIN_ROWS", THIN_ROWS)
    sums, adds = counting_sums(monkeypatch)
    session = datalog.Program(COUNTER).session()
    with session.transaction() as tx:
        tx.insert("start", (0,))
        tx.insert("bound", (300,))
    assert tx.delta.inserted["c"] == {(n,) for n in range(301)}
    assert not tx.delta.retracted.get("c")
    assert sums == [301] and adds == []
    # off sealed runs, a columnar batch
    assert DistinctTraceNode.epoch_sum.kinds[-1] == ("ColBatch" if sealed else "ZSet")
    # later epochs have a past: their outputs are added up as before
    delta = session.retract("bound", (300,))
    assert delta.retracted["c"] == {(n,) for n in range(1, 301)} and sums == [301]
    delta = session.insert("bound", (120,))
    assert delta.inserted["c"] == {(n,) for n in range(1, 121)}
    assert session.query("c") == {(n,) for n in range(121)}


def test_a_distinct_that_packs_mid_epoch_hands_its_sum_over(monkeypatch):
    # p's batches grow (a binary tree, level by level): the Export sums from the
    # level of 4 rows on, the Distinct Trace goes to packed runs at the level of
    # 8; the Export takes the 7 rows summed so far off the dicts and adds the
    # later outputs up
    monkeypatch.setattr(colbatch, "DISTINCT_ROWS", 8)
    monkeypatch.setattr(colbatch, "LOOP_ROWS", 8)
    monkeypatch.setattr(colbatch, "EXPORT_LOG_FROM", 2)  # summed from iteration 2 on
    sums, adds = counting_sums(monkeypatch)
    session = datalog.Program("""
        .decl e(x: number, y: number)
        .decl seed(x: number)
        .decl p(x: number)
        p(x) :- seed(x).
        p(y) :- p(x), e(x, y).
    """).session()
    with session.transaction() as tx:
        tx.insert("seed", (1,))
        tx.insert("e", [(x, y) for x in range(1, 32) for y in (2 * x, 2 * x + 1)])
    assert tx.delta.inserted["p"] == {(n,) for n in range(1, 64)}
    assert adds == [7] and sums == [7]
    delta = session.retract("e", (2, 4))
    assert delta.retracted["p"] == {(4,), (8,), (9,), (16,), (17,), (18,), (19,)} | {
        (n,) for n in range(32, 40)}
