"""The preprocessor: ``#include``, ``#define`` and conditionals, keeping places right.

Soufflé runs its programs through the C preprocessor. We implement the part that
programs use, line by line, so that every line of the text handed to the grammar
is the line of the same number in the file it came from:

- ``#include "file"``, relative to the including file's folder (to the working
  directory for text without a file), then in each include folder in order (as
  Soufflé's ``-I``); ``#include <file>`` only in the include folders. The included file is read
  and parsed on its own, with its own name in every position; its items take the
  place of the ``#include`` line. Including a file from itself (directly or
  through others) is an error.
- ``#define NAME text`` and function-like ``#define NAME(a, b) text``, continued
  over several lines with a trailing backslash; ``#undef NAME``. Macros are
  expanded outside strings and comments, and rescanned for further macros (a
  macro is never expanded inside its own expansion). The ``#`` and ``##``
  operators are not supported. A macro call's arguments must be on one line.
- ``#if EXPR`` / ``#elif EXPR`` / ``#ifdef NAME`` / ``#ifndef NAME`` / ``#else`` /
  ``#endif``, nested. ``EXPR`` is a C preprocessor integer expression, read after
  ``defined(NAME)`` / ``defined NAME`` and the macros are replaced (an unknown name
  is 0); see :mod:`datalog.syntax.condition`. In a false branch nothing is read.
- ``#error text`` is an error; ``#pragma``, ``#line``, ``#warning`` and a lone
  ``#`` are ignored.

Directive lines, and lines in a false conditional, become empty lines. A line
changed by macro expansion keeps a :class:`ColumnMap`, so a position in the
expanded text maps back to the file: a column inside an expansion maps to the
macro's name. Macros given from outside (Soufflé's ``-M``) are made by
:func:`predefined`.

>>> out = preprocess('#define N 10\\nr(N, "N").\\n', "p.dl", include=None)
>>> out.text
'\\nr(10, "N").\\n'
>>> cols = out.columns[2]          # `10` is columns 3-4 here, `N` column 3 in the file
>>> cols.start(3), cols.end(5), cols.start(6)
(3, 4, 5)
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from datalog.errors import Diagnostic, ParseError
from datalog.syntax.ast import Span
from datalog.syntax.condition import ConditionError, Token, evaluate, tokens

#: How deeply macro expansions may nest before we call it a loop.
MAX_EXPANSION_DEPTH = 64
#: The most characters one macro use may expand to (macros that double their
#: text at each level would otherwise fill the memory in a few lines).
MAX_EXPANSION_SIZE = 1_000_000

_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*([A-Za-z_]\w*)?")
_IDENT = re.compile(r"[A-Za-z_?][\w?]*")
# Pieces of a line: a string, a line comment, a block comment opening, an
# identifier, or any other character.
_PIECE = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//.*|/\*|[A-Za-z_?][\w?]*|.', re.DOTALL)


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str
    span: Span


@dataclass
class ColumnMap:
    """Maps 1-based columns of an expanded line back to the original line.
    ``runs`` holds ``(expanded_start, expanded_end, original_start,
    original_end, literal)`` with ends exclusive, in order."""

    runs: list[tuple[int, int, int, int, bool]]
    _starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._starts = [run[0] for run in self.runs]

    def _run(self, column: int) -> tuple[int, int, int, int, bool] | None:
        i = bisect.bisect_right(self._starts, column) - 1
        return self.runs[i] if i >= 0 else None

    def start(self, column: int) -> int:
        run = self._run(column)
        if run is None:
            return column
        exp_start, exp_end, orig_start, orig_end, literal = run
        if literal or column >= exp_end:
            return orig_start + (column - exp_start) if column < exp_end else \
                orig_end + (column - exp_end)
        return orig_start

    def end(self, column: int) -> int:
        """Map an exclusive end column."""
        run = self._run(column - 1)
        if run is None:
            return column
        exp_start, exp_end, orig_start, orig_end, literal = run
        if column - 1 >= exp_end:
            return orig_end + (column - exp_end)
        if literal:
            return orig_start + (column - exp_start)
        return orig_end


@dataclass
class Preprocessed:
    """One file after preprocessing: the text for the grammar, the column maps
    of changed lines, and the parsed items of the files it includes, each with
    the line of its ``#include``."""

    path: str
    text: str
    columns: dict[int, ColumnMap]
    includes: list[tuple[int, list]]


