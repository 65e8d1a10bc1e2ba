"""Comments change nothing: a program with comments between any two tokens reads as
the same program, and a broken program keeps its syntax errors -- the same message
at the same place in the code -- wherever comments are added to it."""

from __future__ import annotations

import dataclasses

import pytest

from datalog.errors import ParseError
from datalog.syntax.fastfacts import split_facts
from datalog.syntax.parser import _parser, parse

PROGRAM = """\
.decl e(x: number, y: number)
.decl p(x: number, y: number) btree
.decl s(n: symbol)
.decl c(n: number)
e(1, 2). e(2, -3).
s("a // no comment"). s("b /* nor this */").
p(x, y) :- e(x, y).
p(x, z) :- p(x, y), e(y, z), x != z, z < 10 * 2 / 1, !s("x").
c(n) :- n = count : { e(_, _) }.
.output p
"""

COMMENTS = {
    "block": " /* a */ ",
    "line": " // a\n",
    "block over lines": "/* a\n b */",
    "empty block": "/**/",
    "slashes in a block": "/* // a / b */",
}


def _without_spans(value):
    """``value`` (an AST) as plain data, spans and sources left out."""
    if dataclasses.is_dataclass(value):
        return (type(value).__name__,) + tuple(
            _without_spans(getattr(value, f.name)) for f in dataclasses.fields(value)
            if f.name not in ("span", "sources"))
    if isinstance(value, (tuple, list)):
        return tuple(_without_spans(v) for v in value)
    return value


def _tokens(text: str) -> list:
    lark, _ = _parser()
    return list(lark.lex(text))


@pytest.mark.parametrize("comment", COMMENTS.values(), ids=COMMENTS.keys())
def test_a_comment_between_any_two_tokens_changes_nothing(comment):
    expected = _without_spans(parse(PROGRAM))
    tokens = _tokens(PROGRAM)
    assert len(tokens) > 100
    for token in tokens[1:]:
        text = PROGRAM[:token.start_pos] + comment + PROGRAM[token.start_pos:]
        assert _without_spans(parse(text)) == expected, text


@pytest.mark.parametrize("comment", COMMENTS.values(), ids=COMMENTS.keys())
def test_comments_between_all_tokens_change_nothing(comment):
    pieces, last = [], 0
    for token in _tokens(PROGRAM):
        pieces += [PROGRAM[last:token.start_pos], comment, str(token)]
        last = token.end_pos
    text = "".join(pieces) + comment
    assert _without_spans(parse(text)) == _without_spans(parse(PROGRAM))


# Broken programs, one syntax error or several; no line is in a comment or a string
# that runs on, so a comment can end any line.
BROKEN = {
    "missing dot before a directive": ".decl a(x: number)\na(1)\n.output a\n",
    "missing dot before a rule": ".decl a(x: number)\na(x) :- a(x)\na(1).\n",
    "missing dot at the end": ".decl a(x: number)\na(x) :- a(x)\n",
    "missing dot between facts": "a(1) a(2).\n",
    "rule without body": "a(1) :-\n",
    "colon for if": "a(x) : b(x).\n",
    "missing parenthesis": "a(x) :- b(x, y.\nc(1).\n",
    "missing parenthesis at line end": "a(x) :- b(x,\n  c(y).\n",
    "missing comma": "a(x) :- b(x y).\n",
    "words without parentheses": "a(x) :- b x.\n",
    "unknown directive": ".decl a(x: number)\n.outptu a\n",
    "unknown directive after a word": ".decl a(x: number) btree\n.outptu a\n",
    "unknown qualifier": ".decl a(x: number) inlne\n",
    "unterminated string": 'a("ann).\nb(1).\n',
    "bad character": "a(x) :- b(x) & c(x).\n",
    "pipe": "a(x) :- b(x) | c(x).\n",
    "several errors": "a(1) a(2).\nb(x) :- c(x.\nd(1).\ne(1) :- .\n",
    "unterminated comment": "a(1).\nb(x) :- c(x), x = 1 /* to do\nd(1).\n",
}

NOTES = ["don't follow an edge twice: path(x, y) :- edge(x, y)"] * 70

# How each edit adds comments, and where a line of the program then is.
EDITS = {
    "line comment at each line's end":
        (lambda lines: [f"{line} // a note" for line in lines], lambda n: n),
    "block comment at each line's end":
        (lambda lines: [f"{line} /* a note */" for line in lines], lambda n: n),
    "line comment before each line":
        (lambda lines: [x for line in lines for x in ("// a note", line)], lambda n: 2 * n),
    "block comment over lines before each line":
        (lambda lines: [x for line in lines for x in ("/* a note,", " more */", line)],
         lambda n: 3 * n),
    "long block comment before each line":
        (lambda lines: [x for line in lines for x in ("/*", *NOTES, "*/", line)],
         lambda n: (len(NOTES) + 3) * n),
}


def _errors(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(ParseError) as info:
        parse(text, "f.dl")
    return [(d.message, d.span.line, d.span.column) for d in info.value.diagnostics]


# A comment at the end of the line of an unterminated `/*` would be inside it, and
# the `*/` of a block comment after it would end it.
CASES = [(name, edit) for name in BROKEN for edit in EDITS
         if name != "unterminated comment" or edit == "line comment before each line"]


@pytest.mark.parametrize("name, edit", CASES, ids=[f"{n}, {e}" for n, e in CASES])
def test_comments_keep_syntax_errors_where_they_are(name, edit):
    change, line_of = EDITS[edit]
    lines = BROKEN[name].rstrip("\n").split("\n")
    expected = [(message, line_of(line), column)
                for message, line, column in _errors(BROKEN[name])]
    assert _errors("\n".join(change(lines)) + "\n") == expected


def test_an_unterminated_comment_is_the_last_error():
    """Nothing after a `/*` that no `*/` closes is read, however it looks; it is
    reported even in a clause with an error before it."""
    assert _errors("a(1)\n.output a\nb(x) :- c(x) /* c(x) :- d(x)\n e(1)\n.output b\n") == [
        ("expected `.` at the end of the clause, found `.output`", 1, 5),
        ("unterminated comment", 3, 14)]
    assert _errors("a(1) b(2) /* to do. c(3).\n") == [
        ("unexpected name `b`; expected `,`, `.` or `:-`", 1, 6),
        ("unterminated comment", 1, 11)]


@pytest.mark.parametrize("before", ["/* a // b */", '/* a "b */', "/* a */ e(0, 1).",
                                    'a("/*").', "a(1). // /*"])
def test_a_fact_after_a_comment_is_read_directly(before):
    """A fact on its own line after a closed comment skips the LALR parser; one
    inside a comment is no fact."""
    text = f"{before}\ne(1, 2).\n/* e(3, 4).\n*/\ne(5, 6).\n"
    _, facts = split_facts(text, "f.dl", {})
    assert [str(f.span) for f in facts][-2:] == ["f.dl:2:1", "f.dl:5:1"]
    expected = ([0] if "e(0" in before else []) + [1, 5]
    assert [f.atom.args[0].value for f in parse(text).facts if f.atom.relation == "e"] == expected
