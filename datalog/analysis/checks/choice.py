"""``choice-domain``: the domains a relation declares, and what is wrong with them.

``.decl r(x: number, y: number) choice-domain x`` makes ``x`` a functional
dependency of ``r`` (at most one tuple of ``r`` per value of ``x``); a domain may
be a tuple, ``choice-domain (x, y)``, and a relation may have several, each of
which must hold (``choice-domain x, y``). Which tuple is kept is the engine's
rule, written down in :mod:`datalog.plan.choice`.

:func:`effective_domains` is the one reading of a declaration's domains (column
numbers, with the redundant ones dropped); :func:`check_choice` gives these
diagnostics: an attribute a domain names that the relation does not declare, a
`choice-domain` on an ``eqrel`` relation, and a recursive relation with more than
one (effective) domain, which this engine does not evaluate.

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('''.decl e(a: number, b: number)
... .decl r(x: number, y: number) choice-domain x, (x, z)
... r(x, y) :- e(x, y).''')
>>> for d in check_choice(p, Context(p)): print(f"{d.span.line}:{d.span.column} {d.message}")
2:52 `z` in `choice-domain` is not an attribute of `r`
>>> effective_domains(parse('.decl r(x: number, y: number, z: number) '
...                         'choice-domain (x, y), x, (x, y, z), z').relations[0])
((0,), (2,))
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.stratify import components, dependencies
from datalog.analysis.types import word_span
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import Module, RelationDecl


def effective_domains(decl: RelationDecl) -> tuple[tuple[int, ...], ...]:
    """The column numbers of each domain of ``decl`` that constrains anything, in
    declaration order: a domain naming every attribute is dropped (it holds for
    any set of tuples), and so is one that contains another domain (implied by
    it); repeats count once. Names that are not attributes are ignored (reported
    by :func:`check_choice`)."""
    index = {a.name: i for i, a in enumerate(decl.attributes)}
    domains: list[frozenset[int]] = []
    for domain in decl.choice:
        cols = frozenset(index[n] for n in domain.attributes if n in index)
        if cols and len(cols) < decl.arity and cols not in domains:
            domains.append(cols)
    kept = [d for d in domains if not any(o < d for o in domains)]
    return tuple(tuple(sorted(d)) for d in kept)


def check_choice(program: Module, context: Context) -> list[Diagnostic]:
    """Unknown attributes in ``choice-domain``, ``eqrel`` with a choice, and
    recursion through a relation with several domains."""
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    chosen = {}
    for decl in program.relations:
        if not decl.choice or decl.name in chosen:
            continue
        chosen[decl.name] = decl
        names = [a.name for a in decl.attributes]
        for domain in decl.choice:
            for name in domain.attributes:
                if name not in names:
                    out.append(Diagnostic(
                        "error", f"`{name}` in `choice-domain` is not an attribute of "
                        f"`{decl.name}`", word_span(sources, domain.span, name),
                        hint=did_you_mean(name, names) or
                        f"`{decl.name}` has {', '.join(names) or 'no attributes'}"))
        if "eqrel" in decl.qualifiers:
            out.append(Diagnostic("error", f"`eqrel` relation `{decl.name}` cannot have a "
                                  "`choice-domain`", decl.choice[0].span,
                                  hint="an equivalence relation holds every pair its "
                                       "classes imply; it cannot keep one per value"))
    if not chosen:
        return out
    graph = dependencies(program)
    recursive = {name for names, cyclic in components(graph) if cyclic for name in names}
    for name, decl in chosen.items():
        domains = effective_domains(decl)
        if name in recursive and len(domains) > 1:
            out.append(Diagnostic(
                "error", f"recursive relation `{name}` has several choice domains",
                decl.choice[-1].span,
                hint="with several domains the choice is a matching made in value "
                     "order, one tuple after another, which the engine computes only "
                     "outside recursion; keep one domain or compute the relation outside "
                     "the recursion"))
    return out
