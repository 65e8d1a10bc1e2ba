"""The `datalog` command: a thin click application over the library.

Each command parses its options, calls the public API (`datalog.api`) or the REPL
(`datalog.repl`), and formats what it gets back; it imports nothing else. Exit
codes: 0 ok, 1 a program or data error, 2 usage.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from datalog.version import __version__


class _Commands(click.Group):
    """The command group: `datalog prog.dl` gets a hint instead of "no such
    command", and Ctrl-C ends any command with one line and status 130."""

    def resolve_command(self, ctx, args):
        if args and args[0].endswith(".dl") and args[0] not in self.commands:
            raise click.UsageError(f"`{args[0]}` is a program, not a command: run it with "
                                   f"`datalog run {args[0]}` (or `datalog repl {args[0]}`)")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("datalog: interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="datalog")
def main() -> None:
    """An incremental Datalog engine for the Soufflé dialect."""


def _macros(ctx, param, values: tuple[str, ...]) -> dict[str, str]:
    """The words of every ``-M`` value: ``NAME=VALUE`` or ``NAME`` (then ``1``, as
    the C preprocessor's ``-D NAME``)."""
    import re

    macros = {}
    for word in " ".join(values).split():
        name, _, value = word.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise click.BadParameter(f"`{word}` is not NAME or NAME=VALUE", ctx, param)
        macros[name] = value if "=" in word else "1"
    return macros


def _preprocessor(command):
    """The preprocessor's options, Soufflé's ``-M`` and ``-I``."""
    command = click.option("-I", "--include-dir", "include_dirs", multiple=True,
                           type=click.Path(exists=True, file_okay=False), metavar="DIR",
                           help="Look for #include files in DIR after the including "
                                "file's folder (repeatable).")(command)
    return click.option("-M", "--macro", "macros", multiple=True, callback=_macros,
                        metavar='"NAME[=VALUE] ..."',
                        help="Define macros for the preprocessor (NAME alone is 1; "
                             "repeatable).")(command)


def _load_functors(ctx, param, path):
    if path is None:
        return None
    from datalog import DatalogError
    from datalog.functors import load_module

    try:
        return load_module(path)
    except DatalogError as error:
        fail(error)


def _functors(command):
    """The --functors option: the program's user-defined functors, by name, from
    the callables of a Python file."""
    return click.option("--functors", "functors", metavar="MODULE.py", default=None,
                        type=click.Path(exists=True, dir_okay=False), callback=_load_functors,
                        help="Bind each `.functor f(..)` of the program to the callable "
                             "named f in this Python file.")(command)


def _memory_limit(command):
    """``--memory-limit SIZE``: a transaction that makes the process's resident
    memory pass SIZE fails and is rolled back."""
    return click.option("--memory-limit", metavar="SIZE",
                        help="Fail a transaction (rolled back; `run` writes nothing) if "
                             "the process's resident memory passes SIZE (512M, 2G) while "
                             "it evaluates (local engine).")(command)


def _sandbox(command):
    """``--sandbox DIR``: no file outside DIR is read or written."""
    return click.option("--sandbox", multiple=True, metavar="DIR",
                        type=click.Path(exists=True, file_okay=False),
                        help="Read and write files only inside DIR (repeatable): "
                             "#include, fact files, outputs, :load, :save.")(command)


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
@click.option("--spill-cache", type=click.IntRange(min=0), metavar="N",
              help="With --spill-threshold: keep up to N rows of the spilled traces "
                   "that joins read cached in Python (default 1000000).")
@click.option("--store", metavar="DIR",
              help="Keep the session in DIR: every commit is logged (fsync'd) "
                   "before it returns; starting again replays it.")
@click.option("--migrate", is_flag=True,
              help="With --store: carry a store written by another program over to "
                   "this one.")
@_memory_limit
@_sandbox
@_preprocessor
@_functors
def repl(program: str | None, fact_dir: str | None, spill_threshold: int | None,
         spill_cache: int | None, store: str | None, migrate: bool,
         memory_limit: str | None, sandbox: tuple[str, ...],
         macros: dict[str, str], include_dirs: tuple[str, ...],
         functors: dict | None) -> None:
    """Assert and retract facts, ask queries, see what changed.

    Reads statements from a terminal (with history and completion) or from
    standard input; `:help` lists the commands. Without a terminal the exit
    status is 1 if any statement failed.
    """
    from datalog.repl import run

    if migrate and store is None:
        raise click.UsageError("--migrate needs --store DIR")
    if spill_cache is not None and spill_threshold is None:
        raise click.UsageError("--spill-cache needs --spill-threshold")
    options = {} if spill_threshold is None else {"spill_threshold": spill_threshold}
    if spill_cache is not None:
        options["spill_cache"] = spill_cache
    if store is not None:
        options.update(store=store, migrate=migrate)
    if memory_limit is not None:
        options["memory_limit"] = memory_limit
    program_options = {"macros": macros, "include_dirs": include_dirs, "functors": functors}
    if sandbox:
        program_options["sandbox"] = sandbox
    sys.exit(run(program, fact_dir, session_options=options, program_options=program_options))


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="How to print the diagnostics.")
@click.option("-w", "--no-warn", is_flag=True, help="Do not report warnings.")
@_preprocessor
@_functors
def check(program: str, fmt: str, no_warn: bool, macros: dict[str, str],
          include_dirs: tuple[str, ...], functors: dict | None) -> None:
    """Check PROGRAM: syntax, declarations, types, range restriction, strata.

    Prints every error and warning (with `--format json`, one JSON object for
    tools). Exits 0 when there is no error (warnings allowed), 1 otherwise.
    """
    import json

    from datalog.api import diagnose_file

    diagnostics, sources = diagnose_file(program, macros=macros, include_dirs=include_dirs,
                                         functors=functors)
    if no_warn:
        diagnostics = [d for d in diagnostics if d.severity == "error"]
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
@_preprocessor
@_functors
def graph(program: str, circuit: bool, macros: dict[str, str],
          include_dirs: tuple[str, ...], functors: dict | None) -> None:
    """Print PROGRAM's precedence graph as DOT, its strata as clusters.

    An edge q -> p means a rule for p reads q; negation is dashed, aggregation
    dotted, and red marks an edge that makes the program unstratifiable.
    Render with e.g. `datalog graph prog.dl | dot -Tsvg > prog.svg`.
    """
    from datalog import DatalogError
    from datalog.api import Program, precedence_dot

    try:
        options = {"macros": macros, "include_dirs": include_dirs}
        click.echo(Program.from_file(program, functors=functors, **options).circuit_dot()
                   if circuit
                   else precedence_dot(program, **options))
    except DatalogError as error:
        fail(error)


