"""What explaining costs: the time and memory of one ``session.explain`` /
``session.why_not`` question on the benchmark workloads, next to the batch
evaluation of the same session.

Explanations record nothing while transactions run (see ``datalog/explain.py``),
so batch time and session memory are those of a session without them: the
cost is paid per question. For each workload of the suite it evaluates the
program once (timed), then explains ``--questions`` tuples of the first output
relation picked at random (median and max time, and the height of the
deepest), asks why not of one absent tuple, and measures the peak memory one
explanation allocates (tracemalloc, in a separate run of the question).

    python -m benchmarks.explain [--suite quick|tiny|full] [--questions 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc


def question(relation: str, row: tuple) -> str:
    from datalog.syntax.render import format_fact

    return format_fact(relation, row)


def measure(workload, questions: int) -> dict:
    import datalog

    program = datalog.Program(workload.program)
    began = time.perf_counter()
    session = program.session()
    with session.transaction() as tx:
        for relation, rows in workload.facts.items():
            tx.insert(relation, *rows)
    batch = time.perf_counter() - began
    relation = workload.outputs[0]
    rows = sorted(session.query(relation))
    picked = random.Random(5).sample(rows, min(questions, len(rows)))
    times, heights = [], []
    for row in picked:
        began = time.perf_counter()
        derivation = session.explain(question(relation, row))
        times.append(time.perf_counter() - began)
        heights.append(derivation.height)
    absent = next(r for r in ((-1,) * len(rows[0]), (10**9,) * len(rows[0]))
                  if r not in session.query(relation))
    began = time.perf_counter()
    session.why_not(question(relation, absent))
    why_not = time.perf_counter() - began
    tracemalloc.start()
    session.explain(question(relation, picked[0]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"batch": batch, "tuples": sum(len(session.query(n)) for n in workload.outputs),
            "median": statistics.median(times), "max": max(times),
            "height": max(heights), "why_not": why_not, "peak": peak}


def main(argv=None) -> None:
    from benchmarks.workloads import suite

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="quick", choices=("tiny", "quick", "full"))
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'workload':<22}{'derived':>9}{'batch s':>9}{'explain median s':>18}"
          f"{'max s':>8}{'height':>8}{'why_not s':>11}{'peak MB':>9}")
    for workload in suite(args.suite):
        r = measure(workload, args.questions)
        print(f"{workload.name:<22}{r['tuples']:>9}{r['batch']:>9.3f}{r['median']:>18.3f}"
              f"{r['max']:>8.3f}{r['height']:>8}{r['why_not']:>11.3f}"
              f"{r['peak'] / 1e6:>9.1f}")


if __name__ == "__main__":
    main()
