"""The operators of the runtime specification (seed 002) on plain data.

One place for the specification's own definitions, as the reference document
writes them: functions on Z-sets (dicts row -> weight), indexed Z-sets and
traces as lists of entries, with no state and no time of their own. The
worked examples (``test_spec_examples.py``) check them, and the naive twins
(``test_twins.py``) hold the runtime's incremental nodes against them. Nothing
in the runtime imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.aggregates import count  # noqa: F401 (the doctest of aggregate uses it)
from engine.time import leq
from engine.zset import add_into, sum_zsets

# ---------------------------------------------------------------- linear


def map_zset(fn: Callable, zset: Mapping) -> dict:
    """Map: ``{fn(row): w}`` (weights of rows mapped together add up).

    >>> map_zset(lambda r: (r[0] % 2,), {(1,): 1, (3,): 1, (2,): -1})
    {(1,): 2, (0,): -1}
    """
    out: dict = {}
    for row, w in zset.items():
        add_into(out, {fn(row): w})
    return out


def filter_zset(predicate: Callable, zset: Mapping) -> dict:
    """Filter: the rows satisfying ``predicate``, weights unchanged."""
    return {row: w for row, w in zset.items() if predicate(row)}


def negate_zset(zset: Mapping) -> dict:
    """Negate: every weight's sign flipped."""
    return {row: -w for row, w in zset.items()}


def index_with(key_fn: Callable, zset: Mapping) -> dict:
    """Index With: key -> row -> weight, with ``key = key_fn(row)``."""
    out: dict = {}
    for row, w in zset.items():
        add_into(out.setdefault(key_fn(row), {}), {row: w})
    return {key: rows for key, rows in out.items() if rows}


def plus_zsets(a: Mapping, b: Mapping) -> dict:
    """Plus: weights of equal rows added, zeros dropped."""
    return sum_zsets([a, b])


def minus_zsets(a: Mapping, b: Mapping) -> dict:
    """Minus: ``a + negate(b)``."""
    return sum_zsets([a, negate_zset(b)])


# ---------------------------------------------------------------- join


def join_stream(combine: Callable, a: Mapping, b: Mapping) -> dict:
    """Join Stream: ``combine(k, va, vb)`` for every pair with equal keys, weights
    multiplied (``a``, ``b``: indexed Z-sets at one time).

    >>> join_stream(lambda k, x, y: (k, x, y), {"a": {1: 1}}, {"a": {1: 1, 2: -1}})
    {('a', 1, 1): 1, ('a', 1, 2): -1}
    """
    out: dict = {}
    for key, left in a.items():
        right = b.get(key)
        if right:
            for lv, lw in left.items():
                for rv, rw in right.items():
                    row = combine(key, lv, rv)
                    total = out.get(row, 0) + lw * rw
                    if total:
                        out[row] = total
                    else:
                        del out[row]
    return out


def join_trace(combine: Callable, a: Mapping, trace_entries) -> dict:
    """Join Trace: the indexed Z-set ``a`` joined with every entry
    ``(key, value, time, weight)`` of a trace (times summed away).

    >>> join_trace(lambda k, x, y: (k, x, y), {"b": {2: 2}}, [("b", 3, 0, 1), ("b", 3, 1, 1)])
    {('b', 2, 3): 4}
    """
    collected: dict = {}
    for key, value, _time, weight in trace_entries:
        group = collected.setdefault(key, {})
        total = group.get(value, 0) + weight
        if total:
            group[value] = total
        else:
            del group[value]
    return join_stream(combine, a, collected)


# ---------------------------------------------------------------- distinct


def distinct(zset: Mapping) -> dict:
    """Distinct: weight 1 for every row of positive weight.

    >>> distinct({0: 1, 1: 2, 2: -1})
    {0: 1, 1: 1}
    """
    return {row: 1 for row, w in zset.items() if w > 0}


