"""Where the columnar operators start to win: one call of each operator of a
recursive stratum on a batch of ``n`` rows, on its row path and on its columnar
path, against state of ``--state`` rows (a child circuit's trace: half of it
from an earlier epoch, half from this one).

    python -m benchmarks.columnar_crossover              # n = 16 ... 16,384
    python -m benchmarks.columnar_crossover --state 200000

For each operator and ``n`` it prints the microseconds per call of each path
(the median of ``--repeat`` calls, CPU time) and their ratio; the crossover is
the least ``n`` from which the columnar path is the faster. The thresholds in
:mod:`engine.colbatch` are set from this table.

* ``join``: a delta of ``(x, y)`` rows joined on ``y`` with a trace of ``(y, z)``
  rows (about two matches per row), projected to ``(x, z)``; the trace is in
  sorted runs on both paths (as it is once a large batch went through it);
* ``join-dict``: the same, the row path reading a dict trace (one that no
  large batch went through yet), the columnar path turning it into runs;
* ``distinct``: Distinct Trace on a batch half new, half already in the trace;
* ``plus``: the sum of a columnar batch (a join's output, its rows not made)
  and a dict batch;

and of the root circuit's (:mod:`engine.operators.rootcols`):

* ``root-join``: the bulk load's join, ``a ⋈ b`` of two deltas of ``n`` rows
  (traces empty);
* ``root-join-runs``: a delta of ``n`` rows against a root trace of ``--state``
  rows in runs (an update after a large bulk load);
* ``semijoin``: ``n`` rows against ``n / 4`` distinct keys, traces empty (the
  bulk load of a negation);
* ``root-distinct``: Distinct Incremental on a batch half new, half in the
  state (``--state`` rows, packed runs on the columnar path, a dict on the
  row path).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from types import SimpleNamespace

from engine import colbatch
from engine.colbatch import ColBatch
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.operators.join import JoinNode, NestedJoinNode, TraceNode
from engine.operators.linear import PlusNode
from engine.operators.rootcols import SMALL_BATCH, keep_left
from engine.zset import EMPTY


class Given:
    """An upstream node whose output the benchmark sets."""

    kind, label, iteration_hook, may_hold_work = "given", "given", False, False

    def __init__(self):
        self.out = EMPTY
        self.inputs, self.reads = [], []


def place(nodes, nested: bool = True) -> None:
    fake = SimpleNamespace(nested=nested, node=None, parent=None)
    for node in nodes:
        node.circuit = fake
    for node in nodes:
        node.prepare()


def timed(call, repeat: int) -> float:
    """Median CPU microseconds of ``call()``."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1e6


def rows(n: int, rng: random.Random, keys: int) -> dict:
    return {(rng.randrange(1 << 30), rng.randrange(keys)): 1 for _ in range(n)}