Include = Callable[[str, Span, bool], list]


@dataclass
class _Condition:
    """An open conditional: whether its current branch is read, the line and
    keyword that opened it, whether a branch was taken, and whether `#else`
    was seen."""

    active: bool
    line: int
    keyword: str
    taken: bool
    seen_else: bool = False


def _error(message: str, span: Span, hint: str | None = None,
           sources: dict[str, str] | None = None) -> ParseError:
    return ParseError([Diagnostic("error", message, span, hint)], sources)


class _Preprocessor:
    def __init__(self, text: str, path: str, include: Include | None,
                 macros: dict[str, Macro]):
        self.text = text
        self.path = path
        self.include = include
        self.macros = macros
        self.sources = {path: text}
        #: (macro, disabled macros) -> its expansion, for the line being expanded
        self.expanded: dict[tuple[str, frozenset], str] = {}

    def error(self, message: str, line: int, column: int, end: int,
              hint: str | None = None) -> ParseError:
        return _error(message, Span(self.path, line, column, line, end), hint, self.sources)

    def run(self) -> Preprocessed:
        lines = self.text.split("\n")
        out: list[str] = []
        columns: dict[int, ColumnMap] = {}
        includes: list[tuple[int, list]] = []
        in_comment = False
        conditions: list[_Condition] = []
        number = 0
        while number < len(lines):
            line = lines[number]
            number += 1
            active = all(c.active for c in conditions)
            match = None if in_comment else _DIRECTIVE.match(line)
            if match is not None:
                consumed = self.directive(match, lines, number, conditions, active, includes)
                out.extend([""] * consumed)
                number += consumed - 1
                continue
            if not active:
                in_comment = _ends_in_comment(line, in_comment)
                out.append("")
                continue
            if self.macros:
                expanded, runs, in_comment = self.expand_line(line, number, in_comment)
                if runs is not None:
                    columns[number] = ColumnMap(runs)
                out.append(expanded)
            else:
                in_comment = _ends_in_comment(line, in_comment)
                out.append(line)
        if conditions:
            line = conditions[-1].line
            raise self.error(f"`#{conditions[-1].keyword}` without `#endif`", line, 1,
                             len(lines[line - 1]) + 1, hint="add `#endif`")
        return Preprocessed(self.path, "\n".join(out), columns, includes)

    # ------------------------------------------------------------ directives

    def directive(self, match: re.Match, lines: list[str], number: int,
                  conditions: list, active: bool, includes: list) -> int:
        """Handle the directive on line ``number``; return how many lines it
        takes (continuation lines of a ``#define`` included)."""
        name = match.group(1) or ""
        line = lines[number - 1]
        consumed = 1
        while line.endswith("\\") and number - 1 + consumed < len(lines):
            line = line[:-1] + " " + lines[number - 1 + consumed]
            consumed += 1
        rest = line[match.end():]
        rest_column = match.end() + 1
        start = line.index("#") + 1
        end = max(start + 1, min(len(lines[number - 1]), match.end()) + 1)
        if name in ("ifdef", "ifndef", "if"):
            if not active:  # inside a false branch: nothing here is read
                conditions.append(_Condition(False, number, name, taken=True))
                return consumed
            if name == "if":
                value = self.condition(line, match.end(), number, name, start, end)
            else:
                word = _strip_comments(rest).strip()
                if not _IDENT.fullmatch(word):
                    raise self.error(f"`#{name}` needs a macro name", number, start, end)
                value = (word in self.macros) == (name == "ifdef")
            conditions.append(_Condition(value, number, name, taken=value))
            return consumed
        if name in ("elif", "else", "endif"):
            if not conditions:
                raise self.error(f"`#{name}` without `#if`", number, start, end,
                                 hint="`#if`, `#ifdef` or `#ifndef` opens a conditional")
            cond = conditions[-1]
            if cond.seen_else and name != "endif":
                raise self.error(f"`#{name}` after `#else`", number, start, end,
                                 hint=f"the `#else` of the `#{cond.keyword}` on line "
                                      f"{cond.line} must be its last branch")
            if name == "endif":
                conditions.pop()
            elif cond.taken:
                cond.active = False
                cond.seen_else = name == "else"
            elif name == "else":
                cond.active = cond.taken = cond.seen_else = True
            else:
                cond.active = cond.taken = self.condition(
                    line, match.end(), number, name, start, end)
            return consumed
        if not active:
            return consumed
        if name == "include":
            self.do_include(rest, rest_column, number, includes)
        elif name == "define":
            self.define(rest, rest_column, number)
        elif name == "undef":
            self.macros.pop(rest.split("//")[0].strip(), None)
        elif name in ("pragma", "line", "error", "warning") or (
                not name and not _strip_comments(rest).strip()):  # `#` alone: nothing
            if name == "error":
                raise self.error(f"#error{rest}", number, start, len(lines[number - 1]) + 1)
        else:
            shown = f"#{name}" if name else "#"
            raise self.error(f"unknown preprocessor directive `{shown}`", number, start, end,
                             hint="supported: #include, #define, #undef, #ifdef, #ifndef, "
                                  "#else, #endif")
        return consumed

    def condition(self, line: str, pos: int, number: int, name: str, start: int,
                  end: int) -> bool:
        """The truth of the ``#if``/``#elif`` expression in ``line`` from ``pos``."""
        text = _strip_comments(line[pos:], keep_columns=True)
        try:
            toks = self.expand_condition(tokens(text, pos + 1), line, number)
            return evaluate(toks, len(line.rstrip()) + 1) != 0
        except ConditionError as e:
            message = f"in `#{name}`: {e.message}"
            if e.message == "missing expression":
                message = f"`#{name}` needs an expression"
                e.start, e.end = start, end
            raise self.error(message, number, e.start, e.end, e.hint) from None

    def expand_condition(self, toks: list[Token], line: str, number: int,
                         span: tuple[int, int] | None = None,
                         disabled: frozenset[str] = frozenset()) -> list[Token]:
        """``toks`` with ``defined`` replaced by 0 or 1 and macros expanded; the
        tokens of an expansion (``span`` set) carry the macro name's columns."""
        out: list[Token] = []
        i = 0
        while i < len(toks):
            tok = toks[i]
            first, last = span or (tok.start, tok.end)
            if tok.kind == "name" and tok.text == "defined":
                rest = [t.text for t in toks[i + 1:i + 4]]
                if rest[:1] and toks[i + 1].kind == "name":
                    word, width = rest[0], 2
                elif rest[:1] == ["("] and len(rest) == 3 and toks[i + 2].kind == "name" \
                        and rest[2] == ")":
                    word, width = rest[1], 4
                else:
                    raise ConditionError("`defined` needs a macro name", tok.start, tok.end,
                                         hint="write `defined(NAME)` or `defined NAME`")
                end = toks[i + width - 1].end if span is None else last
                out.append(Token("number", "1" if word in self.macros else "0", first, end,
                                 int(word in self.macros)))
                i += width
                continue
            macro = self.macros.get(tok.text) if tok.kind == "name" else None
            if macro is None or tok.text in disabled:
                out.append(tok if span is None else Token(tok.kind, tok.text, first, last,
                                                          tok.value))
                i += 1
                continue
            stop = i + 1
            if macro.params is not None:
                if span is not None:  # a call inside an expansion: no arguments here
                    out.append(Token(tok.kind, tok.text, first, last))
                    i += 1
                    continue
                args, after = self.call_args(line, tok.end - 1, number, tok.start - 1)
                if args is None:
                    out.append(tok)
                    i += 1
                    continue
                body = self.substitute(macro, args, number, tok.start - 1, after)
                while stop < len(toks) and toks[stop].start <= after:
                    stop += 1
                last = after + 1
            else:
                body = macro.body
            self.expanded = {}
            body = self.rescan(body, {macro.name}, number, first - 1, last - 1, 1)
            inner = tokens(_strip_comments(body, keep_columns=True), 1)
            out += self.expand_condition(inner, line, number, (first, last),
                                         disabled | {macro.name})
            i = stop
        return out

    def do_include(self, rest: str, column: int, number: int, includes: list) -> None:
        m = re.match(r'\s*(?:"([^"]*)"|<([^>]*)>)\s*(?://.*|/\*.*)?$', rest)
        if m is None:
            lead = len(rest) - len(rest.lstrip())
            word = rest.strip()
            raise self.error("`#include` needs a file name in quotes", number, column + lead,
                             column + lead + max(1, len(word)),
                             hint='write `#include "file.dl"`')
        target = m.group(1) if m.group(1) is not None else m.group(2)
        first = column + m.start(1 if m.group(1) is not None else 2) - 1
        span = Span(self.path, number, first, number, first + len(target) + 2)
        if self.include is None:
            raise _error("`#include` is not available here", span, sources=self.sources)
        includes.append((number, self.include(target, span, m.group(2) is not None)))

    def define(self, rest: str, column: int, number: int) -> None:
        m = re.match(r"\s*([A-Za-z_?][\w?]*)(\([^)]*\))?", rest)
        if m is None:
            raise self.error("`#define` needs a macro name", number, column,
                             column + max(1, len(rest)))
        name = m.group(1)
        span = Span(self.path, number, column + m.start(1), number, column + m.end(1))
        params = None
        if m.group(2) is not None:
            params = tuple(p.strip() for p in m.group(2)[1:-1].split(",") if p.strip())
            for p in params:
                if not _IDENT.fullmatch(p):
                    raise _error(f"bad macro parameter `{p}`", span, sources=self.sources)
        body = _strip_comments(rest[m.end():]).strip()
        if "#" in re.sub(r'"(?:[^"\\]|\\.)*"', "", body):
            raise _error("the `#` and `##` macro operators are not supported", span,
                         sources=self.sources)
        self.macros[name] = Macro(name, params, body, span)

    # ------------------------------------------------------------ expansion

    def expand_line(self, line: str, number: int, in_comment: bool):
        """Expand macros in one line. Returns (text, runs or None, in_comment)."""
        self.expanded = {}
        pieces: list[tuple[str, int, int, bool]] = []  # (text, orig_start, orig_end, literal)
        changed = False
        pos = 0
        literal_start = 0
        n = len(line)
        while pos < n:
            if in_comment:
                close = line.find("*/", pos)
                if close < 0:
                    pos = n
                    break
                pos = close + 2
                in_comment = False
                continue
            m = _PIECE.match(line, pos)
            piece = m.group(0)
            if piece == "/*":
                in_comment = True
                pos = m.end()
                continue
            if piece.startswith("//"):
                pos = n
                break
            macro = self.macros.get(piece)
            if macro is None:
                pos = m.end()
                continue
            end = m.end()
            if macro.params is not None:
                args, end = self.call_args(line, end, number, pos)
                if args is None:
                    pos = m.end()
                    continue
                replacement = self.substitute(macro, args, number, pos, end)
            else:
                replacement = macro.body
            replacement = self.rescan(replacement, {macro.name}, number, pos, end, 1)
            if literal_start < pos:
                pieces.append((line[literal_start:pos], literal_start, pos, True))
            pieces.append((replacement, pos, end, False))
            literal_start = pos = end
            changed = True
        if not changed:
            return line, None, in_comment
        if literal_start < n:
            pieces.append((line[literal_start:], literal_start, n, True))
        runs = []
        column = 1
        text = []
        for piece, orig_start, orig_end, literal in pieces:
            runs.append((column, column + len(piece), orig_start + 1, orig_end + 1, literal))
            column += len(piece)
            text.append(piece)
        return "".join(text), runs, in_comment

    def call_args(self, line: str, pos: int, number: int, name_pos: int):
        """The arguments of a function-like macro call starting after its name;
        (None, pos) when no ``(`` follows (the name is then left alone)."""
        m = re.compile(r"[ \t]*\(").match(line, pos)
        if m is None:
            return None, pos
        pos = m.end()
        depth = 0
        args: list[str] = []
        current = pos
        while pos < len(line):
            ch = line[pos]
            if ch == '"':
                s = re.compile(r'"(?:[^"\\\n]|\\.)*"').match(line, pos)
                pos = s.end() if s else len(line)
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    args.append(line[current:pos].strip())
                    return ([] if args == [""] else args), pos + 1
                depth -= 1
            elif ch == "," and depth == 0:
                args.append(line[current:pos].strip())
                current = pos + 1
            pos += 1
        raise self.error("the arguments of a macro call must be on one line", number,
                         name_pos + 1, len(line) + 1, hint="close the `(` on this line")

    def substitute(self, macro: Macro, args: list[str], number: int, start: int,
                   end: int) -> str:
        if len(args) != len(macro.params):
            raise self.error(f"macro `{macro.name}` takes {len(macro.params)} argument(s), "
                             f"got {len(args)}", number, start + 1, end + 1,
                             hint=f"defined at {macro.span}")
        values = dict(zip(macro.params, args))
        return _replace_identifiers(macro.body, lambda w: values.get(w))

    def rescan(self, text: str, disabled: set[str], number: int, start: int, end: int,
               depth: int) -> str:
        if depth > MAX_EXPANSION_DEPTH:
            raise self.error("macro expansion nests too deeply", number, start + 1, end + 1)
        out = []
        pos = 0
        size = len(text)
        for m in _PIECE.finditer(text):
            if m.start() < pos:
                continue
            word = m.group(0)
            macro = self.macros.get(word)
            if macro is None or word in disabled:
                out.append(word)
                pos = m.end()
                continue
            stop = m.end()
            if macro.params is not None:
                try:
                    args, stop = self.call_args(text, stop, number, start)
                except ParseError:
                    args = None
                if args is None:
                    out.append(word)
                    pos = m.end()
                    continue
                body = self.substitute(macro, args, number, start, end)
                out.append(self.rescan(body, disabled | {word}, number, start, end, depth + 1))
            else:  # an object-like macro expands alike wherever it is: once per line
                key = (word, frozenset(disabled))
                if key not in self.expanded:
                    self.expanded[key] = self.rescan(macro.body, disabled | {word}, number,
                                                     start, end, depth + 1)
                out.append(self.expanded[key])
            size += len(out[-1])
            if size > MAX_EXPANSION_SIZE:
                raise self.error(f"this macro expands to more than {MAX_EXPANSION_SIZE:,} "
                                 "characters", number, start + 1, end + 1,
                                 hint="a macro that uses another twice doubles at each level")
            pos = stop
        return "".join(out)