SHOWS = ("transformed-datalog", "plan", "circuit")


def _jobs(ctx, param, value: str | None) -> int | None:
    """``-j N`` (a positive count) or ``-j auto`` (0: every core), as Soufflé."""
    if value is None:
        return None
    if value == "auto":
        return 0
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise click.BadParameter(f"`{value}` is not a positive number or `auto`", ctx, param)


def _spark_conf(ctx, param, pairs) -> dict:
    from datalog.api import parse_spark_conf

    try:
        return parse_spark_conf(pairs)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("-F", "--fact-dir", default=".", show_default=True, metavar="DIR",
              help="Read each .input relation r from DIR/r.facts.")
@click.option("-D", "--output-dir", default=".", show_default=True, metavar="DIR|-",
              help="Write each .output relation r to DIR/r.csv; `-` prints them.")
@click.option("--max-iterations", type=click.IntRange(min=1), metavar="N",
              help="Fail if a recursive stratum needs more than N iterations (no "
                   "limit by default, as in Soufflé: this or Ctrl-C stops a program "
                   "that does not terminate).")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True, help="Evaluate in this process, or on Apache Spark.")
@click.option("--master", metavar="URL",
              help="Spark master (with --engine spark): local[*] (default), "
                   "spark://host:7077, yarn, k8s://..., or sc://host for Spark Connect.")
@click.option("--output-format", type=click.Choice(["csv", "parquet"]), default="csv",
              show_default=True, help="Output files (parquet needs --engine spark).")
@click.option("--spill-threshold", type=click.IntRange(min=0), metavar="N",
              help="Move join traces larger than N rows to Spark (local engine).")
@click.option("--verify", "transactions", metavar="TX_FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="Then apply TX_FILE's transactions (`+edge(1, 2).`, `-edge(1, 2).`, "
                   "`:begin`/`:commit` blocks) one by one, checking after each that "
                   "every relation equals its from-scratch evaluation (local engine).")
@click.option("-w", "--no-warn", is_flag=True,
              help="Do not print the program's warnings on standard error.")
@click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              callback=_spark_conf, help="A Spark setting (repeatable; with --engine "
              "spark or --spill-threshold).")
@click.option("-v", "--verbose", is_flag=True,
              help="Print the Spark master URL and web UI address on standard error.")
@click.option("-p", "--profile", metavar="FILE", type=click.Path(dir_okay=False),
              help="Record time, tuples and memory per stratum, rule and iteration in "
                   "FILE (JSON; local engine); see `datalog profile FILE`.")
@click.option("-j", "--jobs", metavar="N|auto", callback=_jobs,
              help="Cores for the local Spark of --engine spark (local[N]; auto: all). "
                   "The local engine runs in one thread and ignores it.")
@click.option("--show", "shows", multiple=True, metavar="WHAT",
              type=click.Choice(SHOWS),
              help="Print the program as the engine sees it and stop: transformed-datalog "
                   "(declarations and rules after the transformations, by stratum), "
                   "plan (each rule's joins, keys and filters) or circuit (the "
                   "nodes; DOT with `datalog graph --circuit`). Repeatable.")
