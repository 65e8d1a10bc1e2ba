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
        kind = (directive.param("IO") or "file").lower()
        for key, value in directive.params:
            found = _parameter(directive, key, value, kind, allowed)
            if found is not None:
                message, severity, hint = found
                out.append(Diagnostic(severity, message,
                                      word_span(sources, directive.span, key), hint=hint))
    return out


#: Parameters read only with one ``IO=`` kind, and the kinds.
ONLY_WITH = {"dbname": ("sqlite",), "format": ("json", "jsonfile")}


def _parameter(directive, key: str, value: str, kind: str,
               allowed: tuple[str, ...]) -> tuple[str, str, str | None] | None:
    """What is wrong with one parameter of a directive: ``(message, severity,
    hint)``, or ``None``."""
    if directive.kind == "printsize" or key not in IO_PARAMETERS:
        near = did_you_mean(key, IO_PARAMETERS) if directive.kind != "printsize" else None
        return f"parameter `{key}` of `.{directive.kind}` is ignored", "warning", near
    if key == "compress" and directive.kind == "input":
        return (f"parameter `{key}` of `.input` is ignored", "warning",
                "a gzip-compressed fact file is recognised by its first bytes and read "
                "as it is")
    if key in ONLY_WITH and kind not in ONLY_WITH[key]:
        return (f"parameter `{key}` of `.{directive.kind}` is ignored without "
                f"`IO={ONLY_WITH[key][-1]}`", "warning", None)
    if key == "IO" and value.lower() not in allowed:
        return (f"`.{directive.kind}` does not support `IO={value}`", "error",
                "supported: " + ", ".join(f"`IO={a}`" for a in allowed))
    if key == "format" and value.strip().lower() not in JSON_FORMATS:
        return (f"`format={value}` is not a JSON format", "error",
                "format=list (the default) or format=object")
    if key in IO_FLAGS and value.strip().lower() not in IO_BOOLEANS:
        return f"`{key}` must be `true` or `false`", "error", None
    if key == "delimiter" and '"' in value and is_true(directive.param("rfc4180")):
        return ("`delimiter=` holds a quote, which `rfc4180=true` uses to quote fields",
                "error", None)
    problem = PROBLEMS.get(key, _no_problem)(value)
    if problem is not None:
        return f"`{key}=` holds {problem}", "error", HINTS[key]
    return None
