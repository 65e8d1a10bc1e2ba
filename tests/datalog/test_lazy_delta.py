"""A session's Delta keeps the engine's differences as they came (columns for a
large recursive relation) and makes rows only when asked (datalog.changes):
what it answers must be what an eager Delta of the same rows answers, however
late it is asked, and whatever the session did since."""

from __future__ import annotations

import random

import numpy as np
import pytest

import datalog
from datalog.changes import Changes
from datalog.plan.ir import RelationPlan
from engine.colbatch import ColBatch, columns_from

CLOSURE = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def closure(edges: set) -> set:
    path, new = set(edges), set(edges)
    while new:
        new = {(x, w) for x, y in new for v, w in edges if v == y} - path
        path |= new
    return path


def eager(delta: datalog.Delta) -> datalog.Delta:
    """The same changes as an eager Delta (sets given)."""
    return datalog.Delta({n: set(delta.inserted[n]) for n in delta.inserted},
                         {n: set(delta.retracted[n]) for n in delta.retracted})


@pytest.mark.parametrize("columnar", [True, False])
def test_a_delta_asked_late_says_what_its_transaction_changed(columnar):
    """Deltas kept unread while later transactions (and a dry run) change the
    session: read afterwards, each gives its own transaction's rows, counts,
    iteration, frame and equality; with every batch columnar the recursive
    relation's difference is kept in columns."""
    rng = random.Random(3)
    edges = {(rng.randrange(40), rng.randrange(40)) for _ in range(70)}
    removed = set(sorted(edges)[::7])
    added = {(rng.randrange(40), rng.randrange(40)) for _ in range(5)} - edges
    with columns_from(0 if columnar else None):
        session = datalog.Program(CLOSURE).session()
        deltas, expected, current = [], [], set()
        for inserts, retracts in ((edges, set()), (set(), removed), (removed | added, set())):
            before = closure(current)
            with session.transaction() as tx:
                tx.insert("edge", sorted(inserts))
                tx.retract("edge", sorted(retracts))
            current = (current | inserts) - retracts
            after = closure(current)
            deltas.append(tx.delta)
            expected.append((after - before, before - after))
            with session.transaction(dry_run=True) as dry:
                dry.retract("edge", *sorted(current)[:3])
        assert isinstance(deltas[0]._diffs.diffs["path"], ColBatch) == columnar
    for delta, (inserted, retracted) in zip(deltas, expected):
        assert delta.count("path") == len(inserted) + len(retracted)
        assert delta.count() == delta.count("path") + delta.count("edge")
        assert delta.inserted["path"] == inserted and delta.retracted["path"] == retracted
        assert ("path" in delta.inserted) == bool(inserted)
        assert bool(delta) and delta == eager(delta) and eager(delta) == delta
        assert list(delta) == list(eager(delta))
        assert [(row, w) for name, row, w in delta if name == "path"] == \
            sorted([(row, -1) for row in retracted] + [(row, 1) for row in inserted])
        frame = delta.frame("path")
        assert frame.equals(eager_frame(delta, "path"))
        assert delta.to_arrow("path").equals(eager_arrow(delta, "path"))
        part = delta.only("path")
        assert part.inserted["path"] == inserted and list(part.inserted) == \
            (["path"] if inserted else []) and part.count() == delta.count("path")


def eager_frame(delta, name):
    made = eager(delta)
    made._relations = delta._relations
    return made.frame(name)


def eager_arrow(delta, name, weight="weight"):
    made = eager(delta)
    made._relations = delta._relations
    return made.to_arrow(name, weight=weight)


def test_subscribers_get_the_columnar_part_of_their_relation():
    seen = []
    with columns_from(0):
        session = datalog.Program(CLOSURE).session()
        session.subscribe("path", lambda part: seen.append(
            (sorted(part.inserted), part.count("path"), set(part.inserted["path"]))))
        session.insert("edge", (1, 2), (2, 3), (3, 4))
        session.retract("edge", (2, 3))
    assert seen == [(["path"], 6, {(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)}),
                    ([], 4, set())]


def test_size_and_queries_agree_after_columnar_transactions():
    rng = random.Random(8)
    edges = {(rng.randrange(60), rng.randrange(60)) for _ in range(90)}
    with columns_from(0):
        session = datalog.Program(CLOSURE).session()
        session.insert("edge", sorted(edges))
        assert session.size("path") == len(closure(edges))
        gone = sorted(edges)[:10]
        session.retract("edge", gone)
        assert session.size("path") == len(closure(edges - set(gone)))
        assert session.query("path") == closure(edges - set(gone))
        assert session.size("path") == len(closure(edges - set(gone)))


def test_columns_of_changes_make_the_frame_rows_would():
    """Symbols ordered by their text (not their ids), floats by value, mixed
    signs: the frame from columns equals the frame from sorted rows."""
    relation = RelationPlan("r", ("s", "f", "n"), ("symbol", "float", "number"))
    rows = {("b", 1.5, 3): 1, ("a", -2.0, 9): -1, ("b", 0.5, 3): 1, ("zz", 1.0, -4): -1,
            ("b", 0.5, 2): 1, ("é", 1.0, 0): 1}
    batch = ColBatch.from_rows(rows)
    assert batch is not None and batch.kinds == ("s", "f", "i")
    columns, weights = Changes({"r": batch}).columns("r")
    ordered = sorted(rows)
    assert [list(c) if isinstance(c, np.ndarray) else c for c in columns] == \
        [list(c) for c in zip(*ordered)]
    assert weights.tolist() == [rows[row] for row in ordered]
    lazy = datalog.Delta._of(Changes({"r": batch}))
    lazy._relations = {"r": relation}
    assert lazy.frame("r").equals(eager_frame(lazy, "r"))
    assert lazy.to_arrow("r", weight="w").equals(eager_arrow(lazy, "r", weight="w"))


def test_a_nullary_relations_changes_make_a_frame_of_one_row():
    session = datalog.Program(".decl e(x: number)\n.decl z()\nz() :- e(1).").session()
    delta = session.insert("e", (1,))
    assert delta.frame("z")["weight"].tolist() == [1] and len(session.frame("z")) == 1
    assert session.retract("e", (1,)).to_arrow("z").column("weight").to_pylist() == [-1]