@_memory_limit
@_sandbox
@_preprocessor
@_functors
def run(program: str, fact_dir: str, output_dir: str, max_iterations: int | None,
        engine: str, master: str | None, output_format: str,
        spill_threshold: int | None, transactions: str | None, no_warn: bool,
        spark_conf: dict, verbose: bool, profile: str | None, jobs: int | None,
        shows: tuple[str, ...], memory_limit: str | None, sandbox: tuple[str, ...],
        macros: dict[str, str], include_dirs: tuple[str, ...],
        functors: dict | None) -> None:
    """Evaluate PROGRAM over fact files and write its outputs (Soufflé style).

    Output files are written only when the whole evaluation succeeded. Exit
    status: 0 ok, 1 a program or data error, 2 a usage error.
    """
    from datalog import DatalogError
    from datalog.api import run as run_program

    if shows:
        from datalog.api import Program
        from datalog.show import show

        try:
            loaded = Program.from_file(program, macros=macros, include_dirs=include_dirs)
            click.echo("\n\n".join(show(loaded, what) for what in shows))
        except DatalogError as error:
            fail(error)
        return
    if profile is not None and engine == "spark":
        raise click.UsageError("-p/--profile is for the local engine")
    if jobs is not None and engine == "spark":
        if master is not None:
            raise click.UsageError("-j sets the cores of the local Spark; with --master "
                                   "the cluster decides")
        master = f"local[{jobs or '*'}]"

    if engine == "spark" and transactions is not None:
        raise click.UsageError("--verify is for the local engine")
    if engine == "spark" and memory_limit is not None:
        raise click.UsageError("--memory-limit is for the local engine (Spark: "
                               "--spark-conf spark.driver.memory=...)")
    if engine == "spark" and spill_threshold is not None:
        raise click.UsageError("--spill-threshold is for the local engine (with "
                               "--engine spark everything runs on Spark)")
    if engine == "local" and output_format != "csv":
        raise click.UsageError("--output-format parquet needs --engine spark")
    if engine == "local" and spill_threshold is None and (master is not None or spark_conf):
        raise click.UsageError("--master and --spark-conf need --engine spark or "
                               "--spill-threshold")
    where = " on Spark" if engine == "spark" else ""
    try:
        with _progress(f"evaluating {program}{where}"):
            result = run_program(program, fact_dir, output_dir, engine=engine,
                                 max_iterations=max_iterations,
                                 spill_threshold=spill_threshold, master=master,
                                 output_format=output_format, verify=transactions,
                                 spark_conf=spark_conf, verbose=verbose,
                                 macros=macros, include_dirs=include_dirs,
                                 functors=functors, profile=profile,
                                 memory_limit=memory_limit, sandbox=sandbox or None)
    except DatalogError as error:
        fail(error)
    if not no_warn:
        for warning in result.warnings:
            click.echo(warning, err=True)
    click.echo(result.stdout, nl=False)
    if result.verified is not None:
        click.echo(result.verified, err=True)


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("facts", nargs=-1, required=True)
@click.option("-F", "--fact-dir", default=".", show_default=True, metavar="DIR",
              help="Read each .input relation r from DIR/r.facts.")
@_functors
def explain(program: str, facts: tuple[str, ...], fact_dir: str,
            functors: dict | None) -> None:
    """Why each of FACTS (such as `path(1, 5)`) holds after evaluating PROGRAM:
    its shortest derivation, down to input facts; or, for one that does not
    hold, where each rule for it fails (then the exit status is 1)."""
    from datalog import DatalogError
    from datalog.api import Program
    from datalog.explain import WhyNot, answer

    try:
        session = Program.from_file(program, functors=functors).session(fact_dir)
        answers = [answer(session, fact) for fact in facts]
    except DatalogError as error:
        fail(error)
    click.echo("\n\n".join(str(a) for a in answers))
    sys.exit(1 if any(isinstance(a, WhyNot) for a in answers) else 0)


@main.command()
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--code", is_flag=True, help="Also print the generated rule functions.")
@_preprocessor
@_functors
def plan(program: str, code: bool, macros: dict[str, str],
         include_dirs: tuple[str, ...], functors: dict | None) -> None:
    """Print how PROGRAM is evaluated: each rule's join order, keys and filters
    (the relational plan), then the circuit's nodes with the rule each serves."""
    from datalog import DatalogError
    from datalog.api import Program

    try:
        click.echo(Program.from_file(program, macros=macros, include_dirs=include_dirs,
                                     functors=functors).describe(code=code))
    except DatalogError as error:
        fail(error)


@main.command()
@click.argument("profile_file", metavar="PROFILE", type=click.Path(exists=True, dir_okay=False))
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              metavar="N", help="How many rules to list.")
@click.option("--html", "html", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write one self-contained page (tables, plots, the circuit with its "
                   "hot nodes) to FILE instead.")
def profile(profile_file: str, top: int, html: str | None) -> None:
    """Show a profile written by `datalog run -p PROFILE`: the strata and the
    top rules by time, or (with --html) a page to open in a browser."""
    from datalog import DatalogError
    from datalog.profile.report import load, text_report

    try:
        document = load(profile_file)
        if html is None:
            click.echo(text_report(document, top=top))
            return
        from datalog.profile.page import write_page

        write_page(document, html)
    except DatalogError as error:
        fail(error)
    click.echo(f"wrote {html}", err=True)


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
