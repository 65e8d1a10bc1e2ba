"""The types of a program: primitive types, user types and how they relate.

A program's types are the four primitive types (``number``, ``unsigned``,
``float``, ``symbol``) and its user types:

- ``.type T <: number``: a *subtype*, a new type whose values are numbers; two
  subtypes of ``number`` are different types (a ``Person`` id is not a ``City``
  id), and each is a subtype of ``number``;
- ``.type T = number``: an *equivalent* type, another name for the same type;
- ``.type U = A | B``: a *union*; ``A`` and ``B`` are subtypes of ``U``, and all
  members must have the same primitive type;
- ``.type P = [a: number, b: P]``: a *record type*, and ``.type E = A {x: number}
  | B {}``: an *algebraic data type*. Each is a kind of its own: its "primitive"
  is the type itself, a :class:`~datalog.dialect.records.RecordType` or
  :class:`~datalog.dialect.records.ADTType` (a ``str`` equal to its name that
  carries the fields).

:class:`TypeTable` resolves every type to its primitive type and answers subtype
questions; :func:`datalog.analysis.checks.types.check_types` reports bad type
declarations;
:func:`relation_types` gives each relation's column types as primitives.

>>> from datalog.syntax.parser import parse
>>> p = parse(".type Id <: number\\n.type Any = Id | number\\n.decl r(a: Id, b: symbol)")
>>> table = TypeTable(p)
>>> table.primitive("Id"), table.is_subtype("Id", "number"), table.is_subtype("number", "Id")
('number', True, False)
>>> relation_types(p)
{'r': ('number', 'symbol')}
"""

from __future__ import annotations

import re

from datalog.dialect.records import ADTType, RecordType
from datalog.errors import CheckError, Diagnostic, did_you_mean
from datalog.syntax.ast import PRIMITIVE_TYPES, Module, Span, TypeDecl


