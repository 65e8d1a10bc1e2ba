"""Type checking of facts and rules against the relations' declared types.

A variable takes the declared type of every column it fills in a positive atom;
those types must meet (``number`` and a subtype ``Id <: number`` meet in ``Id``;
``number`` and ``symbol`` do not, nor do two unrelated subtypes). A variable not
in any positive atom takes the type of the term it is equated with. Then every
term is checked where it is used:

- operators and functors need an overload for their argument types (the tables
  of :mod:`datalog.dialect.functors`); a numeric literal takes the type its context asks
  for (``x + 1`` with a ``float`` ``x``: the ``1`` is a float), as the evaluators do;
- both sides of a comparison have the same primitive type (``contains`` and
  ``match`` take symbols);
- an argument of a head or of a fact must fit its column: a variable's type must
  be a subtype of the column's type (a ``number`` does not fill an ``Id``
  column), a constant or an expression its primitive type;
- ``sum`` and ``mean`` aggregate numbers;
- a record ``[a, b]`` takes its type from where it stands (a column, the other
  side of an equality, ``as([a, b], T)``) and has that type's number of fields,
  each fitting its field; ``$A(x)`` names a branch of a declared ADT and has its
  fields; ``nil`` is a value of every record type; records and ADT values are
  compared with ``=`` and ``!=`` only, against values of the same type; a
  variable in a record or constructor pattern takes its field's type.

Unknown relations, types or functors are skipped here (other checks report them).
Takes a module and its :class:`~datalog.analysis.context.Context`: the type table,
and each clause's :class:`~datalog.analysis.grounded.Grounding`, whose scopes tell
which occurrences of a name are one variable (an aggregate's local variables are
its own). Gives the type errors.

>>> from datalog.syntax.parser import parse
>>> from datalog.analysis.context import Context
>>> p = parse('.decl a(x: number)\\n.decl b(s: symbol)\\nb(s) :- a(s).')
>>> [d.message for d in check_clause_types(p, Context(p))]
['`s` has type `number` but column `s` of `b` has type `symbol`']
"""

from __future__ import annotations

from datalog.analysis.context import Context
from datalog.analysis.grounded import Scope
from datalog.dialect.functors import BINARY_OPS, COMPARISONS, FUNCTORS, NUMERIC_TYPES, UNARY_OPS
from datalog.dialect.records import RecordType, is_structured
from datalog.errors import Diagnostic, did_you_mean
from datalog.syntax.ast import (
    Aggregate,
    Atom,
    Attribute,
    BinaryOp,
    Branch,
    Cast,
    Comparison,
    Constant,
    Literal,
    Module,
    Negation,
    Nil,
    Record,
    Span,
    Term,
    UnaryOp,
    Variable,
    Wildcard,
)
from datalog.syntax.printer import term_text
from datalog.syntax.terms import equality_sides, subterms


def flexible(term: Term) -> bool:
    """A numeric expression of decimal literals only: its type is decided by the
    context (``1`` is a float in ``x + 1`` when ``x`` is a float)."""
    return all(isinstance(t, (Constant, BinaryOp, UnaryOp)) and
               (not isinstance(t, Constant) or t.type == "number")
               for t in subterms([term]))


# ---------------------------------------------------------------- checking


def check_clause_types(module: Module, context: Context) -> list[Diagnostic]:
    """Type mismatches in the facts and rules of ``module``."""
    out: list[Diagnostic] = []
    for fact in module.facts:
        _Clause(context, fact.atom, (), out).check_fact()
    for rule in module.rules:
        for head, body in rule.clauses():
            _Clause(context, head, body, out).check_rule()
    return out


def variable_types(context: Context, head: Atom, body: tuple[Literal, ...]) -> dict[str, str]:
    """The type the checker infers for each variable of the clause ``head :-
    body`` (outside aggregates), by name; a variable whose type is unknown is
    left out. A query's answers are typed with it (:mod:`datalog.plan.conjunctive`)."""
    clause = _Clause(context, head, body, [])
    top = clause.grounding.top
    clause.infer(body, top)
    found = {}
    for (scope_id, name), (type_, _, _) in clause.types.items():
        if scope_id == top.ident:
            found[name] = type_
    return found


