"""Durable sessions (``program.session(store=DIR)``): values round-trip exactly,
reopening replays to the same state, a torn last record is dropped, a damaged log
and another program's store are refused, time travel, and the kill -9 loop."""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog import store as store_module
from datalog.errors import StoreError
from tests.datalog import store_writer
from tests.datalog.differential import programs, transactions

REPO = Path(__file__).resolve().parents[2]
NEGATION = REPO / "programs" / "stratified_negation"
VALUES = """
.decl n(x: number)
.decl u(x: unsigned)
.decl f(x: float)
.decl s(x: symbol)
.decl all(x: number, y: unsigned, z: float, w: symbol)
"""


def negation() -> datalog.Program:
    return datalog.Program.from_file(NEGATION / "stratified_negation.dl")


def contents(session) -> dict:
    return {name: session.query(name) for name in session.program.relations}


def test_values_round_trip_exactly(tmp_path):
    program = datalog.Program(VALUES)
    numbers = [-2**63, 2**63 - 1, 0, -1]
    unsigned = [0, 2**64 - 1, 2**63]
    floats = [math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 2.5]
    symbols = ["", "é", "\ud800", "a\nb\tc\r", '"\\', "\u2028\x00", "🦆" * 3]
    with program.session(store=tmp_path) as session:
        with session.transaction() as tx:
            tx.insert("n", *[(v,) for v in numbers])
            tx.insert("u", *[(v,) for v in unsigned])
            tx.insert("f", *[(v,) for v in floats])
            tx.insert("s", *[(v,) for v in symbols])
            tx.insert("all", (-2**63, 2**64 - 1, -0.0, "\ud800"))
        session.retract("f", (2.5,))
        before = contents(session)
    with program.session(store=tmp_path) as again:
        assert contents(again) == before
        stored = sorted(again.query("f"), key=repr)
        assert [repr(v) for (v,) in stored] == sorted(
            repr(v) for v in floats[:-1])
        assert math.copysign(1, next(iter(again.query("all")))[2]) == -1
        assert all(type(v) is float for (v,) in again.query("f"))


