"""Range restriction and singleton variables, clause by clause.

Takes a module and its :class:`~datalog.analysis.context.Context` (for the
:class:`~datalog.analysis.grounded.Grounding` of each clause, computed once) and
gives, for every rule clause: a variable of the head, of a negated atom, of a
comparison, of an expression or of an aggregate's target that no positive atom
or equality binds (an error, see :mod:`datalog.analysis.grounded`); ``_``
outside atom arguments or in a head (an error); a variable that occurs only once
(a warning, silenced by a leading ``_``).

>>> from datalog.analysis.context import Context
>>> from datalog.syntax.parser import parse
>>> p = parse('.decl e(x: number, y: number)\\n.decl p(x: number)\\np(x) :- e(y, z), !e(w, 1).')
>>> for d in check_range_restriction(p, Context(p)): print(f"{d.severity}: {d.message}")
error: variable `x` in the head is not bound in the body
error: variable `w` in a negated atom is not bound in the body
warning: variable `y` occurs only once
warning: variable `z` occurs only once
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.grounded import Grounding, Scope
from datalog.errors import Diagnostic
from datalog.syntax.ast import (
    Aggregate,
    Atom,
    Branch,
    Comparison,
    Literal,
    Module,
    Negation,
    Record,
    Variable,
    Wildcard,
)
from datalog.syntax.terms import (
    aggregates_in,
    clause_variables,
    direct_variables,
    literal_terms,
    subterms,
)


def check_range_restriction(program: Module, context: Context) -> list[Diagnostic]:
    """Range restriction and singleton variables of every rule clause."""
    out: list[Diagnostic] = []
    for rule in program.rules:
        for head, body in rule.clauses():
            out += check_range(head, body, context.grounding(head, body))
    return out


def _pattern_wildcards(term) -> set[int]:
    """The ``_`` in field positions of a record or constructor pattern."""
    out: set[int] = set()
    if isinstance(term, (Record, Branch)):
        for arg in term.args:
            if isinstance(arg, Wildcard):
                out.add(id(arg))
            out |= _pattern_wildcards(arg)
    return out


def check_range(head: Atom, body: tuple[Literal, ...], grounding: Grounding) -> list[Diagnostic]:
    """Range restriction and singleton variables of one clause ``head :- body``,
    whose groundedness is ``grounding``."""
    out: list[Diagnostic] = []
    counts = grounding.counts
    unbound: set[tuple[int, str]] = set()
    unbound_names: set[str] = set()

    def need(terms, scope: Scope, bound: set, what: str) -> None:
        for v in direct_variables(terms):
            key = scope.key(v.name)
            if key not in bound and key not in unbound:
                unbound.add(key)
                unbound_names.add(v.name)
                out.append(Diagnostic("error", f"variable `{v.name}` {what} is not bound in "
                                      "the body", v.span, hint="bind it with a positive atom "
                                      f"or an equality such as `{v.name} = ...`"))

    def misplaced_wildcards(terms, as_arguments: bool, patterns: bool = False,
                            negated: bool = False) -> None:
        """``_`` stands for an ignored argument of an atom, or an ignored field
        of a pattern (``r([x, _])``, ``p = $Cons(_, t)``), nothing else;
        ``negated``: the terms are a negated atom's inside an aggregate."""
        for t in terms:
            if isinstance(t, Wildcard) and as_arguments:
                continue
            ignored = _pattern_wildcards(t) if patterns else set()
            for w in subterms([t], targets=False):
                if isinstance(w, Wildcard) and id(w) not in ignored and negated \
                        and id(w) in _pattern_wildcards(t):
                    out.append(Diagnostic(
                        "error", "a negated atom inside an aggregate cannot ignore a field",
                        w.span, hint="negate a relation of its own, such as `r1(x) :- "
                        "r([x, _]).`, or name the field"))
                elif isinstance(w, Wildcard) and id(w) not in ignored:
                    out.append(Diagnostic("error", "`_` can only be an argument of an atom",
                                          w.span, hint="use a named variable"))

    def check_body(body, scope: Scope, bound: set, top: bool = True) -> None:
        """``top``: the rule's body (a negated atom may ignore fields there:
        :mod:`datalog.analysis.transforms.patterns`), not an aggregate's."""
        for literal in body:
            misplaced_wildcards(literal_terms(literal), not isinstance(literal, Comparison),
                                patterns=isinstance(literal, Atom) or (
                                    top and isinstance(literal, Negation)) or (
                                    isinstance(literal, Comparison) and literal.op == "="),
                                negated=not top and isinstance(literal, Negation))
            if isinstance(literal, Atom):
                need([a for a in literal.args if not isinstance(a, Variable)], scope, bound,
                     "in an expression")
            elif isinstance(literal, Negation):
                need(literal.atom.args, scope, bound, "in a negated atom")
            else:
                need((literal.left, literal.right), scope, bound,
                     "in an equality" if literal.op == "=" else "in a comparison")
            for agg in aggregates_in(literal_terms(literal)):
                check_aggregate(agg)

    def check_aggregate(agg: Aggregate) -> None:
        inner = grounding.scope(agg)
        inner_bound = grounding.bound(inner)
        if agg.target is not None:
            misplaced_wildcards([agg.target], as_arguments=False)
            need([agg.target], inner, inner_bound, "in the aggregate's target")
        check_body(agg.body, inner, inner_bound, top=False)

    top = grounding.top
    bound = grounding.bound(top)
    for arg in head.args:
        if isinstance(arg, Wildcard):
            out.append(Diagnostic("error", "`_` in the head of a rule", arg.span,
                                  hint="a head needs values: use a variable bound in the body"))
    need(head.args, top, bound, "in the head")
    misplaced_wildcards(head.args, as_arguments=True)
    for agg in aggregates_in(head.args):
        check_aggregate(agg)
    check_body(body, top, bound)
    first: dict[str, Variable] = {}
    for v in clause_variables(head, body):
        first.setdefault(v.name, v)
    for name, n in counts.items():
        if n == 1 and not name.startswith("_") and name not in unbound_names:
            out.append(Diagnostic("warning", f"variable `{name}` occurs only once",
                                  first[name].span,
                                  hint=f"replace it with `_`, or name it `_{name}`"))
    return out
