"""``eqrel``: equivalence relations, implemented by rewriting into rules.

Soufflé's ``eqrel`` qualifier declares a binary relation that is an equivalence
relation: whatever its facts and rules put in, it also holds reflexively (for
every value that occurs in it), symmetrically and transitively. Soufflé stores
such a relation specially (a union-find); its meaning is that of the closure, so
the front end adds, for each ``eqrel`` relation ``r``, the three rules

    r(x, x) :- r(x, _).
    r(y, x) :- r(x, y).
    r(x, z) :- r(x, y), r(y, z).

and everything after it (stratification, the compiler, the evaluators) sees an
ordinary recursive relation. Takes a module, gives the module with those rules
(the same module when it has no ``eqrel`` relation). The closure has one tuple per ordered pair of
equivalent values: quadratic in the size of a class, where Soufflé is linear.

>>> from datalog.syntax.parser import parse
>>> p = expand_eqrel(parse(".decl same(a: number, b: number) eqrel\\nsame(1, 2)."))
>>> len(p.rules), str(p.rules[1].heads[0].args[0].name)
(3, 'y')
"""

from __future__ import annotations

from dataclasses import replace

from datalog.syntax.ast import Atom, Module, RelationDecl, Rule, Variable, Wildcard


def eqrel_rules(decl: RelationDecl) -> tuple[Rule, ...]:
    """The rules that close ``decl`` (a binary relation) under equivalence."""
    s = decl.span

    def atom(*args):
        return Atom(decl.name, tuple(Variable(a, s) if a != "_" else Wildcard(s) for a in args), s)

    return (
        Rule((atom("x", "x"),), ((atom("x", "_"),),), s),
        Rule((atom("y", "x"),), ((atom("x", "y"),),), s),
        Rule((atom("x", "z"),), ((atom("x", "y"), atom("y", "z")),), s),
    )


def expand_eqrel(program: Module) -> Module:
    """``program`` with the closure rules of every (binary) ``eqrel`` relation."""
    extra: list[Rule] = []
    seen: set[str] = set()
    for decl in program.relations:
        if "eqrel" in decl.qualifiers and decl.arity == 2 and decl.name not in seen:
            seen.add(decl.name)
            extra.extend(eqrel_rules(decl))
    if not extra:
        return program
    return replace(program, rules=program.rules + tuple(extra))
