"""Type declarations: duplicate, unknown, cyclic and mixed types (``.type``)."""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.types import TypeTable, word_span
from datalog.dialect.records import is_structured
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import PRIMITIVE_TYPES, Module, TypeDecl


def check_types(program: Module, context: Context) -> list[Diagnostic]:
    """Duplicate, unknown, cyclic and mixed type declarations (a check of
    :mod:`datalog.analysis.check`; ``context.table`` is the module's
    :class:`~datalog.analysis.types.TypeTable`)."""
    table = context.table
    out: list[Diagnostic] = []
    sources = dict(program.sources)
    first: dict[str, TypeDecl] = {}
    for decl in program.types:
        if decl.name in PRIMITIVE_TYPES:
            out.append(Diagnostic("error", f"`{decl.name}` is a built-in type", decl.span,
                                  hint="choose another name"))
            continue
        if decl.name in first:
            out.append(Diagnostic("error", f"type `{decl.name}` is declared twice", decl.span,
                                  hint=f"first declared at {first[decl.name].span}"))
            continue
        first[decl.name] = decl
        if decl.kind in ("record", "adt"):
            out += _check_structured(decl, table)
            continue
        for base in decl.bases:
            if not table.known(base):
                hint = did_you_mean(base, table.names())
                out.append(Diagnostic("error", f"unknown type `{base}`",
                                      word_span(sources, decl.span, base), hint=hint))
        if not all(table.known(b) for b in decl.bases):
            continue
        if decl.name in decl.bases or _cyclic(decl.name, table):
            out.append(Diagnostic("error", f"type `{decl.name}` is defined in terms of itself",
                                  decl.span))
            continue
        structured = [b for b in decl.bases if is_structured(table.primitive(b))]
        if structured and decl.kind != "equivalent":
            what = "a union" if decl.kind == "union" else "a subtype"
            out.append(Diagnostic("error", f"`{structured[0]}` is a record or algebraic data "
                                  f"type; it cannot be part of {what}",
                                  word_span(sources, decl.span, structured[0]),
                                  hint="use an algebraic data type with one branch per case"
                                  if decl.kind == "union" else f"use `{structured[0]}` itself"))
            continue
        if decl.kind == "union" and table.primitive(decl.name) is None:
            prims = sorted({str(table.primitive(b)) for b in decl.bases})
            out.append(Diagnostic("error", f"union `{decl.name}` mixes types of different "
                                  f"kinds ({', '.join(prims)})", decl.span,
                                  hint="all members of a union must be numbers, or all "
                                       "symbols, ..."))
    return out


def _check_structured(decl: TypeDecl, table: TypeTable) -> list[Diagnostic]:
    """A record type's or an ADT's fields are of known types; a branch name
    names one branch of one ADT (``$A(..)`` must say which type it builds)."""
    out = []
    fields = [*decl.fields, *(f for b in decl.branches for f in b.fields)]
    for attr in fields:
        if not table.known(attr.type):
            out.append(Diagnostic("error", f"unknown type `{attr.type}`", attr.span,
                                  hint=did_you_mean(attr.type, table.names())))
    for branch in decl.branches:
        owner = table.branches.get(branch.name)
        if owner is not None and owner is not decl:
            out.append(Diagnostic("error", f"branch `{branch.name}` is also a branch of "
                                  f"`{owner.name}`", branch.span,
                                  hint="branch names are global: `$"
                                  f"{branch.name}(..)` must name one type"))
    return out


def _cyclic(name: str, table: TypeTable) -> bool:
    seen = set()
    todo = [name]
    while todo:
        t = todo.pop()
        decl = table.decls.get(t)
        if decl is None:
            continue
        for base in decl.bases:
            if base == name:
                return True
            if base not in seen:
                seen.add(base)
                todo.append(base)
    return False
