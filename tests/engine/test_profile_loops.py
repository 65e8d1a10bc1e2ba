"""A profiled loop's rows out: what its exports add up over the epoch, however
they add it up (a dict, columnar parts, a log of a long thin loop, or the sum
read off a Distinct Trace at the end)."""

from __future__ import annotations

import pytest

import datalog
from engine import colbatch
from engine.node import ChildNode
from engine.profile import Profiler

COUNTER = """
.decl start(x: number)
.decl c(x: number)
c(x) :- start(x).
c(x + 1) :- c(x), x < {n}.
.output c
"""
CLOSURE = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.output path
"""


def loop_rows_out(session, change) -> int:
    profiler = Profiler(session._circuit).attach()
    change(session)
    return sum(entry[2] for node, stats in profiler.stats.items()
               if isinstance(node, ChildNode) for entry in stats.by_time.values())


@pytest.mark.parametrize("n", [50, colbatch.EXPORT_LOG_FROM + 5_000])
def test_a_counters_loop_emits_each_of_its_rows(n):
    # past EXPORT_LOG_FROM rows the export stops adding up: the epoch's sum is
    # read off the Distinct Trace at the end (engine.node.Export, summed)
    session = datalog.Program(COUNTER.format(n=n)).session()
    assert loop_rows_out(session, lambda s: s.insert("start", [(0,)])) == n + 1


def test_a_closures_loop_emits_each_path():
    nodes = 300  # 44,850 paths, batches large enough for columnar parts
    session = datalog.Program(CLOSURE).session()
    edges = [(i, i + 1) for i in range(nodes - 1)]
    assert loop_rows_out(session, lambda s: s.insert("edge", edges)) == nodes * (nodes - 1) // 2
