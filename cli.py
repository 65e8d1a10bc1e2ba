"""The `datalog` command: a thin click application over the library.

Each command parses its options, calls `datalog` (the public API), and formats
what it gets back. Exit codes: 0 ok, 1 a program or data error, 2 usage.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from datalog.version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="datalog")
def main() -> None:
    """An incremental Datalog engine for the Soufflé dialect."""


def fail(error) -> NoReturn:
    """Print a DatalogError's text on standard error and exit 1."""
    click.echo(str(error), err=True)
    sys.exit(1)


@main.command()
@click.argument("program", required=False,
                type=click.Path(exists=True, dir_okay=False))
@click.option("-F", "--fact-dir", type=click.Path(exists=True, file_okay=False),
              help="Read the .input relations from DIR/<relation>.facts.")
@click.option("--spill-threshold", type=click.IntRange(min=0), metavar="N",
              help="Move join traces larger than N rows to Spark.")
def repl(program: str | None, fact_dir: str | None, spill_threshold: int | None) -> None:
    """Assert and retract facts, ask queries, see what changed.

    Reads statements from a terminal (with history and completion) or from
    standard input; `:help` lists the commands. Without a terminal the exit
    status is 1 if any statement failed.
    """
    from datalog.repl import run

    options = {} if spill_threshold is None else {"spill_threshold": spill_threshold}
    sys.exit(run(program, fact_dir, session_options=options))


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="How to print the diagnostics.")
def check(program: str, fmt: str) -> None:
    """Check PROGRAM: syntax, declarations, types, range restriction, strata.

    Prints every error and warning (with `--format json`, one JSON object for
    tools). Exits 0 when there is no error (warnings allowed), 1 otherwise.
    """
    import json

    from datalog.frontend import diagnose_file

    diagnostics, sources = diagnose_file(program)
    n_errors = sum(d.severity == "error" for d in diagnostics)
    n_warnings = len(diagnostics) - n_errors
    if fmt == "json":
        click.echo(json.dumps({"program": program, "errors": n_errors,
                               "warnings": n_warnings,
                               "diagnostics": [d.to_json() for d in diagnostics]}, indent=2))
    else:
        for d in diagnostics:
            click.echo(d.format(sources))
        summary = (f"{n_errors} error{'s' if n_errors != 1 else ''}, "
                   f"{n_warnings} warning{'s' if n_warnings != 1 else ''}")
        click.echo(f"{program}: {summary}" if diagnostics else f"{program}: ok", err=True)
    sys.exit(1 if n_errors else 0)


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--circuit", is_flag=True,
              help="Print the compiled circuit instead (child circuits as clusters).")
def graph(program: str, circuit: bool) -> None:
    """Print PROGRAM's precedence graph as DOT, its strata as clusters.

    An edge q -> p means a rule for p reads q; negation is dashed, aggregation
    dotted, and red marks an edge that makes the program unstratifiable.
    Render with e.g. `datalog graph prog.dl | dot -Tsvg > prog.svg`.
    """
    from datalog.dot import precedence_dot
    from datalog.errors import DatalogError
    from datalog.parser import parse_file

    if circuit:
        from datalog.api import Program
        from datalog.compile import compile_plan

        try:
            compiled = compile_plan(Program.from_file(program).plan)
        except DatalogError as error:
            fail(error)
        click.echo(compiled.circuit.to_dot())
        return
    try:
        parsed = parse_file(program)
    except DatalogError as error:
        fail(error)
    click.echo(precedence_dot(parsed))


def _spark_conf(ctx, param, pairs) -> dict:
    from engine.spark.session import parse_conf

    try:
        return parse_conf(pairs)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("-F", "--fact-dir", default=".", show_default=True, metavar="DIR",
              help="Read each .input relation r from DIR/r.facts.")
@click.option("-D", "--output-dir", default=".", show_default=True, metavar="DIR|-",
              help="Write each .output relation r to DIR/r.csv; `-` prints them.")