def join_case(n: int, state: int, columnar: bool, repeat: int, dict_trace=False) -> float:
    rng = random.Random(1)
    left, right = Given(), Given()
    left_trace = TraceNode(left, ("cols", (1,)), True)
    right_trace = TraceNode(right, ("cols", (0,)), True)
    join = NestedJoinNode(left, right, left_trace, right_trace, ((0, 0), (1, 1)))
    place([left_trace, right_trace, join])
    keys = state // 2
    facts = {(rng.randrange(keys), rng.randrange(1 << 30)): 1 for _ in range(state)}
    half = dict(list(facts.items())[: state // 2])
    rest = dict(list(facts.items())[state // 2:])
    right_trace.trace.append_rows(half, 0)
    if not dict_trace or columnar:
        right_trace.columns_ready()
        left_trace.columns_ready()
    right_trace.trace.commit()
    left_trace.trace.commit()
    right_trace.trace.append_rows(rest, 0)
    delta = rows(n, rng, keys)
    left.out = ColBatch.from_rows(delta) if columnar else delta
    right.out = EMPTY
    return timed(lambda: join.evaluate(1), repeat)


def join_dict_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    return join_case(n, state, columnar, repeat, dict_trace=True)


def distinct_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    rng = random.Random(2)
    given = Given()
    node = DistinctTraceNode(given)
    place([node])
    old = rows(state, rng, 1 << 20)
    given.out = ColBatch.from_rows(old) if columnar else old
    node.evaluate(0)
    node.clock_stop(0, 0)
    node.clock_start(0, 1)
    new = rows(n // 2, rng, 1 << 20)
    new.update(dict(list(old.items())[: n - n // 2]))
    given.out = ColBatch.from_rows(new) if columnar else new

    def call():  # each call at a new iteration of the same epoch (the trace grows)
        call.i += 1
        node.evaluate(call.i)
    call.i = 0
    return timed(call, repeat)


def plus_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    rng = random.Random(3)
    a, b = Given(), Given()
    node = PlusNode([a, b])
    place([node])
    first = ColBatch.from_rows(rows(n, rng, 1 << 20))
    second = rows(n, rng, 1 << 20)

    def call():  # a join's columnar output (its rows not made yet) plus a dict batch
        a.out = ColBatch(first.columns, first.kinds, first.weights)
        b.out = second
        node.evaluate(0)
    return timed(call, repeat)


def root_join_case(n: int, state: int, columnar: bool, repeat: int, past: bool = False,
                   combine=((0, 0), (1, 1)), keys: int | None = None) -> float:
    rng = random.Random(4)
    left, right = Given(), Given()
    left_trace = TraceNode(left, ("cols", (1,)), False)
    right_trace = TraceNode(right, ("cols", (0,)), False)
    join = JoinNode(left, right, left_trace, right_trace, combine)
    place([left_trace, right_trace, join], nested=False)
    keys = keys or max(n // 2, 1)
    if past:
        keys = state // 2
        facts = {(rng.randrange(keys), rng.randrange(1 << 30)): 1 for _ in range(state)}
        right_trace.trace.append_rows(facts)
        right_trace.columns_ready()
        left_trace.columns_ready()
        right_trace.trace.commit()
        left_trace.trace.commit()
        right_trace.appended = right_trace.committed = state
        other = EMPTY
    elif combine is keep_left:  # the distinct keys of the other side
        other = {(k,): 1 for k in range(keys)}
    else:
        other = {(rng.randrange(keys), rng.randrange(1 << 30)): 1 for _ in range(n)}
    delta = rows(n, rng, keys)
    left.out = ColBatch.from_rows(delta) if columnar else delta
    right.out = ColBatch.from_rows(other) if columnar and other else other
    return timed(lambda: join.evaluate(0), repeat)


def root_join_runs_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    return root_join_case(n, state, columnar, repeat, past=True)


def semijoin_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    return root_join_case(n, state, columnar, repeat, combine=keep_left,
                          keys=max(n // 4, 1))


def root_distinct_case(n: int, state: int, columnar: bool, repeat: int) -> float:
    rng = random.Random(5)
    given = Given()
    node = DistinctNode(given)
    place([node], nested=False)
    old = rows(state, rng, 1 << 20)
    given.out = ColBatch.from_rows(old) if columnar else old
    node.evaluate(0)
    node.clock_stop(0, 0)
    new = rows(n // 2, rng, 1 << 20)
    new.update(dict(list(old.items())[: n - n // 2]))
    # small batches come as dicts (and meet the packed state row by row)
    given.out = ColBatch.from_rows(new) if columnar and n >= SMALL_BATCH else new
    return timed(lambda: node.evaluate(0), repeat)


CASES = {"join": join_case, "join-dict": join_dict_case, "distinct": distinct_case,
         "plus": plus_case, "root-join": root_join_case, "root-join-runs": root_join_runs_case,
         "semijoin": semijoin_case, "root-distinct": root_distinct_case}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", choices=sorted(CASES))
    args = parser.parse_args(argv)
    sizes = [16, 64, 256, 1024, 4096, 16384]
    print(f"one call per path, microseconds (median of {args.repeat}); state "
          f"{args.state:,} rows")
    print(f"{'operator':15}{'n':>8}{'rows µs':>12}{'columns µs':>12}{'columns/rows':>14}")
    for name, case in CASES.items():
        if args.only and name != args.only:
            continue
        crossover = None
        for n in sizes:
            with colbatch.columns_from(1 << 60):  # every batch on rows
                row = case(n, args.state, False, args.repeat)
            with colbatch.columns_from(0):        # every batch on columns
                col = case(n, args.state, True, args.repeat)
            if crossover is None and col < row:
                crossover = n
            print(f"{name:15}{n:>8,}{row:>12,.0f}{col:>12,.0f}{col / row:>14.2f}")
        print(f"{name:15}crossover: columns faster from n = "
              f"{crossover if crossover is not None else 'never (in these sizes)'}")


if __name__ == "__main__":
    main()