class _Clause:
    def __init__(self, context: Context, head: Atom, body: tuple[Literal, ...],
                 out: list[Diagnostic]):
        self.table, self.decls = context.table, context.decls
        self.functors = context.functors
        self.grounding = context.grounding(head, body)
        self.head, self.body, self.out = head, body, out
        self.types: dict[tuple[int, str], tuple[str, Span, str]] = {}
        self.reported: set = set()
        # (term, scope, expected, report) -> type; cleared when a variable's type is
        # learnt. Without it an operator chain would be typed exponentially often.
        self.memo: dict[tuple, str | None] = {}

    def error(self, message: str, span: Span, hint: str | None = None) -> None:
        self.out.append(Diagnostic("error", message, span, hint))

    def columns(self, atom: Atom) -> list[tuple[str, str]] | None:
        """``(name, type)`` of each column of ``atom``'s relation, when declared
        with this arity and known types."""
        decl = self.decls.get(atom.relation)
        if decl is None or decl.arity != len(atom.args):
            return None
        if not all(self.table.primitive(a.type) for a in decl.attributes):
            return None
        return [(a.name, a.type) for a in decl.attributes]

    # ------------------------------------------------------------ entry points

    def check_fact(self) -> None:
        self.check_head(self.grounding.top)

    def check_rule(self) -> None:
        top = self.grounding.top
        self.infer(self.body, top)
        self.check_body(self.body, top)
        self.check_head(top)

    # ------------------------------------------------------------ inference

    def infer(self, body: tuple[Literal, ...], scope: Scope) -> None:
        for literal in body:
            if isinstance(literal, Atom):
                columns = self.columns(literal)
                if columns is None:
                    continue
                for arg, (column, ctype) in zip(literal.args, columns):
                    self.constrain_pattern(arg, scope, ctype, f"column `{column}` of "
                                           f"`{literal.relation}`")
        changed = True
        unpacked: set[int] = set()
        while changed:
            changed = False
            for literal in body:
                pairs = equality_sides(literal)
                for side, other in pairs:
                    if isinstance(side, (Record, Branch)) and id(side) not in unpacked:
                        found = self.type_of(other, scope, None, report=False)
                        if found is not None or isinstance(side, Branch):
                            unpacked.add(id(side))
                            self.constrain_pattern(side, scope, found, "an equality")
                            changed = True
                for var, other in pairs:
                    if isinstance(var, Variable) and scope.key(var.name) not in self.types:
                        found = self.type_of(other, scope, None, report=False)
                        if found is not None:
                            self.types[scope.key(var.name)] = (found, other.span, "an equality")
                            self.memo.clear()
                            changed = True

    def constrain_pattern(self, term: Term, scope: Scope, ctype: str | None,
                          where: str) -> None:
        """The variables of the pattern ``term`` (a variable, or a record or
        constructor pattern) take the types of the fields they stand in."""
        if isinstance(term, Variable) and ctype is not None:
            self.constrain(term, scope, ctype, where)
            return
        fields = self.fields_of(term, ctype)
        if fields is None or len(fields) != len(term.args):
            return
        owner = ctype if isinstance(term, Record) else f"${term.name}"
        for arg, attr in zip(term.args, fields):
            if self.table.known(attr.type):
                self.constrain_pattern(arg, scope, attr.type, f"field `{attr.name}` of "
                                       f"`{owner}`")

    def head_hints(self) -> dict[str, str]:
        """The type of each variable of the head, from its column (or the field
        of a record or constructor pattern it stands in)."""
        if not hasattr(self, "_head_hints"):
            self._head_hints: dict[str, str] = {}
            columns = self.columns(self.head)
            todo = list(zip(self.head.args, (t for _, t in columns or ())))
            while todo:
                term, ctype = todo.pop()
                if isinstance(term, Variable):
                    self._head_hints.setdefault(term.name, self.table.primitive(ctype))
                    continue
                fields = self.fields_of(term, ctype)
                if fields is not None and len(fields) == len(term.args):
                    todo += [(a, f.type) for a, f in zip(term.args, fields)
                             if self.table.known(f.type)]
        return self._head_hints

    def fields_of(self, term: Term, ctype: str | None) -> tuple[Attribute, ...] | None:
        """The declared fields a record (in a column of ``ctype``) or a
        constructor term has, or None."""
        if isinstance(term, Branch):
            decl = self.table.branches.get(term.name)
            return None if decl is None else next(
                b.fields for b in decl.branches if b.name == term.name)
        if isinstance(term, Record) and isinstance(self.table.primitive(ctype), RecordType):
            return self.table.decls[self.table.primitive(ctype)].fields
        return None

    def constrain(self, var: Variable, scope: Scope, ctype: str, where: str) -> None:
        key = scope.key(var.name)
        known = self.types.get(key)
        self.memo.clear()
        if known is None:
            self.types[key] = (ctype, var.span, where)
            return
        met = self.table.meet(known[0], ctype)
        if met is None:
            self.error(f"`{var.name}` cannot have both type `{known[0]}` and type `{ctype}`",
                       var.span, hint=f"it has type `{known[0]}` in {known[2]} at {known[1]}, "
                                      f"and type `{ctype}` in {where}")
        else:
            self.types[key] = (met, known[1], known[2])

    # ------------------------------------------------------------ checks

    def check_body(self, body: tuple[Literal, ...], scope: Scope) -> None:
        for literal in body:
            if isinstance(literal, (Atom, Negation)):
                atom = literal if isinstance(literal, Atom) else literal.atom
                columns = self.columns(atom)
                for i, arg in enumerate(atom.args):
                    ctype = columns[i][1] if columns else None
                    if isinstance(arg, Variable) and isinstance(literal, Atom):
                        continue  # constrained during inference
                    if ctype is None:
                        self.type_of(arg, scope, None)
                    elif isinstance(arg, Variable):
                        known = self.types.get(scope.key(arg.name))
                        if known is not None and self.table.meet(known[0], ctype) is None:
                            self.error(f"`{arg.name}` has type `{known[0]}` but column "
                                       f"`{columns[i][0]}` of `{atom.relation}` has type "
                                       f"`{ctype}`", arg.span)
                    elif not isinstance(arg, Wildcard):
                        self.fits(arg, scope, ctype, f"column `{columns[i][0]}` of "
                                  f"`{atom.relation}`", strict=False)
            else:
                self.check_comparison(literal, scope)

    def check_comparison(self, literal: Comparison, scope: Scope) -> None:
        left, right = literal.left, literal.right
        lt = None if flexible(left) else self.type_of(left, scope, None)
        rt = self.type_of(right, scope, self.table.primitive(lt))
        if flexible(left):
            lt = self.type_of(left, scope, self.table.primitive(rt))
        if lt is None and rt is None and scope is self.grounding.top:
            # `y = [a, b]` with `y` known from the head only: the head's column
            # says which record type `[a, b]` is.
            for side, other in ((left, right), (right, left)):
                hint = self.head_hints().get(side.name) if isinstance(side, Variable) else None
                if hint is not None and isinstance(other, (Record, Nil)):
                    rt, right, left = self.type_of(other, scope, hint), other, side
                    lt = hint
                    break
        if lt is None and rt is not None:
            lt = self.type_of(left, scope, self.table.primitive(rt))
        # `1 != nil`: a record or `nil` facing a side whose type only the
        # other side's literal decided is checked against that type now
        if rt is None and lt is not None and isinstance(right, (Record, Nil)):
            rt = self.type_of(right, scope, lt)
        if lt is None and rt is not None and isinstance(left, (Record, Nil)):
            lt = self.type_of(left, scope, rt)
        lp, rp = self.table.primitive(lt), self.table.primitive(rt)
        if lp is None and rp is None:
            shapeless = next((t for t in (left, right) if isinstance(t, (Record, Nil))), None)
            if shapeless is not None:
                self.error("cannot tell which record type this is", shapeless.span,
                           hint="say it with `as([...], Type)`")
        if lp is None or rp is None:
            return
        if is_structured(lp) or is_structured(rp):
            if lp != rp:
                self.error(f"cannot compare a `{lp}` with a `{rp}`", literal.span,
                           hint="both sides of a comparison must have the same type")
            elif literal.op not in ("=", "!="):
                self.error(f"`{literal.op}` does not compare values of `{lp}`", literal.span,
                           hint="records and algebraic data types are compared with `=` "
                                "and `!=` only")
            return
        operator = COMPARISONS.get(literal.op)
        if operator is None:
            self.error(f"unknown comparison `{literal.op}`", literal.span)
        elif operator.resolve((lp, rp)) is None:
            if literal.op in ("contains", "match", "not_contains", "not_match"):
                name = literal.op.replace("not_", "")
                self.error(f"`{name}` takes two symbols, got `{lp}` and `{rp}`", literal.span)
            else:
                self.error(f"cannot compare a `{lp}` with a `{rp}`", literal.span,
                           hint="both sides of a comparison must have the same type")

    def check_head(self, scope: Scope) -> None:
        columns = self.columns(self.head)
        for i, arg in enumerate(self.head.args):
            if columns is None:
                self.type_of(arg, scope, None)
            elif not isinstance(arg, Wildcard):
                self.fits(arg, scope, columns[i][1], f"column `{columns[i][0]}` of "
                          f"`{self.head.relation}`", strict=True)

    def fits(self, term: Term, scope: Scope, ctype: str, where: str, strict: bool) -> None:
        """``term`` fills a column of type ``ctype``."""
        expected = self.table.primitive(ctype)
        found = self.type_of(term, scope, expected)
        if found is None:
            return
        what = (f"`{term.name}`" if isinstance(term, Variable) else
                "this constant" if isinstance(term, Constant) else "this expression")
        if self.table.primitive(found) != expected:
            self.error(f"{what} has type `{self.table.primitive(found)}` but {where} has "
                       f"type `{ctype}`", term.span)
        elif strict and isinstance(term, Variable) and self.from_atoms(term, scope) and \
                not self.table.is_subtype(found, ctype):
            self.error(f"{what} has type `{found}` but {where} has type `{ctype}`", term.span,
                       hint=f"a `{found}` is not a `{ctype}`: declare both with one type")

    def from_atoms(self, var: Variable, scope: Scope) -> bool:
        """Whether ``var``'s type comes from the columns it fills (a variable
        equated with a computed value has only that value's primitive type, and
        fits any column of that primitive type, as a constant does)."""
        known = self.types.get(scope.key(var.name))
        return known is not None and known[2] != "an equality"

    # ------------------------------------------------------------ terms

    def type_of(self, term: Term, scope: Scope, expected: str | None,
                report: bool = True) -> str | None:
        """The type of ``term`` (a user type for variables, else primitive), or
        None when unknown; reports operators applied to wrong types."""
        if isinstance(term, (Variable, Wildcard, Constant)):
            return self._type_of(term, scope, expected, report)
        key = (id(term), id(scope), expected, report)
        if key not in self.memo:
            self.memo[key] = self._type_of(term, scope, expected, report)
        return self.memo[key]

    def _type_of(self, term: Term, scope: Scope, expected: str | None,
                 report: bool) -> str | None:
        if isinstance(term, Variable):
            known = self.types.get(scope.key(term.name))
            return known[0] if known else None
        if isinstance(term, Wildcard):
            return None
        if isinstance(term, Constant):
            if term.type == "number" and expected in NUMERIC_TYPES:
                return expected
            return term.type
        if isinstance(term, Aggregate):
            return self.aggregate_type(term, report)
        if isinstance(term, (Record, Nil, Branch, Cast)):
            return self.structured_type(term, scope, expected, report)
        if isinstance(term, BinaryOp):
            table, name, args = BINARY_OPS, term.op, (term.left, term.right)
        elif isinstance(term, UnaryOp):
            table, name, args = UNARY_OPS, term.op, (term.operand,)
        else:
            table, name, args = FUNCTORS, term.name, term.args
        operator = self.functors.get(name) if name.startswith("@") else table.get(name)
        if operator is None or not operator.accepts_arity(len(args)):
            for arg in args:
                self.type_of(arg, scope, None, report)
            return None
        if table is FUNCTORS and name not in ("min", "max", "range"):
            types = [self.type_of(a, scope, None, report) for a in args]
        else:
            fixed = [self.type_of(a, scope, None, report) for a in args if not flexible(a)]
            anchor = next((self.table.primitive(t) for t in fixed if t is not None), expected)
            types = [self.type_of(a, scope, anchor, report) for a in args]
        prims = [self.table.primitive(t) for t in types]
        if any(p is None for p in prims):
            return None
        result = operator.result_type(prims)
        if result is None and report and id(term) not in self.reported:
            self.reported.add(id(term))
            shown = " and ".join(f"`{p}`" for p in prims) if prims else "no arguments"
            hint = "it takes " + "; ".join(operator.signatures()[:4])
            if name == "+" and "symbol" in prims:
                hint = "symbols are joined with `cat`: " + _cat_hint(args, prims)
            self.error(f"`{name}` cannot be applied to {shown}", term.span, hint=hint)
        return result

    def structured_type(self, term: Term, scope: Scope, expected: str | None,
                        report: bool) -> str | None:
        """The type of a record, ``nil``, a constructor or a cast (``expected``:
        the type of the column or value it stands for)."""
        key = (id(term), expected)
        report = report and key not in self.reported
        if report:
            self.reported.add(key)
        if isinstance(term, Cast):
            if not self.table.known(term.type):
                if report:
                    self.error(f"unknown type `{term.type}`", term.span,
                               hint=did_you_mean(term.type, self.table.names()))
                return None
            target = self.table.primitive(term.type)
            inner = self.type_of(term.term, scope, target, report)
            if report and inner is not None and self.table.primitive(inner) != target:
                self.error(f"`as` cannot make a `{self.table.primitive(inner)}` into a "
                           f"`{term.type}`", term.span,
                           hint="`as` changes a value's type within one kind (a number "
                                "into a subtype of number); to_string, to_number convert")
            return term.type
        if isinstance(term, Branch):
            decl = self.table.branches.get(term.name)
            if decl is None:
                if report:
                    self.error(f"unknown constructor `${term.name}`", term.span,
                               hint=did_you_mean(term.name, list(self.table.branches)))
                for arg in term.args:
                    self.type_of(arg, scope, None, report)
                return None
            adt = self.table.primitive(decl.name)
            fields = self.fields_of(term, adt)
            if len(fields) != len(term.args):
                if report:
                    self.error(f"`${term.name}` has {_fields(len(fields))}, got "
                               f"{len(term.args)}", term.span,
                               hint=f"write `${term.name}("
                                    f"{', '.join(f.name for f in fields)})`")
                return adt
            for arg, attr in zip(term.args, fields):
                self.fits_field(arg, scope, attr, f"`${term.name}`", report)
            return adt
        record = self.table.primitive(expected) if expected is not None else None
        if not isinstance(record, RecordType):
            if report and expected is not None:
                self.error(f"{'`nil`' if isinstance(term, Nil) else 'a record'} where a "
                           f"`{expected}` is expected", term.span)
            if isinstance(term, Record):
                for arg in term.args:
                    self.type_of(arg, scope, None, report)
            return None
        if isinstance(term, Nil):
            return record
        fields = self.fields_of(term, record)
        if len(fields) != len(term.args):
            if report:
                self.error(f"a record of {len(term.args)} field"
                           f"{'s' if len(term.args) != 1 else ''} where `{record}` has "
                           f"{_fields(len(fields))}", term.span,
                           hint=f"`{record}` is "
                                f"[{', '.join(f'{f.name}: {f.type}' for f in fields)}]")
            return record
        for arg, attr in zip(term.args, fields):
            self.fits_field(arg, scope, attr, f"`{record}`", report)
        return record

    def fits_field(self, term: Term, scope: Scope, attr: Attribute, owner: str,
                   report: bool) -> None:
        if isinstance(term, Wildcard) or not self.table.known(attr.type):
            return
        if report:
            self.fits(term, scope, attr.type, f"field `{attr.name}` of {owner}", strict=False)
        else:
            self.type_of(term, scope, self.table.primitive(attr.type), report=False)

    def aggregate_type(self, agg: Aggregate, report: bool) -> str | None:
        scope = self.grounding.scope(agg)
        if report and id(agg) not in self.reported:
            self.reported.add(id(agg))
            self.infer(agg.body, scope)
            self.check_body(agg.body, scope)
        else:
            self.infer(agg.body, scope)
        if agg.kind == "count":
            return "number"
        target = self.type_of(agg.target, scope, None, report)
        prim = self.table.primitive(target)
        if prim is None:
            return "float" if agg.kind == "mean" else None
        if agg.kind in ("sum", "mean") and prim not in NUMERIC_TYPES:
            if report:
                self.error(f"`{agg.kind}` needs numbers, got a `{prim}`", agg.target.span,
                           "`min` and `max` order symbols; `count` counts any rows"
                           if prim == "symbol" else None)
            return None
        return "float" if agg.kind == "mean" else prim


def _cat_hint(args, prims) -> str:
    """``cat(a, b)`` for the operands of a ``+`` on symbols (numbers through
    ``to_string``)."""
    parts = []
    for arg, prim in zip(args, prims):
        text = term_text(arg)
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        parts.append(text if prim == "symbol" else f"to_string({text})")
    return f"`cat({', '.join(parts)})`"


def _fields(count: int) -> str:
    return f"{count} field{'s' if count != 1 else ''}"
