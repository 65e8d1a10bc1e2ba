"""Soufflé's other input formats on Spark (read by the local reader, then handed
to Spark): the same rows as the local engine; outputs only the local engine
writes are refused by name."""

from __future__ import annotations

import gzip
import sqlite3

from datalog.errors import DatalogError
from tests.spark.engines import ENGINES, run

PROGRAM = """.decl a(x: number, s: symbol)
.input a
.decl b(x: number, s: symbol)
.input b(rfc4180=true, filename="b.csv")
.decl c(x: number, s: symbol)
.input c(IO=sqlite, dbname="c.db")
.decl d(x: number, s: symbol)
.input d(IO=jsonfile)
.decl all(x: number, s: symbol)
.output all
.output all(IO=stdout, headers=true)
.output all(headers=true, delimiter=";", filename="h.csv")
all(x, s) :- a(x, s) ; b(x, s) ; c(x, s) ; d(x, s).
"""


def test_every_input_format_reads_alike_on_both_engines(spark, tmp_path):
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "a.facts").write_bytes(gzip.compress(b"1\tone\n"))
    (facts / "b.csv").write_text('2,"two, three"\n')
    with sqlite3.connect(facts / "c.db") as db:
        db.execute("CREATE TABLE c (x INTEGER, s TEXT)")
        db.execute("INSERT INTO c VALUES (3, 'three')")
    db.close()
    (facts / "d.json").write_text('[[4, "four"]]')
    (tmp_path / "p.dl").write_text(PROGRAM)
    local, on_spark = (run(e, str(tmp_path / "p.dl"), str(facts), str(tmp_path / e), spark)
                       for e in ENGINES)
    assert local == on_spark
    assert local[0]["all.csv"] == "1\tone\n2\ttwo, three\n3\tthree\n4\tfour\n"
    assert local[0]["h.csv"] == "x;s\n1;one\n2;two, three\n3;three\n4;four\n"
    assert local[1].startswith("---------------\nall\nx\ts\n===============\n1\tone\n")


def test_a_sqlite_or_json_output_is_refused_before_spark_starts(tmp_path):
    for directive, shown in (('.output r(IO=sqlite, dbname="o.db")', "IO=sqlite"),
                             (".output r(IO=json)", "IO=json"),
                             (".output r(compress=true)", "compress=true")):
        (tmp_path / "p.dl").write_text(f".decl r(x: number)\nr(1).\n{directive}\n")
        try:
            run("spark", str(tmp_path / "p.dl"), str(tmp_path), str(tmp_path / "out"))
        except DatalogError as error:
            assert f".output r({shown}) is not supported by --engine spark" in str(error)
        else:
            raise AssertionError(f"{directive} was accepted")
        assert not (tmp_path / "out").exists()
