"""A session reading its fact directory in Soufflé's other formats (gzip,
``rfc4180=true``, ``IO=sqlite``, ``IO=jsonfile``), then updated incrementally."""

from __future__ import annotations

import gzip
import sqlite3

import pytest

import datalog
from datalog.errors import DataError

PROGRAM = """.decl a(x: number, s: symbol)
.input a
.decl b(x: number, s: symbol)
.input b(rfc4180=true, filename="b.csv")
.decl c(x: number, s: symbol)
.input c(IO=sqlite, dbname="c.db")
.decl d(x: number, s: symbol)
.input d(IO=jsonfile)
.decl all(x: number, s: symbol)
all(x, s) :- a(x, s) ; b(x, s) ; c(x, s) ; d(x, s).
"""


def facts(tmp_path):
    (tmp_path / "a.facts").write_bytes(gzip.compress(b"1\tone\n"))
    (tmp_path / "b.csv").write_text('2,"two, ""2"""\n')
    with sqlite3.connect(tmp_path / "c.db") as db:
        db.execute("CREATE TABLE c (x INTEGER, s TEXT)")
        db.execute("INSERT INTO c VALUES (3, 'three')")
    db.close()
    (tmp_path / "d.json").write_text('[{"x": 4, "s": "four"}]')


def test_a_session_reads_every_format_and_stays_incremental(tmp_path):
    facts(tmp_path)
    session = datalog.Program(PROGRAM).session(tmp_path)
    assert set(session.query("all")) == {(1, "one"), (2, 'two, "2"'), (3, "three"),
                                         (4, "four")}
    session.retract("c", (3, "three"))
    session.insert("d", (5, "five"))
    assert set(session.query("all")) == {(1, "one"), (2, 'two, "2"'), (4, "four"),
                                         (5, "five")}


def test_a_missing_table_fails_the_session_at_the_database(tmp_path):
    facts(tmp_path)
    with sqlite3.connect(tmp_path / "c.db") as db:
        db.execute("DROP TABLE c")
    db.close()
    with pytest.raises(DataError, match=r"c\.db: error: the SQLite database has no table"):
        datalog.Program(PROGRAM).session(tmp_path)
