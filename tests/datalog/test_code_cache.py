"""Generated code is compiled once per source in a process (``engine.codegen.compiled``):
a second session of the same program compiles nothing and computes the same as the
first, and a session built after the cache was emptied (every source compiled anew)."""

from __future__ import annotations

import pytest

import datalog
from engine import codegen

PROGRAM = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl degree(x: number, n: number)
.decl lonely(x: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
degree(x, n) :- edge(x, _), n = count : { edge(x, _) }.
lonely(x) :- edge(_, x), !path(x, _), x + 1 > 0.
"""
EDGES = [(i, (i * 7 + 3) % 40) for i in range(40)] + [(50, 51)]


@pytest.fixture
def compiles(monkeypatch):
    """How many sources ``engine.codegen`` compiled."""
    calls = []

    def counting(source, filename, mode):
        calls.append(filename)
        return compile(source, filename, mode)

    monkeypatch.setattr(codegen, "compile", counting, raising=False)
    return calls


def answers() -> dict:
    session = datalog.Program(PROGRAM).session()
    with session.transaction() as tx:
        tx.insert("edge", *EDGES)
    session.retract("edge", EDGES[0])
    session.insert("edge", (60, 61))
    return {name: sorted(session.query(f"{name}(x, y)" if name != "lonely" else "lonely(x)"))
            for name in ("path", "degree", "lonely")}


def test_a_second_session_compiles_nothing_and_computes_the_same(monkeypatch, compiles):
    monkeypatch.setattr(codegen, "_code", {})
    first = answers()
    assert any(name.startswith("<rule") for name in compiles)       # datalog's functions
    assert any(name.startswith("<generated") for name in compiles)  # the engine's loops
    compiled_first = len(compiles)
    second = answers()
    assert len(compiles) == compiled_first
    monkeypatch.setattr(codegen, "_code", {})
    third = answers()
    assert len(compiles) > compiled_first   # (some loops are kept by their modules too)
    assert first == second == third
    assert first["lonely"] == [(0,), (51,), (61,)] and len(first["path"]) > len(EDGES)


def test_the_cache_keeps_the_latest_sources(monkeypatch, compiles):
    monkeypatch.setattr(codegen, "_code", {})
    monkeypatch.setattr(codegen, "CODE_CACHE_SIZE", 2)
    one, two = codegen.compiled("a = 1", "<one>"), codegen.compiled("b = 2", "<two>")
    assert codegen.compiled("a = 1", "<one>") is one
    codegen.compiled("c = 3", "<three>")                     # drops the oldest, <one>
    assert codegen.compiled("b = 2", "<two>") is two
    assert compiles == ["<one>", "<two>", "<three>"]
    codegen.compiled("a = 1", "<one>")
    assert compiles[-1] == "<one>"
    namespace: dict = {}
    exec(codegen.compiled("b = 2", "<two>"), namespace)
    assert namespace["b"] == 2
