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


if __name__ == "__main__":
    main()
