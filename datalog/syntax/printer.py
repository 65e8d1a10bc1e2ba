"""AST -> text: a clause as the labels of plans and circuits show it.

Takes a head atom and a conjunction of literals (:mod:`datalog.syntax.ast`) and
gives Soufflé text, operators parenthesised.

>>> from datalog.syntax.parser import parse
>>> rule = parse('r(x) :- e(x, "a"), !f(x), x != 1 + 2, c = count : { g(x) }.').rules[0]
>>> clause_text(*next(rule.clauses()))
'r(x) :- e(x, "a"), !f(x), x != (1 + 2), c = count : { g(x) }.'
"""

from __future__ import annotations

from datalog.dialect.functors import COMPARISONS
from datalog.syntax import ast


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


def term_text(term) -> str:
    """A term as text (nested operations parenthesised), for labels and hints."""
    return _term_text(term)


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
    if isinstance(term, ast.Record):
        return f"[{', '.join(_term_text(a) for a in term.args)}]"
    if isinstance(term, ast.Nil):
        return "nil"
    if isinstance(term, ast.Branch):
        args = f"({', '.join(_term_text(a) for a in term.args)})" if term.args else ""
        return f"${term.name}{args}"
    if isinstance(term, ast.Cast):
        return f"as({_term_text(term.term)}, {term.type})"
    target = f" {_term_text(term.target)}" if term.target is not None else ""
    body = ", ".join(_literal_text(lit) for lit in term.body)
    return f"{term.kind}{target} : {{ {body} }}"
