"""``datalog repl --store DIR`` through the real command: commits survive the
process, ``:at N`` reads the past, ``:verify`` checks, and the program cannot
change under its store."""

from __future__ import annotations

import shutil

from tests.repl.transcripts import DATA, compare, run_repl


def _expect(lines: list[str], expected: str) -> None:
    difference = compare(expected.strip("\n").split("\n"), lines)
    assert difference is None, difference


def test_a_store_outlives_the_repl(tmp_path):
    shutil.copy(DATA / "negation.dl", tmp_path)
    args = ["negation.dl", "--store", "st"]
    lines, status = run_repl(args, "node(1). node(2).\nedge(1, 2).\n:at 1\n?- source(x).\n"
                             "node(3).\n:at\n?- source(x).\n:verify\np(x) :- node(x).\n"
                             ":at 9\n", tmp_path)
    assert status == 1                    # the refused statements failed
    _expect(lines, """
created the store st
+indegree(1, 0)
+source(1)
committed: 2 inserted, 0 retracted
+indegree(2, 0)
+source(2)
committed: 2 inserted, 0 retracted
-indegree(2, 0)
+indegree(2, 1)
-source(2)
committed: 1 inserted, 2 retracted
at transaction 1 of 3: queries read that state (read-only); `:at` returns to the present
source(1)
1 row
<repl>:5:1: error: viewing the state after transaction 1, which is read-only
    node(3).
    ^~~~~~~~
hint: `:at` alone returns to the present
at the present: statements apply to the live session
source(1)
1 row
verified: every relation equals its from-scratch evaluation (4 relations, 6 rows)
<repl>:9:1: error: the program cannot change while it has a store (--store); not extending it
    p(x) :- node(x).
    ^~~~~~~~~~~~~~~~
hint: add the rules to the program file and open the store with --migrate
<repl>:10:5: error: no transaction 9: the store holds transactions 0 to 3
    :at 9
        ^
""")
    lines, status = run_repl(args, "?- source(x).\n-edge(1, 2).\n:at 3\n:dump source\n",
                             tmp_path)
    assert status == 0
    _expect(lines, """
reopened st: replayed 3 transactions (the snapshot of transaction 0, then 3 from the log) in ... ms
source(1)
1 row
+indegree(2, 0)
-indegree(2, 1)
+source(2)
committed: 2 inserted, 1 retracted
at transaction 3 of 4: queries read that state (read-only); `:at` returns to the present
source(1)
1 row
""")


def test_another_program_needs_migrate(tmp_path):
    shutil.copy(DATA / "negation.dl", tmp_path)
    run_repl(["negation.dl", "--store", "st"], "node(7).\n", tmp_path)
    (tmp_path / "more.dl").write_text((DATA / "negation.dl").read_text()
                                      + ".decl big(x: number)\n.output big\n"
                                        "big(x) :- node(x), x > 5.\n")
    lines, status = run_repl(["more.dl", "--store", "st"], "?- big(x).\n", tmp_path)
    assert status == 1
    assert lines[0].startswith("error: the store st was written by another program "
                               "(negation.dl: its relations, rules or facts differ)")
    lines, status = run_repl(["more.dl", "--store", "st", "--migrate"], "?- big(x).\n",
                             tmp_path)
    assert status == 0
    _expect(lines, """
migrated the store st to this program at transaction 1
reopened st: replayed 1 transaction (the snapshot of transaction 0, then 1 from the log) in ... ms
big(7)
1 row
""")


def test_time_travel_without_a_store_and_migrate_without_one(tmp_path):
    shutil.copy(DATA / "negation.dl", tmp_path)
    lines, status = run_repl(["negation.dl"], ":at 0\n:verify\n", tmp_path)
    assert status == 1
    assert lines[:4] == ["<repl>:1:1: error: time travel needs a durable session",
                         "    :at 0", "    ^~~~~", "hint: start the REPL with `--store DIR`"]
    assert lines[4].startswith("verified: every relation equals")
    lines, status = run_repl(["negation.dl", "--migrate"], "", tmp_path)
    assert status == 2 and lines[-1] == "Error: --migrate needs --store DIR"
