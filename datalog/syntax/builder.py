"""The AST builder: the grammar's reduce callbacks, run by lark's LALR parser.

Each method is named after a rule (or alias) of ``grammar.lark`` and receives the
rule's children (tokens and already built nodes); it returns the AST node, so no
parse tree is ever built. Rule bodies are parsed generously (see the grammar) and
sorted out here:

- ``r(x, y)`` standing as a literal is an atom; inside a term it is a functor call
  (``strlen(s)``); ``contains(a, b)`` and ``match(p, s)`` as literals are the
  constraints of those names (``Comparison`` with op ``contains`` / ``match``);
- ``!r(x)`` is a negated atom, ``!contains(a, b)`` the constraint ``not_contains``,
  ``!(x < y)`` the comparison ``x >= y``;
- a body with ``;`` (at any depth of parentheses) is put in disjunctive normal
  form: ``a :- b, (c ; d).`` has the alternatives ``b, c`` and ``b, d``;
- an operator expression, read as a flat sequence, is grouped by precedence.

Every node gets the span from its first to its last character, mapped back
through macro expansions. Terms deeper than :data:`MAX_DEPTH` are rejected here,
so later stages can walk terms recursively.
"""

from __future__ import annotations

from datalog.dialect.functors import integer_value
from datalog.errors import Diagnostic, ParseError
from datalog.syntax.ast import (
    Aggregate,
    Atom,
    Attribute,
    BinaryOp,
    Branch,
    BranchDecl,
    Cast,
    ChoiceDomain,
    Comparison,
    Component,
    ComponentInit,
    ComponentType,
    Constant,
    Directive,
    Fact,
    Functor,
    FunctorDecl,
    Negation,
    Nil,
    Override,
    Plan,
    Pragma,
    Record,
    RelationDecl,
    Rule,
    Span,
    Subsumption,
    TypeDecl,
    UnaryOp,
    Variable,
    Wildcard,
)
from datalog.syntax.fastfacts import unquote
from datalog.syntax.preprocess import ColumnMap

#: Terms nested deeper than this are rejected (later stages walk terms recursively).
MAX_DEPTH = 100
#: A body may expand to at most this many alternatives (its disjunctive normal form).
MAX_ALTERNATIVES = 1000

#: Constraints written like calls, and their negations.
CONSTRAINTS = ("contains", "match")
NEGATED = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
           "contains": "not_contains", "match": "not_match"}
#: Qualifiers that stand for an I/O directive (old Soufflé style).
IO_QUALIFIERS = ("input", "output", "printsize")

#: Binding strength of the infix operators (Soufflé's); prefix operators bind at
#: ``_UNARY``, tighter than all but ``^``.
_PRECEDENCE = {"lor": 1, "lxor": 2, "land": 3, "bor": 4, "bxor": 5, "band": 6,
               "bshl": 7, "bshr": 7, "bshru": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
               "^": 11}
_UNARY = 10



class _Group:
    """A piece of a body while it is parsed: alternatives, each a list of pieces
    (a literal, or a term to be read as a literal or, when the group turns out to
    be a parenthesized term, as that term)."""

    __slots__ = ("alternatives", "span")

    def __init__(self, alternatives: list[tuple], span: Span):
        self.alternatives = alternatives
        self.span = span

    def single(self):
        if len(self.alternatives) == 1 and len(self.alternatives[0]) == 1:
            return self.alternatives[0][0]
        return None


