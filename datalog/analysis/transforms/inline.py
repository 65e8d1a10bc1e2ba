"""``inline`` relations: substituted into the rules that use them, never stored.

Soufflé's ``inline`` qualifier (its "Inlining" page) asks for a relation to be
replaced, wherever it is used, by its rules: a body atom ``a(t1, .., tn)``
becomes one alternative per clause of ``a`` (its facts are clauses with an empty
body), the clause's variables renamed apart from the rule's, its head unified
with the atom (a plain head variable takes the atom's argument; any other head
argument, or a repeated variable, becomes an equality ``ti = hi``). So

    .decl pairs(x: number, y: number) inline
    pairs(x, y) :- n(x), n(y).
    q(x) :- pairs(x, y), x < 5, y < x.

is evaluated as ``q(x) :- n(x), n(y), x < 5, y < x.``, and the product ``pairs``
is never built. A negated atom ``!a(..)`` holds when no clause of ``a`` does:
each clause's literals are negated (``!b(..)``, ``b(..)`` for ``!b(..)``, the
opposite comparison) and the body takes one of each clause's (De Morgan, then
the distributive law); every variable of such a clause must be one of its head's,
so that the negation's arguments bind them all (the checks refuse the rest,
:mod:`datalog.analysis.checks.inline`).

Takes a checked module (:func:`inline_relations`) or a query's body
(:meth:`Inlined.expand`) and gives them without inline relations: the module
loses their declarations, facts and rules. Inline relations that use each other
are expanded in dependency order; a cycle through inline relations only is an
error of the checks, as in Soufflé.

>>> from datalog.syntax.parser import parse
>>> from datalog.syntax.printer import clause_text
>>> p = parse('''.decl n(x: number)
... .decl pairs(x: number, y: number) inline
... pairs(x, y) :- n(x), n(y).
... .decl q(x: number)
... q(x) :- pairs(x, y), x < 5, y < x.''')
>>> module, inlined = inline_relations(p)
>>> [d.name for d in module.relations], [clause_text(*c) for c in module.rules[0].clauses()]
(['n', 'q'], ['q(x) :- n(x), n(y), x < 5, y < x.'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from datalog.dialect.functors import NEGATED_CONSTRAINTS
from datalog.syntax import ast
from datalog.syntax.builder import MAX_ALTERNATIVES
from datalog.syntax.terms import clause_variables, literal_variables

#: The clauses of a relation: (head, conjunction of literals) pairs.
Clauses = tuple[tuple[ast.Atom, tuple[ast.Literal, ...]], ...]


class InlineError(Exception):
    """An expansion too large to evaluate (more than :data:`MAX_ALTERNATIVES`
    alternatives for one rule): ``span`` is the rule's."""

    def __init__(self, message: str, span: ast.Span):
        super().__init__(message)
        self.span = span


def inline_names(program: ast.Module) -> set[str]:
    """The names of the relations declared ``inline``."""
    return {d.name for d in program.relations if "inline" in d.qualifiers}


def inline_order(program: ast.Module) -> list[str]:
    """The inline relations, each after the inline relations its clauses use
    (the checks have refused cycles; any left are broken arbitrarily)."""
    names = inline_names(program)
    uses: dict[str, set[str]] = {name: set() for name in names}
    for head, body in module_clauses(program):
        if head.relation in names:
            uses[head.relation] |= {a.relation for a in body_atoms(body)} & names
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for used in sorted(uses[name]):
            visit(used)
        order.append(name)

    for name in sorted(names):
        visit(name)
    return order


