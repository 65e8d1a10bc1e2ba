"""The golden cases of the front end, shared by the in-process runner and the
CLI tests.

Each case is a folder ``tests/<kind>/<case>/`` (kind ``parse``, ``check`` or
``stratify``) holding ``<case>.dl`` (and any file it includes) and what
``datalog check <case>.dl``, run in that folder, prints on standard output:
``<case>.err``. A ``stratify`` case that stratifies also has ``<case>.strata``,
one line per stratum in dependency order. Set ``DATALOG_REGEN=1`` to rewrite
the expected files from the current output (then review them with ``git diff``).
The evaluation goldens (``tests/records``, ``aggregates``, ``choice``,
``subsumption``) hold ``<case>.out``, what :func:`run_output` prints.
"""

from __future__ import annotations

import os
from pathlib import Path

from datalog.analysis.frontend import diagnose_file, load_file
from datalog.errors import DatalogError

ROOT = Path(__file__).parent
KINDS = ("parse", "check", "stratify")
REGEN = os.environ.get("DATALOG_REGEN") == "1"


def cases(kind: str) -> list[Path]:
    """The case folders of ``kind``, sorted."""
    folder = ROOT / kind
    return sorted(p for p in folder.iterdir() if (p / f"{p.name}.dl").exists())


def run_output(case: Path) -> str:
    """What ``datalog run <case>.dl -F <facts> -D -`` prints, the facts read from
    the case's ``facts`` folder if it has one, else from the case's folder; a
    golden program runs without warnings."""
    import datalog

    facts = case / "facts"
    result = datalog.run(str(case / f"{case.name}.dl"),
                         str(facts if facts.is_dir() else case), "-")
    assert not result.warnings, result.warnings
    return result.stdout


def assert_golden(case: Path, output: str, suffix: str = ".out") -> None:
    """``output`` equals the case's ``<case><suffix>`` (rewritten first with
    ``DATALOG_REGEN=1``)."""
    expected = case / f"{case.name}{suffix}"
    if REGEN:
        expected.write_text(output)
    assert output == expected.read_text()


def check_output(case: Path) -> str:
    """What ``datalog check <case>.dl`` prints on standard output, run in the
    case's folder."""
    cwd = os.getcwd()
    os.chdir(case)
    try:
        diagnostics, sources = diagnose_file(f"{case.name}.dl")
    finally:
        os.chdir(cwd)
    return "".join(d.format(sources) + "\n" for d in diagnostics)


def strata_output(case: Path) -> str | None:
    """The strata of the case's program, one line each, or None if it does not
    load."""
    cwd = os.getcwd()
    os.chdir(case)
    try:
        checked = load_file(f"{case.name}.dl")
    except DatalogError:
        return None
    finally:
        os.chdir(cwd)
    lines = []
    for i, stratum in enumerate(checked.strata):
        flag = " (recursive)" if stratum.recursive else ""
        lines.append(f"{i}: {' '.join(stratum.relations)}{flag}, "
                     f"{len(stratum.clauses)} clause(s)")
    return "\n".join(lines) + "\n"


def compare(expected_file: Path, actual: str) -> None:
    """Assert ``actual`` equals the file's text (or rewrite it under REGEN)."""
    if REGEN:
        expected_file.write_text(actual)
        return
    assert expected_file.exists(), f"{expected_file} is missing: run with DATALOG_REGEN=1"
    expected = expected_file.read_text()
    assert actual == expected, f"{expected_file} differs:\n--- expected\n{expected}" \
                               f"--- actual\n{actual}"
