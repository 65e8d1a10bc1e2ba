"""The process the crash test kills: ``python -m tests.datalog.store_writer
DIR`` opens a durable session of programs/stratified_negation on ``DIR`` and
commits transactions :func:`changes` ``(n)`` for n = 1, 2, ..., printing ``n``
on standard output after each commit returns (the acknowledgement), forever."""

from __future__ import annotations

import sys
from pathlib import Path

PROGRAM = Path(__file__).resolve().parents[2] / "programs" / "stratified_negation"


def changes(n: int) -> list[tuple[str, str, tuple]]:
    """Transaction ``n``: a new link, a host with a symbol that needs escaping,
    and every fourth time the retraction of an earlier link."""
    ops = [("insert", "link", (f"n{n}", f"n{n + 1}")),
           ("insert", "firewall", (f"é\u2028\"{n}\"",))]
    if n % 4 == 0:
        ops.append(("retract", "link", (f"n{n - 2}", f"n{n - 1}")))
    return ops


def expected_inputs(session_inputs: dict, transactions: int) -> dict:
    """The inputs after ``transactions`` of :func:`changes`, from the initial ones."""
    inputs = {name: set(rows) for name, rows in session_inputs.items()}
    for n in range(1, transactions + 1):
        for op, relation, row in changes(n):
            (inputs[relation].add if op == "insert" else inputs[relation].discard)(row)
    return inputs


def main(directory: str) -> None:
    import datalog

    program = datalog.Program.from_file(PROGRAM / "stratified_negation.dl")
    session = program.session(PROGRAM / "facts", store=directory)
    print(f"ready {session.committed}", flush=True)
    n = session.committed
    while True:
        n += 1
        with session.transaction() as tx:
            for op, relation, row in changes(n):
                getattr(tx, op)(relation, row)
        print(n, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
