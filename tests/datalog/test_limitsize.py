"""``.limitsize r(n=N)``: Soufflé's soft limit on a recursive relation, through
the API and the ``datalog`` command, and what it does under incremental updates
(as the README says)."""

from __future__ import annotations

import subprocess

import pytest

import datalog
from datalog import CheckError

COUNTER = """.decl A(x: number)
A(1).
A(x + 1) :- A(x), x < 1000.
.printsize A
.limitsize A(n=47)
.decl B(x: number)
B(x) :- A(x), x != 0.
.printsize B
.limitsize B(n=5)
"""

SEEDED = """.decl seed(x: number)
.decl A(x: number)
A(x) :- seed(x).
A(x + 1) :- A(x), x < 1000.
.limitsize A(n=10)
"""


def test_the_loop_of_a_recursive_relation_ends_at_the_limit():
    session = datalog.Program(COUNTER).session()
    assert session.query("A") == {(x,) for x in range(1, 48)}
    # a relation that is not recursive is not limited (as in Soufflé)
    assert session.size("B") == 47


def test_the_limit_is_soft_an_iteration_may_pass_it():
    text = (".decl e(x: number, y: number)\n.decl r(x: number)\nr(0).\n"
            "r(y) :- r(x), e(x, y).\n.limitsize r(n=2)\n")
    session = datalog.Program(text).session()
    session.insert("e", (0, 1), (0, 2), (0, 3), (1, 4))
    assert session.query("r") == {(0,), (1,), (2,), (3,)}   # one iteration adds three


def test_under_updates_only_transactions_that_add_are_limited():
    session = datalog.Program(SEEDED).session()
    session.insert("seed", (0,))
    assert session.query("A") == {(x,) for x in range(10)}
    session.insert("seed", (100,))          # already at the limit: no loop beyond it
    assert session.query("A") == {(x,) for x in range(10)} | {(100,)}
    session.retract("seed", (0,))           # a removal runs to its fixed point
    assert session.query("A") == {(100,)}   # what the limit cut off is not derived now
    session.retract("seed", (100,))
    assert session.query("A") == frozenset()
    session.insert("seed", (500,))
    assert session.query("A") == {(x,) for x in range(500, 510)}


def test_the_smallest_of_two_limits_counts():
    session = datalog.Program(COUNTER + ".limitsize A(n=3)\n").session()
    assert session.size("A") == 3


@pytest.mark.parametrize("directive, message", [
    (".limitsize A", "`.limitsize` needs the number of rows: `.limitsize A(n=N)`"),
    (".limitsize A(n=1.5)", "`n=` of `.limitsize` must be a number of rows, got `1.5`"),
    ('.limitsize A(n="x")', "`n=` of `.limitsize` must be a number of rows, got `x`"),
    (".limitsize A(n=3, size=4)", "`.limitsize` takes only `n=`, got `size=`"),
    (".limitsize Z(n=3)", "undefined relation `Z`"),
])
def test_its_parameter_is_checked(directive, message):
    with pytest.raises(CheckError) as info:
        datalog.Program(".decl A(x: number)\nA(1).\n" + directive + "\n")
    assert message in str(info.value)


def test_datalog_run_honours_it(tmp_path):
    path = tmp_path / "limit.dl"
    path.write_text(COUNTER)
    result = subprocess.run(["datalog", "run", str(path)], capture_output=True, text=True,
                            check=False, timeout=120)
    assert (result.returncode, result.stdout) == (0, "A\t47\nB\t47\n"), result.stderr
    path.write_text(COUNTER.replace("n=47", "n=big"))
    result = subprocess.run(["datalog", "check", str(path)], capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 1
    assert f"{path}:5:14: error: `n=` of `.limitsize` must be a number of rows" in result.stdout
