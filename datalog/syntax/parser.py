"""Text -> AST: the Soufflé dialect parsed with lark (LALR) into :mod:`datalog.syntax.ast`.

:func:`parse` reads one program text, :func:`parse_file` a file; both follow
``#include`` (see :mod:`datalog.syntax.preprocess`) and return a :class:`Module` whose
nodes carry their spans. Syntax errors raise :class:`ParseError` with the place,
the line, a caret and, where there is a likely fix, a hint.

The pipeline for each file: the preprocessor (:mod:`datalog.syntax.preprocess`) expands
macros and reads included files; lines holding a plain fact are read directly
(:mod:`datalog.syntax.fastfacts`); the rest goes through the LALR parser, whose reduce
callbacks (:mod:`datalog.syntax.builder`) build the AST; syntax errors are put in words by
:mod:`datalog.syntax.messages`. Items of included files take the place of their
``#include`` line.

>>> p = parse('.decl e(x: number, y: number)\\ne(1, 2).\\np(x) :- e(x, _), !e(_, x).')
>>> [d.name for d in p.relations], p.facts[0].atom.args[1].value
(['e'], 2)
>>> rule = p.rules[0]
>>> [type(lit).__name__ for lit in rule.body[0]], str(rule.span)
(['Atom', 'Negation'], '<string>:3:1')
>>> parse('p(x) :- q(x)')  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
datalog.errors.ParseError: <string>:1:13: error: expected `.` at the end of the clause, ...
    p(x) :- q(x)
                ^
hint: is the `.` at the end of the last clause missing?
"""
from __future__ import annotations

import bisect
import dataclasses
import heapq
import os
import re
import stat
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from datalog import sandbox
from datalog.errors import Diagnostic, ParseError
from datalog.syntax.ast import (
    Atom,
    Component,
    Directive,
    Fact,
    FunctorDecl,
    Module,
    Plan,
    Pragma,
    RelationDecl,
    Rule,
    Span,
    Subsumption,
    TypeDecl,
    Wildcard,
)
from datalog.syntax.builder import MAX_ALTERNATIVES, MAX_DEPTH, Callbacks, Transformer
from datalog.syntax.components import MAX_DEPTH as MAX_COMPONENT_DEPTH
from datalog.syntax.components import expand as expand_components
from datalog.syntax.components import has_components
from datalog.syntax.fastfacts import split_facts
from datalog.syntax.preprocess import ColumnMap, Macro, predefined, preprocess

if TYPE_CHECKING:  # lark is imported by the first parse: `import datalog` stays quick
    from lark import Lark
    from lark.exceptions import UnexpectedInput

#: How many files deep ``#include`` may nest.
MAX_INCLUDE_DEPTH = 64
#: The path of text typed at the REPL's prompt (``datalog.repl.program.REPL_PATH``):
#: its syntax errors may point at the REPL's commands.
INTERACTIVE_PATH = "<repl>"
#: The largest program file (or included file) read, in bytes.
MAX_SOURCE_BYTES = 256 * 2**20
#: A file's syntax errors are reported up to this many.
MAX_SYNTAX_ERRORS = 20

__all__ = ["MAX_ALTERNATIVES", "MAX_DEPTH", "MAX_INCLUDE_DEPTH", "parse", "parse_file",
           "parse_query"]

_GRAMMAR = Path(__file__).with_name("grammar.lark")
_lock = threading.Lock()
_state: dict = {}


