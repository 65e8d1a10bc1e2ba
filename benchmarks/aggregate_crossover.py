"""Where the Aggregate operator's columnar path starts to win: one evaluation
of a root Aggregate on a batch of ``n`` rows, on its row loop and on its
columnar path (:mod:`engine.operators.aggcols`), against a past of
``--state`` rows in a dict trace.

    python -m benchmarks.aggregate_crossover              # n = 16 ... 16,384
    python -m benchmarks.aggregate_crossover --state 0    # the bulk load

The rows are the compiler's tagged bag rows ``(key, 1, value)`` with
``--per-key`` values per key (half the batch's keys already in the past; in
a dict trace, or with ``--runs`` in sorted runs, as a large columnar bulk
load leaves it), and
the aggregate the compiler's weighted ``count`` and ``sum``; the batch comes
as a dict (``dict``: converted to columns first) or already in columns
(``cols``: a columnar upstream join). It prints the median CPU microseconds
per call of each path and their ratio; the crossover is the least ``n`` from
which the columnar path is faster. :data:`engine.colbatch.AGGREGATE_ROWS` and
``AGGREGATE_DICT_ROWS`` are set from this table.
"""

from __future__ import annotations

import argparse
import random

from benchmarks.columnar_crossover import Given, place, timed
from engine import colbatch
from engine.aggregates import Reduce
from engine.colbatch import ColBatch
from engine.operators.aggregate import AggregateNode
from engine.operators.join import TraceNode

AGGREGATES = {"count": Reduce("count", weighted=True, flag=1),
              "sum": Reduce("sum", 2, weighted=True, flag=1, modular=True)}


def setup(fn, n: int, state: int, per_key: int, columns: bool, runs: bool = False):
    """An Aggregate whose trace holds ``state`` rows committed, and its batch."""
    rng = random.Random(n)
    given = Given()
    trace = TraceNode(given, ("cols", (0,)), nested=False)
    node = AggregateNode(given, trace, fn)
    place([trace, node], nested=False)
    past_keys = max(1, state // per_key)
    if state:
        given.out = {(k, 1, v): 1 for k in range(past_keys) for v in range(per_key)}
        if runs:
            given.out = ColBatch.from_rows(given.out)
            trace.wants_columns = True
        node.evaluate(0)
        trace.clock_stop(0, 0)
        node.clock_stop(0, 0)
    keys = max(1, n // per_key)
    batch = {}
    for k in range(keys):   # half the keys old, half new
        key = rng.randrange(past_keys) if k % 2 and state else past_keys + k
        for v in range(per_key):
            batch[(key, 1, per_key + v + rng.randrange(1000))] = 1
    if columns:
        batch = ColBatch.from_rows(batch)
    return node, given, batch


def measure(fn, n: int, state: int, per_key: int, columns: bool, repeat: int, runs: bool):
    """``(row µs, columnar µs)`` of one evaluation."""
    out = []
    for threshold in (1 << 62, 0):
        node, given, batch = setup(fn, n, state, per_key, columns, runs)

        def call(node=node, given=given, batch=batch):
            given.out = batch
            node.evaluate(0)
        saved = colbatch.AGGREGATE_ROWS, colbatch.AGGREGATE_DICT_ROWS
        colbatch.AGGREGATE_ROWS = colbatch.AGGREGATE_DICT_ROWS = threshold
        try:
            out.append(timed(call, repeat))
        finally:
            colbatch.AGGREGATE_ROWS, colbatch.AGGREGATE_DICT_ROWS = saved
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.aggregate_crossover",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=int, default=50_000)
    parser.add_argument("--per-key", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="16,64,256,1024,4096,16384")
    parser.add_argument("--runs", action="store_true", help="the past in sorted runs")
    args = parser.parse_args(argv)
    print(f"µs per call (CPU, median of {args.repeat}); past {args.state:,} rows "
          f"({'runs' if args.runs else 'dicts'}), {args.per_key} values per key")
    print(f"{'aggregate':10} {'batch':6} {'n':>7} {'rows':>9} {'columns':>9} {'ratio':>6}")
    for name, fn in AGGREGATES.items():
        for columns in (False, True):
            for n in map(int, args.sizes.split(",")):
                rows, cols = measure(fn, n, args.state, args.per_key, columns, args.repeat,
                                     args.runs)
                print(f"{name:10} {'cols' if columns else 'dict':6} {n:>7,} {rows:>9,.0f} "
                      f"{cols:>9,.0f} {rows / cols:>6.2f}")


if __name__ == "__main__":
    main()
