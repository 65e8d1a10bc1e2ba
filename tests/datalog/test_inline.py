"""``inline`` relations, end to end: substituted into the rules that use them,
never stored.

- Golden evaluations: each folder ``tests/inline/<case>/`` holds ``<case>.dl``
  (its outputs printed with ``IO=stdout``), maybe ``facts/`` and ``<case>.out``:
  what ``datalog run <case>.dl -F facts -D -`` prints (``DATALOG_REGEN=1``
  rewrites them). Every case but the product prints the same with ``inline``
  removed (the relation materialised), which checks the substitution itself.
- The product of two 10,000-row relations is never built: the plan has no
  relation for it and no stored relation holds more than 10,000 rows.
- Queries: an inline relation is asked on demand (``session.ask``); listing its
  rows or writing to it is an error that says so.
- Incremental: random transactions through positive, negated and nested inline
  relations; after each one the session equals a fresh session of the same
  program with the relations materialised, and the delta is exactly the change.
- The real ``datalog`` command: ``run`` and ``plan`` of the product, ``check``
  of a refused program.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.errors import CheckError, DataError

ROOT = Path(__file__).resolve().parent.parent / "inline"
CASES = sorted(p for p in ROOT.iterdir() if (p / f"{p.name}.dl").exists())
REGEN = os.environ.get("DATALOG_REGEN") == "1"


def materialised(text: str) -> str:
    """``text`` with the ``inline`` qualifier dropped from every declaration."""
    return re.sub(r"^(\s*\.decl [^\n]*\))([^\n]*?)\binline\b", r"\1\2", text, flags=re.M)


def run_case(case: Path, tmp_path: Path | None = None, materialise: bool = False) -> str:
    """What ``datalog run`` prints for the case (with its relations materialised
    when asked: the program is then written to ``tmp_path``)."""
    facts = case / "facts"
    source = case / f"{case.name}.dl"
    if materialise:
        copy = tmp_path / source.name
        copy.write_text(materialised(source.read_text()))
        source = copy
    result = datalog.run(str(source), str(facts if facts.is_dir() else case), "-")
    assert not result.warnings, result.warnings
    return result.stdout


# ---------------------------------------------------------------- golden


def test_there_are_cases():
    assert len(CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_evaluation(case: Path):
    output = run_case(case)
    expected = case / f"{case.name}.out"
    if REGEN:
        expected.write_text(output)
    assert output == expected.read_text()


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "product"],
                         ids=[c.name for c in CASES if c.name != "product"])
def test_inlined_equals_materialised(case: Path, tmp_path: Path):
    assert run_case(case, tmp_path, materialise=True) == run_case(case)


def test_the_product_is_never_built():
    program = datalog.Program.from_file(ROOT / "product" / "product.dl")
    assert "pairs" not in program.plan.relations
    assert "pairs" not in program.relations
    assert all("pairs" not in rule.describe() for rule in program.plan.rules())
    session = program.session()
    assert max(len(session.query(name)) for name in program.relations) == 10_000
    assert session.query("q(0, y)") == {(0, 9998), (0, 9999)}


# ---------------------------------------------------------------- queries

NEGATION = (ROOT / "negation" / "negation.dl").read_text()


def _session(text: str = NEGATION):
    session = datalog.Program(text).session()
    session.insert("user", ("ann",), ("bob",), ("guest",))
    session.insert("ban", ("ann", "bob"))
    return session


def test_an_inline_relation_is_asked_on_demand():
    inlined, stored = _session(), _session(materialised(NEGATION))
    for query in ('blocked(x, y)', 'blocked("guest", y)', 'user(x), !blocked(x, "bob")',
                  'blocked(x, y), !blocked(y, x)'):
        assert list(inlined.ask(query)) == list(stored.ask(query)), query
    assert len(stored.query("blocked")) == 3


@pytest.mark.parametrize("call, message", [
    (lambda s: s.query("blocked"), "`blocked` is an inline relation: it is not stored"),
    (lambda s: s.query("blocked(x, _)"), "`blocked` is an inline relation"),
    (lambda s: s.insert("blocked", ("a", "b")), "`blocked` is an inline relation"),
    (lambda s: s.frame("blocked"), "`blocked` is an inline relation"),
    (lambda s: s.ask("user(x), !blocked(x, _)"), "a negated inline atom cannot have `_`"),
])
def test_an_inline_relation_has_no_rows_of_its_own(call, message):
    session = _session()
    before = {name: session.query(name) for name in session.program.relations}
    with pytest.raises((CheckError, DataError), match=re.escape(message)):
        call(session)
    assert {name: session.query(name) for name in session.program.relations} == before


# ---------------------------------------------------------------- incremental

#: Programs whose inputs are `e(x, y)` and `v(x)`, numbers 0..3.
PROGRAMS = (
    """
    .decl e(x: number, y: number)
    .decl v(x: number)
    .decl w(x: number)
    .decl blocked(x: number, y: number) inline
    blocked(x, y) :- e(x, y).
    blocked(x, x) :- w(x).
    blocked(0, y) :- v(y), y != 0.
    .decl may(x: number, y: number)
    may(x, y) :- v(x), v(y), !blocked(x, y).
    .decl none(x: number)
    none(x) :- v(x), !blocked(x, 1), !blocked(1, x).
    """,
    """
    .decl e(x: number, y: number)
    .decl v(x: number)
    .decl hop(x: number, z: number) inline
    hop(x, z) :- e(x, y), e(y, z).
    hop(x, x) :- v(x).
    .decl far(x: number, z: number) inline
    far(x, z) :- hop(x, y), hop(y, z), x != z.
    .decl near(x: number, y: number) inline
    near(x, y) :- e(x, y), x < y.
    near(x, y) :- e(y, x), !v(x).
    .decl out(x: number, z: number)
    out(x, z) :- far(x, z).
    out(x, x) :- v(x), !near(x, 3).
    .decl reach(x: number, y: number)
    reach(x, y) :- e(x, y).
    reach(x, y) :- step(x, y).
    .decl step(x: number, y: number) inline
    step(x, y) :- reach(x, z), e(z, y), !v(z).
    .decl few(x: number, n: number)
    few(x, n) :- v(x), n = count : { reach(x, _) }, !near(x, x).
    """,
)


@st.composite
def scenario(draw):
    text = draw(st.sampled_from(PROGRAMS))
    numbers = st.integers(0, 3)
    change = st.one_of(
        st.tuples(st.just("e"), st.tuples(numbers, numbers), st.booleans()),
        st.tuples(st.sampled_from(["v", "w"] if ".decl w" in text else ["v"]),
                  st.tuples(numbers), st.booleans()))
    return text, draw(st.lists(st.lists(change, min_size=1, max_size=6),
                               min_size=1, max_size=6))


def _contents(session) -> dict:
    return {name: session.query(name) for name in session.program.relations}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_incremental_equals_materialised_from_scratch(case):
    text, txs = case
    session = datalog.Program(text).session()
    stored = datalog.Program(materialised(text))
    assert set(stored.relations) > set(session.program.relations)
    inputs: dict[str, set] = {}
    before = _contents(session)
    for tx in txs:
        with session.transaction() as t:
            for relation, row, insert in tx:
                (t.insert if insert else t.retract)(relation, row)
        for relation, row, insert in tx:
            rows = inputs.setdefault(relation, set())
            (rows.add if insert else rows.discard)(row)
        scratch = stored.session()
        with scratch.transaction() as s:
            for relation, rows in inputs.items():
                for row in rows:
                    s.insert(relation, row)
        after = _contents(session)
        assert after == {name: scratch.query(name) for name in after}, (text, tx)
        for name in after:
            assert t.delta.inserted.get(name, set()) == after[name] - before[name], name
            assert t.delta.retracted.get(name, set()) == before[name] - after[name], name
        before = after


# ---------------------------------------------------------------- the command


def datalog_command(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_the_command_runs_and_plans_the_product():
    case = ROOT / "product"
    result = datalog_command("run", "product.dl", "-D", "-", cwd=case)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (case / "product.out").read_text()
    plan = datalog_command("plan", "product.dl", cwd=case)
    assert plan.returncode == 0, plan.stderr
    assert "q(x, y) :- n(x), n(y), x < 4, y > (9997 - x)." in plan.stdout
    assert "pairs" not in plan.stdout.split("circuit:")[1]


def test_the_command_refuses_what_souffle_refuses(tmp_path: Path):
    (tmp_path / "p.dl").write_text(".decl e(x: number)\n.input e\n"
                                   ".decl a(x: number) inline\na(x) :- e(x).\n.output a\n")
    result = datalog_command("check", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("p.dl:5:9: error: the inline relation `a` cannot be "
                                    "output\n    .output a\n            ^\n")
    run = datalog_command("run", "p.dl", cwd=tmp_path)
    assert run.returncode == 1 and "cannot be output" in run.stderr + run.stdout
    assert not (tmp_path / "a.csv").exists()
