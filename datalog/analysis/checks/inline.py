"""``inline``, ``no_inline``, ``magic`` and ``no_magic``: what Soufflé refuses.

Takes a module and its :class:`~datalog.analysis.context.Context` and gives the
errors of Soufflé's "Inlining" limitations (and its semantic checker's), each at
its place:

- an inline relation with ``.input``, ``.output``, ``.printsize`` (or
  ``.limitsize``): it has no rows to read or write;
- inline relations that depend on each other in a cycle (an inline relation's
  clauses must not reach it again through inline relations only), and an
  ``eqrel`` relation declared inline (its closure rules are recursive), and
  one with a ``choice-domain`` (a choice is made among stored rows);
- ``autoinc()`` in an inline relation's clauses or in an inline atom (Soufflé's
  counter ``$``: its numbering would be repeated at every use);
- an inline relation inside an aggregate's body;
- a negated inline atom with ``_`` in its arguments (outside an aggregate), or
  of a relation one of whose clauses has a variable that is not a plain
  argument of its head (its negation would leave it unbound);
- a rule that inlining grows beyond 1000 alternatives;
- ``inline`` with ``no_inline``, ``magic`` with ``no_magic``.

and one warning for a program that says ``magic`` or ``no_magic`` (at the first):
the engine has no magic-set transformation, so they change nothing.

>>> from datalog.syntax.parser import parse
>>> p = parse('''.decl e(x: number)
... .decl a(x: number) inline
... a(y) :- e(y), e(z), z > y.
... .decl b(x: number) magic
... b(x) :- e(x), !a(x).
... .output a''')
>>> for d in check_inline(p, Context(p)): print(f"{d.span.line}: {d.message}")
4: `magic` is ignored
6: the inline relation `a` cannot be output
5: cannot negate the inline relation `a`: a clause of it has a variable not in its head (`z`)
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.transforms.inline import (
    InlineError,
    body_atoms,
    inline_names,
    inline_relations,
    module_clauses,
)
from datalog.analysis.types import word_span
from datalog.dialect.user_functors import AUTOINC
from datalog.errors import Diagnostic
from datalog.syntax import ast
from datalog.syntax.terms import clause_variables, pattern_variables, subterms
from engine.graphs import strongly_connected

_CONTRADICTIONS = (("inline", "no_inline"), ("magic", "no_magic"))
_IO = {"input": "read", "output": "output", "printsize": "printed",
       "limitsize": "limited"}


def check_inline(program: ast.Module, context: Context) -> list[Diagnostic]:
    """The diagnostics of the module's inline relations and magic qualifiers."""
    sources = dict(program.sources)
    out = _qualifiers(program, sources)
    names = inline_names(program)
    if not names:
        return out
    decls = {d.name: d for d in program.relations if d.name in names}
    for decl in decls.values():
        if "eqrel" in decl.qualifiers:
            out.append(Diagnostic("error", f"the `eqrel` relation `{decl.name}` cannot be "
                                  "inline", word_span(sources, decl.span, "inline"),
                                  hint="its closure is recursive: remove `inline`"))
        if decl.choice:
            out.append(Diagnostic("error", f"the relation `{decl.name}` with a "
                                  "`choice-domain` cannot be inline",
                                  word_span(sources, decl.span, "inline"),
                                  hint="a choice keeps one of the rows it stores: remove "
                                  "`inline`"))
    for directive in program.directives:
        for name in directive.relations:
            if name in names and directive.kind in _IO:
                out.append(Diagnostic(
                    "error", f"the inline relation `{name}` cannot be "
                    f"{_IO[directive.kind]}", word_span(sources, directive.span, name),
                    hint=f"it is never stored: remove `inline` from `.decl {name}` "
                         f"(line {decls[name].span.line}) or this directive"))
    for cycle in _cycles(program, names):
        decl = decls[cycle[0]]
        out.append(Diagnostic("error", "inline relations cannot be recursive: "
                              + " -> ".join(f"`{n}`" for n in cycle),
                              word_span(sources, decl.span, "inline"),
                              hint="remove `inline` from one of them"))
    out += _uses(program, names)
    if not any(d.severity == "error" for d in out):
        try:
            inline_relations(program)
        except InlineError as error:
            out.append(Diagnostic("error", str(error), error.span,
                                  hint="split the rule, or remove `inline` from a relation "
                                       "it uses"))
    return out


def _qualifiers(program: ast.Module, sources: dict[str, str]) -> list[Diagnostic]:
    """Contradicting qualifiers, and the one warning for ``magic``/``no_magic``."""
    out: list[Diagnostic] = []
    warned = False
    for decl in program.relations:
        for yes, no in _CONTRADICTIONS:
            if yes in decl.qualifiers and no in decl.qualifiers:
                out.append(Diagnostic("error", f"relation `{decl.name}` cannot be both "
                                      f"`{yes}` and `{no}`", word_span(sources, decl.span, no),
                                      hint="choose one"))
        magic = next((q for q in decl.qualifiers if q in ("magic", "no_magic")), None)
        if magic and not warned:
            warned = True
            out.append(Diagnostic("warning", f"`{magic}` is ignored",
                                  word_span(sources, decl.span, magic),
                                  hint="the engine has no magic-set transformation: every "
                                       "relation is evaluated in full (and kept up to date)"))
    return out