@click.option("--max-iterations", type=click.IntRange(min=1), metavar="N",
              help="Fail if a recursive stratum needs more than N iterations.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True, help="Evaluate in this process, or on Apache Spark.")
@click.option("--master", metavar="URL",
              help="Spark master (with --engine spark): local[*] (default), "
                   "spark://host:7077, yarn, k8s://..., or sc://host for Spark Connect.")
@click.option("--output-format", type=click.Choice(["csv", "parquet"]), default="csv",
              show_default=True, help="Output files (parquet needs --engine spark).")
@click.option("--spill-threshold", type=click.IntRange(min=0), metavar="N",
              help="Move join traces larger than N rows to Spark (local engine).")
@click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              callback=_spark_conf, help="A Spark setting (repeatable; with --engine "
              "spark or --spill-threshold).")
@click.option("-v", "--verbose", is_flag=True,
              help="Print the Spark master URL and web UI address on standard error.")
def run(program: str, fact_dir: str, output_dir: str, max_iterations: int | None,
        engine: str, master: str | None, output_format: str,
        spill_threshold: int | None, spark_conf: dict, verbose: bool) -> None:
    """Evaluate PROGRAM over fact files and write its outputs (Soufflé style).

    Output files are written only when the whole evaluation succeeded. Exit
    status: 0 ok, 1 a program or data error, 2 a usage error.
    """
    from datalog.errors import DatalogError
    from datalog.io import write_files
    from datalog.runner import run_file

    if engine == "spark":
        if spill_threshold is not None:
            raise click.UsageError("--spill-threshold is for the local engine (with "
                                   "--engine spark everything runs on Spark)")
        _run_on_spark(program, fact_dir, output_dir, max_iterations, master, output_format,
                      spark_conf, verbose)
        return
    if output_format != "csv":
        raise click.UsageError("--output-format parquet needs --engine spark")
    if spill_threshold is None and (master is not None or spark_conf):
        raise click.UsageError("--master and --spark-conf need --engine spark or "
                               "--spill-threshold")
    if spill_threshold is not None:
        from engine.spark.session import configure

        configure(master, spark_conf, verbose)
    try:
        with _progress(f"evaluating {program}"):
            result = run_file(program, fact_dir, output_dir, max_iterations,
                              spill_threshold=spill_threshold)
        write_files(result.files)
    except DatalogError as error:
        fail(error)
    click.echo(result.stdout, nl=False)


def _run_on_spark(program: str, fact_dir: str, output_dir: str, max_iterations: int | None,
                  master: str | None, output_format: str, spark_conf: dict,
                  verbose: bool) -> None:
    """`datalog run --engine spark`: the same plan, evaluated and written by Spark."""
    from datalog.api import Program
    from datalog.errors import DatalogError
    from engine.errors import EngineError
    from engine.spark.runner import run_on_spark

    try:
        plan = Program.from_file(program).plan
        with _progress(f"evaluating {program} on Spark"):
            result = run_on_spark(plan, fact_dir, output_dir, master=master,
                                  output_format=output_format,
                                  max_iterations=max_iterations, conf=spark_conf,
                                  verbose=verbose)
    except (DatalogError, EngineError) as error:
        fail(error)
    click.echo(result.stdout, nl=False)


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--code", is_flag=True, help="Also print the generated rule functions.")
def plan(program: str, code: bool) -> None:
    """Print how PROGRAM is evaluated: each rule's join order, keys and filters
    (the relational plan), then the circuit's nodes with the rule each serves."""
    from datalog.api import Program
    from datalog.compile import compile_plan
    from datalog.errors import DatalogError

    try:
        compiled = compile_plan(Program.from_file(program).plan)
    except DatalogError as error:
        fail(error)
    click.echo(compiled.describe(code=code))


class _progress:
    """An elapsed-time indicator on standard error for work longer than ~2 s,
    only when standard error is a terminal."""

    def __init__(self, what: str, delay: float = 2.0):
        self.what, self.delay = what, delay

    def __enter__(self):
        import threading
        import time

        self.start = time.monotonic()
        self.stop = threading.Event()
        self.shown = False
        self.thread = None
        if sys.stderr.isatty():
            self.thread = threading.Thread(target=self._tick, daemon=True)
            self.thread.start()
        return self

    def _tick(self) -> None:
        import time

        if self.stop.wait(self.delay):
            return
        while not self.stop.is_set():
            sys.stderr.write(f"\r{self.what}: {time.monotonic() - self.start:.0f} s")
            sys.stderr.flush()
            self.shown = True
            self.stop.wait(0.5)

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


if __name__ == "__main__":
    main()
