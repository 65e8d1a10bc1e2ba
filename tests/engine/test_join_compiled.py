"""A join compiles its loops once per kind of the traces it reads: a trace that
changes kind every epoch (runs while a large delta reads it, dicts again at
the commit while small) reuses the loops compiled for each kind."""

from __future__ import annotations

import datalog
from engine import colbatch
from engine.columnar import ColumnarTrace
from engine.operators import join
from engine.trace import Trace

CLOSURE = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_a_trace_changing_kind_every_epoch_compiles_each_kind_once(monkeypatch):
    compiled, kinds, prepared = [], set(), []
    compile_join, prepare = join.compile_join, join.JoinNode.prepare

    def counting_compile(*args):
        compiled.append(1)
        return compile_join(*args)

    def seeing_prepare(node):
        prepare(node)
        kinds.add(node.compiled_for)
        prepared.append(1)

    monkeypatch.setattr(join, "compile_join", counting_compile)
    monkeypatch.setattr(join.JoinNode, "prepare", seeing_prepare)
    edges = [(i, i + 1) for i in range(200)]  # loops of 100 iterations: past LONG_LOOP
    with colbatch.columns_from(16, state=100_000):
        colbatch.COMMIT_ROWS = 10**9  # (restored with the rest): back to dicts at commit
        session = datalog.Program(CLOSURE).session()
        session.insert("edge", *edges)
        for _ in range(4):
            session.retract("edge", (100, 101))
            session.insert("edge", (100, 101))
    assert {(Trace, Trace), (ColumnarTrace, Trace)} <= kinds
    assert len(prepared) >= 16              # the path trace changed kind at every epoch
    assert len(compiled) == len(kinds)      # and each kind was compiled once
    assert session.size("path") == 200 * 201 // 2