def distinct_incremental(batch: Mapping, trace_entries) -> dict:
    """Distinct Incremental of ``batch`` given the trace ``[(row, time, weight)]``
    of all earlier input: ``[old + w > 0] - [old > 0]`` per row of the batch.

    >>> distinct_incremental({0: 2, 2: 1, 3: -1}, [(0, 0, 1)])
    {2: 1}
    """
    old: dict = {}
    for row, _time, weight in trace_entries:
        old[row] = old.get(row, 0) + weight
    out = {}
    for row, w in batch.items():
        before = old.get(row, 0)
        delta = (before + w > 0) - (before > 0)
        if delta:
            out[row] = delta
    return out


def distinct_trace(batch: Mapping, trace_entries, time: tuple) -> dict:
    """Distinct Trace at ``time = (e, i)`` of ``batch``, given the trace
    ``[(row, (e', i'), weight)]`` of earlier input (reference implementation of
    the formula; the node computes the same with compacted histories).

    >>> distinct_trace({5: 1}, [(0, (0, 0), 1), (5, (0, 1), 1)], (1, 0))
    {5: 1}
    """
    e, i = time
    weights: dict = {}
    for row, (te, ti), weight in trace_entries:
        if not leq((te, ti), (e, i)) and not (te < e):
            continue
        w1, w2, w3 = weights.get(row, (0, 0, 0))
        if te < e and ti < i:
            w1 += weight
        elif te < e and ti == i:
            w2 += weight
        elif te == e and ti < i:
            w3 += weight
        weights[row] = (w1, w2, w3)
    candidates = set(batch)
    current = {row for row, (te, ti), _ in trace_entries if te == e and ti < i}
    later_old = {row for row, (te, ti), _ in trace_entries if te < e and ti == i}
    candidates |= current & later_old
    out = {}
    for row in candidates:
        w1, w2, w3 = weights.get(row, (0, 0, 0))
        w = batch.get(row, 0)
        delta = ((w1 + w2 + w3 + w > 0) - (w1 + w3 > 0)) - ((w1 + w2 > 0) - (w1 > 0))
        if delta:
            out[row] = delta
    return out


# ---------------------------------------------------------------- aggregate


def aggregate(fn: Callable, indexed: Mapping) -> dict:
    """The Aggregate operator of the specification on one indexed Z-set.

    >>> aggregate(count, {1: {"foo": 1, "bar": 1}, 2: {"baz": 1}})
    {(1, 2): 1, (2, 1): 1}
    """
    out = {}
    for key, group in indexed.items():
        items = sorted((v, w) for v, w in group.items() if w > 0)
        result = fn(items) if items else None
        if result is not None:
            out[(key if type(key) is tuple else (key,)) + (result,)] = 1
    return out


# ---------------------------------------------------------------- delay


def trace_append(trace: list, batch: Mapping, time) -> list:
    """Trace Append: the trace (list of ``(row, time, weight)``) with the batch
    added at ``time``.

    >>> trace_append([(1, 0, 1)], {2: 1}, 1)
    [(1, 0, 1), (2, 1, 1)]
    """
    return trace + [(row, time, w) for row, w in batch.items()]


def untimed_trace_append(trace: dict, batch: Mapping) -> dict:
    """Untimed Trace Append: the trace as one Z-set, with the batch added.

    >>> untimed_trace_append({1: 1}, {1: -1, 2: 1})
    {2: 1}
    """
    return add_into(dict(trace), batch)


def delay_trace(traces: list, t: int) -> list:
    """Delay Trace: the trace as it was at the previous time (``[]`` at 0).

    >>> delay_trace([[(1, 0, 1)], [(1, 0, 1), (2, 1, 1)]], 1)
    [(1, 0, 1)]
    """
    return traces[t - 1] if t > 0 else []


def consolidate(entries) -> dict:
    """Consolidate: merge trace entries ``(key, value, time, weight)`` into one
    Z-set of ``(key, value)`` rows (times summed away, zeros dropped).

    >>> consolidate([(0, 0, 0, 1), (0, 0, 0, -1), (0, 1, 0, 1), (0, 1, 0, 1)])
    {(0, 1): 2}
    """
    out: dict = {}
    for key, value, _time, weight in entries:
        add_into(out, {(key, value): weight})
    return out
