"""``.limitsize r(n=N)``: its one parameter.

Takes a module and its :class:`~datalog.analysis.context.Context` and gives: a
``.limitsize`` without ``n``, with an ``n`` that is not a non-negative decimal
integer, or with another parameter (errors). The relation's name is checked
with the I/O directives' (:mod:`datalog.analysis.checks.io_directives`).

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number)\\n.limitsize e(n=1.5)\\n.limitsize e\\n.limitsize e(n=2, m=1)')
>>> for d in check_limitsize(p, Context(p)): print(d.message)
`n=` of `.limitsize` must be a number of rows, got `1.5`
`.limitsize` needs the number of rows: `.limitsize e(n=N)`
`.limitsize` takes only `n=`, got `m=`
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.types import word_span
from datalog.errors import Diagnostic
from datalog.syntax.ast import Module


def check_limitsize(program: Module, context: Context) -> list[Diagnostic]:
    """The parameters of every ``.limitsize`` directive."""
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    for directive in program.directives:
        if directive.kind != "limitsize":
            continue
        name = directive.relations[0]
        keys = [key for key, _ in directive.params]
        for key in keys:
            if key != "n":
                out.append(Diagnostic("error", f"`.limitsize` takes only `n=`, got `{key}=`",
                                      word_span(sources, directive.span, key)))
        if "n" not in keys:
            out.append(Diagnostic("error", "`.limitsize` needs the number of rows: "
                                  f"`.limitsize {name}(n=N)`", directive.span))
            continue
        value = directive.param("n")
        if not (value.isascii() and value.isdigit() and len(value) <= 19):
            out.append(Diagnostic("error", f"`n=` of `.limitsize` must be a number of rows, "
                                  f"got `{value}`", word_span(sources, directive.span, "n"),
                                  hint="a non-negative decimal integer"))
    return out