def _grammar_cache() -> str | bool:
    """Where lark keeps its analysis of the grammar between runs (it takes ~70 ms to
    build, ~8 ms to load): a file in the user's cache folder, which lark rewrites when
    the grammar, lark or Python changes (it checks a hash stored in the file); no cache
    where that folder cannot be made. Not lark's default, the shared temporary folder,
    because lark unpickles the file."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = root / "datalog-circuits"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(folder / "grammar.lalr")


def _parser() -> tuple[Lark, Callbacks]:
    if "lark" not in _state:
        from lark import Lark

        callbacks = Callbacks()
        lark = Lark(_GRAMMAR.read_text(), parser="lalr", maybe_placeholders=True,
                    transformer=Transformer(callbacks), cache=_grammar_cache())
        _state["lark"], _state["callbacks"] = lark, callbacks
    return _state["lark"], _state["callbacks"]


# ---------------------------------------------------------------- files


class _Loader:
    """Reads a program and the files it includes, in order."""

    def __init__(self, macros: Mapping[str, object] | None = None,
                 include_dirs: Sequence[str | os.PathLike] = ()):
        self.sources: dict[str, str] = {}
        self.macros: dict[str, Macro] = predefined(macros or {})
        self.include_dirs = [os.fspath(d) for d in include_dirs]
        self.stack: list[str] = []

    def load(self, text: str, path: str) -> list:
        self.sources[path] = text
        self.stack.append(path)
        try:
            base = os.path.dirname(path) if not path.startswith("<") else ""
            pre = preprocess(text, path,
                             lambda name, span, angle: self.include(base, name, span, angle),
                             self.macros)
            items = self.parse_text(pre.text, path, pre.columns)
        finally:
            self.stack.pop()
        if not pre.includes:
            return items
        return _place(items, [_Included(line, group) for line, group in pre.includes])

    def include(self, base: str, name: str, span: Span, angle: bool = False) -> list:
        """Read the included file ``name``: ``"name"`` relative to the including
        file's folder, then in each include folder; ``<name>`` only in those."""
        candidates = [] if angle else [os.path.join(base, name)]
        if not os.path.isabs(name):
            candidates += [os.path.join(d, name) for d in self.include_dirs]
        found = [c for c in candidates if os.path.isfile(c)]
        path = os.path.normpath(found[0] if found else candidates[0] if candidates else name)
        if len(self.stack) >= MAX_INCLUDE_DEPTH:
            raise ParseError([Diagnostic("error", f"`#include` nests more than "
                                         f"{MAX_INCLUDE_DEPTH} files deep", span)],
                             self.sources)
        if path in self.stack:
            cycle = " -> ".join([*self.stack[self.stack.index(path):], path])
            raise ParseError([Diagnostic("error", f"`#include` cycle: {cycle}", span)],
                             self.sources)
        try:
            sandbox.check(path, f"included file `{name}`", span)
        except sandbox.SandboxError as error:
            raise ParseError(error.diagnostics, self.sources) from None
        try:
            text = _read(path, regular=True)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            reason = getattr(e, "strerror", None) or str(e)
            hint = None
            if not found and (angle or self.include_dirs):
                searched = ", ".join(f"`{d}`" for d in self.include_dirs) or "none given"
                hint = (f"`#include <...>` looks only in the include folders ({searched}); "
                        f"add one with `-I DIR`" if angle else
                        f"looked in the including file's folder and in {searched}")
            raise ParseError([Diagnostic("error", f"cannot read included file `{name}`: "
                                         f"{reason}", span, hint)], self.sources) from None
        return self.load(text, path)

    def parse_text(self, text: str, path: str, columns: dict[int, ColumnMap]) -> list:
        """The items of one preprocessed file. After a syntax error the parser
        resumes after the end of the broken clause (or at the next directive), so
        that one run reports every syntax error of the file (up to
        :data:`MAX_SYNTAX_ERRORS`); text before the resumption point is blanked,
        which keeps every line and column where it was."""
        errors: list[Diagnostic] = []
        resumed = -1
        while True:
            try:
                items = self.parse_once(text, path, columns)
            except _SyntaxError as e:
                errors.append(e.diagnostic)
                resume = _resume_point(text, max(e.offset, resumed + 1)) \
                    if e.offset is not None else None
                if resume is None or len(errors) >= MAX_SYNTAX_ERRORS:
                    break
                resumed = resume
                text = _BLANK.sub(" ", text[:resume]) + text[resume:]
                continue
            if not errors:
                return items
            break
        raise ParseError(errors, self.sources)

    def parse_once(self, text: str, path: str, columns: dict[int, ColumnMap]) -> list:
        from lark.exceptions import UnexpectedInput, UnexpectedToken

        lark, callbacks = _parser()
        with _lock:
            callbacks.reset(path, columns, self.sources)
            text, facts = split_facts(text, path, columns)
            try:
                items = lark.parse(text)
                if facts:
                    items = _place(items, facts)
                return items
            except ParseError as e:  # raised by a callback: a span, no offset
                span = e.diagnostics[0].span
                raise _SyntaxError(e.diagnostics[0], _offset(text, span)) from None
            except UnexpectedInput as e:
                error = _syntax_error(e, text, path, columns, lark, self.sources)
                offset = getattr(e, "pos_in_stream", None)
                if isinstance(e, UnexpectedToken):
                    offset = e.token.start_pos if e.token.type != "$END" else None
                from datalog.syntax.messages import unterminated_comment

                if offset is not None and unterminated_comment(text, offset) is not None:
                    offset = None   # the rest of the text is in the comment
                raise _SyntaxError(error.diagnostics[0], offset) from None
            except RecursionError:
                raise ParseError([Diagnostic("error", "program nested too deeply",
                                             Span(path, 0, 0, 0, 0))], self.sources) from None
            finally:
                callbacks.depth = {}


