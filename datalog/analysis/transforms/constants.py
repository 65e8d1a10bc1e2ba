"""Constants substituted for the variables equated to them.

Takes one clause (a head atom and a conjunction of literals) and gives the
clause with every ``x = constant`` at the top level of its body applied and
dropped; the lowering (:mod:`datalog.plan.lower`) applies it so that constants
reach the atoms as filters and join keys."""

from __future__ import annotations

from datalog.syntax import ast
from datalog.syntax.terms import replace_variable


def substitute_constants(head: ast.Atom, body: tuple) -> tuple[ast.Atom, tuple]:
    """Replace every variable ``x`` constrained by ``x = constant`` (at the top
    level of the body) by that constant, dropping the equality.

    >>> from datalog.syntax.parser import parse
    >>> from datalog.syntax.printer import clause_text
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
                head = replace_variable(head, var.name, const)
                body = tuple(replace_variable(lit, var.name, const) for lit in rest)
                break
        else:
            return head, body
