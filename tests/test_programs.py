"""Golden tests over ``programs/``: every example program is clean, the reference
evaluator's outputs equal its ``expected/`` files, and its REPL transcript is
what the reference evaluator says the REPL must print.

``DATALOG_REGEN=1`` rewrites the ``expected/`` files instead of comparing them.
"""

import pytest

from datalog.analysis.frontend import load_file
from datalog.syntax.ast import Atom
from tests.programs import REGENERATE, ExampleProgram, dl_fact, example_programs, statement_atom
from tests.reference import Clause, body_relations, column_types, evaluate, strata

PROGRAMS = example_programs()
IDS = [p.name for p in PROGRAMS]


def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 8


@pytest.mark.parametrize("example", PROGRAMS, ids=IDS)
def test_program_is_clean(example: ExampleProgram):
    checked = load_file(str(example.path))          # raises on any error
    assert checked.warnings == ()
    # The front end and the reference agree on column types and on the strata.
    assert checked.types == column_types(example.program)
    assert {frozenset(s.relations) for s in checked.strata} == \
        {frozenset(s) for s in strata(example.program)}
    position = {r: i for i, s in enumerate(checked.strata) for r in s.relations}
    for rule in example.program.rules:
        for head, body in rule.clauses():
            assert all(position[r] <= position[head.relation] for r in body_relations(body))
    assert example.outputs(), "an example without outputs shows nothing"
    assert set(example.input_files()) <= {r.name for r in example.program.relations}
    for path in example.input_files().values():
        assert path.is_file(), f"missing input file {path}"


@pytest.mark.parametrize("example", PROGRAMS, ids=IDS)
def test_reference_outputs_equal_expected(example: ExampleProgram):
    types = column_types(example.program)
    results = evaluate(example.program, example.inputs(types))
    if REGENERATE:
        example.write_expected(results)
    expected = example.expected(types)
    for name in example.outputs():
        assert results[name] == expected[name], name
        assert results[name], f"output `{name}` is empty: the example shows nothing"


@pytest.mark.parametrize("example", PROGRAMS, ids=IDS)
def test_transcript(example: ExampleProgram):
    steps = example.transcript()
    assert steps, "every example carries a REPL transcript"
    program = example.program
    types = column_types(program)
    inputs = example.inputs(types)
    state = evaluate(program, inputs)
    for step in steps:
        atom = statement_atom(step.statement)
        if step.statement.startswith("?-"):
            printed = [dl_fact(atom.relation, row) for row in sorted(state[atom.relation])
                       if _matches(atom, row, types, program)]
        else:
            row = next(Clause(atom, (), types, program).heads({}))
            rows = inputs.setdefault(atom.relation, set())
            if step.statement.startswith("-"):
                assert row in rows, f"{step.statement} retracts a fact that is not an input"
                rows.remove(row)
            else:
                rows.add(row)
            new = evaluate(program, inputs)
            printed = _changes(state, new, example.outputs())
            state = new
        assert printed == list(step.output), f"after `{step.statement}`"


def _matches(pattern: Atom, row: tuple, types, program) -> bool:
    clause = Clause(Atom("__query", (), pattern.span), (pattern,), types, program)
    clause.db = {pattern.relation: {row}}
    return any(True for _ in clause.solve((pattern,), {}))


def _changes(old, new, outputs) -> list[str]:
    """The change lines, ordered by relation name, then row."""
    lines = []
    for name in sorted(outputs):
        changed = ([(r, "-") for r in old[name] - new[name]]
                   + [(r, "+") for r in new[name] - old[name]])
        lines += [sign + dl_fact(name, row) for row, sign in sorted(changed)]
    return lines