class _Included(NamedTuple):
    """The items of an ``#include`` on ``line``."""

    line: int
    items: list


def _line(node) -> int:
    return node.line if isinstance(node, _Included) else node.span.line


def _place(items: list, extra: list, depth: int = 0) -> list:
    """``items`` (in line order) with ``extra`` (in line order: facts read on
    their own lines, :class:`_Included` items) put at their lines: among the
    items of the component whose braces hold the line, else among ``items``
    (after an item on the same line). Components nested deeper than expansion
    accepts (an error there) keep what they would hold at that depth."""
    components = [i for i, item in enumerate(items) if isinstance(item, Component)] \
        if depth < MAX_COMPONENT_DEPTH else []
    outside = extra
    if components:
        starts = [items[i].span.line for i in components]
        inside: dict[int, list] = {}
        outside = []
        for node in extra:
            line = _line(node)
            k = bisect.bisect_right(starts, line) - 1
            span = items[components[k]].span if k >= 0 else None
            if span is not None and span.line < line < span.end_line:
                inside.setdefault(components[k], []).append(node)
            else:
                outside.append(node)
        items = list(items)
        for i, own in inside.items():
            placed = _place(list(items[i].items), own, depth + 1)
            items[i] = dataclasses.replace(items[i], items=tuple(placed))
    out: list = []
    for node in heapq.merge(items, outside, key=_line):   # stable: items first
        if isinstance(node, _Included):
            out.extend(node.items)
        else:
            out.append(node)
    return out


class _SyntaxError(Exception):
    """One syntax error and the offset in the text where it was found."""

    def __init__(self, diagnostic: Diagnostic, offset: int | None):
        super().__init__(diagnostic.message)
        self.diagnostic, self.offset = diagnostic, offset


_BLANK = re.compile(r"[^\n]")
# Pieces of text when looking for the end of a clause: strings, comments, floats and
# dotted words are skipped whole (a directive's keyword is a place to resume); a
# lone `.` ends a clause.
_CLAUSE_PIECES = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|[0-9]+\.[0-9]+'
    r"|(?P<directive>\.(?:decl|type|input|output|printsize|pragma|plan|number_type|symbol_type"
    r"|comp|init|override)\b)"
    r"|\.[A-Za-z_]\w*"
    r'|[^".\/0-9]+|.', re.DOTALL)


_UNSUPPORTED_DIRECTIVE = re.compile(r"\.(?!(?:decl|type|input|output|printsize|pragma|plan"
                                    r"|number_type|symbol_type)\b)[A-Za-z_]\w*")


def _resume_point(text: str, offset: int) -> int | None:
    r"""Where parsing can start again after an error at ``offset``: just after
    the next ``.`` that ends a clause, or at the next directive or ``/*`` that no
    ``*/`` closes (to report it), if before. After a directive the dialect lacks,
    the whole of it is skipped (its line; for ``.comp``, its ``{ ... }`` block), so
    nothing inside it is reported.

    >>> text = "a(1) b(2) /* to do. c(3)."
    >>> text[_resume_point(text, 5):]
    '/* to do. c(3).'

    >>> text = ".comp G {\n  .decl e(x: number)\n  e(1).\n}\n.decl f(x: number)"
    >>> text[_resume_point(text, 0):]
    '\n.decl f(x: number)'
    >>> text = ".functor f(x: number): number\nr(1)."
    >>> text[_resume_point(text, 0):]
    '\nr(1).'
    """
    unsupported = _UNSUPPORTED_DIRECTIVE.match(text, offset)
    if unsupported is not None:
        return _end_of_directive(text, unsupported)
    for m in _CLAUSE_PIECES.finditer(text, offset):
        if m.group("directive"):
            return m.start()
        if m.group(0) == ".":
            return m.end()
        if m.group(0).startswith("/*") and (len(m.group(0)) < 4 or m.group(0)[-2:] != "*/"):
            return m.start()    # a comment nothing closes: the parser reports it
    return None


