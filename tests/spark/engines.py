"""One way to run a program file per engine, so that every case below runs
once per engine and the two must agree byte for byte.

``run(engine, program, facts, out, spark)`` evaluates the program at
``program`` over the fact directory ``facts``, writes its outputs under ``out``
and returns what a user sees: ``{file name: text}`` of the written outputs and
the text printed on standard output.
"""

from __future__ import annotations

import os

ENGINES = ("local", "spark")


def run(engine: str, program: str, facts: str, out: str, spark=None,
        **options) -> tuple[dict[str, str], str]:
    import datalog

    if engine == "spark":
        options["spark"] = spark
    stdout = datalog.run(program, facts, out, engine=engine, **options).stdout
    return read_outputs(out), stdout


def read_outputs(out: str) -> dict[str, str]:
    """The text of every file directly in ``out`` (hidden files excluded)."""
    if not os.path.isdir(out):
        return {}
    files = {}
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name)
        if os.path.isfile(path) and not name.startswith("."):
            with open(path, encoding="utf-8", newline="") as handle:
                files[name] = handle.read()
    return files
