"""The REPL's statement reader: where statements end, what kind they are, where
they start, whatever the layout of the input."""

from hypothesis import given, settings
from hypothesis import strategies as st

from datalog.syntax.statements import StatementReader, classify, meta_words

# Statements that end with a terminating `.`, with dots, quotes and comment
# markers inside strings and numbers to trip a careless reader.
TERMINATED = [
    ("edge(1, 2).", "assert"),
    ('+name("a.b", "x // y").', "assert"),
    ('-name("say \\"hi\\".", "/* no */").', "retract"),
    ("p(x) :- q(x), x > 1.5.", "program"),
    ("p(x) :-\n  q(x, y),\n  !r(y).", "program"),
    ("?- path(1, x).", "query"),
    ("?- path(\n  1, x).", "query"),
    ("f(2.5, -3).", "assert"),
]
# Statements that end with their line.
LINE_ENDED = [
    (".decl e(x: number, y: symbol)", "program"),
    (".decl e2(x: number,\n   y: symbol) brie", "program"),
    (".output path", "program"),
    ("?path(1, x)", "query"),
    (":dump path", "meta"),
    (":timing on", "meta"),
    ("commit dump_changes;", "meta"),
    ("start;", "meta"),
]
GAPS = ["", " ", "  ", "\n", " \n\n  ", "\n// a comment\n", " /* c */ ", "\n/* two\nlines */ "]


@st.composite
def layouts(draw):
    """A list of (statement, kind) and an input text holding them in order."""
    chosen = draw(st.lists(st.sampled_from(TERMINATED + LINE_ENDED), min_size=1,
                           max_size=8))
    text = draw(st.sampled_from(["", "\n", "  "]))
    for statement, kind in chosen:
        text += statement
        gap = draw(st.sampled_from(GAPS))
        if (statement, kind) in LINE_ENDED and "\n" not in gap.split("/*")[0]:
            gap = gap.split("/*")[0].rstrip(" ") + "\n" + gap
        if (statement, kind) in TERMINATED and gap == "":
            gap = " "
        text += gap
    return chosen, text


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_reader_finds_every_statement(case):
    chosen, text = case
    reader = StatementReader()
    found = []
    lines = text.split("\n")
    for line in lines:
        found.extend(reader.feed(line))
    found.extend(reader.flush())
    assert [(s.text, s.kind) for s in found] == chosen
    for statement in found:
        line = lines[statement.line - 1]
        assert line[statement.column - 1:].startswith(statement.text.split("\n")[0])
    assert not reader.pending


def test_kinds():
    assert classify(":rels") == "meta"
    assert classify("rollback;") == "meta"
    assert classify("?path(x, y)") == "query"
    assert classify("a(x), b(x) :- c(x).") == "program"
    assert classify('e("a :- b").') == "assert"
    assert classify("#define N 3") == "program"


def test_pending_and_reset():
    reader = StatementReader()
    assert reader.feed("edge(1,") == []
    assert reader.pending
    reader.reset()
    assert not reader.pending
    assert [s.text for s in reader.feed("edge(2, 3).")] == ["edge(2, 3)."]


def test_a_dot_in_a_number_or_a_name_does_not_end_a_statement():
    reader = StatementReader()
    assert reader.feed("p(x) :- q(x), x < 2.5") == []
    assert reader.feed(", x > 1.") != []
    assert reader.feed("p(1).q(2)") == []
    assert reader.flush()[0].text == "p(1).q(2)"


def test_words_and_ddlog_commands_are_commands_and_names_stay_relations():
    reader = StatementReader()
    found = [s for line in ["exit", "quit;", "help", ":q", ":h", "insert r(1, 2);",
                            "delete r(1, 2), insert r(2, 3);", "dump r;", "dump;",
                            "clear r;", "exit(1).", "dump(1).", "insert(1).", "help(2)."]
             for s in reader.feed(line)]
    assert [s.kind for s in found] == ["meta"] * 10 + ["assert"] * 4
    assert [meta_words(s.text)[0] for s in found[:10]] == [
        ":quit", ":quit", ":help", ":q", ":h", ":insert", ":delete", ":dump", ":dump",
        ":clear"]
    assert not reader.pending


def test_a_conjunctive_query_continues_after_a_comma():
    reader = StatementReader()
    assert reader.feed("?- path(1, x),") == []
    assert reader.pending
    (query,) = reader.feed("   edge(x, y).")
    assert (query.text, query.kind) == ("?- path(1, x),\n   edge(x, y).", "query")
