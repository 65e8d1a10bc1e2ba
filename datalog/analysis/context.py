"""What the checks share about one module, computed once before they run.

Takes a parsed :class:`~datalog.syntax.ast.Module` and gives a :class:`Context`:
its :class:`~datalog.analysis.types.TypeTable`, its relation declarations by name
(the first of each name) and the :class:`~datalog.analysis.grounded.Grounding` of
each of its clauses. Every check of :mod:`datalog.analysis.check` is a pure
function ``(module, context) -> diagnostics``.

>>> from datalog.syntax.parser import parse
>>> p = parse(".decl e(x: number)\\n.decl r(x: number)\\ne(1).\\nr(x) :- e(x).")
>>> context = Context(p)
>>> head, body = next(p.rules[0].clauses())
>>> g = context.grounding(head, body)
>>> list(context.decls), sorted(g.bound(g.top))
(['e', 'r'], [(0, 'x')])
"""

from __future__ import annotations

from datalog.analysis.grounded import Grounding, grounded, groundings
from datalog.analysis.types import TypeTable
from datalog.dialect.functors import Operator
from datalog.dialect.user_functors import signature
from datalog.syntax.ast import Atom, Literal, Module, RelationDecl


class Context:
    """The analyses of ``module`` that several checks read."""

    def __init__(self, module: Module):
        self.table = TypeTable(module)
        self.decls: dict[str, RelationDecl] = {}
        for decl in module.relations:
            self.decls.setdefault(decl.name, decl)
        self._groundings = groundings(module)
        #: ``@name`` -> the signature of each declared functor (the first of each
        #: name) whose types are known, typed as the built-in functors are.
        self.functors = user_functor_signatures(module, self.table)

    def grounding(self, head: Atom, body: tuple[Literal, ...] = ()) -> Grounding:
        """The groundedness of the clause ``head :- body`` of the module (computed
        once, with the context); of another clause, computed now."""
        found = self._groundings.get((id(head), id(body)))
        return found if found is not None else grounded(head, body)


def user_functor_signatures(module: Module, table: TypeTable) -> dict[str, Operator]:
    """``@name`` -> the :func:`~datalog.dialect.user_functors.signature` of each
    ``.functor`` declaration of ``module`` whose types ``table`` knows."""
    out: dict[str, Operator] = {}
    for decl in module.functors:
        types = [table.primitive(t) for t in (*decl.params, decl.result)]
        if f"@{decl.name}" not in out and None not in types:
            out[f"@{decl.name}"] = signature(f"@{decl.name}", types[:-1], types[-1])
    return out
