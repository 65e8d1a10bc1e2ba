"""``datalog run --verify TX_FILE`` through the installed command, and the
transaction file's errors."""

from __future__ import annotations

from pathlib import Path

import datalog
from datalog.verify import describe, run_transactions
from tests.cli.test_run import datalog as command
from tests.cli.test_run import write

REPO = Path(__file__).resolve().parents[2]
ANDERSEN = REPO / "programs" / "andersen"
ARGS = [str(ANDERSEN / "andersen.dl"), "-F", str(ANDERSEN / "facts")]
TRANSACTIONS = """// r = p; then p = &c instead of p = &a
+assign("r", "p").
:begin
-address_of("p", "a").   address_of("p", "c").
:commit
start;
-assign("r", "p").
commit;
"""


def test_verify_applies_every_transaction_then_writes_the_outputs(tmp_path):
    tx = write(tmp_path / "tx.dl", TRANSACTIONS)
    result = command("run", *ARGS, "-D", str(tmp_path), "--verify", str(tx))
    assert result.returncode == 0, result.stderr
    assert result.stderr == (f"verified: 3 transactions of {tx} applied incrementally; "
                             "after the initial load and after each, every relation "
                             "equals its from-scratch evaluation\n")
    points_to = (tmp_path / "points_to.csv").read_text().splitlines()
    assert "p\tc" in points_to and "p\ta" not in points_to
    assert not any(line.startswith("r\t") for line in points_to)


def test_transaction_file_errors_are_located_and_write_nothing(tmp_path):
    cases = {
        '+assign("r", 1).\n': "tx.dl:1:14: error: this constant has type `number` but "
                              "column `q` of `assign` has type `symbol`",
        ':begin\n+assign("r", "s").\n?- alias(x, y).\n':
            "tx.dl:3:1: error: a query cannot appear in a transaction file",
        'assign("a", "b").\n:begin\n+assign("r", "s").\n':
            "tx.dl:2: error: the transaction opened here is never committed",
        ":commit\n": "tx.dl:1:1: error: no transaction is open",
        ":rollback\n": "tx.dl:1:1: error: `:rollback` cannot appear in a transaction file",
        "p(x) :- assign(x, _).\n": "tx.dl:1:1: error: a rule or directive cannot appear "
                                   "in a transaction file",
        "+nothing(1).\n": "tx.dl:1:2: error: undefined relation `nothing`",
    }
    for text, first in cases.items():
        write(tmp_path / "tx.dl", text)
        result = command("run", *ARGS, "-D", "out", "--verify", "tx.dl", cwd=tmp_path)
        assert result.returncode == 1, text
        assert result.stderr.splitlines()[0] == first, (text, result.stderr)
        assert not (tmp_path / "out").exists()


def test_verify_is_for_the_local_engine(tmp_path):
    tx = write(tmp_path / "tx.dl", TRANSACTIONS)
    result = command("run", *ARGS, "--engine", "spark", "--verify", str(tx))
    assert result.returncode == 2 and "--verify is for the local engine" in result.stderr


def test_a_difference_stops_the_run_at_its_transaction(tmp_path):
    """A subscriber that damages the session's state after each commit stands in
    for an engine bug: the run stops at the first transaction that shows it."""
    tx = write(tmp_path / "tx.dl", TRANSACTIONS)
    session = datalog.Program.from_file(ANDERSEN / "andersen.dl").session(ANDERSEN / "facts")

    def damage(delta):    # a row the circuit is given behind the session's back
        session._circuit.step({"alias": {("ghost", "ghost"): 1}})

    session.subscribe("points_to", damage)
    run = run_transactions(session, str(tx))
    assert run.transactions == 1 and run.line == 2
    assert describe(run, str(tx)).splitlines() == [
        f"after the transaction at {tx}:2: verify found differences in 1 relation:",
        "alias: 0 missing, 1 extra",
        '  extra   alias("ghost", "ghost")',
    ]
