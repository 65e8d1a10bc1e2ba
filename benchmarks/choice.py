"""What ``choice-domain`` costs: a session's bulk load and one update, next to
the same program without the choice.

Two workloads, each on a random graph (seeded):

* ``tree``: the spanning tree of the Choice documentation, ``st(u, v) :-
  st(_, u), edge(u, v).`` with ``choice-domain v`` (recursion: round by round),
  against the same rule without it (every edge reachable from the start).
  The update retracts a tree edge and puts it back (two transactions).
* ``matching``: ``a(t, w) :- can(t, w).`` with one domain, ``choice-domain t``,
  and with two, ``choice-domain t, w`` (the greedy matching operator). The
  update retracts a chosen row and puts it back.

Prints one line per variant: load time, rows, median and max time of one
update transaction (over ``--updates`` pairs), and how many chosen rows one
retraction changed.

    python -m benchmarks.choice [--nodes 20000] [--edges 60000] [--updates 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

TREE = """
.decl edge(u: number, v: number)
.decl start(x: number)
.decl st(u: number, v: number) {choice}
st(-1, x) :- start(x).
st(u, v) :- st(_, u), edge(u, v).
"""

MATCHING = """
.decl can(t: number, w: number)
.decl a(t: number, w: number) {choice}
a(t, w) :- can(t, w).
"""


def measure(text: str, facts: dict, relation: str, updates: int, rng) -> dict:
    """Load ``facts`` in one transaction, then retract and re-insert a row of
    the first input whose derived row is in ``relation``, ``updates`` times."""
    import datalog

    session = datalog.Program(text).session()
    began = time.perf_counter()
    with session.transaction() as tx:
        for name, rows in facts.items():
            tx.insert(name, *rows)
    load = time.perf_counter() - began
    rows = sorted(session.query(relation))
    source, pool = next(iter(facts.items()))
    candidates = [r for r in rows if r in pool] or sorted(pool)
    times, changed = [], []
    for _ in range(updates):
        row = rng.choice(candidates)
        began = time.perf_counter()
        with session.transaction() as tx:
            tx.retract(source, row)
        changed.append(tx.delta.count(relation))
        middle = time.perf_counter()
        with session.transaction() as tx:
            tx.insert(source, row)
        times += [middle - began, time.perf_counter() - middle]
    return {"load": load, "rows": len(rows), "median": statistics.median(times),
            "max": max(times), "changed": statistics.median(changed), "most": max(changed)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--edges", type=int, default=60000)
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    edges = {(rng.randrange(args.nodes), rng.randrange(args.nodes))
             for _ in range(args.edges)}
    variants = [
        ("tree, no choice", TREE.format(choice=""), {"edge": edges, "start": {(0,)}}, "st"),
        ("tree, choice-domain v", TREE.format(choice="choice-domain v"),
         {"edge": edges, "start": {(0,)}}, "st"),
        ("matching, choice-domain t", MATCHING.format(choice="choice-domain t"),
         {"can": edges}, "a"),
        ("matching, choice-domain t, w", MATCHING.format(choice="choice-domain t, w"),
         {"can": edges}, "a"),
    ]
    print(f"{args.nodes} nodes, {len(edges)} edges; one update = one transaction")
    for name, text, facts, relation in variants:
        m = measure(text, facts, relation, args.updates, random.Random(2))
        print(f"{name:30s} load {m['load']:6.2f} s  {m['rows']:6d} rows  update median "
              f"{m['median'] * 1000:6.2f} ms, max {m['max'] * 1000:6.2f} ms  "
              f"(rows changed per retraction: median {m['changed']:g}, max {m['most']})")


if __name__ == "__main__":
    main()