def test_reopening_replays_to_the_same_state_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", 4)
    program = negation()
    session = program.session(NEGATION / "facts", store=tmp_path)
    assert session.messages == (f"created the store {tmp_path}",)
    states = [contents(session)]
    rng = random.Random(7)
    hosts = ["db", "web", "cache", "printer", "backup", "x", "y"]
    for _ in range(11):
        with session.transaction() as tx:
            for _ in range(rng.randint(0, 3)):
                row = (rng.choice(hosts), rng.choice(hosts))
                (tx.insert if rng.random() < 0.6 else tx.retract)("link", row)
            if rng.random() < 0.3:
                tx.retract("firewall", (rng.choice(hosts),))
        states.append(contents(session))
    assert session.committed == 11
    session.close()
    with pytest.raises(StoreError, match="closed"):
        session.insert("link", ("a", "b"))
    assert sorted(os.listdir(tmp_path / "snapshots")) == ["0.json", "4.json", "8.json"]
    again = program.session(NEGATION / "facts", store=tmp_path)
    assert contents(again) == states[-1] and again.committed == 11
    assert again.messages[0].startswith(
        f"reopened {tmp_path}: replayed 11 transactions (the snapshot of transaction 8, "
        "then 3 from the log) in ")
    assert again.messages[1].endswith("was not read: the store holds the inputs (the "
                                      "facts were read when it was created)")
    for n, state in enumerate(states):          # time travel, across snapshots
        past = again.at(n)
        assert contents(past) == state, n
        with pytest.raises(datalog.DatalogError, match=f"after transaction {n}: read-only"):
            past.insert("link", ("a", "b"))
    with pytest.raises(datalog.DataError, match="no transaction 12: the store holds "
                                                "transactions 0 to 11"):
        again.at(12)
    again.insert("link", ("x", "db"))
    assert again.committed == 12 and contents(again.at(11)) == states[-1]
    assert not again.verify()
    again.close()


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="is not a store and not empty .*`notes.txt`"):
        negation().session(store=tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot open the store .*file"):
        negation().session(store=tmp_path / "file")


def test_time_travel_needs_a_store():
    with pytest.raises(datalog.DatalogError, match="time travel needs a durable session"):
        negation().session().at(0)


def test_a_store_is_open_in_one_session_at_a_time(tmp_path):
    with negation().session(store=tmp_path), \
            pytest.raises(StoreError, match="is open in another session"):
        negation().session(store=tmp_path)
    negation().session(store=tmp_path).close()


def _committed_store(tmp_path, count: int) -> list[dict]:
    states = []
    with negation().session(NEGATION / "facts", store=tmp_path) as session:
        states.append(contents(session))
        for n in range(1, count + 1):
            with session.transaction() as tx:
                for op, relation, row in store_writer.changes(n):
                    getattr(tx, op)(relation, row)
            states.append(contents(session))
    return states


@pytest.mark.parametrize("cut", [1, 9, 12, 25, -2, -1])
def test_a_torn_last_record_is_dropped_with_a_message(tmp_path, cut):
    states = _committed_store(tmp_path, 5)
    log = tmp_path / "log"
    data = log.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1     # where record 5 begins
    record = data[last:]
    torn = data[:last] + record[:cut % len(record)]
    log.write_bytes(torn)
    with negation().session(store=tmp_path) as session:
        assert contents(session) == states[4] and session.committed == 4
        assert session.messages[0] == (
            f"dropped a torn last record of the log ({len(torn) - last} bytes at offset "
            f"{last}): a crash interrupted its commit, which had not returned")
    assert log.read_bytes() == data[:last]        # truncated: the next append is clean
    with negation().session(store=tmp_path) as session:
        assert len(session.messages) == 1 and session.committed == 4


def test_a_record_with_a_bad_checksum_at_the_end_is_dropped(tmp_path):
    states = _committed_store(tmp_path, 3)
    log = tmp_path / "log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 1                                   # a flipped bit inside record 3
    log.write_bytes(bytes(data))
    with negation().session(store=tmp_path) as session:
        assert contents(session) == states[2]
        assert "dropped a torn last record" in session.messages[0]


def test_a_log_damaged_before_its_end_is_refused(tmp_path):
    _committed_store(tmp_path, 3)
    log = tmp_path / "log"
    data = bytearray(log.read_bytes())
    data[20] ^= 1                                   # inside record 1 of 3
    log.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=r"damaged at byte 0 \(transaction 1\) and has "
                                         "records after it"):
        negation().session(store=tmp_path)
    assert log.read_bytes() == bytes(data)          # nothing truncated


def test_another_programs_store_is_refused_unless_migrating(tmp_path):
    states = _committed_store(tmp_path, 2)
    text = (NEGATION / "stratified_negation.dl").read_text()
    changed = datalog.Program(text + "\n.decl cut(h: symbol)\ncut(h) :- firewall(h).\n")
    with pytest.raises(StoreError) as refused:
        changed.session(store=tmp_path)
    assert str(refused.value) == (
        f"error: the store {tmp_path} was written by another program ({NEGATION}/"
        "stratified_negation.dl: its relations, rules or facts differ); open it with "
        "that program, or with migrate=True (--migrate) to carry its inputs over to "
        "this one")
    same = datalog.Program("// only a comment differs\n" + text)
    with same.session(store=tmp_path) as session:      # layout does not count
        assert contents(session) == states[-1]
    with changed.session(store=tmp_path, migrate=True) as session:
        assert session.messages[0] == (f"migrated the store {tmp_path} to this program "
                                       "at transaction 2")
        assert session.query("cut") == session.query("firewall") != frozenset()
        session.insert("link", ("a", "b"))
    with changed.session(store=tmp_path) as session:    # now it is this program's
        assert session.committed == 3
        assert contents(session.at(1))["to_patch"] == states[1]["to_patch"]
    with pytest.raises(StoreError, match="written by another program"):
        negation().session(store=tmp_path)


