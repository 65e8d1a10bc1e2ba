"""Inputs that once ended in a Python traceback (issue 15, item 4), through the real
``datalog`` command: each is now a located error, and the REPL survives them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

DATALOG = shutil.which("datalog")
REPO = Path(__file__).parents[2]


def datalog(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, str, str]:
    """Run the real command; its exit status, stdout and stderr."""
    assert DATALOG is not None, "the datalog command is installed by `pip install -e .`"
    env = dict(os.environ, HOME=str(cwd), PYTHONPATH=str(REPO))
    result = subprocess.run([DATALOG, *args], input=stdin, capture_output=True, cwd=cwd,
                            env=env, timeout=120, check=False)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def run_program(tmp_path: Path, text: str) -> tuple[int, str]:
    (tmp_path / "p.dl").write_text(text, encoding="utf-8")
    (tmp_path / "e.facts").write_text("1\n")
    status, out, err = datalog(["run", "p.dl", "-F", ".", "-D", "out"], tmp_path)
    assert "Traceback" not in out + err
    return status, err


@pytest.mark.parametrize("param, message", [
    (r'delimiter="\\x"', "p.dl:2:10: error: `delimiter=` holds a bad escape"),
    (r'delimiter="\\u12"', "p.dl:2:10: error: `delimiter=` holds a bad escape"),
    (r'delimiter="\\n"', "p.dl:2:10: error: `delimiter=` holds a line break"),
    (r'filename="a\0b"', "p.dl:2:10: error: `filename=` holds a NUL byte"),
])
def test_impossible_io_parameters_are_located_errors(tmp_path, param, message):
    status, err = run_program(tmp_path, f".decl e(x: number)\n.input e({param})\n"
                                        ".output e\n")
    assert status == 1
    assert err.startswith(message), err
    assert not (tmp_path / "out").exists()


def test_an_escaped_delimiter_keeps_other_characters(tmp_path):
    (tmp_path / "p.dl").write_text('.decl e(x: number, y: number)\n'
                                   '.output e(IO=stdout, delimiter="é\\\\t")\ne(1, 2).\n',
                                   encoding="utf-8")
    status, out, err = datalog(["run", "p.dl"], tmp_path)
    assert (status, err) == (0, "")
    assert "1é\t2\n" in out


@pytest.mark.parametrize("literal, kind", [
    ("9" * 5000, "number"), ("9" * 5000 + "u", "unsigned"), ("0x" + "f" * 5000, "number"),
    ("-" + "9" * 70, "number"),
], ids=["decimal", "unsigned", "hexadecimal", "negative"])
def test_an_integer_literal_of_thousands_of_digits_is_a_located_error(tmp_path, literal,
                                                                      kind):
    status, err = run_program(tmp_path, f".decl e(x: {kind})\n.output e\ne({literal}).\n")
    assert status == 1
    assert err.startswith("p.dl:3:") and "does not fit in a 64-bit" in err, err[:300]


def test_to_number_of_thousands_of_digits_is_an_evaluation_error(tmp_path):
    status, err = run_program(tmp_path, '.decl e(x: number)\n.output e\ne(1).\n'
                                        f'e(x) :- e(_), x = to_number("{"9" * 5000}").\n')
    assert status == 1
    assert "to_number: a text of 5000 characters is out of range for number" in err


def test_repl_save_of_an_unencodable_symbol_names_the_relation_and_goes_on(tmp_path):
    (tmp_path / "r.dl").write_text(".decl s(x: symbol)\n")
    # bytes that are not UTF-8 reach the REPL as lone surrogates
    script = b's("a\xffb").\n:save saved\ns("ok").\n:dump\n'
    status, out, err = datalog(["repl", "r.dl"], tmp_path, script)
    assert "Traceback" not in out + err
    assert "<repl>:2:1: error: cannot save `s`: the row 'a\\udcffb' holds U+DCFF" in err
    assert 's("ok")' in out and "2 rows" in out
    assert status == 1
    assert not (tmp_path / "saved").exists()


def test_repl_survives_every_case_in_one_session(tmp_path):
    (tmp_path / "r.dl").write_text(".decl e(x: number)\n")
    script = ("e(1).\n"
              f"e({'9' * 5000}).\n"
              '.output e(delimiter="\\\\x")\n'
              '.output e(filename="a\\0b")\n'
              f":load {'9' * 300}.facts\n"
              "e(2).\n:dump\n").encode()
    status, out, err = datalog(["repl", "r.dl"], tmp_path, script)
    assert "Traceback" not in out + err
    assert err.count("error:") == 4, err[:2000]
    assert out.splitlines()[-3:] == ["e(1)", "e(2)", "2 rows"]
    assert status == 1
