"""The `datalog` command: a thin click application over the library.

Each command parses its options, calls `datalog` (the public API), and formats
what it gets back. Exit codes: 0 ok, 1 a program or data error, 2 usage.
"""

from __future__ import annotations

import sys

import click

from datalog.version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="datalog")
def main() -> None:
    """An incremental Datalog engine for the Soufflé dialect."""


def fail(error) -> "NoReturn":  # noqa: F821
    """Print a DatalogError's text on standard error and exit 1."""
    click.echo(str(error), err=True)
    sys.exit(1)


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
def graph(program: str) -> None:
    """Print PROGRAM's precedence graph as DOT, its strata as clusters.

    An edge q -> p means a rule for p reads q; negation is dashed, aggregation
    dotted, and red marks an edge that makes the program unstratifiable.
    Render with e.g. `datalog graph prog.dl | dot -Tsvg > prog.svg`.
    """
    from datalog.dot import precedence_dot
    from datalog.errors import DatalogError
    from datalog.parser import parse_file

    try:
        parsed = parse_file(program)
    except DatalogError as error:
        fail(error)
    click.echo(precedence_dot(parsed))


if __name__ == "__main__":
    main()
