"""Values whose columns spread over more than 63 bits together do not pack
into one int64 key: the columnar paths take them as they are. A closure of
node ids 2^40 apart (ids from another system, hashes) over a 300-node chain
goes through a long loop's runs, whose commit merged the loop's appends
packed and lost them when they did not pack (IndexError)."""

from __future__ import annotations

from datalog import Program

CLOSURE = """.decl e(x: number, y: number)
.decl path(x: number, y: number)
.output path
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
"""


def node(i: int) -> int:
    return (i << 40) - (1 << 62)


def closure(edges: set) -> set:
    following = dict(edges)  # (a chain: one edge out of each node)
    paths = set()
    for start in following:
        at = start
        while at in following:
            at = following[at]
            paths.add((start, at))
    return paths


def test_a_closure_of_ids_2_to_the_40_apart_is_right_and_updates():
    n = 300
    edges = {(node(i), node(i + 1)) for i in range(n)}
    session = Program(CLOSURE).session()
    with session.transaction() as t:
        for edge in edges:
            t.insert("e", edge)
    assert set(session.query("path")) == closure(edges)
    cut = (node(n // 2), node(n // 2 + 1))
    with session.transaction() as t:
        t.retract("e", cut)
    assert set(session.query("path")) == closure(edges - {cut})
    with session.transaction() as t:
        t.insert("e", cut)
    assert set(session.query("path")) == closure(edges)