def _replace_identifiers(text: str, replace: Callable[[str], str | None]) -> str:
    out = []
    for m in _PIECE.finditer(text):
        word = m.group(0)
        value = replace(word) if _IDENT.fullmatch(word) else None
        out.append(word if value is None else value)
    return "".join(out)


def _strip_comments(text: str, keep_columns: bool = False) -> str:
    """``text`` without its comments: a block comment becomes one space, or with
    ``keep_columns`` as many spaces as it had characters (so columns stay)."""
    out = []
    pos = 0
    while pos < len(text):
        m = _PIECE.match(text, pos)
        piece = m.group(0)
        if piece.startswith("//"):
            break
        if piece == "/*":
            close = text.find("*/", m.end())
            stop = len(text) if close < 0 else close + 2
            out.append(" " * (stop - pos) if keep_columns else " ")
            pos = stop
            continue
        out.append(piece)
        pos = m.end()
    return "".join(out)


def _ends_in_comment(line: str, in_comment: bool) -> bool:
    """Whether a ``/* */`` comment is still open at the end of ``line``."""
    if not in_comment and "/*" not in line:
        return False
    pos = 0
    n = len(line)
    while pos < n:
        if in_comment:
            close = line.find("*/", pos)
            if close < 0:
                return True
            pos = close + 2
            in_comment = False
            continue
        m = _PIECE.match(line, pos)
        piece = m.group(0)
        if piece == "/*":
            in_comment = True
        elif piece.startswith("//"):
            return False
        pos = m.end()
    return in_comment


