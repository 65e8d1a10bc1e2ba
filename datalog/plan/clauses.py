"""Clauses as the lowering (:mod:`datalog.plan.lower`) needs them: constants
substituted for the variables equated to them, and the clause as text for the
labels of plans and circuits.

>>> from datalog.syntax.parser import parse
>>> rule = parse('r(x) :- e(x, "a"), !f(x), x != 1 + 2, c = count : { g(x) }.').rules[0]
>>> clause_text(*next(rule.clauses()))
'r(x) :- e(x, "a"), !f(x), x != (1 + 2), c = count : { g(x) }.'
"""

from __future__ import annotations

from datalog.dialect.functors import COMPARISONS
from datalog.syntax import ast


def substitute_constants(head: ast.Atom, body: tuple) -> tuple[ast.Atom, tuple]:
    """Replace every variable ``x`` constrained by ``x = constant`` (at the top
    level of the body) by that constant, dropping the equality.

    >>> from datalog.syntax.parser import parse
    >>> rule = parse("p(x, y) :- e(x, y), y = 2.").rules[0]
    >>> clause_text(*substitute_constants(*next(rule.clauses())))
    'p(x, 2) :- e(x, 2).'
    """
    while True:
        for literal in body:
            if isinstance(literal, ast.Comparison) and literal.op == "=":
                for var, const in ((literal.left, literal.right),
                                   (literal.right, literal.left)):
                    if isinstance(var, ast.Variable) and isinstance(const, ast.Constant):
                        break
                else:
                    continue
                rest = tuple(lit for lit in body if lit is not literal)
                head = _replace(head, var.name, const)
                body = tuple(_replace(lit, var.name, const) for lit in rest)
                break
        else:
            return head, body


def _replace(node, name: str, const: ast.Constant):
    if isinstance(node, ast.Variable):
        return ast.Constant(const.value, const.type, node.span) if node.name == name else node
    if isinstance(node, ast.Atom):
        return ast.Atom(node.relation, tuple(_replace(a, name, const) for a in node.args),
                        node.span)
    if isinstance(node, ast.Negation):
        return ast.Negation(_replace(node.atom, name, const), node.span)
    if isinstance(node, ast.Comparison):
        return ast.Comparison(node.op, _replace(node.left, name, const),
                              _replace(node.right, name, const), node.span)
    if isinstance(node, ast.BinaryOp):
        return ast.BinaryOp(node.op, _replace(node.left, name, const),
                            _replace(node.right, name, const), node.span)
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(node.op, _replace(node.operand, name, const), node.span)
    if isinstance(node, ast.Functor):
        return ast.Functor(node.name, tuple(_replace(a, name, const) for a in node.args),
                           node.span)
    if isinstance(node, ast.Aggregate):
        return ast.Aggregate(node.kind, _replace(node.target, name, const)
                             if node.target is not None else None,
                             tuple(_replace(lit, name, const) for lit in node.body),
                             node.span)
    return node


def clause_text(head: ast.Atom, body) -> str:
    """The clause as text, for labels: ``path(x, z) :- edge(x, y), path(y, z).``"""
    if not body:
        return f"{_literal_text(head)}."
    return f"{_literal_text(head)} :- {', '.join(_literal_text(lit) for lit in body)}."


def _literal_text(literal) -> str:
    if isinstance(literal, ast.Atom):
        return f"{literal.relation}({', '.join(_term_text(a) for a in literal.args)})"
    if isinstance(literal, ast.Negation):
        return "!" + _literal_text(literal.atom)
    if literal.op in COMPARISONS and literal.op.isidentifier():
        name = literal.op.replace("not_", "!")
        return f"{name}({_term_text(literal.left)}, {_term_text(literal.right)})"
    return f"{_term_text(literal.left)} {literal.op} {_term_text(literal.right)}"


def _term_text(term) -> str:
    if isinstance(term, ast.Variable):
        return term.name
    if isinstance(term, ast.Wildcard):
        return "_"
    if isinstance(term, ast.Constant):
        if term.type == "symbol":
            return '"' + term.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"{term.value}u" if term.type == "unsigned" else str(term.value)
    if isinstance(term, ast.BinaryOp):
        return f"({_term_text(term.left)} {term.op} {_term_text(term.right)})"
    if isinstance(term, ast.UnaryOp):
        space = " " if term.op.isidentifier() else ""
        return f"{term.op}{space}{_term_text(term.operand)}"
    if isinstance(term, ast.Functor):
        return f"{term.name}({', '.join(_term_text(a) for a in term.args)})"
    target = f" {_term_text(term.target)}" if term.target is not None else ""
    body = ", ".join(_literal_text(lit) for lit in term.body)
    return f"{term.kind}{target} : {{ {body} }}"