def _end_of_directive(text: str, directive: re.Match) -> int | None:
    """The end of an unsupported directive: the end of its line or, for a
    ``.comp`` with a block (``{`` on that line or later), just after the ``}``
    that closes it (``None`` when nothing does)."""
    line_end = text.find("\n", directive.end())
    line_end = len(text) if line_end < 0 else line_end
    if directive.group(0) != ".comp":
        return line_end
    depth = 0
    for m in _BLOCK_PIECES.finditer(text, directive.end()):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}" and depth:
            depth -= 1
            if depth == 0:
                return m.end()
        elif depth == 0 and m.group("directive"):  # no block after all
            return line_end
    return None if depth else line_end


_BLOCK_PIECES = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|[{}]'
    r"|(?P<directive>\.(?:decl|type|input|output|printsize|pragma|plan|comp|init)\b)"
    r'|[^"{}/.]+|.', re.DOTALL)


def _offset(text: str, span: Span | None) -> int | None:
    """The offset of ``span``'s start in ``text`` (its line and column)."""
    if span is None or span.line <= 0:
        return None
    start = 0
    for _ in range(span.line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    return start + max(span.column - 1, 0)


def _read(path: str, regular: bool = False) -> str:
    """The text of a program file: at most :data:`MAX_SOURCE_BYTES`, and with
    ``regular`` (an ``#include``) only a regular file -- never a device, a FIFO
    or a folder, whose reading could block or never end. ``ValueError`` says
    why not."""
    fd = os.open(path, os.O_RDONLY | (os.O_NONBLOCK if regular else 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if regular and not stat.S_ISREG(info.st_mode):
            kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO"
                    if stat.S_ISFIFO(info.st_mode) else "a device"
                    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                    else "not a regular file")
            raise ValueError(f"it is {kind}; only regular files can be included")
        if regular:
            os.set_blocking(fd, True)
        too_big = info.st_size > MAX_SOURCE_BYTES
        data = b"" if too_big else f.read(MAX_SOURCE_BYTES + 1)
    if too_big or len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"it is larger than {MAX_SOURCE_BYTES:,} bytes, the limit of a "
                         "program file")
    return data.decode("utf-8", errors="strict")


def _syntax_error(e: UnexpectedInput, text: str, path: str, columns, lark: Lark,
                  sources: dict[str, str]) -> ParseError:
    from datalog.syntax.messages import describe_syntax_error

    message, hint, (line, column, end) = describe_syntax_error(
        e, text, lark, interactive=path == INTERACTIVE_PATH)
    cmap = columns.get(line)
    if cmap is not None:
        column, end = cmap.start(column), cmap.end(end)
    span = Span(path, line, column, line, max(end, column + 1))
    return ParseError([Diagnostic("error", message, span, hint)], sources)


def _assemble(items: list, sources: dict[str, str]) -> Module:
    if has_components(items):
        items = expand_components(items, sources)
    kinds: dict[type, list] = {TypeDecl: [], RelationDecl: [], Directive: [], Fact: [],
                               Rule: [], Pragma: [], Plan: [], FunctorDecl: [],
                               Subsumption: []}
    for item in items:
        kinds[type(item)].append(item)
    return Module(types=tuple(kinds[TypeDecl]), relations=tuple(kinds[RelationDecl]),
                   directives=tuple(kinds[Directive]), facts=tuple(kinds[Fact]),
                   rules=tuple(kinds[Rule]), pragmas=tuple(kinds[Pragma]),
                   plans=tuple(kinds[Plan]), functors=tuple(kinds[FunctorDecl]),
                   subsumptions=tuple(kinds[Subsumption]),
                   sources=tuple(sources.items()))


def parse(text: str, path: str = "<string>", *, macros: Mapping[str, object] | None = None,
          include_dirs: Sequence[str | os.PathLike] = ()) -> Module:
    """Parse a program given as text; ``path`` names it in diagnostics and is the
    folder ``#include`` is relative to. ``macros`` (name -> value, as ``#define``
    lines before the text) and ``include_dirs`` (searched by ``#include`` after
    the including file's folder) are those of Soufflé's ``-M`` and ``-I``."""
    if not isinstance(text, str):
        raise ParseError(f"program text must be a string, not {type(text).__name__}")
    loader = _Loader(macros, include_dirs)
    return _assemble(loader.load(text, path), loader.sources)


def parse_file(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
               include_dirs: Sequence[str | os.PathLike] = ()) -> Module:
    """Parse the program in the file at ``path`` (and the files it includes);
    ``macros`` and ``include_dirs`` as for :func:`parse`."""
    path = os.fspath(path)
    sandbox.check(path, "program file")
    try:
        text = _read(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ParseError([Diagnostic("error", f"cannot read `{path}`: {reason}",
                                     Span(path, 0, 0, 0, 0))]) from None
    return parse(text, path, macros=macros, include_dirs=include_dirs)


# Strings, comments and other characters of a query: a `.` is added after the last
# significant one unless it is a `.` or the query starts with one (a directive).
_QUERY_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|\S', re.DOTALL)
_BARE_NAME = re.compile(r"\s*([_a-zA-Z?][_a-zA-Z0-9?]*(?:\.[_a-zA-Z?][_a-zA-Z0-9?]*)*)\s*\.?\s*")


def parse_query(text: str, path: str = "<query>", columns: Mapping[str, tuple] | None = None,
                example: str = "path(1, x)") -> Atom:
    """A query: one atom such as ``path(1, x)`` (a final ``.`` is optional), read
    by the program grammar as a fact is, so its constants are written as a
    program's facts are (``12``, ``-3``, ``0x1f``, ``0b101``, ``7u``, ``2.5``,
    ``"a\\.b"`` with the dialect's escapes, constant expressions such as ``1 + 2``);
    its other arguments are variables and ``_``. A bare relation name stands for
    that relation with ``_`` in each of its columns (``columns[name]``, the
    declared column types). Spans are positions in ``text``, named ``path``;
    anything but one atom is a :class:`ParseError` whose hint shows ``example``.

    >>> atom = parse_query('r("a\\\\.b", 0x10, x)')
    >>> [getattr(arg, "value", None) for arg in atom.args], str(atom.span)
    (['a\\\\.b', 16, None], '<query>:1:1')
    >>> parse_query("path", columns={"path": ("number", "number")}).args   # doctest: +ELLIPSIS
    (Wildcard(span=...), Wildcard(span=...))
    >>> parse_query("path(1, x), path(x, 2)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    datalog.errors.ParseError: <query>:1:1: error: a query is a single atom
        path(1, x), path(x, 2)
        ^~~~~~~~~~~~~~~~~~~~~~
    hint: such as `path(1, x)`
    """
    if not isinstance(text, str):
        raise ParseError(f"a query must be a string, not {type(text).__name__}")
    sources = {path: text}
    hint = f"such as `{example}`"
    bare = _BARE_NAME.fullmatch(text)
    if bare is not None:
        span = _span_of(text, path, bare.start(1), bare.end(1))
        arity = len((columns or {}).get(bare.group(1), ()))
        return Atom(bare.group(1), (Wildcard(span),) * arity, span)
    if not text.strip():
        raise ParseError([Diagnostic("error", "a query names a relation",
                                     _span_of(text, path, len(text), len(text) + 1),
                                     hint)], sources)
    pieces = [m for m in _QUERY_PIECES.finditer(text)
              if not m.group(0).startswith(("//", "/*"))]
    end = pieces[-1].end() if pieces else len(text)
    needs_dot = pieces and pieces[-1].group(0) != "." and pieces[0].group(0) != "."
    clause = text[:end] + "." + text[end:] if needs_dot else text
    loader = _Loader()
    loader.sources = sources
    try:
        items = loader.parse_text(clause, path, {})
    except ParseError as error:
        first = error.diagnostics[0] if error.diagnostics else None
        if first is not None and first.message == "a fact is a single atom":
            raise ParseError([Diagnostic("error", "a query is a single atom",
                                         _within(first.span, text), hint)],
                             sources) from None
        raise
    if len(items) == 1 and isinstance(items[0], Fact):
        return items[0].atom
    others = [item for item in items if not isinstance(item, Fact)]
    if others:
        kind = "a rule" if isinstance(others[0], Rule) else "a declaration or directive"
        message, span = f"{kind} cannot be queried", _within(others[0].span, text)
    elif items:     # `p(1). q(2).`
        message, span = "a query is a single atom", _within(items[1].span, text)
    else:           # a comment alone
        message, span = "a query names a relation", _span_of(text, path, 0, 1)
    raise ParseError([Diagnostic("error", message, span, hint)], sources)


def _span_of(text: str, path: str, start: int, end: int) -> Span:
    """The span of ``text[start:end]`` (on one line)."""
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Span(path, line, column, line, column + max(end - start, 1))


def _within(span: Span, text: str) -> Span:
    """``span`` ending within ``text`` (not on the ``.`` a query may lack)."""
    lines = text.split("\n")
    if span.end_line != len(lines) or span.end_column <= len(lines[-1].rstrip()) + 1:
        return span
    end = max(len(lines[-1].rstrip()) + 1, span.column + 1 if span.line == span.end_line else 1)
    return Span(span.path, span.line, span.column, span.end_line, end)
