"""Binding a program's user-defined functors to Python callables.

``datalog.Program(text, functors={"f": fn})`` binds each ``.functor f(...)``
declaration to ``fn`` (the semantics are :mod:`datalog.dialect.user_functors`'s);
``datalog run prog.dl --functors module.py`` takes them from a Python file, by
name (:func:`load_module`). A declared functor without a callable is an error
at its declaration; names that the program does not declare are ignored (a
module has helpers and imports of its own).

>>> from datalog.syntax.parser import parse
>>> module = parse(".functor twice(x: number): number\\n.functor g(s: symbol): symbol")
>>> bound = bind_functors(module, {"twice": lambda x: 2 * x, "g": str.upper, "other": 1})
>>> sorted(bound), bound["@twice"](4), bound["@g"]("a")
(['@g', '@twice'], 8, 'A')
>>> try:
...     bind_functors(module, {"twice": 3})
... except CheckError as error:
...     for d in error.diagnostics: print(d.span.line, d.message)
1 functor `@twice` is bound to 3, which is not callable
2 functor `@g` has no implementation
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Mapping

from datalog.analysis.types import TypeTable
from datalog.dialect.functors import Overload
from datalog.dialect.user_functors import implement
from datalog.errors import CheckError, DatalogError, Diagnostic, Span, did_you_mean
from datalog.syntax.ast import Module


def bind_functors(module: Module, functors: Mapping[str, Callable] | None
                  ) -> dict[str, Overload]:
    """``@name`` -> the implementation of each functor ``module`` declares, from
    ``functors`` (name -> callable); a :class:`~datalog.errors.CheckError` at
    every declaration left without a callable."""
    given = dict(functors or {})
    table = TypeTable(module)
    out: dict[str, Overload] = {}
    problems: list[Diagnostic] = []
    for decl in module.functors:
        if f"@{decl.name}" in out:
            continue
        function = given.get(decl.name)
        if function is None:
            near = did_you_mean(decl.name, [n for n in given if isinstance(n, str)])
            problems.append(Diagnostic(
                "error", f"functor `@{decl.name}` has no implementation", decl.span,
                hint=(f"{near} (functors= names it)" if near else
                      f'pass it to datalog.Program(..., functors={{"{decl.name}": function}}) '
                      f"or name it in the module of --functors")))
            continue
        if not callable(function):
            shown = repr(function)
            shown = shown if len(shown) <= 40 else f"a {type(function).__name__}"
            problems.append(Diagnostic("error", f"functor `@{decl.name}` is bound to {shown}, "
                                       "which is not callable", decl.span))
            continue
        types = [table.primitive(t) for t in decl.params]
        out[f"@{decl.name}"] = implement(decl.name, types, table.primitive(decl.result),
                                         function, decl.stateful)
    if problems:
        raise CheckError(problems, dict(module.sources))
    return out


def load_module(path: str | os.PathLike) -> dict[str, Callable]:
    """The callables defined or imported at the top level of the Python file at
    ``path``, by name (``datalog run --functors path``). A file that cannot be
    read or run is a :class:`~datalog.errors.DatalogError` naming it."""
    path = os.fspath(path)
    name = "datalog_functors_" + "".join(c if c.isalnum() else "_" for c in
                                         os.path.splitext(os.path.basename(path))[0])
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise DatalogError(f"cannot load functors from {path}: not a Python file "
                               f"(--functors takes a .py file)")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module   # so that dataclasses and pickling find it
        spec.loader.exec_module(module)
    except DatalogError:
        raise
    except SyntaxError as error:
        line, column = error.lineno or 1, error.offset or 1
        place = Span(error.filename or path, line, column, line, column + 1)
        raise DatalogError([Diagnostic("error", f"cannot load functors: {error.msg}",
                                       place)]) from None
    except Exception as error:
        raise DatalogError(f"cannot load functors from {path}: {type(error).__name__}: "
                           f"{error}") from None
    return {key: value for key, value in vars(module).items()
            if callable(value) and not key.startswith("__")}
