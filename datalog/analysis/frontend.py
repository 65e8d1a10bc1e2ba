"""The front end in one call: text -> parsed, checked, stratified program.

:func:`load` and :func:`load_file` parse (following ``#include``), run every check
and stratify. Any error raises: :class:`ParseError` for syntax, :class:`CheckError`
carrying every error diagnostic of the program (checks and stratification
together). Warnings are kept on the result, a :class:`CheckedProgram`, which is
what the compiler, the reference evaluator and the REPL start from.

The program on the result has ``eqrel`` relations expanded into ordinary rules
(see :mod:`datalog.analysis.transforms.eqrel`), so its strata hold those rules too,
and no ``inline`` relations: they are substituted into the rules that use them
(:mod:`datalog.analysis.transforms.inline`) and kept aside, on ``inlined``, for
queries.

>>> checked = load('''.decl e(x: number, y: number)
... .decl t(x: number, y: number)
... e(1, 2).
... t(x, y) :- e(x, y).
... t(x, z) :- t(x, y), e(y, z).''')
>>> [s.relations for s in checked.strata], checked.types["t"], checked.warnings
([('e',), ('t',)], ('number', 'number'), ())
>>> load('.decl e(x: number)\\nr(x) :- e(x).')
Traceback (most recent call last):
  ...
datalog.errors.CheckError: <string>:2:1: error: undefined relation `r`
    r(x) :- e(x).
    ^~~~
hint: declare it with `.decl r(...)`
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from datalog.analysis.check import check, sort_diagnostics
from datalog.analysis.stratify import Stratum, stratify
from datalog.analysis.transforms.eqrel import expand_eqrel
from datalog.analysis.transforms.inline import Inlined, inline_relations
from datalog.analysis.transforms.patterns import count_negated_patterns
from datalog.analysis.types import relation_types
from datalog.errors import CheckError, Diagnostic, ParseError
from datalog.syntax.ast import Module
from datalog.syntax.parser import parse, parse_file


@dataclass(frozen=True)
class CheckedProgram:
    """A program that parses, checks and stratifies: ``program`` (with ``eqrel``
    expanded and ``inline`` relations substituted away), ``types`` (relation ->
    primitive type of each column), ``strata`` in dependency order, the
    ``warnings`` the checks found, and the ``inlined`` relations (for queries)."""

    program: Module
    types: dict[str, tuple[str, ...]]
    strata: tuple[Stratum, ...]
    warnings: tuple[Diagnostic, ...]
    inlined: Inlined = field(default_factory=lambda: Inlined({}, {}))


def diagnose(program: Module) -> list[Diagnostic]:
    """Every error and warning: the checks, then stratification (sorted by place)."""
    diagnostics = check(program)
    try:
        stratify(expand_eqrel(program))
    except CheckError as e:
        diagnostics += e.diagnostics
    return sort_diagnostics(diagnostics)


def diagnose_file(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
                  include_dirs: Sequence[str | os.PathLike] = ()
                  ) -> tuple[list[Diagnostic], dict[str, str]]:
    """Every diagnostic of the program in ``path`` (a syntax error is the only
    one when the text does not parse), and the text of every file it read;
    ``macros`` and ``include_dirs`` as for :func:`datalog.syntax.parser.parse`."""
    try:
        program = parse_file(path, macros=macros, include_dirs=include_dirs)
    except ParseError as e:
        return list(e.diagnostics), e.sources
    return diagnose(program), dict(program.sources)


def check_program(program: Module) -> CheckedProgram:
    """Check and stratify a parsed program; raises :class:`CheckError` with every
    error."""
    diagnostics = diagnose(program)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise CheckError(errors, dict(program.sources))
    expanded, inlined = inline_relations(count_negated_patterns(expand_eqrel(program)))
    return CheckedProgram(expanded, relation_types(expanded), tuple(stratify(expanded)),
                          tuple(d for d in diagnostics if d.severity == "warning"), inlined)


def load(text: str, path: str = "<string>", *, macros: Mapping[str, object] | None = None,
         include_dirs: Sequence[str | os.PathLike] = ()) -> CheckedProgram:
    """Parse, check and stratify the program ``text`` (named ``path``), with
    ``macros`` and ``include_dirs`` as for :func:`datalog.syntax.parser.parse`."""
    return check_program(parse(text, path, macros=macros, include_dirs=include_dirs))


def load_file(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
              include_dirs: Sequence[str | os.PathLike] = ()) -> CheckedProgram:
    """Parse, check and stratify the program in the file at ``path``."""
    return check_program(parse_file(path, macros=macros, include_dirs=include_dirs))
