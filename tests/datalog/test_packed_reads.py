"""A session's reads of packed Distinct state equal its reads of dict state.

Two sessions of one program get the same random transactions: one with every
batch columnar (``columns_from(0)``: the Distincts' state packed into runs and
kept there), one with the defaults (small batches: dicts). After every
transaction each relation reads the same through ``size``, ``query`` (whole,
with a constant, with a repeated variable, by keyword), ``contains``,
``frame`` and ``to_arrow``; the packed session answers the relations of
numbers from the engine's columns (:meth:`Session._columns_of`), and the
relations of symbols and floats, which do not pack, from rows. Then a
program at a size where the default thresholds pack the state: reading it
leaves it packed, and single-fact updates take the small-batch path on it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from engine import colbatch
from engine.colbatch import columns_from
from tests.datalog.differential import closure

PROGRAM = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl hop(x: unsigned, y: number)
.decl named(x: symbol, y: number)
.decl scaled(x: number, y: float)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
hop(to_unsigned(x), z) :- edge(x, y), edge(y, z), x >= 0.
named(cat("n", to_string(x)), y) :- path(x, y).
scaled(x, to_float(y) / 2.0) :- path(x, y).
"""
RELATIONS = ("edge", "path", "hop", "named", "scaled")
CLOSURE = "\n".join(PROGRAM.splitlines()[:2] + PROGRAM.splitlines()[5:7])

pairs = st.tuples(st.integers(-2, 6), st.integers(-2, 6))
transactions = st.lists(st.tuples(st.lists(pairs, max_size=8), st.lists(pairs, max_size=4)),
                        min_size=1, max_size=4)


