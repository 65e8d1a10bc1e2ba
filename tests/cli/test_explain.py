"""``datalog explain`` through the installed command."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_run import datalog

ANDERSEN = Path(__file__).resolve().parents[2] / "programs" / "andersen"


def test_explain_prints_each_derivation(tmp_path):
    result = datalog("explain", "andersen.dl", "-F", "facts", 'alias("b", "c")',
                     'points_to("p", "a")', cwd=ANDERSEN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n\n")[1] == (
        'points_to("p", "a")  by points_to(p, x) :- address_of(p, x).  andersen.dl:60:1\n'
        '  address_of("p", "a")  input\n')
    first = result.stdout.split("\n\n")[0].splitlines()
    assert first[0] == ('alias("b", "c")  by alias(p, q) :- points_to(p, x), '
                        "points_to(q, x), p != q.  andersen.dl:67:1")
    assert '    assign("c", "b")  input' in first


def test_a_fact_that_does_not_hold_gets_why_not_and_status_1():
    result = datalog("explain", "andersen.dl", "-F", "facts", 'alias("a", "a")',
                     cwd=ANDERSEN)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == 'alias("a", "a") does not hold:'
    assert lines[1] == ("  alias(p, q) :- points_to(p, x), points_to(q, x), p != q.  "
                        'andersen.dl:67:1: the condition "a" != "a" is false (step 3)')


def test_a_bad_fact_is_a_located_error():
    result = datalog("explain", "andersen.dl", "-F", "facts", "alias(1)", cwd=ANDERSEN)
    assert result.returncode == 1
    assert result.stderr.splitlines()[:3] == [
        "<fact>:1:1: error: relation `alias` has 2 attributes, got 1 argument",
        "    alias(1)", "    ^~~~~~~~"]
