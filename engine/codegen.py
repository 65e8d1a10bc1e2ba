"""Small helpers for the loops the runtime generates (fused linear chains, join
pair loops, trace appends): key and tuple expressions, and compiling source.

>>> key_expression(("cols", (2, 0)), "row", {})
'(row[2], row[0], )'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import CodeType


def tuple_expression(columns, row: str) -> str:
    """Python expression for ``tuple(row[c] for c in columns)``."""
    return "(" + "".join(f"{row}[{c}], " for c in columns) + ")"


def key_expression(index, row: str, env: dict) -> str:
    """Python expression for the key of ``row`` under ``index``.

    ``index`` is ``("cols", (c, ...))`` (key = tuple of those columns) or
    ``("fn", f)`` (key = ``f(row)``).
    """
    kind, spec = index
    if kind == "cols":
        return tuple_expression(spec, row)
    name = f"_key{len(env)}"
    env[name] = spec
    return f"{name}({row})"


def key_function(index) -> Callable:
    """The Python function computing a row's key under an index spec."""
    kind, spec = index
    if kind == "fn":
        return spec
    columns = tuple(spec)
    if len(columns) == 1:
        (c,) = columns
        return lambda row: (row[c],)
    return lambda row: tuple(row[c] for c in columns)


#: How many compiled sources :func:`compiled` keeps. A program's circuit generates
#: a few dozen, built again for each session and at each REPL statement
#: (andersen-200x50: 22, ~10 ms of compiling, holding 211 KiB once its session is
#: gone, by tracemalloc): 256 keep ~2.5 MiB at most.
CODE_CACHE_SIZE = 256
_code: dict[tuple[str, str], CodeType] = {}


def compiled(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, once per source and filename in a
    process: the same circuit built again (a second session of a program, the REPL
    recompiling after each statement, a test suite) generates the same sources.
    Keeps the :data:`CODE_CACHE_SIZE` latest; a code object is immutable and runs
    in whatever namespace it is given, so sharing it changes nothing.

    >>> compiled("x = 1", "<doc>") is compiled("x = 1", "<doc>")
    True
    """
    key = (source, filename)
    code = _code.get(key)
    if code is None:
        code = compile(source, filename, "exec")
        if len(_code) >= CODE_CACHE_SIZE:
            del _code[next(iter(_code))]      # the oldest
        _code[key] = code
    return code


def build_functions(names: list[str], source_lines: list[str], env: dict) -> dict:
    """Compile generated source; return its functions ``names`` by name."""
    namespace = dict(env)
    exec(compiled("\n".join(source_lines), f"<generated {names[0]}>"), namespace)
    return {name: namespace[name] for name in names}


def build_function(name: str, source_lines: list[str], env: dict) -> Callable:
    """Compile generated source and return the function ``name`` defined in it."""
    return build_functions([name], source_lines, env)[name]


def built_later(name: str, source_lines: list[str], env: dict) -> Callable:
    """:func:`build_function`'s function, compiled at its first call rather
    than now: for one a circuit compiles with others but seldom calls (a
    nested join's ``left_thin``, which only a generated loop's thin path
    calls: each compile of it took ~0.3-0.4 ms of tc-chain-1000's batch,
    whose loop made one of its two).

    >>> made = built_later("twice", ["def twice(x):", "    return k * x"], {"k": 2})
    >>> made(3), made(4)
    (6, 8)
    """
    env = dict(env)
    function = None

    def first(*args):
        nonlocal function
        if function is None:
            function = build_function(name, source_lines, env)
        return function(*args)
    return first


def split_naming(lines: list[str], name: str) -> tuple[list[str], list[str]]:
    """``(lines not naming name, lines naming it)``, each in its order: a
    generated closure binds the first once and runs the second each call
    (the Distinct's one-row formula: the lines reading the iteration ``i``;
    a join's thin path: those reading the delta's ``rows``).

    >>> split_naming(["a = c.x", "b = c.at(i)", "n = c.items"], "i")
    (['a = c.x', 'n = c.items'], ['b = c.at(i)'])
    """
    naming = re.compile(rf"\b{re.escape(name)}\b")
    once, each = [], []
    for text in lines:
        (each if naming.search(text) else once).append(text)
    return once, each


def one_row_append(batch: str, append: str, fallback: str, then: list[str]) -> list[str]:
    """Lines appending the one row of the dict ``batch`` to typed arrays:
    its one value by ``append(*_r)`` (its weight in ``_w``), then ``then``;
    a value the arrays refuse (``TypeError``, ``OverflowError``: nothing
    appended) goes to the statement ``fallback`` instead (a generated loop's
    log appends: a key-less trace's, an Export's)."""
    return [f"[(_r, _w)] = {batch}.items()  # (its one row)",
            "try:",
            f"    {append}(*_r)",
            "except (TypeError, OverflowError):",
            f"    {fallback}",
            "else:",
            *(f"    {text}" for text in then)]
