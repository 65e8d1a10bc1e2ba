"""Relation declarations: what is wrong with a ``.decl`` or left unused.

Takes a module and its :class:`~datalog.analysis.context.Context` (for the type
table) and gives these diagnostics: a relation declared twice, an attribute of
unknown type, an ``eqrel`` relation that is not binary and homogeneous, ``btree``
with ``brie``; warnings for ``.plan`` (ignored) and for a relation with no facts,
rules or input.

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse(".decl e(x: number, y: nmber) eqrel")
>>> for d in check_declarations(p, Context(p)): print(f"{d.severity}: {d.message}")
error: unknown type `nmber`
error: `eqrel` relation `e` must have two attributes of the same type
warning: relation `e` has no facts, rules or input
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.types import word_span
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import Module, RelationDecl


def check_declarations(program: Module, context: Context) -> list[Diagnostic]:
    """Duplicate relations, unknown attribute types, ``eqrel`` and storage
    qualifiers, ``.plan``, relations with no facts, rules or input."""
    table = context.table
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    first: dict[str, RelationDecl] = {}
    for decl in program.relations:
        if decl.name in first:
            out.append(Diagnostic("error", f"relation `{decl.name}` is declared twice",
                                  decl.span, hint=f"first declared at {first[decl.name].span}"))
            continue
        first[decl.name] = decl
        for attr in decl.attributes:
            if not table.known(attr.type):
                out.append(Diagnostic("error", f"unknown type `{attr.type}`",
                                      word_span(sources, attr.span, attr.type),
                                      hint=did_you_mean(attr.type, table.names())))
        if "eqrel" in decl.qualifiers:
            types = {a.type for a in decl.attributes}
            if decl.arity != 2 or len(types) != 1:
                out.append(Diagnostic("error", f"`eqrel` relation `{decl.name}` must have "
                                      "two attributes of the same type", decl.span,
                                      hint="an equivalence relation relates values of "
                                           "one type"))
        if "btree" in decl.qualifiers and "brie" in decl.qualifiers:
            out.append(Diagnostic("error", f"relation `{decl.name}` cannot be both `btree` "
                                  "and `brie`", decl.span, hint="choose one"))
    for plan in program.plans:
        out.append(Diagnostic("warning", "`.plan` is ignored", plan.span,
                              hint="the engine chooses the join order itself"))
    defined = {f.atom.relation for f in program.facts}
    defined |= {h.relation for r in program.rules for h in r.heads}
    defined |= set(program.relations_with("input"))
    for name, decl in first.items():
        if name not in defined:
            out.append(Diagnostic("warning", f"relation `{name}` has no facts, rules or "
                                  "input", decl.span, hint=f"add `.input {name}` to read "
                                  "it from a file"))
    return out
