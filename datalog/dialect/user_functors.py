"""User-defined functors (``.functor f(x: number, s: symbol): number``) and
``autoinc()``: the functors whose values come from outside the dialect's table.

A declared functor is written ``@f(x, s)`` in a rule. Its declaration gives its
signature; :func:`signature` turns the declaration's primitive types into an
:class:`~datalog.dialect.functors.Operator` with one overload, so that the checks
type a call to ``@f`` exactly as they type a built-in functor (the functor's
name in that table is ``@f``).

Its implementation is a Python callable bound when a program is built
(``datalog.Program(text, functors={"f": fn})``). :func:`implement` wraps it so
that it behaves as a built-in: it receives the argument values (``int``,
``float``, ``str``) in the declared order, and its result must be a value of the
declared type (``number``: an ``int`` in the signed 64-bit range; ``unsigned``:
an ``int`` in ``0 .. 2**64 - 1``; ``float``: a ``float``, an ``int`` is
converted; ``symbol``: a ``str``). An exception it raises, or a result of the
wrong type, is a :class:`~datalog.dialect.functors.FunctorError`, which the
evaluators report as an evaluation error at the rule.

Incremental evaluation calls a functor again when a derivation is retracted
and expects the value it got when the derivation was inserted, so a functor
must be a function of its arguments. A functor declared ``stateful`` need not
be: it is called once per distinct tuple of arguments and its value is
remembered for the life of the program object (Soufflé's ``stateful`` functors
get its symbol and record tables; here there are none to pass, and the word
means "do not call me twice with the same arguments").

``autoinc()`` is Soufflé's counter: :class:`AutoInc` numbers 0, 1, 2, ... the
distinct (call site, binding of the rule's variables) pairs in the order they
are first evaluated; the same pair always gets its number back, so retracting
a derivation retracts the row it inserted. A transaction that fails gives back
the numbers it handed out.

>>> op = signature("@f", ("number", "symbol"), "number")
>>> op.result_type(("number", "symbol")), op.result_type(("number", "number")) is None
('number', True)
>>> double = implement("f", ("number",), "number", lambda x: 2 * x)
>>> double(21)
42
>>> implement("f", ("number",), "number", lambda x: str(x))(1)
Traceback (most recent call last):
    ...
datalog.dialect.functors.FunctorError: error: functor `@f` returned '1' (a str) where its \
declaration says `number`
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from datalog.dialect.functors import (
    NUMBER_MAX,
    NUMBER_MIN,
    UNSIGNED_MAX,
    FunctorError,
    Operator,
    Overload,
)

#: The name under which ``autoinc()`` is bound in an executor's implementations.
AUTOINC = "autoinc"


def signature(name: str, params: Sequence[str], result: str) -> Operator:
    """The checks' view of a declared functor: one overload, primitive types."""
    return Operator(name, len(params), len(params),
                    (Overload(tuple(params), result, _unbound(name)),),
                    summary="a user-defined functor")


def _unbound(name: str) -> Callable:
    def call(*args):
        raise FunctorError(f"functor `{name}` has no implementation")
    return call


def _valid(value: Any, result: str) -> Any:
    """``value`` as a value of type ``result``; ``None`` when it is not one."""
    kind = type(value)
    if result == "symbol":
        return value if kind is str else None
    if result == "float":
        if kind is float:
            return value
        return float(value) if kind is int else None
    if kind is not int:
        return None
    low, high = (NUMBER_MIN, NUMBER_MAX) if result == "number" else (0, UNSIGNED_MAX)
    return value if low <= value <= high else None


def implement(name: str, params: Sequence[str], result: str, function: Callable,
              stateful: bool = False) -> Overload:
    """The overload that runs ``function`` for the functor ``@name`` (module doc)."""
    shown = f"`@{name}`"

    def call(*args):
        try:
            value = function(*args)
        except Exception as error:  # the user's code: any failure is theirs to see
            raise FunctorError(f"functor {shown} raised {type(error).__name__}: "
                               f"{error}") from None
        checked = _valid(value, result)
        if checked is None:
            text = repr(value)
            if len(text) > 60:
                text = text[:57] + "..."
            kind = type(value).__name__
            if kind == "int" and result in ("number", "unsigned"):
                raise FunctorError(f"functor {shown} returned {text}, out of range for "
                                   f"`{result}`")
            article = "an" if kind[:1] in "aeiou" else "a"
            raise FunctorError(f"functor {shown} returned {text} ({article} {kind}) where its "
                               f"declaration says `{result}`")
        return checked

    if stateful:
        memo: dict = {}

        def remembered(*args):
            found = memo.get(args)
            if found is None:
                found = memo[args] = call(*args)
            return found
        return Overload(tuple(params), result, remembered)
    return Overload(tuple(params), result, call)


class AutoInc:
    """The state of ``autoinc()`` in one session (module docstring).

    >>> counter = AutoInc()
    >>> counter(0, 5), counter(0, 6), counter(1, 5), counter(0, 5)
    (0, 1, 2, 0)
    >>> counter.begin(); counter(0, 7)
    3
    >>> counter.rollback(); counter(0, 8)
    3
    """

    def __init__(self) -> None:
        self.numbers: dict[tuple, int] = {}
        self.added: list[tuple] | None = None

    def __call__(self, *site_and_binding) -> int:
        number = self.numbers.get(site_and_binding)
        if number is None:
            number = self.numbers[site_and_binding] = len(self.numbers)
            if self.added is not None:
                self.added.append(site_and_binding)
        return number

    def begin(self) -> None:
        """Start a transaction: numbers handed out from now on can be given back."""
        self.added = []

    def commit(self) -> None:
        self.added = None

    def rollback(self) -> None:
        """Forget the numbers handed out since :meth:`begin` (the most recent
        are the highest, so the counter goes back to where it was)."""
        for key in self.added or ():
            del self.numbers[key]
        self.added = None

    def peek(self, *site_and_binding) -> int:
        """The number given to a binding, without giving one (``-1``: none yet);
        for explanations, which must not change the session."""
        return self.numbers.get(site_and_binding, -1)

    def overload(self, peek: bool = False) -> Overload:
        return Overload((), "number", self.peek if peek else self, variadic=True)
