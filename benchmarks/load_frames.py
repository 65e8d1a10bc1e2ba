"""Loading edges into a session: from a pandas DataFrame, from an Arrow table, and
row by row with ``insert(*rows)``.

    python -m benchmarks.load_frames                 # 10**6 edges
    python -m benchmarks.load_frames --edges 100000  # a quick look

The program declares ``edge(x: number, y: symbol)`` and derives
``out(x) :- edge(x, _).`` (so the circuit has a little work, the same in every
way of loading). For each way it prints the CPU seconds of the one
``session.insert`` call that loads every edge (a fresh session each time):

- ``DataFrame``: ``session.insert("edge", frame)``: columns checked a whole
  column at a time (:mod:`datalog.frames`);
- ``Arrow``: ``session.insert("edge", table)`` of a ``pyarrow.Table``;
- ``insert(*rows)``: ``session.insert("edge", *rows)`` with a list of Python
  tuples made beforehand (its making is not timed), each row checked on its own;
- ``insert(*itertuples)``: ``session.insert("edge", *frame.itertuples(index=False,
  name=None))``: the row-by-row way from a DataFrame, numpy scalars and all
  (making the tuples is timed: it is part of that way).

Each way runs in a forked child process so that one's memory does not slow the
next. The symbols are ``"n<k>"``, the numbers random below the edge count.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

PROGRAM = """
.decl edge(x: number, y: symbol)
.decl out(x: number)
out(x) :- edge(x, _).
"""


def frame(edges: int, seed: int = 1):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = rng.integers(0, edges, size=edges, dtype=np.int64)
    y = np.array([f"n{k}" for k in rng.integers(0, edges, size=edges)], dtype=object)
    return pd.DataFrame({"x": x, "y": y})


def load(way: str, data) -> tuple[float, int]:
    """(CPU seconds of the load, rows in ``out``) for one way of loading."""
    import datalog

    session = datalog.Program(PROGRAM).session()
    if way == "DataFrame":
        start = time.process_time()
        session.insert("edge", data)
    elif way == "Arrow":
        import pyarrow as pa

        table = pa.Table.from_pandas(data, preserve_index=False)
        start = time.process_time()
        session.insert("edge", table)
    elif way == "insert(*rows)":
        rows = list(zip(data["x"].tolist(), data["y"].tolist()))
        start = time.process_time()
        session.insert("edge", *rows)
    else:
        start = time.process_time()
        session.insert("edge", *data.itertuples(index=False, name=None))
    return time.process_time() - start, session.size("out")


def in_child(way: str, data) -> tuple[float, int]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        seconds, size = load(way, data)
        os.write(write, f"{seconds} {size}".encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    seconds, size = text.split()
    return float(seconds), int(size)


WAYS = ("DataFrame", "Arrow", "insert(*rows)", "insert(*itertuples)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    data = frame(args.edges)
    print(f"loading {args.edges:,} edges (x: number, y: symbol) in one insert")
    sizes = set()
    for way in WAYS:
        seconds, size = in_child(way, data)
        sizes.add(size)
        print(f"  {way:<22} {seconds:7.2f} s CPU   ({args.edges / seconds:,.0f} rows/s)")
    if len(sizes) != 1:
        sys.exit(f"the ways disagree on the size of `out`: {sorted(sizes)}")


if __name__ == "__main__":
    main()