def _cycles(program: ast.Module, names: set[str]) -> list[list[str]]:
    """A cycle of inline relations through inline relations only (its first
    relation repeated at the end) for each group of them that reach each other."""
    successors: dict[str, dict[str, None]] = {}   # in the order the clauses read them
    for head, body in module_clauses(program):
        if head.relation in names:
            successors.setdefault(head.relation, {}).update(
                (a.relation, None) for a in body_atoms(body) if a.relation in names)
    groups = [group for group in strongly_connected(sorted(names), successors)
              if len(group) > 1 or group[0] in successors.get(group[0], ())]
    if not groups:
        return []
    import networkx as nx  # to name a cycle, an error's case: a run does not import it

    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(names))
    graph.add_edges_from((head, read) for head, reads in successors.items() for read in reads)
    cycles = []
    for group in groups:
        first = min(group)
        edges = nx.find_cycle(graph.subgraph(group), source=first)
        cycles.append([edge[0] for edge in edges] + [first])
    return sorted(cycles)


def _uses(program: ast.Module, names: set[str]) -> list[Diagnostic]:
    """``autoinc()``, aggregates and negations where inline relations meet them."""
    out: list[Diagnostic] = []
    unnegatable: dict[str, str] = {}    # relation -> a variable its negation leaves unbound
    for head, body in module_clauses(program):
        if head.relation not in names:
            continue
        for literal in (head, *body):
            out += _autoinc(literal, f"in a clause of the inline relation `{head.relation}`")
        bound = {v.name for arg in head.args for v in pattern_variables(arg)}
        free = [v.name for v in clause_variables(head, body) if v.name not in bound]
        if free and head.relation not in unnegatable:
            unnegatable[head.relation] = free[0]
    for _head, body in module_clauses(program):
        for literal in body:
            for atom in _inline_atoms(literal, names):
                out += _autoinc(atom, f"as an argument of the inline relation "
                                      f"`{atom.relation}`")
            for agg in _aggregates_of(literal):
                for atom in body_atoms(agg.body):
                    if atom.relation in names:
                        out.append(Diagnostic(
                            "error", f"the inline relation `{atom.relation}` cannot be "
                            "used inside an aggregate", atom.span,
                            hint="as in Soufflé: remove `inline`, or aggregate over a "
                                 "relation of its own"))
            if isinstance(literal, ast.Negation) and literal.atom.relation in names:
                out += _negated(literal, unnegatable)
    return out


def _negated(negation: ast.Negation, unnegatable: dict[str, str]) -> list[Diagnostic]:
    name = negation.atom.relation
    for term in subterms(negation.atom.args, targets=False):
        if isinstance(term, ast.Wildcard):
            return [Diagnostic("error", f"a negated inline atom cannot have `_` (`{name}` "
                               "is inline)", term.span,
                               hint="name the value with a variable bound elsewhere in "
                                    "the rule, or remove `inline`")]
    if name in unnegatable:
        return [Diagnostic("error", f"cannot negate the inline relation `{name}`: a clause "
                           f"of it has a variable not in its head (`{unnegatable[name]}`)",
                           negation.span,
                           hint="as in Soufflé: remove `inline`, or negate a relation "
                                "that is stored")]
    return []


def _autoinc(literal: ast.Literal, where: str) -> list[Diagnostic]:
    terms = (literal.args if isinstance(literal, ast.Atom) else literal.atom.args
             if isinstance(literal, ast.Negation) else (literal.left, literal.right))
    return [Diagnostic("error", f"`autoinc()` cannot be used {where}", term.span,
                       hint="Soufflé's counter would count at every place it is inlined: "
                            "remove `inline`")
            for term in _all_terms(terms)
            if isinstance(term, ast.Functor) and term.name == AUTOINC]


def _all_terms(terms):
    """Every subterm, aggregate bodies included."""
    for term in subterms(terms):
        yield term
        if isinstance(term, ast.Aggregate):
            for literal in term.body:
                yield from _all_terms(literal.args if isinstance(literal, ast.Atom)
                                      else literal.atom.args
                                      if isinstance(literal, ast.Negation)
                                      else (literal.left, literal.right))


def _inline_atoms(literal: ast.Literal, names: set[str]):
    if isinstance(literal, ast.Atom) and literal.relation in names:
        yield literal
    elif isinstance(literal, ast.Negation) and literal.atom.relation in names:
        yield literal.atom


def _aggregates_of(literal: ast.Literal):
    """The aggregates of a literal, nested ones included."""
    terms = (literal.args if isinstance(literal, ast.Atom) else literal.atom.args
             if isinstance(literal, ast.Negation) else (literal.left, literal.right))
    for term in _all_terms(terms):
        if isinstance(term, ast.Aggregate):
            yield term