def reads(session, relation: str) -> dict:
    frame = session.frame(relation)
    arrow = session.to_arrow(relation)
    rows = sorted(session.query(relation))
    return {
        "size": session.size(relation),
        "rows": rows,
        "constant": session.query(f"{relation}(_, 2)") if relation != "named" else None,
        "equal": session.query(f"{relation}(x, x)") if relation in ("edge", "path") else None,
        "keyword": session.query(relation, y=3) if relation != "scaled" else None,
        "contains": [session.contains(relation, row) for row in rows[:3]],
        "frame": frame.to_dict("list"),
        "dtypes": frame.dtypes.astype(str).to_dict(),
        "arrow": arrow.to_pydict(),
        "schema": str(arrow.schema),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(transactions, st.data())
def test_packed_reads_equal_dict_reads(txs, data):
    with columns_from(0):
        packed = datalog.Program(PROGRAM).session()
    plain = datalog.Program(PROGRAM).session()
    for inserts, retracts in txs:
        current = sorted(plain.inputs("edge"))
        retracts = retracts + data.draw(st.lists(st.sampled_from(current), max_size=3)
                                        if current else st.just([]))
        for session, threshold in ((packed, 0), (plain, None)):
            with columns_from(threshold), session.transaction() as tx:
                tx.insert("edge", *inserts)
                tx.retract("edge", *retracts)
        with columns_from(0):
            for relation in RELATIONS:
                assert reads(packed, relation) == reads(plain, relation), relation
            for relation in ("named", "scaled", "edge"):  # symbols, floats, an input
                assert packed._columns_of(relation) is None
            if packed.size("path"):
                assert packed._columns_of("path") is not None  # read off the runs


def test_reading_packed_state_leaves_it_packed_and_small_updates_stay_cheap():
    """A random graph of 300 nodes and 600 edges at the default thresholds: its
    closure's Distinct state is packed by the load, and stays packed when read
    (size, frame, a query); single-edge updates then take the small-batch path
    (counted) and give the closure computed by plain loops."""
    rng = random.Random(7)
    edges = sorted({(rng.randrange(300), rng.randrange(300)) for _ in range(600)})
    session = datalog.Program(CLOSURE).session()
    session.insert("edge", *edges)
    _, path = closure(edges)
    assert session._columns_of("path") is not None  # packed by the load
    assert session.size("path") == len(path)
    assert len(session.frame("path")) == len(path)
    x = edges[0][0]
    assert session.query(f"path({x}, y)") == {p for p in path if p[0] == x}
    assert session._columns_of("path") is not None  # still packed
    before = colbatch.COUNTS["small_distinct"]
    current = set(edges)
    for edge in edges[:3] + [(1000, 1001)]:
        for op in ("retract", "insert"):
            getattr(session, op)("edge", edge)
            current = current - {edge} if op == "retract" else current | {edge}
            assert session.query("path") == closure(current)[1], (op, edge)
    assert colbatch.COUNTS["small_distinct"] > before
    assert session._columns_of("path") is not None


def test_unsigned_columns_read_from_packed_state():
    """An ``unsigned`` column read off packed runs is typed uint64, as from rows."""
    text = (".decl e(x: unsigned, y: unsigned)\n.decl r(x: unsigned, y: unsigned)\n"
            "r(x, y) :- e(x, y).\nr(x, z) :- r(x, y), e(y, z).\n")
    with columns_from(0):
        session = datalog.Program(text).session()
        session.insert("e", (1, 2), (2, 3), (3, 1))
        assert session._columns_of("r") is not None
        frame, arrow = session.frame("r"), session.to_arrow("r")
    assert frame.dtypes.astype(str).to_dict() == {"x": "uint64", "y": "uint64"}
    assert [str(t) for t in arrow.schema.types] == ["uint64", "uint64"]
    assert len(frame) == 9 and frame.iloc[0].tolist() == [1, 1]
    plain = datalog.Program(text).session()
    plain.insert("e", (1, 2), (2, 3), (3, 1))
    assert plain._columns_of("r") is None  # dicts
    assert frame.equals(plain.frame("r")) and arrow.equals(plain.to_arrow("r"))


def test_size_of_packed_state_is_counted_once_until_the_state_changes(monkeypatch):
    """``size`` on packed state counts the runs once and keeps the count until
    the state changes: a second read counts nothing; an update that adds or
    removes rows (through the small-batch overlays or the runs) gives the new
    size; a transaction that fails leaves the kept count right. Checked for a
    recursive stratum's Distinct Trace (packed at the default thresholds) and a
    root Distinct (packed with every batch columnar)."""
    from engine.operators.packedsmall import PackedCollection

    counted = []
    positive_keys = PackedCollection._positive_keys
    monkeypatch.setattr(PackedCollection, "_positive_keys",
                        lambda self: counted.append(1) or positive_keys(self))
    rng = random.Random(11)
    edges = sorted({(rng.randrange(300), rng.randrange(300)) for _ in range(600)})
    session = datalog.Program(CLOSURE).session()
    session.insert("edge", *edges)
    assert session._columns_of("path") is not None  # packed by the load
    current = set(edges)
    counted.clear()
    assert session.size("path") == session.size("path") == len(closure(current)[1])
    assert len(counted) == 1
    for op, edge in [("retract", edges[5]), ("insert", (2000, 2001)), ("insert", (2001, 5)),
                     ("insert", edges[5]), ("retract", (2001, 5))]:
        getattr(session, op)("edge", edge)
        current = current - {edge} if op == "retract" else current | {edge}
        before = len(counted)
        assert session.size("path") == session.size("path") == len(closure(current)[1])
        assert len(counted) == before + 1, (op, edge)
    with pytest.raises(datalog.DatalogError), session.transaction() as tx:
        tx.insert("edge", (3000, 3001))
        tx.insert("nope", (1,))
    assert session.size("path") == len(closure(current)[1])
    assert session._columns_of("path") is not None  # still packed

    text = ".decl e(x: number, y: number)\n.decl two(x: number, y: number)\n" \
           "two(x, z) :- e(x, y), e(y, z).\n"
    with columns_from(0):
        root = datalog.Program(text).session()
        root.insert("e", (1, 2), (2, 3), (3, 4))
        assert root._columns_of("two") is not None  # packed
        before = len(counted)
        assert root.size("two") == root.size("two") == 2
        assert len(counted) == before + 1
        root.insert("e", (4, 5))
        assert root.size("two") == 3
        root.retract("e", (2, 3))
        assert root.size("two") == 1 and root.query("two") == {(3, 5)}
