"""``autoinc()`` under incremental updates, as the README documents it:

- in one session each binding of a rule's variables gets a number the first
  time it is evaluated (0, 1, 2, ... across the program's call sites) and keeps
  it for the life of the session, through retraction and re-insertion;
- numbers are never reused, so after updates they are not those of a
  from-scratch evaluation of the same facts;
- a failed (or dry-run) transaction gives back the numbers it took.
"""

from __future__ import annotations

import os
import subprocess

import pytest

import datalog
from datalog import EvaluationError

PROGRAM = """.decl person(name: symbol)
.decl id(n: number, name: symbol)
.decl pair(n: number, a: symbol, b: symbol)
.decl bad(x: number)
.decl boom(x: number)
id(autoinc(), p) :- person(p).
pair(autoinc(), a, b) :- person(a), person(b), a < b.
boom(1 / (x - x)) :- bad(x).
"""


def numbers(session, relation="id") -> dict:
    return {row[1:]: row[0] for row in session.query(relation)}


def test_each_binding_gets_one_number_and_keeps_it():
    session = datalog.Program(PROGRAM).session()
    session.insert("person", ("ann",), ("bob",))
    first = numbers(session)
    assert sorted(first.values()) == [0, 1]
    all_numbers = list(first.values()) + list(numbers(session, "pair").values())
    assert sorted(all_numbers) == [0, 1, 2]      # one counter for every call site
    session.retract("person", ("ann",))
    assert numbers(session) == {("bob",): first[("bob",)]}
    assert session.query("pair") == frozenset()
    session.insert("person", ("ann",))           # the binding gets its number back
    assert numbers(session) == first
    session.insert("person", ("cyd",))           # a new binding: a new number
    assert numbers(session)[("cyd",)] == 3
    assert len(session.query("pair")) == 3


def test_numbers_after_updates_are_not_those_of_a_fresh_evaluation():
    program = datalog.Program(PROGRAM)
    session = program.session()
    session.insert("person", ("ann",))
    session.insert("person", ("bob",))
    session.retract("person", ("ann",))
    assert numbers(session) == {("bob",): 1}
    fresh = program.session()
    fresh.insert("person", ("bob",))
    assert numbers(fresh) == {("bob",): 0}       # same facts, another number


@pytest.mark.parametrize("how", ["failed", "dry run"])
def test_a_transaction_that_does_not_commit_gives_its_numbers_back(how):
    session = datalog.Program(PROGRAM).session()
    session.insert("person", ("ann",))
    if how == "failed":
        with pytest.raises(EvaluationError, match="division by zero"):
            with session.transaction() as tx:
                tx.insert("person", ("bob",), ("cyd",))
                tx.insert("bad", (3,))
    else:
        with session.transaction(dry_run=True) as tx:
            tx.insert("person", ("bob",), ("cyd",))
        assert len(tx.delta.inserted["id"]) == 2
    assert numbers(session) == {("ann",): 0}
    session.insert("person", ("dan",))
    assert numbers(session) == {("ann",): 0, ("dan",): 1}


def test_autoinc_takes_no_arguments_and_no_fact_calls_it():
    with pytest.raises(datalog.CheckError, match="`autoinc` takes 0 arguments, got 1"):
        datalog.Program(".decl a(x: number)\n.decl b(x: number)\nb(autoinc(x)) :- a(x).")
    with pytest.raises(datalog.CheckError, match="a fact cannot call `autoinc"):
        datalog.Program(".decl a(x: number)\na(autoinc()).")


def test_explaining_does_not_take_numbers():
    session = datalog.Program(PROGRAM).session()
    session.insert("person", ("ann",), ("bob",))
    number = numbers(session)[("bob",)]
    assert "person(\"bob\")" in str(session.explain(f'id({number}, "bob")'))
    session.why_not('id(7, "zed")')
    session.insert("person", ("cyd",))
    assert numbers(session)[("cyd",)] == 3


def test_two_runs_with_one_hash_seed_number_alike(tmp_path):
    path = tmp_path / "ids.dl"
    path.write_text(".decl person(name: symbol)\n.input person\n"
                    ".decl id(n: number, name: symbol)\n.output id\n"
                    "id(autoinc(), p) :- person(p).\n")
    (tmp_path / "person.facts").write_text("".join(f"p{i}\n" for i in range(50)))
    outputs = []
    for _ in range(2):
        result = subprocess.run(["datalog", "run", str(path), "-F", str(tmp_path), "-D", "-"],
                                capture_output=True, text=True, check=False, timeout=120,
                                env={**os.environ, "PYTHONHASHSEED": "0"})
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    rows = [line.split("\t") for line in outputs[0].splitlines() if "\t" in line]
    assert sorted(int(n) for n, _ in rows) == list(range(50))


def test_verify_reports_numbers_that_differ_from_a_fresh_run(tmp_path):
    path = tmp_path / "ids.dl"
    path.write_text(".decl person(name: symbol)\n.input person\n"
                    ".decl id(n: number, name: symbol)\n.output id\n"
                    "id(autoinc(), p) :- person(p).\n")
    (tmp_path / "person.facts").write_text("ann\n")
    (tmp_path / "tx.txt").write_text('-person("ann").\n+person("bob").\n')
    result = subprocess.run(["datalog", "run", str(path), "-F", str(tmp_path), "-D", "-",
                             "--verify", str(tmp_path / "tx.txt")],
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 1
    assert "verify found differences in 1 relation" in result.stderr
    # the session gives bob the next number, 1; a fresh run of {bob} gives it 0
    assert "tx.txt:2: verify found differences in 1 relation" in result.stderr
    assert 'missing id(0, "bob")' in result.stderr and 'extra   id(1, "bob")' in result.stderr