class TypeTable:
    """The user types of a program, resolved. Unknown or cyclic types resolve to
    ``None`` (:func:`~datalog.analysis.checks.types.check_types` reports them)."""

    def __init__(self, program: Module):
        self.decls: dict[str, TypeDecl] = {}
        for decl in program.types:
            self.decls.setdefault(decl.name, decl)
        self._canonical: dict[str, str | None] = {}
        self._primitive: dict[str, str | None] = {}
        self._parents: dict[str, set[str]] = {}
        self._structured: dict[str, RecordType | ADTType] = {}
        #: branch name -> the ADT declaration holding it (the first one)
        self.branches: dict[str, TypeDecl] = {}
        for decl in self.decls.values():
            for branch in decl.branches:
                self.branches.setdefault(branch.name, decl)
        for decl in self.decls.values():
            if decl.kind == "union":
                for member in decl.bases:
                    canonical = self.canonical(member)
                    if canonical is not None:
                        self._parents.setdefault(canonical, set()).add(decl.name)

    def known(self, name: str) -> bool:
        return name in PRIMITIVE_TYPES or name in self.decls

    def names(self) -> list[str]:
        return [*PRIMITIVE_TYPES, *self.decls]

    def canonical(self, name: str, _seen: frozenset = frozenset()) -> str | None:
        """The type ``name`` stands for (following ``=`` aliases), or None."""
        if name in PRIMITIVE_TYPES:
            return name
        if name in self._canonical:
            return self._canonical[name]
        decl = self.decls.get(name)
        result = None
        if decl is not None and name not in _seen:
            if decl.kind == "equivalent":
                result = self.canonical(decl.bases[0], _seen | {name})
            else:
                result = name
        if not _seen:
            self._canonical[name] = result
        return result

    def primitive(self, name: str | None, _seen: frozenset = frozenset()) -> str | None:
        """The primitive type of ``name`` (None if unknown, cyclic or mixed)."""
        if name is None:
            return None
        if name in PRIMITIVE_TYPES:
            return name
        if name in self._primitive and not _seen:
            return self._primitive[name]
        decl = self.decls.get(name)
        result = None
        if decl is not None and decl.kind in ("record", "adt"):
            return self.structured(name)
        if decl is not None and name not in _seen:
            prims = {self.primitive(b, _seen | {name}) for b in decl.bases}
            result = prims.pop() if len(prims) == 1 else None
        if not _seen:
            self._primitive[name] = result
        return result

    def structured(self, name: str) -> RecordType | ADTType:
        """The :class:`RecordType` or :class:`ADTType` of the record or ADT
        declaration ``name`` (built once; a field of an unknown type reads ``?``)."""
        found = self._structured.get(name)
        if found is not None:
            return found
        decl = self.decls[name]
        if decl.kind == "record":
            found = RecordType(name)
            self._structured[name] = found
            found.fields = tuple((f.name, self.primitive(f.type) or "?") for f in decl.fields)
        else:
            found = ADTType(name)
            self._structured[name] = found
            found.branches = {b.name: tuple((f.name, self.primitive(f.type) or "?")
                                            for f in b.fields)
                              for b in sorted(decl.branches, key=lambda b: b.name)}
        return found

    def ancestors(self, name: str) -> set[str]:
        """Every type ``name`` is a subtype of, itself included (canonical names)."""
        start = self.canonical(name)
        if start is None:
            return set()
        seen = {start}
        todo = [start]
        while todo:
            t = todo.pop()
            decl = self.decls.get(t)
            parents = set(self._parents.get(t, ()))
            if decl is not None and decl.kind == "subtype":
                base = self.canonical(decl.bases[0])
                if base is not None:
                    parents.add(base)
            prim = self.primitive(t)
            if prim is not None:
                parents.add(prim)
            for p in parents - seen:
                seen.add(p)
                todo.append(p)
        return seen

    def is_subtype(self, a: str, b: str) -> bool:
        """Whether every value of type ``a`` is a value of type ``b``."""
        target = self.canonical(b)
        return target is not None and target in self.ancestors(a)

    def meet(self, a: str, b: str) -> str | None:
        """The type of a value that has both types, or None when no value can
        (different primitives, or two unrelated subtypes)."""
        if self.is_subtype(a, b):
            return a
        if self.is_subtype(b, a):
            return b
        if self.primitive(a) is None or self.primitive(a) != self.primitive(b):
            return None
        unions = [t for t in (a, b) if self.decls.get(self.canonical(t) or "", None)
                  and self.decls[self.canonical(t)].kind == "union"]
        if unions:  # a union and a related type may share members; stay permissive
            return b if unions[0] == a else a
        return None


def word_span(sources: dict[str, str], span: Span | None, word: str) -> Span | None:
    """The span of ``word`` inside ``span`` (a directive naming a relation or a
    parameter), found in the source text; ``span`` itself if it is not there."""
    if span is None or span.path not in sources or span.line <= 0:
        return span
    lines = sources[span.path].split("\n")
    for number in range(span.line, min(span.end_line, len(lines)) + 1):
        text = lines[number - 1]
        start = span.column - 1 if number == span.line else 0
        m = re.compile(rf"(?<![\w?]){re.escape(word)}(?![\w?])").search(text, start)
        if m is not None:
            return Span(span.path, number, m.start() + 1, number, m.end() + 1)
    return span


def relation_types(program: Module) -> dict[str, tuple[str, ...]]:
    """The primitive type of each column of each declared relation (the first
    declaration of a name counts). Raises :class:`CheckError` for a column whose
    type is unknown (:func:`datalog.analysis.check.check` reports those first)."""
    table = TypeTable(program)
    out: dict[str, tuple[str, ...]] = {}
    for decl in program.relations:
        if decl.name in out:
            continue
        columns = []
        for attr in decl.attributes:
            prim = table.primitive(attr.type)
            if prim is None:
                raise CheckError([Diagnostic("error", f"unknown type `{attr.type}`", attr.span,
                                             hint=did_you_mean(attr.type, table.names()))],
                                 dict(program.sources))
            columns.append(prim)
        out[decl.name] = tuple(columns)
    return out