@dataclass(frozen=True)
class Inlined:
    """The inline relations of a program: their declarations by name, and the
    clauses of each with every inline atom already substituted."""

    decls: dict[str, ast.RelationDecl]
    clauses: dict[str, Clauses]

    def __contains__(self, name: str) -> bool:
        return name in self.decls

    def expand(self, body: tuple[ast.Literal, ...],
               taken: Iterable[str] = ()) -> list[tuple[ast.Literal, ...]]:
        """The alternatives ``body`` (a conjunction) stands for, without inline
        atoms; ``taken`` are variable names the new ones must not reuse
        (those of the rule's head). Raises :class:`InlineError` beyond
        :data:`MAX_ALTERNATIVES`."""
        if not any(a.relation in self.decls for a in body_atoms(body)):
            return [body]
        names = set(taken) | {v.name for lit in body for v in literal_variables(lit)}
        alternatives: list[tuple[ast.Literal, ...]] = [()]
        for literal in body:
            choices = self._literal(literal, names)
            if len(alternatives) * len(choices) > MAX_ALTERNATIVES:
                raise InlineError(f"inlining makes this rule's body more than "
                                  f"{MAX_ALTERNATIVES} alternatives", literal.span)
            alternatives = [a + c for a in alternatives for c in choices]
        return alternatives

    def _literal(self, literal: ast.Literal, names: set[str]) -> list[tuple[ast.Literal, ...]]:
        """The alternatives one literal stands for."""
        if isinstance(literal, ast.Atom) and literal.relation in self.decls:
            types = self._types(literal.relation)
            return [_unify(literal, head, body, names, types)
                    for head, body in self.clauses[literal.relation]]
        if isinstance(literal, ast.Negation) and literal.atom.relation in self.decls:
            # !a(..) holds when every clause of a fails: one failing literal of each
            alternatives: list[tuple[ast.Literal, ...]] = [()]
            types = self._types(literal.atom.relation)
            for head, body in self.clauses[literal.atom.relation]:
                unified = _unify(literal.atom, head, body, names, types)
                failing = [(_negate(lit, literal.span),) for lit in unified]
                if len(alternatives) * len(failing) > MAX_ALTERNATIVES:
                    raise InlineError(f"inlining makes this rule's body more than "
                                      f"{MAX_ALTERNATIVES} alternatives", literal.span)
                alternatives = [a + f for a in alternatives for f in failing]
            return alternatives
        return [(literal,)]

    def _types(self, name: str) -> tuple[str, ...]:
        return tuple(a.type for a in self.decls[name].attributes)


def inline_relations(program: ast.Module) -> tuple[ast.Module, Inlined]:
    """``program`` without its inline relations (substituted into every rule
    that uses them), and those relations. Raises :class:`InlineError` when a
    rule grows beyond :data:`MAX_ALTERNATIVES` alternatives."""
    names = inline_names(program)
    if not names:
        return program, Inlined({}, {})
    inlined = Inlined({d.name: d for d in program.relations if d.name in names}, {})
    own: dict[str, list] = {name: [] for name in names}
    for head, body in module_clauses(program):
        if head.relation in names:
            own[head.relation].append((head, body))
    for name in inline_order(program):
        expanded = []
        for head, body in own[name]:
            taken = {v.name for v in literal_variables(head)}
            expanded += [(head, alt) for alt in inlined.expand(body, taken)]
        inlined.clauses[name] = tuple(expanded)
    rules = []
    for rule in program.rules:
        heads = tuple(h for h in rule.heads if h.relation not in names)
        if not heads:
            continue
        if len(heads) == len(rule.heads) and \
                not any(a.relation in names for c in rule.body for a in body_atoms(c)):
            rules.append(rule)
            continue
        taken = {v.name for h in heads for v in literal_variables(h)}
        body = tuple(alt for conjunction in rule.body
                     for alt in inlined.expand(conjunction, taken))
        if len(body) > MAX_ALTERNATIVES:
            raise InlineError(f"inlining makes this rule's body more than "
                              f"{MAX_ALTERNATIVES} alternatives", rule.span)
        if body:
            rules.append(ast.Rule(heads, body, rule.span))
    module = dataclasses.replace(
        program,
        relations=tuple(d for d in program.relations if d.name not in names),
        facts=tuple(f for f in program.facts if f.atom.relation not in names),
        rules=tuple(rules),
        directives=tuple(d for d in program.directives
                         if not set(d.relations) & names))
    return module, inlined


# ---------------------------------------------------------------- substitution


def module_clauses(program: ast.Module):
    """Every clause of the module, its facts as clauses with an empty body."""
    for fact in program.facts:
        yield fact.atom, ()
    for rule in program.rules:
        yield from rule.clauses()


def body_atoms(body: Iterable[ast.Literal]):
    """The atoms of a conjunction: positive, negated and inside aggregates."""
    for literal in body:
        if isinstance(literal, ast.Atom):
            yield literal
        elif isinstance(literal, ast.Negation):
            yield literal.atom
        for term in _literal_terms(literal):
            for agg in _aggregates(term):
                yield from body_atoms(agg.body)


def _literal_terms(literal: ast.Literal) -> tuple[ast.Term, ...]:
    if isinstance(literal, ast.Atom):
        return literal.args
    if isinstance(literal, ast.Negation):
        return literal.atom.args
    return literal.left, literal.right


