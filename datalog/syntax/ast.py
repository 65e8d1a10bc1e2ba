"""The abstract syntax of the Soufflé dialect: frozen dataclasses with source spans.

Every node carries a :class:`Span` so that any later stage (checks, stratification,
compilation, the Spark executor) can point an error at the exact text. Nodes are
plain data: no behaviour beyond small derived views (``Rule.clauses()``,
``Module.relation()``); :mod:`datalog.syntax.terms` walks them.

Vocabulary (the language side): a *module* (:class:`Module`: the whole text of a
program after ``#include``; :class:`datalog.Program` is the API's compiled program)
holds *declarations* (of types and relations), *directives*
(``.input``/``.output``/``.printsize``), *facts* and *rules*. A rule has one or
more *head* atoms and a *body*: a disjunction of conjunctions of *literals*. A
literal is a positive *atom*, a *negation* of an atom, or a *comparison*.
Arguments of atoms are *terms*.

>>> s = Span("p.dl", 1, 1, 1, 2)
>>> Atom("edge", (Variable("x", s), Constant(2, "number", s)), s).args[1].type
'number'
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from datalog.errors import Span

PRIMITIVE_TYPES = ("number", "unsigned", "float", "symbol")
AGGREGATES = ("count", "sum", "min", "max", "mean")


# ---------------------------------------------------------------- terms


@dataclass(frozen=True)
class Variable:
    """A named variable; ``_``-prefixed names are variables whose single use is
    intended (no singleton warning)."""

    name: str
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Wildcard:
    """``_``: a fresh variable at each occurrence, never bound to anything else."""

    span: Span = field(compare=False)


@dataclass(frozen=True)
class Constant:
    """A literal value. ``type`` is the primitive type the literal denotes:
    ``number`` (int), ``unsigned`` (int, written ``1u``), ``float`` or ``symbol``
    (str, escapes already resolved)."""

    value: int | float | str
    type: str
    span: Span = field(compare=False)


@dataclass(frozen=True)
class BinaryOp:
    """An infix operator: ``+ - * / % ^``, the bitwise ``band bor bxor bshl bshr
    bshru`` and the logical ``land lor lxor``."""

    op: str
    left: Term
    right: Term
    span: Span = field(compare=False)


@dataclass(frozen=True)
class UnaryOp:
    """A prefix operator: ``-`` (negation), ``bnot``, ``lnot``."""

    op: str
    operand: Term
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Functor:
    """A built-in function call: ``cat(a, b)``, ``strlen(s)``, ``min(a, b)``,
    ``range(lo, hi[, step])`` (a multi-valued functor), ..."""

    name: str
    args: tuple[Term, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Aggregate:
    """``count : { body }``, ``sum x : { body }``, ``min/max/mean x : { body }``.

    ``target`` is the aggregated term (``None`` for ``count``); ``body`` a
    conjunction of literals (the single-atom form ``count : r(x, _)`` is parsed as
    a one-literal body). Variables of the body that also occur outside the
    aggregate in the enclosing rule are the grouping variables."""

    kind: str
    target: Term | None
    body: tuple[Literal, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Record:
    """``[a, b, ...]``: a value of a record type (``.type Pair = [x: number, y:
    symbol]``), or, where the column holds one, a pattern that takes a record
    apart (its variables are bound to the fields)."""

    args: tuple[Term, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Nil:
    """``nil``: the empty value every record type has (a list's end)."""

    span: Span = field(compare=False)


@dataclass(frozen=True)
class Branch:
    """``$Name(a, ...)``: a value of an algebraic data type built by its branch
    ``Name`` (``$Name`` and ``$Name()`` for a branch without fields); as a
    pattern it matches that branch only."""

    name: str
    args: tuple[Term, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Cast:
    """``as(term, Type)``: ``term`` taken as a value of ``Type`` (a type of the
    same kind: a subtype, a union member, the record type of ``[..]``)."""

    term: Term
    type: str
    span: Span = field(compare=False)


Term = (Variable | Wildcard | Constant | BinaryOp | UnaryOp | Functor | Aggregate | Record
        | Nil | Branch | Cast)


# ---------------------------------------------------------------- literals


@dataclass(frozen=True)
class Atom:
    """``relation(arg, ...)``."""

    relation: str
    args: tuple[Term, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Negation:
    """``!atom``: true when the atom has no matching fact."""

    atom: Atom
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``."""

    op: str
    left: Term
    right: Term
    span: Span = field(compare=False)


Literal = Atom | Negation | Comparison


# ---------------------------------------------------------------- clauses


@dataclass(frozen=True)
class Rule:
    """``h1(..), h2(..) :- body.`` where ``body`` is in disjunctive normal form:
    a tuple of alternatives, each a conjunction (tuple) of literals. ``a :- b ; c.``
    has two alternatives; a body without ``;`` has one."""

    heads: tuple[Atom, ...]
    body: tuple[tuple[Literal, ...], ...]
    span: Span = field(compare=False)

    def clauses(self) -> Iterator[tuple[Atom, tuple[Literal, ...]]]:
        """Every (head, conjunctive body) pair this rule stands for."""
        for head in self.heads:
            for conjunction in self.body:
                yield head, conjunction


@dataclass(frozen=True)
class Subsumption:
    """``r(a..) <= r(b..) :- body.``: a tuple of ``r`` matching ``dominated`` is
    removed from ``r`` when another tuple of ``r`` matching ``dominating`` exists
    and ``body`` (in disjunctive normal form, as :attr:`Rule.body`) holds.
    :mod:`datalog.plan.subsumption` says how it is evaluated."""

    dominated: Atom
    dominating: Atom
    body: tuple[tuple[Literal, ...], ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Fact:
    """``relation(c1, c2).``: an atom whose arguments are constants (or constant
    expressions such as ``1 + 2`` or ``cat("a", "b")``)."""

    atom: Atom
    span: Span = field(compare=False)


# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str
    span: Span = field(compare=False)


@dataclass(frozen=True)
class ChoiceDomain:
    """One domain of ``choice-domain``: the attribute names ``x`` or ``(x, y)``
    whose values determine the rest of a tuple (at most one tuple per value)."""

    attributes: tuple[str, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class RelationDecl:
    """``.decl name(a: T, ...) [qualifiers] [choice-domain d, ...]``; qualifiers
    such as ``brie``, ``btree``, ``eqrel``, ``inline``; ``choice`` the domains."""

    name: str
    attributes: tuple[Attribute, ...]
    qualifiers: tuple[str, ...]
    span: Span = field(compare=False)
    choice: tuple[ChoiceDomain, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.attributes)


@dataclass(frozen=True)
class BranchDecl:
    """One branch of an algebraic data type: ``Name {field: Type, ...}``."""

    name: str
    fields: tuple[Attribute, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class TypeDecl:
    """A user type. ``kind`` is ``subtype`` (``.type T <: number``), ``equivalent``
    (``.type T = number``), ``union`` (``.type U = A | B``), ``record``
    (``.type P = [x: number, y: P]``, its ``fields``) or ``adt`` (``.type E = A
    {x: number} | B {}``, its ``branches``); ``bases`` names the type(s) on the
    right-hand side of the first three."""

    name: str
    kind: str
    bases: tuple[str, ...]
    span: Span = field(compare=False)
    fields: tuple[Attribute, ...] = ()
    branches: tuple[BranchDecl, ...] = ()


@dataclass(frozen=True)
class Directive:
    """``.input r(IO=file, filename="r.tsv", delimiter=",")``, ``.output r``,
    ``.printsize r``. ``params`` keeps the key/value pairs in source order, values
    as written (strings unquoted)."""

    kind: str
    relations: tuple[str, ...]
    params: tuple[tuple[str, str], ...]
    span: Span = field(compare=False)

    def param(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.params:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class FunctorDecl:
    """``.functor f(x: number, s: symbol): number [stateful]``: a user-defined
    functor, called ``@f(..)`` in rules and bound to a Python callable when the
    program is built (:mod:`datalog.dialect.user_functors`). ``params`` are the
    parameters' types (their names, optional in Soufflé, are not kept)."""

    name: str
    params: tuple[str, ...]
    result: str
    stateful: bool
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Pragma:
    """``.pragma "key" "value"``: accepted and recorded; none changes semantics."""

    key: str
    value: str
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Plan:
    """``.plan 0:(2,1), 1:(1,2)`` after a rule: for each version of the rule, the
    order in which to join its body atoms (1-based). Accepted and recorded; the
    compiler chooses its own join order, so plans are ignored (with a warning)."""

    orders: tuple[tuple[int, tuple[int, ...]], ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Module:
    """A whole program, possibly assembled from several files by ``#include``.
    Items of each kind are in source order."""

    types: tuple[TypeDecl, ...] = ()
    relations: tuple[RelationDecl, ...] = ()
    directives: tuple[Directive, ...] = ()
    facts: tuple[Fact, ...] = ()
    rules: tuple[Rule, ...] = ()
    pragmas: tuple[Pragma, ...] = ()
    plans: tuple[Plan, ...] = ()
    functors: tuple[FunctorDecl, ...] = ()
    subsumptions: tuple[Subsumption, ...] = ()
    #: path -> text of every file the program was read from (for diagnostics).
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def relation(self, name: str) -> RelationDecl | None:
        for decl in self.relations:
            if decl.name == name:
                return decl
        return None

    def relations_with(self, kind: str) -> list[str]:
        """Names of the relations named by directives of ``kind`` (``input``,
        ``output``, ``printsize``), in source order, without repeats."""
        names: list[str] = []
        for directive in self.directives:
            if directive.kind == kind:
                names.extend(n for n in directive.relations if n not in names)
        return names


# ---------------------------------------------------------------- components
# Parsed, then expanded away by :mod:`datalog.syntax.components`: a :class:`Module`
# never holds them.


@dataclass(frozen=True)
class ComponentType:
    """``Name`` or ``Name<A, B>``: a component named with its type arguments."""

    name: str
    args: tuple[str, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Component:
    """``.comp Name<T, ...> : Base<T>, ... { items }``. ``params`` are the formal
    type parameters; ``items`` are declarations, directives, clauses, nested
    components, instantiations and overrides, in source order."""

    name: str
    params: tuple[str, ...]
    bases: tuple[ComponentType, ...]
    items: tuple
    span: Span = field(compare=False)


@dataclass(frozen=True)
class ComponentInit:
    """``.init name = Component<args>``: an instance; its relations are named
    ``name.relation``."""

    name: str
    component: ComponentType
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Override:
    """``.override r`` in a component: the rules and facts its base components
    give the ``overridable`` relation ``r`` are dropped."""

    relation: str
    span: Span = field(compare=False)
