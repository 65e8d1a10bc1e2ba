"""Soufflé's components, expanded into a flat program.

A component (``.comp C<T> : Base<T> { ... }``) is a template of declarations,
directives, clauses, nested components and instantiations; ``.init c = C<number>``
makes an *instance*: a copy of the template's content (with its bases' content,
its nested instances' content and its type parameters bound) in which every
relation and type the copy declares is renamed ``c.name``. :func:`expand` does
this for every ``.init`` of a program, as Soufflé's documentation describes
(souffle-lang.github.io/components), so the later stages see an ordinary program
whose relations happen to have dotted names (``c.r``, ``a.b.r``) and know
nothing of components:

- a name in a clause or a directive is renamed only when the instance declares
  it; otherwise it is left for the enclosing scope to resolve (a component's
  rules may extend a relation declared outside it, and a rule outside may read
  ``c.r``);
- a type parameter stands for its argument wherever a type or a component is
  named (``.decl r(x: T)``, ``.init i = T``, ``.comp D<T> : T``);
- a base's content comes first; ``.override r`` in a component drops the facts
  and rules its bases give ``r``, which a base must declare ``overridable``;
- a component name is looked up in the component that names it, then in the
  enclosing ones, then at the top level.

Nodes keep their spans, so an error in an instance's rule points at the rule in
the component's text. A component that is never instantiated contributes nothing
(and its clauses are not checked), as in Soufflé. Errors (an unknown component,
a wrong number of type arguments, an override of a relation that is not
``overridable``, cyclic inheritance, instantiation nested too deeply, two
components or instances of one name in a scope) are located diagnostics.

>>> from datalog.syntax.parser import parse
>>> m = parse('''.comp Pair<T> { .decl r(x: T) r(1). }
... .init p = Pair<number>
... .decl out(x: number)
... out(x) :- p.r(x).''')
>>> [(d.name, d.attributes[0].type) for d in m.relations], m.facts[0].atom.relation
([('p.r', 'number'), ('out', 'number')], 'p.r')
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import NamedTuple

from datalog.errors import Diagnostic, ParseError, Span
from datalog.syntax.ast import (
    PRIMITIVE_TYPES,
    Atom,
    Attribute,
    Cast,
    Component,
    ComponentInit,
    ComponentType,
    Constant,
    Directive,
    Fact,
    Override,
    RelationDecl,
    Rule,
    Subsumption,
    TypeDecl,
    Variable,
    Wildcard,
)

#: Instances may nest (through nested ``.init`` and inheritance) this deep; a
#: component that instantiates itself reaches it.
MAX_DEPTH = 100


class _Frame(NamedTuple):
    """An instance being expanded: its name, its component and type arguments."""

    name: str
    component: Component
    binding: tuple[tuple[str, str], ...]


class _Failed(Exception):
    """One instantiation failed; its diagnostic is recorded."""


def has_components(items: list) -> bool:
    return any(isinstance(i, (Component, ComponentInit, Override)) for i in items)


def expand(items: list, sources: dict[str, str]) -> list:
    """``items`` (a program's top-level items in source order) with every
    component declaration removed and every ``.init`` replaced by the content of
    its instance. Raises :class:`ParseError` with every error found."""
    expander = _Expander(items, sources)
    out = expander.top_level(items)
    if expander.errors:
        # one error per place and message, however many instances meet it
        unique = {(d.span, d.message): d for d in expander.errors}
        errors = sorted(unique.values(), key=lambda d: (d.span.path, d.span.line, d.span.column))
        raise ParseError(errors, sources)
    return out


class _Expander:
    def __init__(self, items: list, sources: dict[str, str]):
        self.sources = sources
        self.errors: list[Diagnostic] = []
        #: id(component) -> the component it is declared in (None: top level).
        self.parent: dict[int, Component | None] = {}
        self.top: dict[str, Component] = self.scope(items, None)

    # ------------------------------------------------------------ scopes

    def scope(self, items, owner: Component | None) -> dict[str, Component]:
        """The components declared among ``items`` (directly), by name; records
        the parent of every component (at any depth) and reports two of one name
        in a scope, and components nested too deeply."""
        top: dict[str, Component] = {}
        todo = [(items, owner, top, 0)]
        while todo:
            items, owner, found, depth = todo.pop()
            for item in items:
                if not isinstance(item, Component):
                    continue
                if depth >= MAX_DEPTH:
                    self.error(f"components nest more than {MAX_DEPTH} levels deep",
                               _head(item))
                    continue
                self.parent[id(item)] = owner
                if item.name in found:
                    first = found[item.name].span
                    self.error(f"component `{item.name}` is already declared "
                               f"(line {first.line})", _head(item),
                               "give the component another name")
                else:
                    found[item.name] = item
                todo.append((item.items, item, {}, depth + 1))
        return top

    def lookup(self, name: str, owner: Component | None, binding: dict[str, str],
               span: Span) -> Component:
        """The component ``name`` (a type parameter bound in ``binding`` stands for
        its argument) as seen from inside ``owner``."""
        bound = binding.get(name, name)
        scope = owner
        candidates: list[str] = []
        while scope is not None:
            for item in scope.items:
                if isinstance(item, Component):
                    if item.name == bound:
                        return item
                    candidates.append(item.name)
            scope = self.parent[id(scope)]
        if bound in self.top:
            return self.top[bound]
        candidates += list(self.top)
        shown = f"`{name}`" if bound == name else f"`{bound}` (the argument of `{name}`)"
        close = difflib.get_close_matches(bound, candidates, n=1)
        hint = f"did you mean `{close[0]}`?" if close else \
            "declare it with `.comp " + bound + " { ... }`"
        raise self.fail(f"unknown component {shown}", span, hint)

    # ------------------------------------------------------------ instances

    def top_level(self, items: list) -> list:
        out: list = []
        names: dict[str, ComponentInit] = {}
        for item in items:
            if isinstance(item, Component):
                continue
            if isinstance(item, Override):
                self.error("`.override` outside a component", item.span,
                           "write it inside the `.comp` that overrides its base's relation")
                continue
            if isinstance(item, ComponentInit):
                if not self.unique(item, names):
                    continue
                try:
                    out += self.instance(item, None, {}, ())
                except _Failed:
                    pass
                continue
            out.append(item)
        return out

    def unique(self, init: ComponentInit, names: dict[str, ComponentInit]) -> bool:
        if init.name in names:
            self.error(f"instance `{init.name}` is already defined "
                       f"(line {names[init.name].span.line})", init.span,
                       "give each instance its own name")
            return False
        names[init.name] = init
        return True

    def instance(self, init: ComponentInit, owner: Component | None,
                 binding: dict[str, str], stack: tuple) -> list:
        """The content of the instance ``init`` (declared inside ``owner``),
        renamed into its namespace. ``stack`` holds the enclosing instances."""
        content = self.content(init.component, owner, binding, stack, set(), (), init)
        return _rename(content, init.name)

    def content(self, ref: ComponentType, owner: Component | None, binding: dict[str, str],
                stack: tuple[_Frame, ...], overridden: set[str], chain: tuple,
                init: ComponentInit | None = None) -> list:
        """The items ``ref`` (named inside ``owner``) stands for: its bases'
        content, then its own items, nested instances expanded; facts and rules
        of the relations in ``overridden`` (by a component deriving from it) are
        left out. ``chain`` is the inheritance path to ``ref`` (for cycles);
        ``init`` the instance when ``ref`` is what an ``.init`` names."""
        component = self.lookup(ref.name, owner, binding, ref.span)
        if len(ref.args) != len(component.params):
            expected = len(component.params)
            raise self.fail(
                f"component `{component.name}` takes {expected} type argument"
                f"{'s' if expected != 1 else ''}, got {len(ref.args)}", ref.span,
                "write `" + component.name +
                ("<" + ", ".join(component.params) + ">`" if expected else "` without `<...>`"))
        chain = (*chain, component)
        if any(c is component for c in chain[:-1]):
            path = " -> ".join(c.name for c in chain)
            raise self.fail(f"cyclic inheritance: {path}", ref.span,
                            "a component cannot derive from itself")
        if len(chain) + len(stack) > MAX_DEPTH:
            raise self.fail(f"instances and bases nest more than {MAX_DEPTH} deep", ref.span)
        inner = dict(binding)
        inner.update({p: binding.get(a, a) for p, a in zip(component.params, ref.args)})
        if init is not None:
            frame = _Frame(init.name, component, tuple(sorted(inner.items())))
            for i, outer in enumerate(stack):
                if outer.component is component and outer.binding == frame.binding:
                    path = " -> ".join([*(f.name for f in stack[i:]), init.name])
                    raise self.fail(f"component `{component.name}` instantiates itself: "
                                    f"{path}", init.span,
                                    "an instance cannot hold an instance of its own component")
            stack = (*stack, frame)
        overrides = [i for i in component.items if isinstance(i, Override)]
        mine = {o.relation for o in overrides}
        items: list = []
        for base in component.bases:
            items += self.content(base, self.parent[id(component)], inner, stack,
                                  overridden | mine, chain)
        self.check_overrides(component, overrides, items)
        names: dict[str, ComponentInit] = {}
        for item in component.items:
            if isinstance(item, (Component, Override)):
                continue
            if isinstance(item, ComponentInit):
                if self.unique(item, names):
                    items += self.instance(item, component, inner, stack)
            elif isinstance(item, (Fact, Rule, Subsumption)):
                kept = _without(item, overridden)
                if kept is not None:
                    items.append(_bind(kept, inner) if isinstance(kept, Rule) else kept)
            else:
                items.append(_bind(item, inner))
        return items

    def check_overrides(self, component: Component, overrides: list[Override],
                        inherited: list) -> None:
        declared = {d.name: d for d in inherited if isinstance(d, RelationDecl)}
        for override in overrides:
            decl = declared.get(override.relation)
            if decl is None:
                close = difflib.get_close_matches(override.relation, list(declared), n=1)
                raise self.fail(
                    f"`.override {override.relation}`: no base of `{component.name}` declares "
                    f"a relation `{override.relation}`", override.span,
                    f"did you mean `{close[0]}`?" if close else None)
            if "overridable" not in decl.qualifiers:
                raise self.fail(
                    f"relation `{override.relation}` is not `overridable`", override.span,
                    f"declare it `.decl {override.relation}(...) overridable` in the base "
                    f"component (line {decl.span.line})")

    # ------------------------------------------------------------ errors

    def error(self, message: str, span: Span, hint: str | None = None) -> None:
        self.errors.append(Diagnostic("error", message, span, hint))

    def fail(self, message: str, span: Span, hint: str | None = None) -> _Failed:
        self.error(message, span, hint)
        return _Failed(message)


def _head(component: Component) -> Span:
    """The span of ``.comp Name`` (not the whole block)."""
    s = component.span
    return Span(s.path, s.line, s.column, s.line, s.column + len(".comp ") + len(component.name))


def _without(clause: Fact | Rule | Subsumption, overridden: set[str]):
    """``clause`` without the heads of overridden relations (None: nothing left;
    a subsumption rule goes with its relation)."""
    if not overridden:
        return clause
    if isinstance(clause, Fact):
        return None if clause.atom.relation in overridden else clause
    if isinstance(clause, Subsumption):
        return None if clause.dominated.relation in overridden else clause
    heads = tuple(h for h in clause.heads if h.relation not in overridden)
    if len(heads) == len(clause.heads):
        return clause
    return dataclasses.replace(clause, heads=heads) if heads else None


def _bind(item, binding: dict[str, str]):
    """A declaration or rule with its type parameters replaced by their
    arguments (in attributes, record fields, ADT branches and ``as`` casts)."""
    if not binding:
        return item
    return _renamed(item, {}, binding)


#: Nodes that hold no relation or type name.
_LEAVES = (Constant, Variable, Wildcard, Span, str, int, float)


def _rename(items: list, prefix: str) -> list:
    """``items`` with the relations and types they declare renamed ``prefix.name``,
    everywhere they are named among them."""
    relations = {d.name: f"{prefix}.{d.name}" for d in items if isinstance(d, RelationDecl)}
    types = {t.name: f"{prefix}.{t.name}" for t in items if isinstance(t, TypeDecl)}
    for name in PRIMITIVE_TYPES:
        types.pop(name, None)
    return [_renamed(item, relations, types) for item in items]


def _renamed(node, relations: dict[str, str], types: dict[str, str]):
    if isinstance(node, Fact):      # the common case, made cheap: no atoms in its terms
        name = relations.get(node.atom.relation)
        if name is None:
            return node
        return Fact(Atom(name, node.atom.args, node.atom.span), node.span)
    if isinstance(node, _LEAVES):
        return node
    if isinstance(node, tuple):
        return tuple(_renamed(n, relations, types) for n in node)
    if not dataclasses.is_dataclass(node):
        return node
    if isinstance(node, Atom):
        args = _renamed(node.args, relations, types)
        return Atom(relations.get(node.relation, node.relation), args, node.span)
    if isinstance(node, RelationDecl):
        return dataclasses.replace(node, name=relations.get(node.name, node.name),
                                   attributes=_renamed(node.attributes, relations, types))
    if isinstance(node, Attribute):
        return dataclasses.replace(node, type=types.get(node.type, node.type))
    if isinstance(node, TypeDecl):
        return dataclasses.replace(node, name=types.get(node.name, node.name),
                                   bases=tuple(types.get(b, b) for b in node.bases),
                                   fields=_renamed(node.fields, relations, types),
                                   branches=_renamed(node.branches, relations, types))
    if isinstance(node, Cast):
        return dataclasses.replace(node, term=_renamed(node.term, relations, types),
                                   type=types.get(node.type, node.type))
    if isinstance(node, Directive):
        return dataclasses.replace(node, relations=tuple(relations.get(r, r)
                                                         for r in node.relations))
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple) or dataclasses.is_dataclass(value):
            new = _renamed(value, relations, types)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node
