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
    equality_sides,
    literal_terms,
    subterms,
)


def check_range_restriction(program: Module, context: Context) -> list[Diagnostic]:
    """Range restriction and singleton variables of every rule clause."""
    out: list[Diagnostic] = []
    for rule in program.rules:
        for head, body in rule.clauses():
            # ``a(x), b(y) :- e(x, y).``: a variable is used by every head of its rule
            other_heads = {v.name for h in rule.heads if h is not head
                           for v in direct_variables(h.args)}
            out += check_range(head, body, context.grounding(head, body), other_heads)
    return out


def _results(body: tuple[Literal, ...], agg: Aggregate) -> list[str]:
    """The variables ``body`` equates with ``agg`` (``n = count : ...``)."""
    return [side.name for literal in body for side, other in equality_sides(literal)
            if other is agg and isinstance(side, Variable)]


def _ignores_aggregate(literal: Comparison) -> bool:
    """``_ = max x : ...``: an aggregate whose value is ignored (Soufflé's way to
    ask only for its witnesses)."""
    sides = (literal.left, literal.right)
    return literal.op == "=" and any(isinstance(a, Wildcard) for a in sides) and \
        any(isinstance(a, Aggregate) for a in sides)


def _pattern_wildcards(term) -> set[int]:
    """The ``_`` in field positions of a record or constructor pattern."""
    out: set[int] = set()
    if isinstance(term, (Record, Branch)):
        for arg in term.args:
            if isinstance(arg, Wildcard):
                out.add(id(arg))
            out |= _pattern_wildcards(arg)
    return out


def check_range(head: Atom, body: tuple[Literal, ...], grounding: Grounding,
                used_elsewhere: frozenset[str] | set[str] = frozenset()) -> list[Diagnostic]:
    """Range restriction and singleton variables of one clause ``head :- body``,
    whose groundedness is ``grounding``; ``used_elsewhere`` are the names the
    rule's other heads use (never singletons)."""
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
                agg = grounding.witness_of(v.name, scope)
                if agg is not None and scope is not grounding.top:
                    out.append(Diagnostic(
                        "error", f"variable `{v.name}` {what} is bound only inside a nested "
                        f"`{agg.kind}` aggregate", v.span,
                        hint="witnesses are taken only from the aggregates of a rule's own "
                        "body; bind it in this aggregate's body too"))
                    continue
                if agg is not None:     # bound inside a count, sum or mean only
                    out.append(Diagnostic(
                        "error", f"variable `{v.name}` {what} is bound only inside a "
                        f"`{agg.kind}` aggregate, which gives it no single value", v.span,
                        hint="only `min` and `max` give a variable bound in their body a "
                        "value outside (a witness); bind it outside the aggregate too"))
                    continue
                hint = f"bind it with a positive atom or an equality such as `{v.name} = ...`"
                waiting = [(agg, missing) for agg, missing in grounding.waiting.values()
                           if v.name in _results(body, agg)] or \
                          [(agg, missing) for agg, missing in grounding.waiting.values()
                           if v.name in missing]
                if waiting:     # n = count : { r(x), x < n }
                    agg, missing = waiting[0]
                    names = ", ".join(f"`{n}`" for n in missing)
                    hint = (f"the `{agg.kind}` aggregate at {agg.span.line}:"
                            f"{agg.span.column} has no value before {names} is bound")
                out.append(Diagnostic("error", f"variable `{v.name}` {what} is not bound in "
                                      "the body", v.span, hint=hint))

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
            misplaced_wildcards(literal_terms(literal), not isinstance(literal, Comparison)
                                or _ignores_aggregate(literal),
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
        if (n == 1 and not name.startswith("_") and name not in unbound_names
                and name not in used_elsewhere):
            out.append(Diagnostic("warning", f"variable `{name}` occurs only once",
                                  first[name].span,
                                  hint=f"replace it with `_`, or name it `_{name}`"))
    return out
