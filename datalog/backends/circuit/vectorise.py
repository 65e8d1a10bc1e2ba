"""Plan expressions as the engine's vectorised expressions (:mod:`engine.vector`).

The circuit compiler fuses a rule's filters, assignments and projection into
one generated Python function per stage; :func:`stage_program` describes the
same stage as an :class:`engine.vector.Program`, which the engine evaluates on
the columns of a large batch. Operators numpy computes become ``Op``; the
functors of text (``cat``, ``strlen``, ``substr``, ``to_string``, ``to_number``
of a symbol, ``ord`` of a symbol, ``contains``, ``match``, ...) become a
``Call`` of the dialect's own function, once per distinct argument tuple. A
stage with no columnar form gets ``None`` and runs per row: ``range``
(several rows per row), records and ADTs, ``autoinc`` and user-defined
functors (a function the engine may not call once for many rows).

>>> from datalog.plan.ir import Call, Col, Const
>>> e = Call("/", (Col(0), Const(2)), ("number", "number"))
>>> expression(e)
Op(name='div', args=(Col(index=0), Lit(value=2, kind='i')), kind='i')
>>> expression(Call("cat", (Col(0), Col(1)), ("symbol", "symbol"))).result
's'
>>> expression(Call("range", (Col(0), Col(1)), ("number", "number"))) is None
True
"""

from __future__ import annotations

from datalog.dialect.functors import COMPARISONS, FUNCTORS
from datalog.dialect.user_functors import AUTOINC
from datalog.plan.ir import Assign, Call, Col, Const, Filter
from engine import vector

KINDS = {"number": "i", "unsigned": "u", "float": "f", "symbol": "s"}
BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "pow",
          **{name: name for name in ("band", "bor", "bxor", "bshl", "bshr", "bshru",
                                      "land", "lor", "lxor")},
          "=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
UNARY = {"-": "neg", "bnot": "bnot", "lnot": "lnot"}
CONVERSIONS = {"to_number": "to_i", "to_unsigned": "to_u", "to_float": "to_f"}


class _Unfit(Exception):
    pass


def expression(expr, kind: str | None = None):
    """``expr`` as an engine expression (``kind``: the type its context
    expects, for a constant), or ``None`` when it has no columnar form."""
    try:
        found = _expression(expr, kind)
        vector.check(found)
        return found
    except (_Unfit, ValueError):
        return None


def _literal(value, kind: str | None):
    if type(value) is int:
        if kind is None:
            kind = "i" if -(1 << 63) <= value < (1 << 63) else "u"
        if kind not in ("i", "u") or not -(1 << 63) <= value < (1 << 64) \
                or (kind == "i" and value >= 1 << 63) or (kind == "u" and value < 0):
            raise _Unfit
        return vector.Lit(value, kind)
    if type(value) is float and kind in (None, "f"):
        return vector.Lit(value, "f")
    if type(value) is str and kind in (None, "s"):
        return vector.Lit(value, "s")
    raise _Unfit


def _expression(expr, kind: str | None):
    if isinstance(expr, Col):
        return vector.Col(expr.index)
    if isinstance(expr, Const):
        return _literal(expr.value, kind)
    if not isinstance(expr, Call) or not expr.types \
            or any(t not in KINDS for t in expr.types):
        raise _Unfit
    kinds = [KINDS[t] for t in expr.types]
    args = tuple(_expression(a, k) for a, k in zip(expr.args, kinds))
    op, n = expr.op, len(expr.args)
    if op in CONVERSIONS and n == 1 and kinds[0] != "s":
        return vector.Op(CONVERSIONS[op], args, kinds[0])
    if op == "ord" and n == 1 and kinds[0] in ("i", "f"):
        return vector.Op("to_i", args, kinds[0])
    if op in ("min", "max") and len(set(kinds)) == 1 and kinds[0] != "s":
        return vector.Op(op, args, kinds[0])
    if len(set(kinds)) == 1 and n == 2 and op in BINARY:
        return vector.Op(BINARY[op], args, kinds[0])
    if len(set(kinds)) == 1 and n == 1 and op in UNARY:
        return vector.Op(UNARY[op], args, kinds[0])
    operator = FUNCTORS.get(op) or COMPARISONS.get(op)
    overload = operator.resolve(expr.types) if operator is not None else None
    if overload is None or operator.multi or op == AUTOINC:
        raise _Unfit
    result = "b" if overload.result == "bool" else KINDS.get(overload.result)
    if result is None:
        raise _Unfit
    return vector.Call(overload.function, args, tuple(kinds), result)


def condition(expr):
    """A filter's condition as an engine truth value, or ``None``."""
    found = expression(expr)
    if found is None or vector.result_kind(found) != "b":
        return None
    return found


def stage_program(projection, pending, extra=(), project=None):
    """The :class:`engine.vector.Program` of one fused stage: the scan's
    ``projection`` (slots kept, or ``None``), the ``pending`` filters and
    assignments, then ``extra`` expressions appended or the row replaced by
    ``project``; ``None`` when a part has no columnar form."""
    steps = []
    if projection is not None:
        steps.append(("select", tuple(vector.Col(c) for c in projection)))
    for step in pending:
        if isinstance(step, Filter):
            found = condition(step.condition)
            steps.append(("filter", found))
        elif isinstance(step, Assign) and not step.multi:
            found = expression(step.expr)
            steps.append(("extend", found))
        else:
            return None
        if found is None:
            return None
    for expr in extra:
        found = expression(expr)
        if found is None:
            return None
        steps.append(("extend", found))
    if project is not None:
        items = tuple(expression(e) for e in project)
        if any(item is None for item in items):
            return None
        steps.append(("select", items))
    return vector.Program(tuple(steps))


def select(slots) -> vector.Program:
    """The program of a map keeping ``slots`` of the row."""
    return vector.Program((("select", tuple(vector.Col(c) for c in slots)),))


def equalities(consts, equal, types) -> vector.Program | None:
    """A relation's filter ``t[c] == v`` for ``(c, v)`` in ``consts`` and
    ``t[a] == t[b]`` for ``(a, b)`` in ``equal`` (``types``: the relation's
    column types), or ``None``."""
    steps = []
    for c, v in consts:
        found = expression(Call("=", (Col(c), Const(v)), (types[c], types[c])))
        if found is None:
            return None
        steps.append(("filter", found))
    for a, b in equal:
        found = expression(Call("=", (Col(a), Col(b)), (types[a], types[b])))
        if found is None:
            return None
        steps.append(("filter", found))
    return vector.Program(tuple(steps))



def tagging(k: int, flag: int, value) -> vector.Program | None:
    """The program of an aggregate's tag ``t[:k] + (flag, value)``: ``value``
    a slot (``Col``) or a constant; ``None`` for a constant with no kind
    (``None``)."""
    if not isinstance(value, Col):
        try:
            value = _literal(value, None)
        except _Unfit:
            return None
    else:
        value = vector.Col(value.index)
    keys = tuple(vector.Col(c) for c in range(k))
    return vector.Program((("select", (*keys, vector.Lit(flag, "i"), value)),))