class Callbacks:
    """The reduce callbacks of the grammar (one method per rule or alias). State
    is per file: set by :meth:`reset` before each parse."""

    def reset(self, path: str, columns: dict[int, ColumnMap], sources: dict[str, str]):
        self.path = path
        self.columns = columns
        self.sources = sources
        self.depth: dict[int, int] = {}

    # ------------------------------------------------------------ places

    def span(self, first, last=None) -> Span:
        """From the start of ``first`` to the end of ``last`` (tokens or nodes)."""
        if last is None:
            last = first
        a = getattr(first, "span", None)
        b = getattr(last, "span", None)
        if a is not None:
            line, column = a.line, a.column
        else:
            line, column = first.line, first.column
            if self.columns:
                column = self._start(line, column)
        if b is not None:
            end_line, end_column = b.end_line, b.end_column
        else:
            end_line, end_column = last.end_line, last.end_column
            if self.columns:
                end_column = self._end(end_line, end_column)
        return Span(self.path, line, column, end_line, end_column)

    def token_span(self, token) -> Span:
        """The span of one token (the common case, made cheap)."""
        if self.columns:
            return self.span(token)
        return Span(self.path, token.line, token.column, token.end_line, token.end_column)

    def _start(self, line: int, column: int) -> int:
        cmap = self.columns.get(line) if self.columns else None
        return cmap.start(column) if cmap else column

    def _end(self, line: int, column: int) -> int:
        cmap = self.columns.get(line) if self.columns else None
        return cmap.end(column) if cmap else column

    def error(self, message: str, span: Span, hint: str | None = None) -> ParseError:
        return ParseError([Diagnostic("error", message, span, hint)], self.sources)

    def nested(self, node, *children):
        """Record ``node``'s depth (1 + its deepest child's); reject deep terms."""
        depths = self.depth
        deepest = 1
        for child in children:
            deepest = max(deepest, depths.get(id(child), 1))
        if deepest >= MAX_DEPTH:
            raise self.error(f"expression nested too deeply (more than {MAX_DEPTH} levels)",
                             node.span, hint="split it with intermediate variables")
        depths[id(node)] = deepest + 1
        return node

    # ------------------------------------------------------------ items

    def start(self, *items):
        out = []
        for item in items:
            if isinstance(item, list):
                out.extend(item)
            else:
                out.append(item)
        return out

    def component(self, keyword, *rest):
        types = [t for t in rest if isinstance(t, ComponentType)]
        items = self.start(*rest[len(types) + 1:-1])
        return Component(types[0].name, types[0].args, tuple(types[1:]), tuple(items),
                         self.span(keyword, rest[-1]))

    def comp_type(self, name, *rest):
        args = tuple(str(t) for t in rest if t is not None and t.type == "NAME")
        return ComponentType(str(name), args, self.span(name, rest[-1] if rest[-1] else name))

    def comp_init(self, keyword, name, _eq, component):
        return ComponentInit(str(name), component, self.span(keyword, component))

    def comp_override(self, keyword, name):
        return Override(str(name), self.span(keyword, name))

    def decl(self, keyword, *rest):
        # .decl a, b(x: number) declares a and b alike (Soufflé's shorthand); the
        # first declaration's span starts at `.decl`, each other's at its name.
        names = []
        while getattr(rest[0], "type", None) == "NAME":
            names.append(rest[0])
            rest = rest[1:]
        rest = rest[1:]  # the `(`
        choice = rest[-1] if isinstance(rest[-1], tuple) else ()
        rest = tuple(t for t in rest if t is not None and not isinstance(t, tuple))
        attributes = [a for a in rest if isinstance(a, Attribute)]
        qualifier_tokens = [t for t in rest if getattr(t, "type", None) == "QUALIFIER"]
        seen = {}
        for attr in attributes:
            if attr.name in seen:
                raise self.error(f"attribute `{attr.name}` is declared twice in "
                                 f"`{names[0]}`", attr.span,
                                 hint="give each attribute its own name")
            seen[attr.name] = attr
        qualifiers = tuple(str(t) for t in qualifier_tokens if str(t) not in IO_QUALIFIERS)
        items = []
        for i, name in enumerate(names):
            span = self.span(keyword if i == 0 else name, choice[-1] if choice else rest[-1])
            items.append(RelationDecl(str(name), tuple(attributes), qualifiers, span, choice))
            items += [Directive(str(t), (str(name),), (), self.span(t))
                      for t in qualifier_tokens if str(t) in IO_QUALIFIERS]
        return items

    def choice_domain(self, keyword, *domains):
        # choice-domain x, (y, z): each domain's attributes must be declared
        return tuple(domains)

    def domain(self, *tokens):
        names = tuple(str(t) for t in tokens if t.type == "NAME")
        return ChoiceDomain(names, self.span(tokens[0], tokens[-1]))

    def attribute(self, name, type_name):
        return Attribute(str(name), str(type_name), self.span(name, type_name))

    def functor_decl(self, keyword, name, lpar, *rest):
        # .functor f(x: number, symbol): number [stateful]
        stateful = getattr(rest[-1], "type", None) == "STATEFUL"
        end = rest[-1]
        if stateful:
            rest = rest[:-1]
        result = rest[-1]
        params = tuple(p for p in rest[:-2] if isinstance(p, str) and
                       getattr(p, "type", None) is None)
        return FunctorDecl(str(name), params, str(result), stateful,
                           self.span(keyword, end))

    def functor_param(self, first, second=None):
        # `x: number` or the type alone
        return str(second if second is not None else first)

    def subtype(self, keyword, name, _op, base):
        return TypeDecl(str(name), "subtype", (str(base),), self.span(keyword, base))

    def type_equal(self, keyword, name, _op, *bases):
        kind = "equivalent" if len(bases) == 1 else "union"
        return TypeDecl(str(name), kind, tuple(str(b) for b in bases),
                        self.span(keyword, bases[-1]))

    def record_type(self, keyword, name, _eq, lsqb, *rest):
        fields = self.fields(str(name), [a for a in rest if isinstance(a, Attribute)])
        if not fields:
            raise self.error(f"record type `{name}` has no fields", self.span(lsqb, rest[-1]),
                             hint="a record type lists its fields: `[a: number, b: symbol]`")
        return TypeDecl(str(name), "record", (), self.span(keyword, rest[-1]), fields=fields)

    def adt_type(self, keyword, name, _eq, *branches):
        seen = {}
        for branch in branches:
            if branch.name in seen:
                raise self.error(f"branch `{branch.name}` is declared twice in `{name}`",
                                 branch.span, hint="give each branch its own name")
            seen[branch.name] = branch
        return TypeDecl(str(name), "adt", (), self.span(keyword, branches[-1]),
                        branches=tuple(branches))

    def branch_decl(self, name, _lbrace, *rest):
        fields = self.fields(str(name), [a for a in rest if isinstance(a, Attribute)])
        return BranchDecl(str(name), fields, self.span(name, rest[-1]))

    def fields(self, owner: str, attributes: list[Attribute]) -> tuple[Attribute, ...]:
        """The fields of a record type or branch, each name once."""
        seen = set()
        for attr in attributes:
            if attr.name in seen:
                raise self.error(f"field `{attr.name}` is declared twice in `{owner}`",
                                 attr.span, hint="give each field its own name")
            seen.add(attr.name)
        return tuple(attributes)

    def legacy_type(self, keyword, name):
        base = "number" if keyword.startswith(".number") else "symbol"
        return TypeDecl(str(name), "subtype", (base,), self.span(keyword, name))

    def directive(self, keyword, *targets):
        kind = str(keyword)[1:]
        return [Directive(kind, (str(name),), params, self.span(keyword, end))
                for name, params, end in targets]

    def io_target(self, name, lpar=None, *rest):
        params = tuple(p for p in rest if isinstance(p, tuple))
        end = rest[-1] if rest else name
        return name, params, end

    def param(self, key, _eq, value):
        text = str(value)
        if value.type == "STRING":
            text = self.unquote(value)
        return str(key), text

    def pragma(self, keyword, key, value=None):
        end = value if value is not None else key
        return Pragma(self.unquote(key), self.unquote(value) if value is not None else "",
                      self.span(keyword, end))

    def plan(self, keyword, *entries):
        return Plan(tuple(entry for entry, _ in entries), self.span(keyword, entries[-1][1]))

    def plan_entry(self, version, _lpar, *rest):
        order = tuple(self.small_integer(t) for t in rest
                      if t is not None and t.type == "INT")
        return (self.small_integer(version), order), rest[-1]

    def small_integer(self, token) -> int:
        """A plan's version or atom index (plain decimal digits)."""
        value = integer_value(str(token))
        if value is None:
            raise self.error("number too large", self.token_span(token))
        return value

    def fact(self, *children):
        calls, end = children[:-1], children[-1]
        if len(calls) > 1:
            raise self.error("a fact is a single atom", self.span(calls[0], end),
                             hint="write one fact per clause, or use `:-` for a rule")
        atom = self.atom(calls[0])
        return Fact(atom, self.span(calls[0], end))

    def rule(self, *children):
        calls, body, end = children[:-3], children[-2], children[-1]
        heads = tuple(self.atom(c) for c in calls)
        alternatives = tuple(tuple(self.as_literal(piece) for piece in conj)
                             for conj in body.alternatives)
        return Rule(heads, alternatives, self.span(calls[0], end))

    def subsumption(self, dominated, op, dominating, _if, body, end):
        # r(x, y) <= r(x, z) :- y > z. The grammar reads any comparison there, so that
        # `<=` is one terminal everywhere (a body's `f(x) <= y` lexes the same way).
        if str(op) != "<=":
            raise self.error(f"unexpected `{op}`; expected `,`, `.` or `:-`",
                             self.token_span(op),
                             hint="a subsumption rule is written `r(a) <= r(b) :- body.`")
        alternatives = tuple(tuple(self.as_literal(piece) for piece in conj)
                             for conj in body.alternatives)
        return Subsumption(self.atom(dominated), self.atom(dominating), alternatives,
                           self.span(dominated, end))

    # ------------------------------------------------------------ bodies

    def disj(self, *groups):
        groups = [self.literal(g) for g in groups]
        alternatives = [alt for g in groups for alt in g.alternatives]
        span = self.span(groups[0], groups[-1])
        if len(alternatives) > MAX_ALTERNATIVES:
            raise self.error(f"the body expands to more than {MAX_ALTERNATIVES} alternatives",
                             span, hint="split the rule into several rules")
        return _Group(alternatives, span)

    def conj(self, *groups):
        groups = [self.literal(g) for g in groups]
        alternatives = [()]
        span = self.span(groups[0], groups[-1])
        for g in groups:
            if len(alternatives) * len(g.alternatives) > MAX_ALTERNATIVES:
                raise self.error(
                    f"the body expands to more than {MAX_ALTERNATIVES} alternatives",
                    span, hint="split the rule into several rules")
            alternatives = [a + b for a in alternatives for b in g.alternatives]
        return _Group(alternatives, span)

    def as_literal(self, piece):
        """A finished body piece as a literal (an atom from a call)."""
        if isinstance(piece, (Comparison, Negation)):
            return piece
        if isinstance(piece, Functor) and not piece.name.startswith("@"):
            if piece.name in CONSTRAINTS:
                return self.constraint(piece, piece.name)
            return self.atom(piece)
        raise self.error(f"expected an atom, a negated atom or a comparison, found "
                         f"{_describe(piece)}", piece.span,
                         hint="compare it with something, e.g. `x = ...`")

    def literal(self, piece):
        """The grammar's ``literal``: a piece as a one-alternative group."""
        if isinstance(piece, _Group):
            return piece
        return _Group([(piece,)], piece.span)

    def comparison(self, left, op, right):
        left, right = self.term(left), self.term(right)
        node = Comparison(str(op), left, right, self.span(left, right))
        return self.nested(node, left, right)

    def negation(self, bang, operand):
        piece = operand.single() if isinstance(operand, _Group) else operand
        span = self.span(bang, operand)
        if isinstance(piece, Comparison):
            return Comparison(NEGATED[piece.op], piece.left, piece.right, span)
        if isinstance(piece, Functor) and not piece.name.startswith("@"):
            if piece.name in CONSTRAINTS:
                c = self.constraint(piece, piece.name)
                return Comparison(NEGATED[c.op], c.left, c.right, span)
            return Negation(self.atom(piece), span)
        if isinstance(piece, Negation):
            raise self.error("double negation", span, hint="remove both `!`")
        raise self.error("`!` must be followed by an atom or a comparison", span)

    def constraint(self, call: Functor, op: str) -> Comparison:
        if len(call.args) != 2:
            raise self.error(f"`{op}` takes 2 arguments, got {len(call.args)}", call.span,
                             hint=f"write `{op}(a, b)`")
        return Comparison(op, call.args[0], call.args[1], call.span)

    def atom(self, call) -> Atom:
        if not isinstance(call, Functor):
            raise self.error("expected an atom", call.span)
        return Atom(call.name, call.args, call.span)

    # ------------------------------------------------------------ terms

    def term(self, value):
        """A piece used as a value: unwrap a parenthesized term, reject the rest."""
        if isinstance(value, _Group):
            piece = value.single()
            if piece is None or isinstance(piece, (Comparison, Negation)):
                raise self.error("a condition cannot be used as a value", value.span,
                                 hint="only terms (variables, constants, arithmetic, "
                                      "functors, aggregates) can be arguments")
            return piece
        return value

    def expr(self, *items):
        """Operands and operators in a row, combined by precedence (shunting
        yard, no recursion): prefix operators bind tighter than infix ones except
        ``^``, which binds tightest and groups to the right."""
        if len(items) == 1:
            return items[0]
        output: list = []
        operators: list = []  # (token, precedence, unary)

        def apply():
            token, _, unary = operators.pop()
            if unary:
                output.append(self.unop(token, output.pop()))
            else:
                right = output.pop()
                output.append(self.binop(output.pop(), token, right))

        for item in items:
            kind = getattr(item, "type", None)
            if kind == "PREFIX":
                operators.append((item, _UNARY, True))
            elif kind == "INFIX":
                precedence = _PRECEDENCE[str(item)]
                while operators and (operators[-1][1] > precedence or
                                     (operators[-1][1] == precedence and item != "^")):
                    apply()
                operators.append((item, precedence, False))
            else:
                output.append(item)
        while operators:
            apply()
        return output[0]

    def binop(self, left, op, right):
        left, right = self.term(left), self.term(right)
        node = BinaryOp(str(op), left, right, self.span(left, right))
        return self.nested(node, left, right)

    def unop(self, op, operand):
        operand = self.term(operand)
        span = self.span(op, operand)
        if op == "-" and isinstance(operand, Constant) and operand.type in ("number", "float") \
                and not isinstance(operand.value, bool):
            return Constant(-operand.value, operand.type, span)
        return self.nested(UnaryOp(str(op), operand, span), operand)

    def variable(self, name):
        if name == "_":
            return Wildcard(self.token_span(name))
        if name == "nil":
            return Nil(self.token_span(name))
        return Variable(str(name), self.token_span(name))

    def integer(self, token):
        text = str(token)
        kind = "number"
        if text.endswith("u"):
            kind, text = "unsigned", text[:-1]
        lower = text.lower()
        if lower.startswith(("0x", "0b")):
            value = integer_value(text[2:], 16 if lower[1] == "x" else 2)
        else:
            value = integer_value(text)
        if value is None:
            raise self.error(f"integer literal of {len(text)} digits does not fit in a 64-bit "
                             f"`{kind}`", self.token_span(token),
                             hint="numbers range from -2^63 to 2^63 - 1, unsigned numbers "
                                  "from 0 to 2^64 - 1")
        return Constant(value, kind, self.token_span(token))

    def float(self, token):
        return Constant(float(str(token)), "float", self.token_span(token))

    def string(self, token):
        return Constant(self.unquote(token), "symbol", self.token_span(token))

    def unquote(self, token) -> str:
        return unquote(str(token))

    def call(self, name, lpar, *rest):
        args = tuple(self.term(a) for a in rest[:-1] if a is not None)
        span = self.span(name, rest[-1])
        if name == "as":
            if len(args) != 2 or not isinstance(args[1], Variable):
                raise self.error("`as` takes a term and a type", span,
                                 hint="write `as(x, Type)`")
            return self.nested(Cast(args[0], args[1].name, span), args[0])
        node = Functor(str(name), args, span)
        return self.nested(node, *args)

    def record(self, lsqb, *rest):
        args = tuple(self.term(a) for a in rest[:-1] if a is not None)
        return self.nested(Record(args, self.span(lsqb, rest[-1])), *args)

    def branch(self, dollar, name, *rest):
        args = tuple(self.term(a) for a in rest
                     if a is not None and getattr(a, "type", None) not in ("LPAR", "RPAR"))
        end = next((t for t in reversed(rest) if t is not None), name)
        return self.nested(Branch(str(name), args, self.span(dollar, end)), *args)

    def user_functor(self, at, name, lpar, *rest):
        args = tuple(self.term(a) for a in rest[:-1] if a is not None)
        node = Functor("@" + str(name), args, self.span(at, rest[-1]))
        return self.nested(node, *args)

    def group(self, lpar, group, rpar):
        piece = group.single()
        if piece is not None and not isinstance(piece, (Comparison, Negation)):
            return piece
        return _Group(group.alternatives, self.span(lpar, rpar))

    def aggregate(self, keyword, target, body):
        literals, end = body
        target = self.term(target) if target is not None else None
        kind = str(keyword)
        span = self.span(keyword, end)
        if kind == "count" and target is not None:
            raise self.error("`count` takes no target expression", target.span,
                             hint="write `count : { ... }`")
        if kind != "count" and target is None:
            raise self.error(f"`{kind}` needs the expression to aggregate", span,
                             hint=f"write `{kind} x : {{ ... }}`")
        node = Aggregate(kind, target, literals, span)
        inner = [target] if target is not None else []
        for lit in literals:
            if isinstance(lit, Comparison):
                inner.append(lit)
            else:
                inner.extend((lit.atom if isinstance(lit, Negation) else lit).args)
        return self.nested(node, *inner)

    def agg_body(self, *children):
        if len(children) == 1:
            call = children[0]
            return (self.atom(call),), call
        lbrace, group, rbrace = children
        if len(group.alternatives) != 1:
            raise self.error("an aggregate body cannot contain `;`",
                             self.span(lbrace, rbrace),
                             hint="aggregate over a helper relation defined by several rules")
        return tuple(self.as_literal(p) for p in group.alternatives[0]), rbrace


def _describe(piece) -> str:
    if isinstance(piece, Variable):
        return f"the variable `{piece.name}`"
    if isinstance(piece, Constant):
        return "a constant"
    if isinstance(piece, Aggregate):
        return "an aggregate"
    if isinstance(piece, Functor):
        return f"the functor call `{piece.name}(...)`"
    if isinstance(piece, (Record, Nil)):
        return "a record"
    if isinstance(piece, Branch):
        return f"the constructor `${piece.name}`"
    if isinstance(piece, Wildcard):
        return "`_`"
    return "an expression"


class Transformer:
    """Adapts :class:`Callbacks` to lark's inline-transformer protocol: lark looks
    up a method per rule name and calls it with the list of children."""

    def __init__(self, callbacks: Callbacks):
        self._callbacks = callbacks

    def __getattr__(self, name: str):
        target = getattr(self._callbacks, name, None)
        if target is None or name.startswith("_"):
            raise AttributeError(name)
        return lambda children: target(*children)
