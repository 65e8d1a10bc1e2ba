"""``datalog run`` has no iteration cap unless one is given: a counter to a million
finishes, ``--max-iterations`` takes any positive limit, and the limit's error
names the recursive relations and their rules' places."""

from __future__ import annotations

import subprocess
from pathlib import Path

COUNTER = """.decl c(n: number)
c(0).
c(n + 1) :- c(n), n < {bound}.
.printsize c
"""

TWO_RULES = """.decl even(n: number)
.decl odd(n: number)
even(0).
odd(n + 1) :- even(n).
even(n + 1) :- odd(n).
"""


def datalog(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, check=False,
                          timeout=timeout)


def test_a_counter_to_a_million_finishes_without_a_limit(tmp_path: Path):
    program = tmp_path / "count.dl"
    program.write_text(COUNTER.format(bound=1_000_000))
    result = datalog("run", str(program), "-D", "-", timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "c\t1000001\n"


def test_max_iterations_takes_limits_past_a_million(tmp_path: Path):
    program = tmp_path / "count.dl"
    program.write_text(COUNTER.format(bound=10))
    result = datalog("run", str(program), "--max-iterations", str(2 ** 40))
    assert (result.returncode, result.stdout) == (0, "c\t11\n"), result.stderr
    result = datalog("run", str(program), "--max-iterations", "5")
    assert result.returncode == 1
    assert "{c} did not reach a fixed point within 5 iterations" in result.stderr
    assert f"its recursive rules are at {program}:3:1" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_limit_error_names_every_recursive_rule(tmp_path: Path):
    program = tmp_path / "parity.dl"
    program.write_text(TWO_RULES)
    result = datalog("run", str(program), "--max-iterations", "7")
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{program}:4:1: error: iteration limit reached: the recursive "
                            "stratum {even, odd}") or \
        first.startswith(f"{program}:4:1: error: iteration limit reached: the recursive "
                         "stratum {odd, even}"), first
    assert first.endswith(f"its recursive rules are at {program}:4:1, {program}:5:1"), first


def test_help_says_there_is_no_limit_by_default():
    result = datalog("run", "--help")
    assert "no limit by default" in " ".join(result.stdout.split())
    assert "Ctrl-C" in result.stdout
