"""Soufflé's other I/O through the installed ``datalog run``: gzip-compressed
fact files, ``headers=true``, ``rfc4180=true`` and ``IO=sqlite``, each written
and read back, and a bad input each."""

from __future__ import annotations

import gzip
import sqlite3
import subprocess
from pathlib import Path

WRITE = """.decl e(x: number, s: symbol)
.input e
.decl r(x: number, s: symbol)
r(x, s) :- e(x, s).
r(7, "tab\\there, comma, \\"quoted\\"\\nnext line\\r\\nlast").
"""

#: The rows of `r` given `e.facts` below.
ROWS = {(1, "one"), (2, "two words"),
        (7, 'tab\there, comma, "quoted"\nnext line\r\nlast')}

READ = """.decl r(x: number, s: symbol)
.input r({params})
.decl back(x: number, s: symbol)
.output back(rfc4180=true, filename="back.csv")
back(x, s) :- r(x, s).
"""


def datalog(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["datalog", *args], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=120)


def setup(tmp_path: Path, output: str) -> Path:
    (tmp_path / "e.facts").write_text("1\tone\n2\ttwo words\n")
    (tmp_path / "w.dl").write_text(WRITE + output + "\n")
    result = datalog("run", "w.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "out"


def read_back(tmp_path: Path, params: str) -> set[tuple]:
    """`r` read with `params` from out/ and written again with RFC 4180 quoting,
    parsed by Python's csv module."""
    import csv

    (tmp_path / "r.dl").write_text(READ.format(params=params))
    result = datalog("run", "r.dl", "-F", "out", "-D", "again", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "again" / "back.csv", newline="", encoding="utf-8") as handle:
        return {(int(x), s) for x, s in csv.reader(handle)}


def assert_error(result: subprocess.CompletedProcess, located: str, text: str) -> None:
    assert result.returncode == 1
    assert result.stderr.startswith(located), result.stderr
    assert text in result.stderr
    assert "Traceback" not in result.stderr


def test_rfc4180_writes_quoted_fields_that_read_back(tmp_path):
    out = setup(tmp_path, ".output r(rfc4180=true)")
    text = (out / "r.csv").read_bytes().decode()
    assert text.startswith('1,"one"\n2,"two words"\n7,"tab\there, comma, ""quoted""\n')
    assert read_back(tmp_path, "rfc4180=true, filename=\"r.csv\"") == ROWS


def test_without_rfc4180_such_a_row_is_refused_with_a_hint(tmp_path):
    (tmp_path / "e.facts").write_text("1\tone\n")
    (tmp_path / "w.dl").write_text(WRITE + ".output r\n")
    result = datalog("run", "w.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "error: cannot write `r`", "rfc4180=true")
    assert not (tmp_path / "out" / "r.csv").exists()


def test_rfc4180_bad_quotes_are_located(tmp_path):
    (tmp_path / "r.facts").write_text('1,"fine"\n2,"open\n3,x\n')
    (tmp_path / "p.dl").write_text(".decl r(x: number, s: symbol)\n.input r(rfc4180=true)\n"
                                   ".output r\n")
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./r.facts:2: error:", "no closing quote")
    (tmp_path / "r.facts").write_text('1,"a"b\n')
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./r.facts:1: error:", "followed by 'b'")
    (tmp_path / "p.dl").write_text('.decl r(x: number, s: symbol)\n'
                                   '.input r(rfc4180=true, delimiter="\\"")\n')
    result = datalog("check", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("p.dl:2:24: error: `delimiter=` holds a quote"), \
        result.stdout


def test_headers_written_and_skipped(tmp_path):
    out = setup(tmp_path, ".output r(rfc4180=true, headers=true, delimiter=\";\")")
    assert (out / "r.csv").read_text().startswith('x;s\n1;"one"\n')
    assert read_back(tmp_path, 'rfc4180=true, headers=true, delimiter=";", '
                               'filename="r.csv"') == ROWS


def test_gzip_facts_are_read_whatever_their_name(tmp_path):
    out = setup(tmp_path, ".output r(compress=true, rfc4180=true)")
    data = (out / "r.csv.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data).startswith(b'1,"one"\n')
    assert read_back(tmp_path, 'rfc4180=true, filename="r.csv.gz"') == ROWS
    (out / "r.facts").write_bytes(gzip.compress(b"4\tfour\n5\tfive\n"))  # no .gz in the name
    assert read_back(tmp_path, "") == {(4, "four"), (5, "five")}


def test_a_corrupt_gzip_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "r.facts").write_bytes(gzip.compress(b"1\tone\n" * 100)[:30])
    (tmp_path / "p.dl").write_text(".decl r(x: number, s: symbol)\n.input r\n.output r\n")
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./r.facts: error: cannot read fact file for `r`",
                 "gzip-compressed but corrupt")
    assert not (tmp_path / "out").exists()


SQLITE = """.decl q(s: symbol, f: float, u: unsigned)
q(s, 1.5, 3) :- e(_, s).
.output r(IO=sqlite, dbname="out.db")
.output q(IO=sqlite, dbname="out.db")
"""


def test_sqlite_tables_and_views_as_souffle_lays_them_out(tmp_path):
    (tmp_path / "out").mkdir()
    with sqlite3.connect(tmp_path / "out" / "out.db") as db:   # kept: not ours
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('kept')")
    db.close()
    out = setup(tmp_path, SQLITE)
    db = sqlite3.connect(out / "out.db")
    try:
        assert set(db.execute("SELECT x, s FROM r")) == ROWS
        assert set(db.execute('SELECT "0", "1" FROM _r')) \
            == set(db.execute('SELECT x, id FROM r JOIN __SymbolTable ON symbol = s'))
        assert set(db.execute("SELECT * FROM q")) == {("one", 1.5, 3), ("two words", 1.5, 3)}
        assert list(db.execute("SELECT * FROM notes")) == [("kept",)]
    finally:
        db.close()
    assert read_back(tmp_path, 'IO=sqlite, dbname="out.db"') == ROWS


def test_sqlite_missing_table_or_bad_value_is_an_error(tmp_path):
    (tmp_path / "db.sqlite").touch()
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        db.execute("CREATE TABLE other (x INTEGER)")
        db.execute("CREATE TABLE n (x INTEGER, s TEXT)")
        db.execute("INSERT INTO n VALUES ('seven', 'a')")
    db.close()
    (tmp_path / "p.dl").write_text('.decl r(x: number, s: symbol)\n'
                                   '.input r(IO=sqlite, dbname="db.sqlite")\n.output r\n')
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./db.sqlite: error:", "no table or view `r`")
    (tmp_path / "p.dl").write_text('.decl n(x: number, s: symbol)\n'
                                   '.input n(IO=sqlite, dbname="db.sqlite")\n.output n\n')
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./db.sqlite: error:", "row 1 of the table `n`, column 1 (x) is `seven`")
    (tmp_path / "p.dl").write_text('.decl n(x: number, s: symbol)\n'
                                   '.input n(IO=sqlite, dbname="none.db")\n')
    result = datalog("run", "p.dl", cwd=tmp_path)
    assert_error(result, "./none.db: error:", "no such file")
    assert not (tmp_path / "none.db").exists()


def test_outputs_stay_all_or_nothing_with_a_database(tmp_path):
    (tmp_path / "e.facts").write_text("1\tone\n")
    (tmp_path / "w.dl").write_text(WRITE + '.output r(IO=sqlite, dbname="out.db")\n'
                                   ".output r\n")   # the plain file cannot hold row 7
    result = datalog("run", "w.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "error: cannot write `r`", "line break")
    assert not (tmp_path / "out" / "out.db").exists()


def test_spark_refuses_a_sqlite_output_naming_the_directive(tmp_path):
    (tmp_path / "p.dl").write_text('.decl r(x: number)\nr(1).\n'
                                   '.output r(IO=sqlite, dbname="o.db")\n')
    result = datalog("run", "p.dl", "--engine", "spark", cwd=tmp_path)
    assert_error(result, "error: .output r(IO=sqlite) is not supported by --engine spark",
                 "local engine")


JSON = """.type P = [a: number, b: symbol]
.type L = [h: number, t: L]
.decl r(x: number, s: symbol, p: P, l: L, f: float)
r(1, "a \\"q\\"\\n", [2, "x"], [1, [2, nil]], 1.5).
r(2, "b", nil, nil, -0.5).
"""


def test_json_lists_and_objects_written_and_read_back(tmp_path):
    (tmp_path / "w.dl").write_text(JSON + ".output r(IO=jsonfile)\n"
                                   '.output r(IO=jsonfile, format=object, filename="o.json")\n'
                                   ".output r(IO=json)\n")
    result = datalog("run", "w.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = '[[1, "a \\"q\\"\\n", [2, "x"], [1, [2, null]], 1.5],\n' \
             '[2, "b", null, null, -0.5]]\n'
    assert (tmp_path / "out" / "r.json").read_text() == listed
    assert result.stdout == listed
    assert (tmp_path / "out" / "o.json").read_text().startswith(
        '[{"x": 1, "s": "a \\"q\\"\\n", "p": {"a": 2, "b": "x"}, '
        '"l": {"h": 1, "t": {"h": 2, "t": null}}, "f": 1.5},\n')
    read = JSON.split("r(1,")[0] + (
        ".input r(IO=jsonfile)\n"
        ".decl o(x: number, s: symbol, p: P, l: L, f: float)\n"
        '.input o(IO=jsonfile, filename="o.json")\n'
        ".decl n(n: number)\n.output n(IO=stdout)\n"
        "n(c) :- c = count : { r(x, s, p, l, f), o(x, s, p, l, f) }.\n")
    (tmp_path / "b.dl").write_text(read)
    result = datalog("run", "b.dl", "-F", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "\n2\n" in result.stdout
    (tmp_path / "s.dl").write_text(".decl r(x: number, s: symbol)\n.input r(IO=json)\n"
                                   ".output r(IO=stdout)\n")
    result = subprocess.run(["datalog", "run", "s.dl"], input='[[2, "b"], {"s": "a", "x": 1}]',
                            capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "1\ta\n2\tb\n" in result.stdout


def test_bad_json_is_located(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r(x: number, s: symbol)\n.input r(IO=jsonfile)\n"
                                   ".output r\n")
    (tmp_path / "r.json").write_text('[[1, "a"],\n[2, "b"]')
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./r.json:2:9: error: not valid JSON", "Expecting")
    (tmp_path / "r.json").write_text('[[1, "a"], ["2", "b"]]')
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert_error(result, "./r.json: error: row 2 of the JSON for `r`", '"2" does not fit')
    (tmp_path / "p.dl").write_text(".decl r(x: number)\n.output r(IO=json, format=table)\n")
    result = datalog("check", "p.dl", cwd=tmp_path)
    assert result.returncode == 1 and "`format=table` is not a JSON format" in result.stdout
