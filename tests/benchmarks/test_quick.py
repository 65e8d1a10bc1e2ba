"""The benchmark harness on tiny sizes: every peer must agree with the engine.

This keeps the table honest: a peer that computed something else than the
engine (a wrong program, a missed rule, a different semantics) would make its
times meaningless, so every finished cell's relation sizes are compared with
the engine's and the Python loop's after the batch and after every update.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks import report, venvs, workloads
from benchmarks.measure import percentile
from benchmarks.peers import PEERS
from benchmarks.peers.python_loop import andersen, reach_negation_count, same_generation
from benchmarks.peers.python_loop import counter as counter_loop
from benchmarks.runner import Runner, Settings
from benchmarks.tc import seminaive

NOT_EXPRESSIBLE = {("networkx", "sg"), ("networkx", "andersen"), ("networkx", "negagg"),
                   ("pydbsp", "sg"), ("pydbsp", "negagg")}
# The counter (a per-iteration overhead row) is timed on the engine and the Python loop.
NOT_EXPRESSIBLE |= {(peer, "counter") for peer in PEERS if peer not in ("engine", "python")}


@pytest.fixture(scope="module")
def table():
    suite = workloads.suite("tiny")
    settings = Settings(timeout=60, update_budget=30, incremental_budget=30, grace=60, updates=3,
                        verify=True)
    cells = Runner(settings).run(suite)
    return suite, cells


def interpreter_available(peer: str) -> bool:
    """Whether this machine has a Python the peer's environment can be made
    with (then making it must work: a failed install fails the test)."""
    try:
        venvs.interpreter(venvs.ENVIRONMENTS[peer].python)
    except venvs.Unavailable:
        return False
    return True


def test_every_peer_runs_or_says_why_not(table):
    suite, cells = table
    assert len(cells) == len(suite) * len(PEERS)
    for workload in suite:
        for cell in (c for c in cells if c.workload == workload.name):
            if (cell.peer, workload.family) in NOT_EXPRESSIBLE:
                assert cell.status == "n/a" and cell.note, cell
            elif cell.peer in venvs.ENVIRONMENTS and not interpreter_available(cell.peer):
                assert cell.status == "unavailable" and "no Python >=" in cell.note
            else:
                assert cell.status == "ok", (cell.workload, cell.peer, cell.note)
                assert cell.note == "", (cell.workload, cell.peer, cell.note)
                planned = len(workloads.updates(workload, 3))
                assert len(cell.retract) == len(cell.insert) == planned
                assert cell.batch > 0 and cell.peak_rss > 0


def test_every_peer_agrees_with_the_engine(table):
    suite, cells = table
    for workload in suite:
        block = [c for c in cells if c.workload == workload.name]
        engine = next(c for c in block if c.peer == "engine")
        assert report.disagreements(block) == []
        for cell in block:
            if cell.status == "ok":
                assert cell.counts == engine.counts, (workload.name, cell.peer)
                assert cell.update_counts == engine.update_counts, (workload.name, cell.peer)
        # the updates change something: retracting a fact shrinks some relation
        assert any(counts != engine.counts for counts in engine.update_counts[0::2]) \
            or workload.family in ("negagg", "counter")


def test_the_rendered_table_names_every_workload_and_peer(table):
    suite, cells = table
    blocks = [(w, [c for c in cells if c.workload == w.name]) for w in suite]
    for markdown in (False, True):
        text = report.render(blocks, markdown=markdown)
        for workload in suite:
            assert workload.name in text
        assert "DISAGREEMENTS" not in text
        assert text.count("engine ") >= len(suite)


def test_a_disagreeing_peer_is_reported(table):
    suite, cells = table
    block = [c for c in cells if c.workload == suite[0].name]
    wrong = next(c for c in block if c.peer == "clingo")
    saved = wrong.counts
    wrong.counts = {"path": saved["path"] + 1}
    try:
        problems = report.disagreements(block)
    finally:
        wrong.counts = saved
    assert problems and "clingo" in problems[0]


def test_a_cell_over_its_timeout_is_reported_as_such():
    settings = Settings(timeout=0.5, update_budget=1, incremental_budget=1, grace=1, updates=1)
    runner = Runner(settings)
    big = workloads.make("chain", nodes=1500)
    cell = runner.cell(big, "pydatalog")
    assert cell.status == "timeout" and "batch not done" in cell.note
    skipped = runner.cell(workloads.make("chain", nodes=2000), "pydatalog")
    assert skipped.status == "skipped" and big.name in skipped.note


def test_generators_are_deterministic_and_sized_as_documented():
    assert workloads.suite("tiny") == workloads.suite("tiny")
    chain = workloads.make("chain", nodes=30)
    assert len(seminaive(chain.facts["edge"])) == 30 * 29 // 2
    depth = 4
    tree = workloads.make("tree", depth=depth)
    assert len(same_generation(tree.facts["par"])) == sum(4**d - 2**d for d in range(1, depth + 1))
    w = workloads.make("andersen", functions=4, variables=20)
    assert w.facts == workloads.make(**w.spec).facts
    assert all(x // 20 == y // 20 for rows in w.facts.values() for x, y in rows)
    assert len(andersen(w.facts)) > w.input_size() // 2
    counter = workloads.make("counter", bound=50)
    assert counter.facts == {"bound": [(50,)]} and workloads.updates(counter, 3) == []
    assert counter_loop(counter.facts["bound"]) == {(n,) for n in range(51)}
    updates = workloads.updates(w, 5)
    assert len(set(updates)) == 5 and all(row in w.facts[rel] for rel, row in updates)


def test_the_random_graph_of_the_full_table_has_654666_paths():
    graph = workloads.make("random", nodes=1000, edges=2000).facts["edge"]
    assert len(graph) == 2000 and len(set(graph)) == 2000
    assert len(seminaive(graph)) == 654_666


def test_negation_and_aggregate_loop_on_a_small_graph():
    facts = {"edge": [(1, 2), (2, 3), (3, 1), (3, 4)], "node": [(n,) for n in range(1, 6)]}
    out = reach_negation_count(facts)
    assert out["cyclic"] == {(1,), (2,), (3,)}
    assert out["acyclic"] == {(4,), (5,)}
    assert out["reach_count"] == {(1, 4), (2, 4), (3, 4)}


def test_percentile_interpolates_like_numpy():
    values = [random.Random(1).random() for _ in range(20)]
    ordered = sorted(values)
    assert percentile(values, 50) == pytest.approx((ordered[9] + ordered[10]) / 2)
    assert percentile(values, 95) == pytest.approx(ordered[18] + 0.05 * (ordered[19] - ordered[18]))
    assert percentile(values, 100) == ordered[-1]


def test_only_selects_workloads_by_prefix_and_peers_by_name():
    from benchmarks.__main__ import select

    suite = workloads.suite("tiny")
    chosen, peers = select(["tc-chain", "duckdb"], suite)
    assert [w.name for w in chosen] == ["tc-chain-12", "tc-chain-20"]
    assert peers == ["engine", "python", "duckdb"]
    chosen, peers = select([], suite)
    assert chosen == suite and peers == list(PEERS)
    with pytest.raises(SystemExit, match="no workload or peer named nope"):
        select(["nope"], suite)


def test_only_matches_whole_words_of_workload_names():
    from benchmarks.__main__ import select

    suite = workloads.suite("full")
    chosen, _ = select(["tc"], suite)
    assert [w.name for w in chosen] == ["tc-chain-1000", "tc-chain-2000", "tc-random-1000-2000"]
    chosen, _ = select(["tc-chain-1000"], suite)
    assert [w.name for w in chosen] == ["tc-chain-1000"]
    with pytest.raises(SystemExit, match="no workload or peer named counter-100000"):
        select(["counter-100000"], suite)   # not a prefix of the million's name


@pytest.mark.parametrize("module", ["benchmarks.workloads", "benchmarks.measure",
                                    "benchmarks.runner", "benchmarks.report",
                                    "benchmarks.peers.python_loop"])
def test_docstring_examples(module):
    import doctest
    import importlib

    failed, attempted = doctest.testmod(importlib.import_module(module))
    assert attempted > 0 and failed == 0


def test_the_table_compiles_the_engines_bytecode_first(tmp_path, monkeypatch):
    """The cells' compile figure must not include Python compiling the engine's source
    (where ``PYTHONDONTWRITEBYTECODE`` is set no cell would write it): the table
    writes the bytecode of every module of the packages first."""
    import importlib.util

    from benchmarks import runner

    sources = [tmp_path / package / name for package in runner.PACKAGES
               for name in ("__init__.py", "deep/__init__.py", "deep/module.py")]
    for source in sources:
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("VALUE = 1\n")
    monkeypatch.setattr(runner, "ROOT", str(tmp_path))
    runner.compile_bytecode()
    for source in sources:
        assert Path(importlib.util.cache_from_source(str(source))).is_file()
