"""Vectorised expressions: map and filter stages computed on a batch's columns.

A compiler that hands the engine a map, filter or flat_map function may hand it,
next to the function, a :class:`Program` computing the same thing on columns.
When a columnar batch (:class:`~engine.colbatch.ColBatch`) meets such a stage
(a linear node's input, a join's columnar output), :func:`run` evaluates the
program with numpy on the whole batch at once, and the batch stays columnar.

The expression language knows nothing about the language it came from:

- ``Col(i)``: slot ``i`` of the row;
- ``Lit(value, kind)``: a constant;
- ``Op(name, args, kind)``: the operator ``name`` on arguments of ``kind``;
- ``Call(function, args, kinds, result)``: a Python function of the
  arguments' Python values (symbols as ``str``), called once per distinct
  tuple of arguments in the batch, its results of kind ``result`` (for the
  functions numpy has no form of: those of text). It must be pure.

Kinds are the column kinds of :mod:`engine.colbatch` — ``"i"`` (``int64``),
``"u"`` (``uint64``), ``"f"`` (``float64``), ``"s"`` (interned symbol ids) —
and ``"b"`` (a truth value, what comparisons give and filters take). An
unsigned value below ``2**63`` may sit in an ``"i"`` column (that is how
:meth:`ColBatch.from_rows` stores it); an ``"u"`` operator reads it exactly.

Operators (:data:`OPERATORS`) compute 64-bit integer arithmetic wrapping
around, division and remainder truncating toward zero (C), shifts by the count
modulo 64, logical operators giving 1 or 0, float arithmetic in IEEE doubles;
comparisons of symbols: equality and inequality of their ids (exact: the ids
are interned), order by the text (the ids of the batch ranked by their
symbols, one sort of its distinct symbols). A **step** of a program keeps the rows where a condition
holds (``("filter", expr)``), appends a slot (``("extend", expr)``) or replaces
the row (``("select", (expr, ...))``).

Whatever numpy cannot compute exactly as the row function would — a division
by zero, a float result that is NaN, a float out of an integer's range, a power
that overflows — raises :class:`Fallback` for the whole batch: the caller then
runs the batch through the row function, which gives its result or its
located error. Evaluation is exact, never approximately right.

>>> from engine.colbatch import ColBatch
>>> batch = ColBatch.from_rows({(7, 2): 1, (-7, 2): 1, (3, 3): 2})
>>> program = Program((("filter", Op("ne", (Col(0), Col(1)), "i")),
...                    ("select", (Col(0), Op("div", (Col(0), Col(1)), "i")))))
>>> dict(run(program, batch))
{(-7, -3): 1, (7, 3): 1}
>>> run(Program((("extend", Op("div", (Col(0), Lit(0, "i")), "i")),)), batch)
Traceback (most recent call last):
    ...
engine.vector.Fallback: division by zero
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import lazy
from engine.colbatch import INT64, SYMBOLS, ColBatch, consolidate, sort_order

np = lazy.module("numpy", globals())
UINT64 = "uint64"
DTYPES = {"i": INT64, "u": UINT64, "f": "float64", "s": INT64, "b": "bool"}
TWO_63 = float(1 << 63)


class Fallback(Exception):
    """The batch cannot be computed on columns exactly; run it per row."""


@dataclass(frozen=True)
class Col:
    """Slot ``index`` of the row."""

    index: int


@dataclass(frozen=True)
class Lit:
    """A constant ``value`` of ``kind``."""

    value: object
    kind: str


@dataclass(frozen=True)
class Op:
    """Operator ``name`` applied to ``args``, all of ``kind``."""

    name: str
    args: tuple
    kind: str


@dataclass(frozen=True)
class Call:
    """``function`` (pure, on Python values) of ``args`` of ``kinds``, its
    results of kind ``result``."""

    function: object
    args: tuple
    kinds: tuple
    result: str


# name -> (argument kinds accepted, result kind; None: the argument kind)
_NUM, _INT, _ANY = frozenset("iuf"), frozenset("iu"), frozenset("iufs")
OPERATORS: dict[str, tuple[frozenset, str | None]] = {
    **dict.fromkeys(("add", "sub", "mul", "div", "pow", "min", "max"), (_NUM, None)),
    "neg": (frozenset("if"), None),
    **dict.fromkeys(("mod", "band", "bor", "bxor", "bnot", "bshl", "bshr", "bshru",
                     "land", "lor", "lxor", "lnot"), (_INT, None)),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge"), (_ANY, "b")),
    **dict.fromkeys(("and", "or", "not"), (frozenset("b"), "b")),
    "to_i": (_NUM, "i"), "to_u": (_NUM, "u"), "to_f": (_NUM, "f"),
}


def result_kind(expr) -> str | None:
    """The kind of ``expr``'s values (``None`` for a slot: its column's)."""
    if isinstance(expr, Col):
        return None
    if isinstance(expr, Lit):
        return expr.kind
    if isinstance(expr, Call):
        return expr.result
    return OPERATORS[expr.name][1] or expr.kind


def check(expr) -> None:
    """``ValueError`` unless every operator of ``expr`` is known for its kind."""
    if isinstance(expr, Op):
        found = OPERATORS.get(expr.name)
        if found is None or expr.kind not in found[0]:
            raise ValueError(f"no vectorised {expr.name} on kind {expr.kind!r}")
        for arg in expr.args:
            check(arg)
    elif isinstance(expr, Lit):
        if expr.kind not in DTYPES:
            raise ValueError(f"no kind {expr.kind!r}")
    elif isinstance(expr, Call):
        if (not callable(expr.function) or len(expr.kinds) != len(expr.args)
                or expr.result not in DTYPES or not set(expr.kinds) <= set("iufs")):
            raise ValueError(f"not a call: {expr!r}")
        for arg in expr.args:
            check(arg)
    elif not isinstance(expr, Col):
        raise ValueError(f"not an expression: {expr!r}")


@dataclass(frozen=True)
class Program:
    """The steps of one stage (module docstring), checked when made."""

    steps: tuple

    def __post_init__(self):
        for step, arg in self.steps:
            if step not in ("filter", "extend", "select"):
                raise ValueError(f"unknown step {step!r}")
            for expr in (arg if step == "select" else (arg,)):
                check(expr)
            if step == "filter" and result_kind(arg) != "b":
                raise ValueError("a filter's condition must be a truth value")


# ---------------------------------------------------------------------------
# Evaluation


def run(program: Program, batch: ColBatch) -> ColBatch:
    """``program`` on every row of ``batch``: the rows it keeps and makes,
    consolidated (:class:`Fallback` when it cannot be done exactly)."""
    slots = list(zip(batch.columns, batch.kinds))
    weights = batch.weights
    reshaped = False
    with np.errstate(all="ignore"):
        for step, arg in program.steps:
            n = len(weights)
            if step == "filter":
                keep = _value(arg, slots, n)[0]
                if not keep.all():
                    slots = [(column[keep], kind) for column, kind in slots]
                    weights = weights[keep]
            elif step == "extend":
                slots.append(_value(arg, slots, n))
            else:
                slots = [_value(expr, slots, n) for expr in arg]
                reshaped = True
    columns, kinds = [], []
    for column, kind in slots:
        if kind == "u" and (not len(column) or int(column.max()) < 1 << 63):
            column, kind = column.astype(INT64), "i"  # as from_rows holds it
        elif kind == "b":
            raise Fallback("a truth value is not a column")
        columns.append(column)
        kinds.append(kind)
    if not reshaped:   # rows kept, or extended by a function of themselves: still unique
        return ColBatch(columns, tuple(kinds), weights)
    return consolidate(columns, tuple(kinds), weights)


def _value(expr, slots: list, n: int):
    """``(array, kind)`` of ``expr`` on the ``n`` rows of ``slots``."""
    if isinstance(expr, Col):
        return slots[expr.index]
    if isinstance(expr, Lit):
        value = SYMBOLS.ids([expr.value])[0] if expr.kind == "s" else expr.value
        return np.full(n, value, dtype=DTYPES[expr.kind]), expr.kind
    if isinstance(expr, Call):
        args = [_coerce(*_value(arg, slots, n), kind)
                for arg, kind in zip(expr.args, expr.kinds)]
        return _call(expr, args, n), expr.result
    kind = expr.kind
    args = [_coerce(*_value(arg, slots, n), kind) for arg in expr.args]
    out = _COMPUTE[expr.name](kind, *args)
    return out, OPERATORS[expr.name][1] or kind


def _coerce(array: np.ndarray, have: str, want: str) -> np.ndarray:
    """``array`` (of kind ``have``) read as kind ``want``."""
    if have == want:
        return array
    if want == "u" and have == "i":
        if len(array) and int(array.min()) < 0:
            raise Fallback("a negative value read as unsigned")
        return array.astype(UINT64)
    raise Fallback(f"a value of kind {have!r} where {want!r} is expected")


def _call(expr: Call, args: list, n: int) -> np.ndarray:
    """``expr.function`` once per distinct tuple of ``args``, spread back."""
    if not n:
        return np.zeros(0, dtype=DTYPES[expr.result])
    if args:
        keys = [a.view(INT64) if a.dtype != INT64 else a for a in args]
        order = sort_order(keys)
        new = np.zeros(n, dtype=bool)
        new[0] = True
        for key in keys:
            ordered = key[order]
            new[1:] |= ordered[1:] != ordered[:-1]
        firsts = order[new]
        where = np.empty(n, dtype=INT64)
        where[order] = np.cumsum(new) - 1   # the distinct tuple of each row
    else:
        firsts, where = np.zeros(1, dtype=INT64), np.zeros(n, dtype=INT64)
    values = [SYMBOLS.symbols(a[firsts]) if kind == "s" else a[firsts].tolist()
              for a, kind in zip(args, expr.kinds)]
    try:
        results = [expr.function(*vs) for vs in zip(*values)] if args \
            else [expr.function()]
    except Exception as error:  # the row path raises it, at its place
        raise Fallback(f"{error}") from None
    wanted = _PYTHON_TYPES[expr.result]
    if any(type(r) not in wanted for r in results):
        raise Fallback("a result of another type")
    if expr.result == "s":
        return SYMBOLS.ids(results)[where]
    try:
        found = np.array(results, dtype=DTYPES[expr.result])
    except OverflowError:
        raise Fallback("an integer out of the column's range") from None
    return found[where]


_PYTHON_TYPES = {"i": (int,), "u": (int,), "f": (float,), "s": (str,), "b": (bool,)}


def _no_nan(kind: str, out: np.ndarray) -> np.ndarray:
    if kind == "f" and np.isnan(out).any():
        raise Fallback("a float operation gives NaN")
    return out


def _nonzero(b: np.ndarray) -> None:
    if not b.all():
        raise Fallback("division by zero")


def _div(kind, a, b):
    _nonzero(b)
    if kind == "f":
        return _no_nan(kind, a / b)
    if kind == "u":
        return a // b
    return (a - np.fmod(a, b)) // b   # exact: truncates toward zero, MIN / -1 wraps


def _mod(kind, a, b):
    _nonzero(b)
    return np.fmod(a, b)   # the sign of the dividend, as C's %


def _pow(kind, a, b):
    if kind == "f":
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise Fallback("a power of a value that is not finite")
        if ((a == 0) & (b < 0)).any():
            raise Fallback("0 raised to a negative power")
        out = np.power(a, b)
        if not np.isfinite(out).all():
            raise Fallback("a power out of the float range, or not real")
        return out
    negative = b < 0 if kind == "i" else np.zeros(len(b), dtype=bool)
    if (negative & (a == 0)).any():
        raise Fallback("0 raised to a negative power")
    base = a.view(UINT64).copy()
    exponent = np.where(negative, 0, b).view(UINT64).copy()
    out = np.ones(len(a), dtype=UINT64)
    one = np.uint64(1)
    while exponent.any():   # by squaring, modulo 2**64: pow(a, b, 2**64)
        odd = (exponent & one).astype(bool)
        out[odd] *= base[odd]
        base *= base
        exponent >>= one
    if kind == "u":
        return out
    out = out.view(INT64)
    if negative.any():  # a fraction truncated: 0, except on 1 and -1
        odd = (b & 1).astype(bool)
        unit = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        out = np.where(negative, unit, out)
    return out


def _shift(direction: str):
    def shift(kind, a, b):
        count = (b & 63).astype(UINT64)
        unsigned = a.view(UINT64) if kind == "i" else a
        if direction == "left":
            out = unsigned << count
        elif direction == "arithmetic" and kind == "i":
            return a >> count.astype(INT64)
        else:
            out = unsigned >> count
        return out.view(INT64) if kind == "i" else out
    return shift


def _truth(kind: str, values: np.ndarray) -> np.ndarray:
    return values.astype(DTYPES[kind])


def _to_integer(target: str):
    def convert(kind, a):
        if kind == "f":
            if not ((a >= -TWO_63) & (a < TWO_63)).all():  # NaN and inf fail too
                raise Fallback("a float out of the integer range")
            a = np.trunc(a).astype(INT64)
            kind = "i"
        if kind == target:
            return a
        return a.view(DTYPES[target])   # two's complement: wraps as the row path
    return convert


def _to_float(kind, a):
    return a.astype(np.float64)


def _extreme(better, values):
    """The first of the least (``np.less``) or greatest values, as Python's
    ``min``/``max`` pick it (which of ``0.0`` and ``-0.0``)."""
    out = values[0]
    for value in values[1:]:
        out = np.where(better(value, out), value, out)
    return out


def _ranks(a: np.ndarray, b: np.ndarray) -> tuple:
    """Symbol ids ``a`` and ``b`` as their ranks in the order of their text
    (code points, as Python orders ``str``) among the symbols they hold."""
    if not len(a):
        return a, b
    distinct = np.sort(np.concatenate([a, b]))
    distinct = distinct[np.concatenate(([True], distinct[1:] != distinct[:-1]))]
    names = SYMBOLS.symbols(distinct)
    rank = np.empty(len(distinct), dtype=INT64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(distinct))
    return rank[distinct.searchsorted(a)], rank[distinct.searchsorted(b)]


def _ordered(name: str):
    def ordered(kind, a, b):
        compare = getattr(np, name)
        return compare(*_ranks(a, b)) if kind == "s" else compare(a, b)
    return ordered


def _float_checked(name: str):
    return lambda kind, a, b: _no_nan(kind, getattr(np, name)(a, b))


_COMPUTE = {
    "add": _float_checked("add"), "sub": _float_checked("subtract"),
    "mul": _float_checked("multiply"), "div": _div, "mod": _mod, "pow": _pow,
    "neg": lambda kind, a: np.negative(a),
    "min": lambda kind, *xs: _extreme(np.less, xs),
    "max": lambda kind, *xs: _extreme(np.greater, xs),
    "band": lambda kind, a, b: a & b, "bor": lambda kind, a, b: a | b,
    "bxor": lambda kind, a, b: a ^ b, "bnot": lambda kind, a: ~a,
    "bshl": _shift("left"), "bshr": _shift("arithmetic"), "bshru": _shift("logical"),
    "land": lambda kind, a, b: _truth(kind, (a != 0) & (b != 0)),
    "lor": lambda kind, a, b: _truth(kind, (a != 0) | (b != 0)),
    "lxor": lambda kind, a, b: _truth(kind, (a != 0) != (b != 0)),
    "lnot": lambda kind, a: _truth(kind, a == 0),
    "eq": lambda kind, a, b: a == b, "ne": lambda kind, a, b: a != b,
    "lt": _ordered("less"), "le": _ordered("less_equal"),
    "gt": _ordered("greater"), "ge": _ordered("greater_equal"),
    "and": lambda kind, *xs: np.logical_and.reduce(xs),
    "or": lambda kind, *xs: np.logical_or.reduce(xs),
    "not": lambda kind, a: ~a,
    "to_i": _to_integer("i"), "to_u": _to_integer("u"), "to_f": _to_float,
}