def _aggregates(term: ast.Term):
    if isinstance(term, ast.Aggregate):
        yield term
    for child in _children(term):
        yield from _aggregates(child)


def _children(term: ast.Term) -> tuple[ast.Term, ...]:
    if isinstance(term, ast.BinaryOp):
        return term.left, term.right
    if isinstance(term, ast.UnaryOp):
        return (term.operand,)
    if isinstance(term, (ast.Functor, ast.Record, ast.Branch)):
        return term.args
    if isinstance(term, ast.Cast):
        return (term.term,)
    if isinstance(term, ast.Aggregate) and term.target is not None:
        return (term.target,)
    return ()


def _fresh(name: str, names: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``, ..., whichever is not in ``names``
    (which then holds it)."""
    candidate, n = name, 0
    while candidate in names:
        n += 1
        candidate = f"{name}_{n}"
    names.add(candidate)
    return candidate


def _unify(atom: ast.Atom, head: ast.Atom, body: tuple[ast.Literal, ...],
           names: set[str], types: tuple[str, ...]) -> tuple[ast.Literal, ...]:
    """The clause ``head :- body`` as literals standing for ``atom`` (whose
    columns have the declared ``types``): its variables renamed apart (avoiding
    ``names``, which then holds the new ones), each plain head variable
    replaced by the atom's argument at its place (a fresh variable for ``_``),
    the other head arguments equated to theirs."""
    mapping: dict[str, ast.Term] = {}
    takes: list[int] = []           # positions whose head variable takes the argument
    for i, (h, t) in enumerate(zip(head.args, atom.args)):
        if isinstance(h, ast.Variable) and h.name not in mapping:
            if isinstance(t, ast.Wildcard):
                t = ast.Variable(_fresh("_" + h.name.lstrip("_"), names), t.span)
            mapping[h.name] = t
            takes.append(i)
    for v in clause_variables(head, body):
        if v.name not in mapping:
            mapping[v.name] = ast.Variable(_fresh(v.name, names), v.span)
    equalities = tuple(
        ast.Comparison("=", t, _typed(substitute(h, mapping), column), t.span)
        for i, (h, t, column) in enumerate(zip(head.args, atom.args, types))
        if i not in takes and not isinstance(t, ast.Wildcard))
    return equalities + tuple(substitute(lit, mapping) for lit in body)


def _typed(term: ast.Term, type_: str) -> ast.Term:
    """A record or ``nil`` from a head, cast to its column's type: in the
    equality that replaces the head, nothing else tells its type."""
    if isinstance(term, (ast.Record, ast.Nil)):
        return ast.Cast(term, type_, term.span)
    return term


def _negate(literal: ast.Literal, span: ast.Span) -> ast.Literal:
    """The literal that holds exactly when ``literal`` (all of whose variables
    are bound) does not."""
    if isinstance(literal, ast.Atom):
        return ast.Negation(literal, span)
    if isinstance(literal, ast.Negation):
        return literal.atom
    return ast.Comparison(NEGATED_CONSTRAINTS[literal.op], literal.left, literal.right,
                          literal.span)


def substitute(node, mapping: dict[str, ast.Term]):
    """``node`` (a term, a literal or a tuple of them) with every variable named
    in ``mapping`` replaced by its term, aggregates included.

    >>> from datalog.syntax.parser import parse
    >>> from datalog.syntax.printer import clause_text
    >>> head, body = next(parse("p(x) :- e(x, y), y > x.").rules[0].clauses())
    >>> at = head.span
    >>> clause_text(*substitute((head, body), {"x": ast.Constant(1, "number", at)}))
    'p(1) :- e(1, y), y > 1.'
    """
    if isinstance(node, ast.Variable):
        return mapping.get(node.name, node)
    if isinstance(node, tuple):
        return tuple(substitute(item, mapping) for item in node)
    if isinstance(node, (ast.Constant, ast.Wildcard, ast.Nil, ast.Span)) or \
            not dataclasses.is_dataclass(node):
        return node
    return dataclasses.replace(node, **{
        f.name: substitute(getattr(node, f.name), mapping)
        for f in dataclasses.fields(node) if f.name != "span"})


__all__ = ["InlineError", "Inlined", "body_atoms", "inline_names", "inline_order",
           "inline_relations", "module_clauses", "substitute"]
