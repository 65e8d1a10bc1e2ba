"""Walking the terms of the AST: the one place the checks, the type checker, the
stratification, the transforms and the lowering take a clause's subterms and
variables from.

Takes AST nodes (:mod:`datalog.syntax.ast`) and gives iterators over them, or a
node rebuilt with a variable replaced. An aggregate is a scope of its own: the
``direct`` walkers stop at it (its body, and its target unless asked, belong to
it); :func:`term_variables` and :func:`literal_variables` go everywhere.

>>> from datalog.syntax.parser import parse
>>> head, body = next(parse("r(x, c) :- e(x, y), c = count : { f(y, z) }.").rules[0].clauses())
>>> [v.name for v in clause_variables(head, body)]
['x', 'c', 'x', 'y', 'c', 'y', 'z']
>>> sorted(v.name for t in body for v in direct_variables(literal_terms(t)))
['c', 'x', 'y']
>>> [a.kind for a in aggregates_in(literal_terms(body[1]))]
['count']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from datalog.syntax.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    Branch,
    Cast,
    Comparison,
    Constant,
    Functor,
    Literal,
    Negation,
    Record,
    Term,
    UnaryOp,
    Variable,
    Wildcard,
)


def subterms(terms: Iterable[Term], targets: bool = True) -> Iterator[Term]:
    """Every term in ``terms`` and in their arguments, without recursion; an
    aggregate's target is included (unless ``targets`` is false), its body is not."""
    todo = list(terms)
    while todo:
        term = todo.pop()
        yield term
        if isinstance(term, BinaryOp):
            todo += [term.left, term.right]
        elif isinstance(term, UnaryOp):
            todo.append(term.operand)
        elif isinstance(term, (Functor, Record, Branch)):
            todo += term.args
        elif isinstance(term, Cast):
            todo.append(term.term)
        elif targets and isinstance(term, Aggregate) and term.target is not None:
            todo.append(term.target)


def pattern_variables(term: Term) -> Iterator[Variable]:
    """The variables a term binds where it is matched against a value: the term
    itself if it is a variable, the variables in the fields of a record or
    constructor pattern (``[x, [y, _]]``, ``$Cons(h, t)``), not those inside an
    expression (``x + 1`` binds nothing).

    >>> from datalog.syntax.parser import parse
    >>> atom = parse("r([x, [y, z + 1]]).").facts[0].atom
    >>> [v.name for v in pattern_variables(atom.args[0])]
    ['x', 'y']
    """
    if isinstance(term, Variable):
        yield term
    elif isinstance(term, (Record, Branch)):
        for arg in term.args:
            yield from pattern_variables(arg)


def has_holes(term: Term) -> bool:
    """Whether a record or constructor term has ``_`` in a field (at any depth):
    it can take a value apart, but cannot be built.

    >>> from datalog.syntax.parser import parse
    >>> [has_holes(a) for a in parse("r([1, [_, 2]], [1, 2]).").facts[0].atom.args]
    [True, False]
    """
    if isinstance(term, (Record, Branch)):
        return any(isinstance(a, Wildcard) or has_holes(a) for a in term.args)
    return False


def equality_sides(literal: Literal) -> tuple[tuple[Term, Term], ...]:
    """``((a, b), (b, a))`` for an equality ``a = b``, read both ways; ``()``
    for any other literal."""
    if isinstance(literal, Comparison) and literal.op == "=":
        return ((literal.left, literal.right), (literal.right, literal.left))
    return ()


def direct_variables(terms: Iterable[Term]) -> Iterator[Variable]:
    """The variables of ``terms`` outside aggregates (an aggregate's variables
    belong to its own scope)."""
    for term in subterms(terms, targets=False):
        if isinstance(term, Variable):
            yield term


def aggregates_in(terms: Iterable[Term], targets: bool = True) -> Iterator[Aggregate]:
    """The aggregates of ``terms`` (and, unless ``targets`` is false, those in
    their targets); not those in their bodies."""
    for term in subterms(terms, targets):
        if isinstance(term, Aggregate):
            yield term


def literal_terms(literal: Literal) -> tuple[Term, ...]:
    """The terms a literal holds: an atom's (or negated atom's) arguments, or
    the two sides of a comparison."""
    if isinstance(literal, Atom):
        return literal.args
    if isinstance(literal, Negation):
        return literal.atom.args
    return literal.left, literal.right


def term_variables(term: Term) -> Iterator[Variable]:
    """The variables occurring in ``term``, in order, including those inside an
    aggregate's target and body."""
    if isinstance(term, Variable):
        yield term
    elif isinstance(term, BinaryOp):
        yield from term_variables(term.left)
        yield from term_variables(term.right)
    elif isinstance(term, UnaryOp):
        yield from term_variables(term.operand)
    elif isinstance(term, (Functor, Record, Branch)):
        for arg in term.args:
            yield from term_variables(arg)
    elif isinstance(term, Cast):
        yield from term_variables(term.term)
    elif isinstance(term, Aggregate):
        if term.target is not None:
            yield from term_variables(term.target)
        for literal in term.body:
            yield from literal_variables(literal)


def literal_variables(literal: Literal) -> Iterator[Variable]:
    """The variables of ``literal``, in order, aggregates included."""
    for term in literal_terms(literal):
        yield from term_variables(term)


def aggregate_variables(agg: Aggregate) -> Iterator[Variable]:
    """The variables of ``agg``'s target and body, in order."""
    yield from term_variables(agg)


def clause_variables(head: Atom, body: Iterable[Literal]) -> Iterator[Variable]:
    """Every occurrence of a variable in the clause ``head :- body``, in order."""
    yield from literal_variables(head)
    for literal in body:
        yield from literal_variables(literal)


def replace_variable(node, name: str, const: Constant):
    """``node`` (a term or a literal) with every variable ``name`` replaced by
    ``const`` (at the variable's place), aggregate bodies included."""
    if isinstance(node, Variable):
        return Constant(const.value, const.type, node.span) if node.name == name else node
    if isinstance(node, Atom):
        return Atom(node.relation, tuple(replace_variable(a, name, const) for a in node.args),
                    node.span)
    if isinstance(node, Negation):
        return Negation(replace_variable(node.atom, name, const), node.span)
    if isinstance(node, Comparison):
        return Comparison(node.op, replace_variable(node.left, name, const),
                          replace_variable(node.right, name, const), node.span)
    if isinstance(node, BinaryOp):
        return BinaryOp(node.op, replace_variable(node.left, name, const),
                        replace_variable(node.right, name, const), node.span)
    if isinstance(node, UnaryOp):
        return UnaryOp(node.op, replace_variable(node.operand, name, const), node.span)
    if isinstance(node, Functor):
        return Functor(node.name, tuple(replace_variable(a, name, const) for a in node.args),
                       node.span)
    if isinstance(node, Record):
        return Record(tuple(replace_variable(a, name, const) for a in node.args), node.span)
    if isinstance(node, Branch):
        return Branch(node.name, tuple(replace_variable(a, name, const) for a in node.args),
                      node.span)
    if isinstance(node, Cast):
        return Cast(replace_variable(node.term, name, const), node.type, node.span)
    if isinstance(node, Aggregate):
        return Aggregate(node.kind, replace_variable(node.target, name, const)
                         if node.target is not None else None,
                         tuple(replace_variable(lit, name, const) for lit in node.body),
                         node.span)
    return node
