"""I/O directives: ``.input``, ``.output`` and ``.printsize`` against what the
engine reads (the tables of :mod:`datalog.dialect.io`).

Takes a module and its :class:`~datalog.analysis.context.Context` (for the
declared relations) and gives: a directive naming an undeclared relation (with
"did you mean"), an ``IO=`` kind the directive does not support and a
``headers`` that is not a boolean (errors); a parameter the engine does not read
(a warning).

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number)\\n.input e(IO=stdout, compress=true)\\n.output f')
>>> for d in check_io_directives(p, Context(p)): print(f"{d.severity}: {d.message}")
error: `.input` does not support `IO=stdout`
warning: parameter `compress` of `.input` is ignored
error: undefined relation `f`
"""

from __future__ import annotations

from datalog.analysis.checks.clauses import undefined_relation
from datalog.analysis.context import Context
from datalog.analysis.types import word_span
from datalog.dialect.io import (
    IO_BOOLEANS,
    IO_FLAGS,
    IO_KINDS,
    IO_PARAMETERS,
    JSON_FORMATS,
    delimiter_problem,
    filename_problem,
    is_true,
)
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import Module

#: The parameters whose values are checked as the engine will use them.
PROBLEMS = {"delimiter": delimiter_problem, "filename": filename_problem,
            "dbname": filename_problem}
HINTS = {"delimiter": "a delimiter is one or more characters; escapes as in Python "
                      "(`\\t`, `\\x1f`, `\\u2028`)",
         "filename": "a file name relative to the fact or output directory",
         "dbname": "a file name relative to the fact or output directory"}


def _no_problem(value: str) -> None:
    return None


def check_io_directives(program: Module, context: Context) -> list[Diagnostic]:
    """Undeclared relations, unsupported ``IO=`` kinds, bad booleans and
    ignored parameters of every directive."""
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    declared = list(context.decls)
    for directive in program.directives:
        for name in directive.relations:
            if name not in context.decls:
                out.append(undefined_relation(name, declared,
                                              word_span(sources, directive.span, name)))
        if directive.kind == "limitsize":
            continue   # its parameter is checks/limitsize.py's
        allowed = IO_KINDS.get(directive.kind, ())
        for key, value in directive.params:
            if key == "compress" and directive.kind == "input":
                out.append(Diagnostic("warning", "parameter `compress` of `.input` is ignored",
                                      word_span(sources, directive.span, key),
                                      hint="a gzip-compressed fact file is recognised by "
                                           "its first bytes and read as it is"))
            elif directive.kind == "printsize" or key not in IO_PARAMETERS:
                near = did_you_mean(key, IO_PARAMETERS) if directive.kind != "printsize" \
                    else None
                out.append(Diagnostic("warning", f"parameter `{key}` of "
                                      f"`.{directive.kind}` is ignored",
                                      word_span(sources, directive.span, key),
                                      hint=near))
            elif key == "IO" and value.lower() not in allowed:
                out.append(Diagnostic("error", f"`.{directive.kind}` does not support "
                                      f"`IO={value}`",
                                      word_span(sources, directive.span, key),
                                      hint="supported: " + ", ".join(f"`IO={a}`"
                                                                     for a in allowed)))
            elif key == "format" and value.strip().lower() not in JSON_FORMATS:
                out.append(Diagnostic("error", f"`format={value}` is not a JSON format",
                                      word_span(sources, directive.span, key),
                                      hint="format=list (the default) or format=object"))
            elif key in IO_FLAGS and value.strip().lower() not in IO_BOOLEANS:
                out.append(Diagnostic("error", f"`{key}` must be `true` or `false`",
                                      word_span(sources, directive.span, key)))
            elif key == "delimiter" and '"' in value and is_true(directive.param("rfc4180")):
                out.append(Diagnostic("error", "`delimiter=` holds a quote, which "
                                      "`rfc4180=true` uses to quote fields",
                                      word_span(sources, directive.span, key)))
            elif (problem := PROBLEMS.get(key, _no_problem)(value)) is not None:
                out.append(Diagnostic("error", f"`{key}=` holds {problem}",
                                      word_span(sources, directive.span, key),
                                      hint=HINTS[key]))
    return out
