"""``choice-domain`` on Spark: one domain (a window per domain value, round by
round in recursion) gives what the local engine gives; several domains are
refused at the rule, before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pytest

import datalog
from tests.spark.engines import run

pytestmark = pytest.mark.spark

CASES = Path(__file__).parents[1] / "choice"

UNSIGNED = """
.decl r(k: unsigned, v: unsigned) choice-domain k
.input r
.decl r2(k: symbol, v: number) choice-domain k
r2("é", 3). r2("é", -4). r2("e", 9). r2("z", 1).
.output r, r2
"""


@pytest.mark.parametrize("case", ["spanning_tree", "advisors", "inputs"])
def test_spark_chooses_what_the_local_engine_chooses(spark, tmp_path, case):
    program = str(CASES / case / f"{case}.dl")
    facts = str(CASES / case / "facts")
    local = run("local", program, facts, str(tmp_path / "local"))
    assert run("spark", program, facts, str(tmp_path / "spark"), spark) == local
    assert local[1] == (CASES / case / f"{case}.out").read_text()


def test_spark_orders_unsigned_and_symbols_as_the_local_engine(spark, tmp_path):
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "r.facts").write_text(
        "1\t18446744073709551615\n1\t9223372036854775808\n1\t5\n2\t9223372036854775809\n"
        "2\t18446744073709551614\n")
    (tmp_path / "p.dl").write_text(UNSIGNED)
    args = (str(tmp_path / "p.dl"), str(tmp_path / "facts"))
    local = run("local", *args, str(tmp_path / "local"))
    assert local[0]["r.csv"] == "1\t5\n2\t9223372036854775809\n"
    assert local[0]["r2.csv"].splitlines() == ["e\t9", "z\t1", "é\t-4"]
    assert run("spark", *args, str(tmp_path / "spark"), spark) == local


def test_spark_refuses_several_domains_at_the_rule(tmp_path):
    case = CASES / "matching"
    with pytest.raises(datalog.DatalogError) as info:
        datalog.run(str(case / "matching.dl"), str(case / "facts"), "-", engine="spark")
    text = str(info.value)
    assert text.startswith(f"{case / 'matching.dl'}:7:1: error: `assigned` has several "
                           "choice domains, which the Spark engine does not evaluate")
    assert "(in `assigned(t, w) :- can(t, w).`)" in text and "--engine local" in text
