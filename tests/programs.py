"""The example programs of ``programs/`` as test data, for every golden test.

Layout of one example ``programs/<name>/``:

- ``<name>.dl``: the program; its opening comment says what it shows, its inputs
  and outputs, and holds a REPL transcript (below);
- ``facts/<relation>.facts``: the rows of each ``.input`` relation (Soufflé's
  format: one row per line, columns separated by tabs, symbols unquoted);
- ``expected/<relation>.csv``: the rows of each ``.output`` relation after
  evaluating the program on those facts, same format, rows sorted.

The transcript is a block of comment lines indented by three spaces after ``//``:
a line ``> statement`` is what the user types (``edge(3, 4).`` asserts a fact,
``-edge(1, 2).`` retracts one, ``?- path(1, x).`` queries), the lines after it are
what the REPL prints: for an assertion or retraction the rows that appeared
(``+path(1, 3)``) and disappeared (``-path(2, 4)``) in the ``.output`` relations,
ordered by relation name, then row; for a query the matching rows (``path(1, 3)``)
in order.

``DATALOG_REGEN=1 python -m pytest tests/test_programs.py`` rewrites every
``expected/`` directory from the reference evaluator (review the diff!).

>>> sorted(p.name for p in example_programs())[:2]
['aggregates', 'andersen']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datalog.syntax.ast import Atom, Module
from datalog.syntax.parser import parse, parse_file

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"
REGENERATE = bool(os.environ.get("DATALOG_REGEN"))

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


@dataclass(frozen=True)
class Step:
    """One statement of a transcript and the lines the REPL prints after it."""

    statement: str
    output: tuple[str, ...]


@dataclass(frozen=True)
class ExampleProgram:
    name: str
    directory: Path
    program: Module = field(repr=False, compare=False)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.name}.dl"

    @property
    def facts_dir(self) -> Path:
        return self.directory / "facts"

    @property
    def expected_dir(self) -> Path:
        return self.directory / "expected"

    def input_files(self) -> dict[str, Path]:
        """``.input`` relation -> the file its rows are read from."""
        files = {}
        for directive in self.program.directives:
            if directive.kind == "input":
                for name in directive.relations:
                    filename = directive.param("filename") or f"{name}.facts"
                    files[name] = self.facts_dir / filename
        return files

    def inputs(self, types: dict[str, tuple[str, ...]]) -> dict[str, set[tuple]]:
        """The rows of every ``.input`` relation, typed by ``types``."""
        return {name: read_rows(path, types[name]) for name, path in self.input_files().items()}

    def outputs(self) -> list[str]:
        return self.program.relations_with("output")

    def expected(self, types: dict[str, tuple[str, ...]]) -> dict[str, set[tuple]]:
        """The expected rows of every ``.output`` relation."""
        return {name: read_rows(self.expected_dir / f"{name}.csv", types[name])
                for name in self.outputs()}

    def write_expected(self, results: dict[str, set[tuple]]) -> None:
        self.expected_dir.mkdir(exist_ok=True)
        for name in self.outputs():
            write_rows(self.expected_dir / f"{name}.csv", results[name])

    def transcript(self) -> list[Step]:
        """The REPL transcript in the program's opening comment."""
        steps: list[Step] = []
        for line in self.path.read_text().splitlines():
            if not line.startswith("//   "):
                if steps:
                    break
                continue
            text = line[len("//   "):].rstrip()
            if text.startswith("> "):
                steps.append(Step(text[2:].strip(), ()))
            elif steps:
                steps[-1] = Step(steps[-1].statement, steps[-1].output + (text,))
        return steps


def example_programs() -> list[ExampleProgram]:
    """Every program under ``programs/``, by name."""
    return [ExampleProgram(d.name, d, parse_file(str(d / f"{d.name}.dl")))
            for d in sorted(PROGRAMS_DIR.iterdir()) if (d / f"{d.name}.dl").is_file()]


# ---------------------------------------------------------------- rows as text


def parse_value(text: str, type_: str) -> Any:
    """A value of a fact file column (``number``/``unsigned`` decimal, ``float``,
    ``symbol`` verbatim).

    >>> parse_value("-3", "number"), parse_value("2.5", "float"), parse_value("a b", "symbol")
    (-3, 2.5, 'a b')
    """
    if type_ == "symbol":
        return text
    if type_ == "float":
        return float(text)
    return int(text, 0) if text.lower().startswith(("0x", "0b")) else int(text)


def format_value(value: Any) -> str:
    """A value as a fact file column.

    >>> format_value(3), format_value(2.0), format_value("x")
    ('3', '2.0', 'x')
    """
    if isinstance(value, str):
        if "\t" in value or "\n" in value:
            raise ValueError(f"symbol {value!r} cannot be written to a fact file")
        return value
    return repr(value) if isinstance(value, float) else str(value)


def read_rows(path: Path, types: tuple[str, ...]) -> set[tuple]:
    rows = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != len(types):
            raise ValueError(f"{path}:{number}: {len(cells)} columns, expected {len(types)}")
        rows.add(tuple(parse_value(c, t) for c, t in zip(cells, types)))
    return rows


def write_rows(path: Path, rows: set[tuple]) -> None:
    lines = ["\t".join(format_value(v) for v in row) for row in sorted(rows)]
    path.write_text("".join(line + "\n" for line in lines))


# ---------------------------------------------------------------- REPL text


def dl_value(value: Any) -> str:
    """A value as ``.dl`` text, as the REPL prints it.

    >>> dl_value("a\\"b"), dl_value(1.0), dl_value(-2)
    ('"a\\\\"b"', '1.0', '-2')
    """
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'
    return repr(value) if isinstance(value, float) else str(value)


def dl_fact(relation: str, row: tuple) -> str:
    return f"{relation}({', '.join(dl_value(v) for v in row)})"


def statement_atom(text: str) -> Atom:
    """The atom of a REPL statement ``edge(1, 2).``, ``-edge(1, 2).`` or
    ``?- path(1, x).`` (sign, ``?-`` and the final dot removed)."""
    text = text.strip()
    text = text[2:] if text.startswith("?-") else text.lstrip("-")
    program = parse(f"__query() :- {text.rstrip().rstrip('.')}.", "<transcript>")
    return program.rules[0].body[0][0]
