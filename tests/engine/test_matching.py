"""The greedy matching operator against its naive twin: after every epoch of
random weighted batches (some of them dry runs, which must change nothing), the
integrated output equals the greedy matching of the integrated input's rows of
positive weight, computed from scratch."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import Circuit
from engine.operators.matching import MatchingNode
from engine.stream import Stream

ROWS = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 1))
KEYS = {
    "one key": [lambda r: r[0]],
    "two keys": [lambda r: r[0], lambda r: r[1]],
    "a pair and a key": [lambda r: (r[0], r[2]), lambda r: r[1]],
}


def naive(collection: dict, keys) -> set:
    """Least first; kept unless a kept row shares a key value."""
    taken = [set() for _ in keys]
    kept = set()
    for row in sorted(r for r, w in collection.items() if w > 0):
        values = [key(row) for key in keys]
        if any(v in seen for v, seen in zip(values, taken)):
            continue
        for v, seen in zip(values, taken):
            seen.add(v)
        kept.add(row)
    return kept


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(KEYS)),
       st.lists(st.tuples(st.dictionaries(ROWS, st.integers(-2, 2).filter(bool), max_size=6),
                          st.booleans()), min_size=1, max_size=10))
@example("two keys", [({(1, 1, 0): 1, (1, 2, 0): 1, (2, 2, 0): 1}, False),
                      ({(1, 1, 0): -1}, False), ({(0, 2, 0): 1}, True),
                      ({(0, 2, 0): 1}, False)])
def test_matching_equals_the_naive_twin(name, epochs):
    keys = KEYS[name]
    circuit = Circuit()
    source = circuit.source("s", arity=3)
    circuit.output("m", Stream(circuit, circuit.add(MatchingNode(source.node, keys))))
    collection: dict = {}
    output: dict = {}
    for batch, dry_run in epochs:
        delta = circuit.step({"s": batch}, dry_run=dry_run)["m"]
        after = dict(collection)
        for row, w in batch.items():
            after[row] = after.get(row, 0) + w
        expected = naive(after, keys)
        result = dict(output)
        for row, w in delta.items():
            result[row] = result.get(row, 0) + w
        assert {r for r, w in result.items() if w} == expected
        assert all(w == 1 for w in result.values() if w)
        if not dry_run:
            collection, output = after, result
