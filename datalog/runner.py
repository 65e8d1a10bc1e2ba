"""``datalog run``: evaluate a program over fact files, Soufflé style.

:func:`run_file` loads the program, reads every ``.input`` relation from the fact
directory, evaluates, and returns what to write -- output files (path -> text) and
the text for standard output (``IO=stdout`` relations, ``-D -``, ``.printsize``
lines) -- without writing anything, so a failure leaves no partial output.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "p.dl"), "w") as f:
...     _ = f.write('.decl e(x: number)\\n.input e\\n.decl p(x: number)\\n'
...                 '.output p\\n.printsize p\\np(x + 1) :- e(x).\\n')
>>> with open(os.path.join(d, "e.facts"), "w") as f:
...     _ = f.write("1\\n2\\n")
>>> result = run_file(os.path.join(d, "p.dl"), d, d)
>>> [os.path.basename(p) for p in result.files], result.files[os.path.join(d, "p.csv")]
(['p.csv'], '2\\n3\\n')
>>> result.stdout
'p\\t2\\n'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from datalog.api import Program
from datalog.io import check_io, format_rows, format_stdout, is_stdout, output_path


@dataclass
class RunResult:
    """What a run produced: ``files`` (path -> text, in directive order) and
    ``stdout`` (text to print)."""

    files: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    verified: str | None = None     # the --verify report
    failed: bool = False            # --verify found a difference


def run_file(path: str, fact_dir: str = ".", output_dir: str = ".",
             max_iterations: int | None = None,
             spill_threshold: int | None = None,
             verify: str | None = None) -> RunResult:
    """Evaluate the program at ``path``; ``output_dir`` ``"-"`` sends every output
    relation to standard output; ``spill_threshold`` moves traces larger than
    that many rows to Spark. ``verify``: a transaction file
    (:mod:`datalog.verify`) applied after the evaluation, one transaction at a
    time, each checked against a from-scratch evaluation; the outputs are those
    after the last transaction, and none when a check fails."""
    program = Program.from_file(path)
    session = program.session(fact_dir=fact_dir, max_iterations=max_iterations,
                              spill_threshold=spill_threshold)
    plan = program.plan
    result = RunResult()
    if verify is not None:
        from datalog.verify import describe, run_transactions

        verified = run_transactions(session, verify)
        result.verified = describe(verified, verify)
        if verified.failed is not None:
            result.failed = True
            return result
    stdout: list[str] = []
    for io in plan.outputs:
        check_io(io)
        relation = plan.relations[io.relation]
        rows = session.query(io.relation)
        if output_dir == "-" or is_stdout(io):
            stdout.append(format_stdout(rows, relation, io))
        else:
            result.files[output_path(io, os.fspath(output_dir))] = \
                format_rows(rows, relation, io)
    for io in plan.printsize:
        stdout.append(f"{io.relation}\t{session.size(io.relation)}\n")
    result.stdout = "".join(stdout)
    return result
