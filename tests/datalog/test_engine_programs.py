"""Golden tests: every program of ``programs/`` evaluated by the engine equals its
``expected/`` files, and replaying its REPL transcript through the Python API
gives exactly the changes and query answers the transcript shows."""

from __future__ import annotations

import pytest

import datalog
from tests.programs import dl_fact, example_programs, statement_atom

EXAMPLES = example_programs()


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_engine_equals_expected(example):
    program = datalog.Program.from_file(example.path)
    session = program.session(fact_dir=example.facts_dir)
    types = dict(program.checked.types)
    expected = example.expected(types)
    assert expected, "an example must have outputs"
    for name, rows in expected.items():
        assert session.query(name) == rows, name


def _row(atom, types) -> tuple:
    return tuple(float(arg.value) if t == "float" else arg.value
                 for arg, t in zip(atom.args, types))


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_transcript_through_the_api(example):
    program = datalog.Program.from_file(example.path)
    session = program.session(fact_dir=example.facts_dir)
    types = dict(program.checked.types)
    outputs = set(example.outputs())
    steps = example.transcript()
    assert steps, "every example has a transcript"
    for step in steps:
        statement = step.statement
        if statement.startswith("?-"):
            pattern = statement[2:].strip().rstrip(".")
            rows = session.query(pattern)
            relation = pattern.split("(")[0].strip()
            got = [dl_fact(relation, row) for row in sorted(rows)]
        else:
            atom = statement_atom(statement)
            row = _row(atom, types[atom.relation])
            retract = statement.startswith("-")
            delta = (session.retract if retract else session.insert)(atom.relation, row)
            changes = sorted((name, r, sign) for name, r, sign in delta if name in outputs)
            got = [f"{'+' if sign > 0 else '-'}{dl_fact(name, r)}" for name, r, sign in changes]
        assert got == list(step.output), statement