def test_a_migration_that_does_not_fit_is_refused_and_changes_nothing(tmp_path):
    _committed_store(tmp_path, 1)
    header = (tmp_path / "store.json").read_bytes()
    other = datalog.Program(".decl link(a: number, b: number)\n.decl firewall(h: symbol)\n"
                            ".decl infected(h: symbol)\n")
    with pytest.raises(StoreError, match="cannot migrate the store .*column a of `link` "
                                         "is number"):
        other.session(store=tmp_path, migrate=True)
    assert (tmp_path / "store.json").read_bytes() == header
    with negation().session(store=tmp_path) as session:
        assert session.committed == 1


def test_a_failed_log_write_is_not_a_commit(tmp_path, monkeypatch):
    session = negation().session(NEGATION / "facts", store=tmp_path)
    session.insert("link", ("a", "b"))
    before = contents(session)
    size = (tmp_path / "log").stat().st_size

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module.os, "fsync", full)
    with pytest.raises(StoreError, match="No space left on device; the transaction was "
                                         "not committed"):
        session.retract("firewall", ("db",))
    monkeypatch.undo()
    assert contents(session) == before and session.committed == 1
    assert (tmp_path / "log").stat().st_size == size
    assert not session.verify()
    session.retract("firewall", ("db",))
    session.close()
    with negation().session(store=tmp_path) as again:
        assert again.committed == 2 and ("db",) not in again.query("firewall")


def test_kill_9_loses_no_acknowledged_transaction(tmp_path):
    """A writer commits store_writer.changes(1, 2, ...) and acknowledges each
    after its commit returns; it is killed with SIGKILL at random moments, then
    restarted on the same store. After each kill the store holds every
    acknowledged transaction, and at most the one in flight besides."""
    store = tmp_path / "store"
    rng = random.Random(20261123)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    initial = negation().session(NEGATION / "facts")._inputs
    acknowledged = 0
    kills = in_flight = torn = 0
    deadline = time.monotonic() + 25
    while kills < 30 and time.monotonic() < deadline:
        writer = subprocess.Popen(
            [sys.executable, "-m", "tests.datalog.store_writer", str(store)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
        ready = writer.stdout.readline()
        assert ready == f"ready {acknowledged}\n" or ready == f"ready {acknowledged + 1}\n", (
            ready, writer.stderr.read() if not ready else "")
        time.sleep(rng.uniform(0, 0.25))
        writer.send_signal(signal.SIGKILL)
        output, _ = writer.communicate()
        kills += 1
        acks = [int(line) for line in output.split()]
        if acks:
            assert acks == list(range(acks[0], acks[-1] + 1))
            acknowledged = acks[-1]
        with negation().session(store=store) as session:
            assert acknowledged <= session.committed <= acknowledged + 1
            assert session._inputs == store_writer.expected_inputs(initial,
                                                                   session.committed)
            assert not session.verify()
            in_flight += session.committed - acknowledged
            torn += any("torn" in message for message in session.messages)
            acknowledged = session.committed
    assert kills >= 10 and acknowledged > 0, (kills, acknowledged)
    print(f"{kills} kills, {acknowledged} transactions; {in_flight} committed in "
          f"flight, {torn} torn records dropped")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(), st.integers(min_value=1, max_value=4))
def test_random_programs_reopen_and_travel_to_every_state(text, txs, every):
    """Random programs and transactions on a store with a snapshot every
    ``every`` transactions: reopening gives the last state, ``at(n)`` every
    earlier one, and verify() finds nothing."""
    import tempfile

    program = datalog.Program(text)
    with tempfile.TemporaryDirectory() as directory:
        session = program.session(store=directory)
        session._store.snapshot_every = every
        states = [contents(session)]
        for tx in txs:
            with session.transaction() as t:
                for op, relation, row in tx:
                    getattr(t, op)(relation, row)
            states.append(contents(session))
        session.close()
        with program.session(store=directory) as again:
            assert again.committed == len(txs)
            assert contents(again) == states[-1]
            assert not again.verify()
            for n, state in enumerate(states):
                assert contents(again.at(n)) == state, (n, text)