def predefined(values: Mapping[str, object]) -> dict[str, Macro]:
    """Macros given from outside (Soufflé's ``-M``): name -> value, a string
    (the macro's text) or an integer; ``True`` is ``1``. A bad name or value
    raises :class:`ParseError`."""
    span = Span("<command line>", 0, 0, 0, 0)
    macros = {}
    for name, value in values.items():
        if not isinstance(name, str) or not _IDENT.fullmatch(name) or "?" in name:
            raise ParseError(f"bad macro name {name!r}: a name is a letter or `_` "
                             f"followed by letters, digits and `_`")
        if isinstance(value, bool) or isinstance(value, int):
            value = str(int(value))
        if not isinstance(value, str) or "\n" in value:
            raise ParseError(f"macro `{name}`: the value must be a one-line string or an "
                             f"integer, not {value!r}")
        macros[name] = Macro(name, None, value.strip(), span)
    return macros


def preprocess(text: str, path: str, include: Include | None,
               macros: dict[str, Macro] | None = None) -> Preprocessed:
    """Preprocess one file's ``text``. ``include(name, span)`` reads and parses an
    included file and returns its items; ``macros`` is shared with the files this
    one includes (and is updated by its ``#define`` lines)."""
    if "#" not in text and not macros:
        return Preprocessed(path, text, {}, [])
    return _Preprocessor(text, path, include, macros if macros is not None else {}).run()
