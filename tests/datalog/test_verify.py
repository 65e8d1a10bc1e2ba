"""``session.verify()`` and ``session.transaction(dry_run=True)``: random
programs and transactions (hypothesis), a verification that catches a damaged
state, and a dry run that changes nothing anywhere."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import datalog
from datalog.verify import Verification
from tests.datalog.differential import programs, transactions
from tests.programs import example_programs

ANDERSEN = next(e for e in example_programs() if e.name == "andersen")


def _state(session) -> tuple:
    return ({name: session.query(name) for name in session.program.relations},
            {name: set(rows) for name, rows in session._inputs.items()}, session.epoch)


def _apply(tx, changes) -> None:
    for op, relation, row in changes:
        getattr(tx, op)(relation, row)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(), transactions())
def test_dry_run_then_commit_and_verify(text, txs, probes):
    """Before each transaction a dry run of another one and of the transaction
    itself: each dry delta is what committing it to a fresh session over the
    same inputs gives, the session is untouched (no subscriber called), and
    after every commit ``verify()`` finds nothing."""
    program = datalog.Program(text)
    session = program.session()
    seen = []
    for name in program.relations:
        session.subscribe(name, seen.append)
    assert not session.verify()
    for tx, probe in zip(txs, probes + txs):
        for changes in (probe, tx):
            before = _state(session)
            with session.transaction(dry_run=True) as dry:
                _apply(dry, changes)
            assert _state(session) == before and seen == []
            fresh = datalog.Session(program, _initial=session._inputs)
            with fresh.transaction() as real:
                _apply(real, changes)
            assert dry.delta == real.delta, (changes, text)
        with session.transaction() as committed:
            _apply(committed, tx)
        assert committed.delta == dry.delta
        result = session.verify()
        assert not result, str(result)
        seen.clear()


def test_verify_reports_a_damaged_state_relation_by_relation():
    """The engine's state is damaged behind the session's back (batches given
    to the circuit's sources, not recorded as inputs), as an engine bug would:
    an alias row taken away, nothing reads alias; a points_to row added that no
    rule joins with (no assign, load or store mentions `nobody`)."""
    session = datalog.Program.from_file(ANDERSEN.path).session(ANDERSEN.facts_dir)
    assert not session.verify()
    alias = sorted(session.query("alias"))
    while session.contains("alias", alias[0]):    # as many derivations as it has
        session._circuit.step({"alias": {alias[0]: -1}})
    session._circuit.step({"points_to": {("nobody", "nothing"): 1}})
    result = session.verify()
    assert result and isinstance(result, Verification)
    assert result.relations == ("alias", "points_to")
    assert result.missing["alias"] == {alias[0]} and not result.extra["alias"]
    assert result.extra["points_to"] == {("nobody", "nothing")}
    assert not result.missing["points_to"]
    assert next(iter(result)) == ("alias", alias[0], 1)
    text = str(result)
    assert text.splitlines()[0] == "verify found differences in 2 relations:"
    assert "alias: 1 missing, 0 extra" in text
    assert 'extra   points_to("nobody", "nothing")' in text


def test_verify_reads_the_current_inputs():
    session = datalog.Program.from_file(ANDERSEN.path).session(ANDERSEN.facts_dir)
    session.insert("assign", ("z", "a"))
    session.retract("address_of", *sorted(session.query("address_of"))[:1])
    result = session.verify()
    assert not result
    assert str(result).startswith("verified: every relation equals its from-scratch "
                                  "evaluation (6 relations, ")


def test_a_dry_run_that_fails_changes_nothing_and_the_session_goes_on():
    session = datalog.Program.from_file(ANDERSEN.path).session(ANDERSEN.facts_dir)
    before = _state(session)
    with pytest.raises(datalog.DataError, match="column p of `assign` is symbol"), \
            session.transaction(dry_run=True) as tx:
        tx.insert("assign", (1, "a"))
    assert tx.delta is None and _state(session) == before
    with session.transaction(dry_run=True) as tx:
        tx.insert("assign", ("fresh", "a"))
    assert tx.delta.inserted["points_to"] and _state(session) == before
    assert session.insert("assign", ("fresh", "a")) == tx.delta
    assert not session.verify()
