"""Where a linear chain on columns (``engine.vector``) starts to win: one call
of a linear node on a batch of ``n`` rows, as a dict through its fused row loop
and as a ColBatch (rows not made) through its programs.

    python -m benchmarks.linear_crossover

The chain is a rule's stage ``far(x, (y - x) / 7) :- reach(x, y), x != y,
y % 3 = 1.`` (a filter of two comparisons, then a head with arithmetic), as the
circuit backend compiles it; it prints microseconds per call of each path (the
median of ``--repeat`` calls, CPU time), their ratio and the crossover. The
linear node's columnar path starts at ``engine.colbatch.THRESHOLD`` rows: above
the crossover, since a columnar batch below it meets row operators further on.
"""

from __future__ import annotations

import argparse
import random

import datalog
from benchmarks.columnar_crossover import Given, place, timed
from datalog.backends.circuit.compile import compile_plan
from engine import colbatch
from engine.colbatch import ColBatch
from engine.operators.linear import LinearNode

RULE = """.decl reach(x: number, y: number)
.decl far(x: number, d: number)
far(x, (y - x) / 7) :- reach(x, y), x != y, y % 3 = 1.
"""


def stage() -> LinearNode:
    """The compiled stage of ``RULE``'s body (its one linear node)."""
    circuit = compile_plan(datalog.Program(RULE).plan).circuit
    for node in circuit.nodes:
        if isinstance(node, LinearNode) and node.label.startswith("far("):
            return node
    raise LookupError("the rule's stage was not found")


def linear_case(n: int, columnar: bool, repeat: int) -> float:
    rng = random.Random(4)
    compiled = stage()
    given = Given()
    node = LinearNode(given, compiled.stages, None, "far", compiled.vectors)
    place([node])
    batch = {(rng.randrange(1 << 20), rng.randrange(1 << 20)): 1 for _ in range(n)}
    columns = ColBatch.from_rows(batch)

    def call():
        given.out = ColBatch(columns.columns, columns.kinds, columns.weights) \
            if columnar else batch
        node.evaluate(0)
    return timed(call, repeat)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    print(f"one call of the stage per path, microseconds (median of {args.repeat})")
    print(f"{'n':>8}{'rows µs':>12}{'columns µs':>12}{'columns/rows':>14}")
    crossover = None
    for n in [16, 64, 256, 1024, 4096, 16384, 65536]:
        with colbatch.columns_from(1 << 60):
            row = linear_case(n, False, args.repeat)
        with colbatch.columns_from(0):
            col = linear_case(n, True, args.repeat)
        if crossover is None and col < row:
            crossover = n
        print(f"{n:>8,}{row:>12,.0f}{col:>12,.0f}{col / row:>14.2f}")
    print(f"crossover: columns faster from n = "
          f"{crossover if crossover is not None else 'never (in these sizes)'}")


if __name__ == "__main__":
    main()
