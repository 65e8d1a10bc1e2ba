"""The REPL's interpreter in this process: what transcripts cannot show."""

import io

from datalog.repl import Repl
from tests.repl.transcripts import DATA


def session(*lines: str) -> tuple[Repl, io.StringIO]:
    out = io.StringIO()
    repl = Repl(str(DATA / "tc.dl"), str(DATA / "facts"), out=out, err=out)
    repl.feed_lines(lines)
    return repl, out


def test_a_failed_commit_rolls_the_transaction_back_and_says_so(tmp_path):
    program = tmp_path / "z.dl"
    program.write_text(".decl e(x: number)\n.decl q(x: number)\n.output q\nq(10 / x) :- e(x).\n")
    out = io.StringIO()
    repl = Repl(str(program), None, out=out, err=out)
    repl.feed_lines([":begin", "e(1).", "e(0).", ":commit"])
    text = out.getvalue()
    assert "division by zero" in text
    assert ("error: the transaction was rolled back: none of its 2 changes took effect\n"
            "hint: fix what failed, then `:begin` again") in text
    assert repl.pending is None and repl.failed
    assert repl.session.query("e") == frozenset()
    repl.feed_lines([":commit"])               # nothing is open any more
    assert "no transaction is open" in out.getvalue()
    repl.feed_lines(["e(2)."])                 # and the session goes on
    assert repl.session.query("q") == frozenset({(5,)})


def test_an_interrupted_statement_leaves_the_committed_state():
    repl, out = session("edge(3, 4).", "-edge(1, 2).")
    before = {name: repl.session.query(name) for name in ("edge", "path")}
    repl.feed("edge(9,")
    repl.interrupted()
    assert not repl.reader.pending
    assert {name: repl.session.query(name) for name in ("edge", "path")} == before
    assert "interrupted" in out.getvalue()


def test_save_writes_every_relation_in_the_facts_format(tmp_path):
    target = tmp_path / "saved"
    repl, _ = session("edge(3, 4).", f":save {target}")
    assert sorted(p.name for p in target.iterdir()) == ["edge.facts", "path.facts"]
    assert (target / "edge.facts").read_text() == "1\t2\n2\t3\n3\t4\n"
    assert (target / "path.facts").read_text().splitlines()[:3] == ["1\t2", "1\t3", "1\t4"]
    assert not repl.failed


def test_save_refuses_symbols_that_a_facts_file_cannot_hold(tmp_path):
    out = io.StringIO()
    repl = Repl(str(DATA / "people.dl"), out=out, err=out)
    repl.feed_lines(['person("a\\tb", 1, 1.0).', f":save {tmp_path / 'x'}"])
    assert repl.failed
    assert "holds a tab (the delimiter)" in out.getvalue()
    assert not (tmp_path / "x").exists()


def test_a_failed_statement_changes_nothing():
    repl, _ = session("edge(3, 4).")
    text, changes = repl.text, dict(repl.changes)
    rows = repl.session.query("path")
    repl.feed_lines(["p(x) :- nothing(x).", "edge(1, \"x\").", ".decl path(a: number)"])
    assert repl.failed
    assert repl.text == text and repl.changes == changes
    assert repl.session.query("path") == rows


def test_a_value_out_of_its_columns_range_is_reported_at_the_statement():
    out = io.StringIO()
    repl = Repl(str(DATA / "people.dl"), out=out, err=out)
    repl.feed_lines(["", 'person("x", -1, 1.0).', 'person("y", 18446744073709551616, 1.0).'])
    assert repl.failed
    text = out.getvalue()
    assert text.count("error:") == 2
    assert "<repl>:2:" in text and "<repl>:3:" in text
    assert repl.session.query("person") == frozenset()


def test_asserted_facts_and_query_constants_are_evaluated_as_program_facts():
    out = io.StringIO()
    repl = Repl(str(DATA / "people.dl"), out=out, err=out)
    repl.feed_lines(['person("x", 3 - 1, 3 / 2).', '?- person(_, _, 6 / 4).'])
    assert not repl.failed
    assert repl.session.query("person") == {("x", 2, 1.5)}
    assert out.getvalue().splitlines()[-2:] == ['person("x", 2, 1.5)', "1 row"]


def test_an_interrupted_durable_session_reopens_its_store(tmp_path):
    out = io.StringIO()
    repl = Repl(str(DATA / "tc.dl"), str(DATA / "facts"), out=out, err=out,
                session_options={"store": str(tmp_path / "st")})
    repl.feed("edge(3, 4).")
    repl.feed("-edge(1, 2).")
    before = {name: repl.session.query(name) for name in ("edge", "path")}
    repl.interrupted()
    assert {name: repl.session.query(name) for name in ("edge", "path")} == before
    assert repl.session.committed == 2        # nothing replayed into the log again
    repl.feed(":at 1")
    assert (1, 2) in repl.reading.query("edge") and (3, 4) in repl.reading.query("edge")
    repl.finish()
    assert not repl.failed


def test_a_bug_in_a_statement_is_one_line_and_the_session_is_as_before(monkeypatch):
    repl, out = session("edge(3, 4).")
    before = {name: repl.session.query(name) for name in ("edge", "path")}

    def broken(*args, **kwargs):   # fails after the transaction committed
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(Repl, "_print_changes", broken)
    repl.feed("edge(7, 8).\n")
    monkeypatch.undo()
    errors = [line for line in out.getvalue().splitlines() if "internal error" in line]
    assert errors == ["error: internal error: RuntimeError: boom second line (the session "
                      "is as it was before the statement; please report this with the "
                      "input that caused it)"]
    assert {name: repl.session.query(name) for name in ("edge", "path")} == before
    assert ("edge", (7, 8)) not in repl.changes and repl.failed
    repl.feed("edge(5, 6).\n")
    assert (5, 6) in repl.session.query("edge") and (7, 8) not in repl.session.query("edge")


def test_a_bug_in_a_meta_command_leaves_the_transaction_open(monkeypatch):
    from datalog.repl import commands

    repl, out = session()
    repl.feed(":begin\n")
    repl.feed("edge(3, 4).\n")

    def broken(*args):
        raise KeyError("rels")

    monkeypatch.setitem(commands._HANDLERS, ":rels", broken)
    repl.feed(":rels\n")
    assert "error: internal error: KeyError: 'rels'" in out.getvalue()
    assert repl.pending == {("edge", (3, 4)): 1}
    repl.feed(":commit\n")
    assert (3, 4) in repl.session.query("edge")
