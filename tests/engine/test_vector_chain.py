"""Linear chains on columns (engine.operators.linear.ColumnChain) against the
same chain's fused row loop, on random batches: the programs' prefix on the
columns, the stages without one per row, and a batch the columns cannot
compute (a division by zero) through the row loop with its error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Circuit, colbatch
from engine.colbatch import ColBatch, columns_from
from engine.operators.linear import ColumnChain, compile_chain
from engine.vector import Col, Lit, Op, Program

batches = st.dictionaries(st.tuples(st.integers(-4, 4), st.integers(-4, 4)),
                          st.integers(-2, 2).filter(bool), min_size=1, max_size=30)

KEEP = ("filter", lambda r: r[0] != r[1])
KEEP_ON_COLUMNS = Program((("filter", Op("ne", (Col(0), Col(1)), "i")),))
SCALE = ("map", lambda r: (r[0] * 3 - r[1], r[1] // 2))
SCALE_ON_COLUMNS = Program((("select", (
    Op("sub", (Op("mul", (Col(0), Lit(3, "i")), "i"), Col(1)), "i"),
    # floor division of Python on the row side, so the columns use a
    # shift (the same for every int): r[1] // 2 == r[1] bshr 1
    Op("bshr", (Col(1), Lit(1, "i")), "i"))),))
CHAINS = {
    "all on columns": ([KEEP, SCALE, ("negate", None), ("project", (1, 0))],
                       [KEEP_ON_COLUMNS, SCALE_ON_COLUMNS, None, None]),
    "a stage without a program": ([KEEP, ("map", lambda r: (r[0] + r[1],)), ("project", (0,))],
                                  [KEEP_ON_COLUMNS, None, None]),
    "none": ([KEEP, ("project", (0,))], [None, None]),
}


@settings(max_examples=150, deadline=None)
@given(batches, st.sampled_from(sorted(CHAINS)))
def test_chain_on_columns_equals_the_row_loop(batch, name):
    stages, vectors = CHAINS[name]
    expected = compile_chain(stages)(batch)
    columns = ColBatch.from_rows(batch)
    before = dict(colbatch.COUNTS)
    found = ColumnChain(stages, vectors)(columns)
    assert dict(found.items()) == expected
    kept = sum(1 for row in batch if row[0] != row[1])
    per_row = {"all on columns": 0, "a stage without a program": kept, "none": len(batch)}
    assert colbatch.COUNTS["row_stages"] - before["row_stages"] == per_row[name]


def test_a_division_by_zero_runs_the_batch_per_row_and_raises_its_error():
    def divide(row):
        return (row[0] // row[1],)

    on_columns = Program((("select", (Op("div", (Col(0), Col(1)), "i"),)),))
    chain = ColumnChain([("map", divide)], [on_columns])
    assert dict(chain(ColBatch.from_rows({(6, 3): 1, (8, 2): 1}))) == {(2,): 1, (4,): 1}
    before = colbatch.COUNTS["row_batches"]
    with pytest.raises(ZeroDivisionError):
        chain(ColBatch.from_rows({(6, 3): 1, (1, 0): 1}))
    assert colbatch.COUNTS["row_batches"] == before + 1


def test_a_linear_node_keeps_a_large_columnar_batch_in_columns():
    """Through the builder: a map given a program, its input columnar (as a
    recursive stratum's output is), at the default threshold or forced; a
    smaller batch takes the row loop."""
    for threshold, size, columnar in ((None, colbatch.THRESHOLD, True), (0, 5, True),
                                      (None, 5, False)):
        with columns_from(threshold):
            c = Circuit()
            out = c.source("edge", arity=2).map(
                lambda r: (r[1], r[0]), vector=Program((("select", (Col(1), Col(0))),)))
            c.output("swapped", out)
            c.finalize()
            node = out.node
            node.inputs[0].out = ColBatch.from_rows({(i, i + 1): 1 for i in range(size)})
            node.evaluate(0)
            assert (type(node.out) is ColBatch) == columnar
            assert dict(node.out) == {(i + 1, i): 1 for i in range(size)}
