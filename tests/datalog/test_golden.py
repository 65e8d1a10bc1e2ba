"""Golden tests: every parse/check/stratify case prints exactly its expected text."""

from __future__ import annotations

import pytest

from tests.golden import KINDS, ROOT, cases, check_output, compare, strata_output

ALL = [case for kind in KINDS for case in cases(kind)]


@pytest.mark.parametrize("case", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_diagnostics(case):
    compare(case / f"{case.name}.err", check_output(case))


@pytest.mark.parametrize("case", cases("stratify"), ids=lambda p: p.name)
def test_strata(case):
    strata = strata_output(case)
    expected = case / f"{case.name}.strata"
    if strata is None:
        assert not expected.exists(), f"{case.name} no longer stratifies"
        assert "error" in check_output(case)
    else:
        compare(expected, strata)


def test_every_kind_has_cases():
    for kind in KINDS:
        assert len(cases(kind)) >= 6, kind
    assert (ROOT / "check").is_dir()


def test_parse_cases_are_parse_errors():
    """A parse case fails in the parser: its output is syntax errors only (one,
    unless the case is about reporting several)."""
    for case in cases("parse"):
        text = check_output(case)
        assert ": warning: " not in text, case.name
        expected = {"several_errors": 4}.get(case.name, 1)
        assert text.count(": error: ") == expected, case.name
