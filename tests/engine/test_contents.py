"""``Circuit.contents``: an output's rows read from the trace that keeps them.

After every step (committed, failed or a dry run) the contents of a distinct in
the root, of one exported from a child circuit and of an output that keeps its
collection must equal the integral of the output's differences so far, as a
set; an output read straight off a source, or any output that keeps nothing, has
none (whoever gives the batches holds them).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Circuit, EngineError, OperatorError
from engine.contents import Contents
from engine.cursor import RowCursor

edges = st.tuples(st.integers(0, 5), st.integers(0, 5))
# a transaction: edges inserted (True) or retracted (False), a batch of `raw`
# (any weights: its rows may weigh less than nothing), how it ends
steps = st.lists(st.tuples(st.dictionaries(edges, st.booleans(), max_size=6),
                           st.dictionaries(st.tuples(st.integers(0, 5)),
                                           st.integers(-2, 2).filter(bool), max_size=3),
                           st.sampled_from(["commit", "dry run", "fail"])),
                 min_size=1, max_size=8)


def closure_circuit():
    """``ends(y) :- edge(_, y) ; raw(y).`` in the root and ``path`` (transitive
    closure) in a child; ``boom`` fails the step whenever it is given a row."""
    circuit = Circuit()
    edge = circuit.source("edge", arity=2)
    raw = circuit.source("raw", arity=1)
    boom = circuit.source("boom", arity=1)
    circuit.output("ends", edge.map(lambda r: (r[1],)).plus(raw).distinct())
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)), lambda k, p, ed: (p[0], ed[1]))
        new = e.plus(step).distinct()
        fb.connect(new)
        circuit.output("path", child.export(new))
    circuit.output("edge", edge)
    circuit.output("swapped", edge.map(lambda r: (r[1], r[0])), keep=True)
    circuit.output("starts", edge.map(lambda r: (r[0],)))      # kept nowhere
    circuit.output("boom", boom.map(lambda r: (1 // 0,)))
    return circuit


@settings(max_examples=60, deadline=None)
@given(steps)
def test_contents_are_the_integral_of_the_output(transactions):
    circuit = closure_circuit()
    assert circuit.contents("edge") is None and circuit.contents("starts") is None
    kept = {"ends": {}, "path": {}, "swapped": {}}
    present: set = set()
    for changes, raw, end in transactions:
        batch = {row: 1 if insert else -1 for row, insert in changes.items()
                 if insert != (row in present)}
        if end == "fail":
            with pytest.raises(OperatorError):
                circuit.step({"edge": batch, "raw": raw, "boom": {(0,): 1}})
        else:
            out = circuit.step({"edge": batch, "raw": raw}, dry_run=end == "dry run")
            if end == "commit":
                for row, weight in batch.items():
                    (present.add if weight > 0 else present.discard)(row)
                for name, total in kept.items():
                    for row, weight in out[name].items():
                        total[row] = total.get(row, 0) + weight
        for name, total in kept.items():
            contents = circuit.contents(name)
            expected = {row for row, weight in total.items() if weight}
            assert set(total.values()) <= {0, 1}, (name, total)
            assert isinstance(contents, Contents)
            assert set(contents) == expected and len(contents) == len(expected)
            everything = [(x,) for x in range(7)] + [(x, y) for x in range(7) for y in range(7)]
            for row in everything:
                assert (row in contents) == (row in expected)
            assert contents == expected
            cursor = contents._cursor()    # the cursor API's own reading agrees
            assert set(RowCursor.positive(cursor)) == expected


def test_contents_is_live_and_refuses_unknown_outputs():
    circuit = closure_circuit()
    path = circuit.contents("path")
    assert not path and list(path) == []
    circuit.step({"edge": {(1, 2): 1, (2, 3): 1}})
    assert sorted(path) == [(1, 2), (1, 3), (2, 3)]
    assert path - {(1, 2)} == frozenset({(1, 3), (2, 3)})
    assert [1] not in path      # an unhashable probe is in no set
    circuit.step({"edge": {(2, 3): -1}})
    assert sorted(path) == [(1, 2)]
    with pytest.raises(EngineError, match="no output named `nope`"):
        circuit.contents("nope")
