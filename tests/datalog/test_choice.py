"""``choice-domain``, end to end (what is chosen: ``datalog/plan/choice.py``).

- Golden evaluations: each folder ``tests/choice/<case>/`` holds ``<case>.dl``
  (outputs printed with ``IO=stdout``), ``facts/`` and ``<case>.out``: what
  ``datalog run <case>.dl -F facts -D -`` prints (``DATALOG_REGEN=1`` rewrites
  them; review the diff). The parse and check cases are in ``tests/parse`` and
  ``tests/check`` (``choice_*``).
- A naive twin: for each program below, a few lines of plain Python compute the
  documented choice from scratch (round by round in recursion, a greedy
  matching for several domains), independently of the engine.
- Incremental differential: random transactions of inserts and retractions;
  after each one the session equals the naive twin on the current inputs, and
  a fresh session given those inputs, and the reported delta is exactly the
  change.
- The real ``datalog`` command on one program, and on one refused program.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import datalog
from tests.golden import assert_golden, cases, run_output

ROOT = Path(__file__).resolve().parent.parent / "choice"
CASES = cases("choice")


# ---------------------------------------------------------------- golden


def test_there_are_cases():
    assert len(CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_evaluation(case: Path):
    assert_golden(case, run_output(case))


# ---------------------------------------------------------------- programs and twins

TREE = """
.decl edge(u: number, v: number)
.decl start(x: number)
.decl st(u: number, v: number) choice-domain v
st(-1, x) :- start(x).
st(u, v) :- st(_, u), edge(u, v).
.decl depth(v: number, d: number)
depth(v, 0) :- st(-1, v).
depth(v, d + 1) :- st(u, v), depth(u, d).
"""


def tree_twin(inputs: dict) -> dict:
    """Round 0: the start nodes under -1; round i: each node not in the tree
    whose candidates (edges from nodes in it after round i - 1) exist takes
    the least of them."""
    edge, start = inputs.get("edge", set()), inputs.get("start", set())
    chosen: dict = {}
    while True:
        candidates = {(-1, x) for (x,) in start} | {(u, v) for u, v in edge if u in chosen}
        new = {}
        for u, v in sorted(candidates):
            if v not in chosen and v not in new:
                new[v] = u
        if not new:
            break
        chosen.update(new)
    depth: dict = {}
    while True:     # depth: ordinary recursion over the chosen tree
        more = {v: 0 for v, u in chosen.items() if u == -1}
        more.update({v: depth[u] + 1 for v, u in chosen.items() if u in depth})
        if more == depth:
            break
        depth = more
    st_rows = {(u, v) for v, u in chosen.items()}
    # every (v, d) derivable: a node has one parent, so one depth, unless the
    # tree has a cycle (it cannot: a parent entered at an earlier round)
    return {"st": st_rows, "depth": set(depth.items())}


MUTUAL = """
.decl edge(u: number, v: number)
.decl start(x: number)
.decl reach(x: number)
.decl parent(x: number, y: number) choice-domain y
reach(x) :- start(x).
reach(y) :- parent(_, y).
parent(x, y) :- reach(x), edge(x, y).
"""


def mutual_twin(inputs: dict) -> dict:
    """Both relations after round i from both after round i - 1."""
    edge, start = inputs.get("edge", set()), inputs.get("start", set())
    reach: set = set()
    parent: dict = {}
    while True:
        new_reach = {x for (x,) in start} | set(parent)
        candidates = sorted((x, y) for x, y in edge if x in reach)
        new_parent = dict(parent)
        for x, y in candidates:
            if y not in parent and y not in new_parent:
                new_parent[y] = x
        if new_reach == reach and new_parent == parent:
            break
        reach, parent = new_reach, new_parent
    return {"reach": {(x,) for x in reach}, "parent": {(x, y) for y, x in parent.items()}}


MATCHING = """
.decl can(task: number, worker: number)
.decl assigned(task: number, worker: number) choice-domain task, worker
assigned(t, w) :- can(t, w).
.decl open(task: number)
open(t) :- can(t, _), !assigned(t, _).
.decl busy(n: number)
busy(n) :- n = count : { assigned(_, _) }.
"""


def matching_twin(inputs: dict) -> dict:
    """Least first; kept unless its task or its worker is taken."""
    can = inputs.get("can", set())
    tasks, workers, kept = set(), set(), set()
    for t, w in sorted(can):
        if t not in tasks and w not in workers:
            tasks.add(t)
            workers.add(w)
            kept.add((t, w))
    return {"assigned": kept, "open": {(t,) for t, _ in can if t not in tasks},
            "busy": {(len(kept),)}}


PRICES = """
.decl offer(item: number, shop: number, cents: number)
.decl best(item: number, shop: number, cents: number) choice-domain (item, shop)
best(1, 1, 500).
best(i, s, c) :- offer(i, s, c).
.decl cheap(item: number, shop: number)
cheap(i, s) :- best(i, s, c), c < 300.
"""


def prices_twin(inputs: dict) -> dict:
    """The least (item, shop, cents) per (item, shop), the fact included."""
    rows = set(inputs.get("offer", set())) | {(1, 1, 500)}
    best: dict = {}
    for i, s, c in sorted(rows):
        best.setdefault((i, s), c)
    return {"best": {(i, s, c) for (i, s), c in best.items()},
            "cheap": {(i, s) for (i, s), c in best.items() if c < 300}}


NODES = st.integers(0, 3)      # few nodes: many paths of the same length (ties)
PROGRAMS = {
    "tree": (TREE, tree_twin, {"edge": st.tuples(NODES, NODES), "start": st.tuples(NODES)}),
    "mutual": (MUTUAL, mutual_twin, {"edge": st.tuples(NODES, NODES),
                                     "start": st.tuples(NODES)}),
    "matching": (MATCHING, matching_twin, {"can": st.tuples(NODES, NODES)}),
    "prices": (PRICES, prices_twin, {"offer": st.tuples(st.integers(1, 2), st.integers(1, 2),
                                                          st.sampled_from([100, 300, 500,
                                                                           700]))}),
}


def test_twins_agree_with_the_golden_spanning_tree():
    """The twin of the spanning tree gives what the documented example shows."""
    edges = {(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 5), (5, 0), (1, 0)}
    out = tree_twin({"edge": edges, "start": {(0,)}})
    assert out["st"] == {(-1, 0), (0, 1), (0, 2), (1, 3), (2, 4), (3, 5)}
    session = datalog.Program(TREE).session()
    with session.transaction() as t:
        for row in edges:
            t.insert("edge", row)
        t.insert("start", (0,))
    assert session.query("st") == out["st"]
    assert session.query("depth") == out["depth"]


# ---------------------------------------------------------------- retraction, by hand


def test_retracting_the_chosen_tuple_chooses_the_next():
    session = datalog.Program(PRICES).session()
    with session.transaction() as t:
        t.insert("offer", (2, 1, 300))
        t.insert("offer", (2, 1, 100))
    assert session.query("best(2, 1, c)") == {(2, 1, 100)}
    with session.transaction() as t:          # the chosen one goes: the next comes in
        t.retract("offer", (2, 1, 100))
    assert t.delta.retracted["best"] == {(2, 1, 100)}
    assert t.delta.inserted["best"] == {(2, 1, 300)}
    with session.transaction() as t:          # a candidate not chosen: nothing changes
        t.insert("offer", (1, 1, 700))
    assert not t.delta.inserted["best"] and not t.delta.retracted["best"]
    with session.transaction() as t:          # a lesser one replaces the chosen
        t.insert("offer", (1, 1, 200))
    assert t.delta.retracted["best"] == {(1, 1, 500)}
    assert t.delta.inserted["best"] == {(1, 1, 200)}
    assert t.delta.inserted["cheap"] == {(1, 1)}


def test_a_node_cut_off_moves_to_its_next_parent_in_recursion():
    session = datalog.Program(TREE).session()
    with session.transaction() as t:
        for row in [(0, 1), (1, 2), (0, 3), (3, 2), (2, 4)]:
            t.insert("edge", row)
        t.insert("start", (0,))
    assert session.query("st(u, 2)") == {(1, 2)}
    with session.transaction() as t:
        t.retract("edge", (0, 1))
    assert session.query("st") == {(-1, 0), (0, 3), (3, 2), (2, 4)}
    assert session.query("depth(4, d)") == {(4, 3)}


# ---------------------------------------------------------------- differential


@st.composite
def scenario(draw):
    """A program and up to eight transactions over a small pool of rows per
    input (so that rows come back and go again)."""
    name = draw(st.sampled_from(sorted(PROGRAMS)))
    inputs = PROGRAMS[name][2]
    pools = {rel: draw(st.lists(rows, min_size=1, max_size=8, unique=True))
             for rel, rows in inputs.items()}
    txs = []
    for _ in range(draw(st.integers(1, 8))):
        changes = st.tuples(st.sampled_from(sorted(pools)), st.booleans())
        tx = [(rel, draw(st.sampled_from(pools[rel])), insert)
              for rel, insert in draw(st.lists(changes, min_size=1, max_size=6))]
        txs.append(tx)
    return name, txs


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
@example(("tree", [[("edge", (0, 1), True), ("edge", (1, 2), True), ("edge", (0, 2), True),
                    ("start", (0,), True)],
                   [("edge", (0, 2), False)], [("start", (0,), False)],
                   [("start", (1,), True), ("edge", (2, 0), True)]]))
@example(("mutual", [[("edge", (0, 1), True), ("edge", (0, 2), True), ("edge", (2, 3), True),
                      ("edge", (1, 3), True), ("start", (0,), True)],
                     [("edge", (0, 1), False)], [("edge", (0, 1), True)]]))
def test_incremental_equals_from_scratch(case):
    name, txs = case
    text, twin, _ = PROGRAMS[name]
    program = datalog.Program(text)
    session = program.session()
    inputs: dict[str, set] = {}
    before = {rel: session.query(rel) for rel in program.relations}
    for tx in txs:
        with session.transaction() as t:
            for relation, row, insert in tx:
                (t.insert if insert else t.retract)(relation, row)
        for relation, row, insert in tx:         # the last change of a row wins
            rows = inputs.setdefault(relation, set())
            (rows.add if insert else rows.discard)(row)
        after = {rel: session.query(rel) for rel in program.relations}
        for rel, rows in twin(inputs).items():
            assert after[rel] == rows, (name, rel, inputs)
        scratch = program.session()
        with scratch.transaction() as s:
            for relation, rows in inputs.items():
                for row in rows:
                    s.insert(relation, row)
        assert after == {rel: scratch.query(rel) for rel in program.relations}
        for rel in after:
            assert t.delta.inserted[rel] == after[rel] - before[rel], rel
            assert t.delta.retracted[rel] == before[rel] - after[rel], rel
        before = after


# ---------------------------------------------------------------- the real command

DATALOG = shutil.which("datalog")


def test_datalog_run_prints_the_spanning_tree(tmp_path):
    assert DATALOG is not None
    case = ROOT / "spanning_tree"
    result = subprocess.run([DATALOG, "run", str(case / "spanning_tree.dl"),
                             "-F", str(case / "facts"), "-D", "-"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (case / "spanning_tree.out").read_text()
    # written to a file as Soufflé writes outputs
    text = (case / "spanning_tree.dl").read_text().replace("st(IO=stdout)", "st")
    program = tmp_path / "tree.dl"
    program.write_text(text)
    out = tmp_path / "out"
    result = subprocess.run([DATALOG, "run", str(program), "-F", str(case / "facts"),
                             "-D", str(out)], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert sorted((out / "st.csv").read_text().splitlines()) == \
        ["-\ta", "a\tb", "a\tc", "b\td", "c\te", "d\tf"]


def test_datalog_run_refuses_several_domains_in_recursion_where_they_are():
    case = Path(__file__).resolve().parent.parent / "check" / "choice_recursive_domains"
    result = subprocess.run([DATALOG, "run", "choice_recursive_domains.dl", "-D", "-"],
                            capture_output=True, text=True, timeout=120, check=False,
                            cwd=case)
    assert result.returncode == 1
    assert result.stderr.startswith("choice_recursive_domains.dl:4:51: error: recursive "
                                    "relation `walk` has several choice domains")
    assert "Traceback" not in result.stderr


def test_why_not_names_the_tuple_chosen_instead():
    session = datalog.Program(PRICES).session()
    with session.transaction() as t:
        t.insert("offer", (1, 1, 700))
    text = str(session.why_not("best(1, 1, 700)"))
    assert "the body derives it, as a candidate of the choice" in text
    assert "`choice-domain` keeps best(1, 1, 500) for item = 1, shop = 1, not this " \
           "candidate" in text


def test_a_choice_inside_a_component_is_kept_per_instance():
    session = datalog.Program("""
        .comp Pick<T> {
            .decl in(k: T, v: number)
            .decl out(k: T, v: number) choice-domain k
            out(k, v) :- in(k, v).
        }
        .init a = Pick<number>
        .init b = Pick<symbol>
        a.in(1, 5). a.in(1, 2). b.in("x", 7). b.in("x", 8).
    """).session()
    assert session.query("a.out") == {(1, 2)}
    assert session.query("b.out") == {("x", 7)}


def test_a_failed_transaction_leaves_the_choice_as_it_was():
    program = datalog.Program("""
        .decl offer(item: number, c: number)
        .decl best(item: number, c: number) choice-domain item
        best(i, c) :- offer(i, c).
        .decl ratio(i: number, r: number)
        ratio(i, 100 / (c - 300)) :- best(i, c).
        .decl pairs(item: number, c: number) choice-domain item, c
        pairs(i, c) :- offer(i, c).
    """)
    session = program.session()
    with session.transaction() as t:
        t.insert("offer", (1, 500))
        t.insert("offer", (2, 500))
    before = {name: session.query(name) for name in program.relations}
    with pytest.raises(datalog.DatalogError, match="division by zero"):
        with session.transaction() as t:     # (1, 300) would be chosen: 100 / 0
            t.insert("offer", (1, 300))
            t.insert("offer", (2, 400))
    assert {name: session.query(name) for name in program.relations} == before
    with session.transaction() as t:
        t.insert("offer", (2, 400))
    assert session.query("best") == {(1, 500), (2, 400)}
    assert session.query("pairs") == {(1, 500), (2, 400)}
    assert not session.verify()
