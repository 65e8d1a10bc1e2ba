"""The Spark engine computes what the local engine computes: every operator,
functor and aggregate on edge values (``cases/semantics``), output formats, and
the errors a user can meet (bad fact rows, failing functors, iteration limits).
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datalog.api import Program
from datalog.backends.spark.run import run_on_spark
from datalog.errors import DataError, DatalogError, EvaluationError
from datalog.plan.ir import IOPlan, ProgramPlan, RelationPlan
from tests.spark.engines import run

pytestmark = pytest.mark.spark

CASES = Path(__file__).parent / "cases"


def test_semantics_equal_the_local_engine(spark, tmp_path):
    program = str(CASES / "semantics" / "semantics.dl")
    facts = str(CASES / "semantics" / "facts")
    local_files, local_stdout = run("local", program, facts, str(tmp_path / "local"))
    spark_files, spark_stdout = run("spark", program, facts, str(tmp_path / "spark"), spark)
    assert set(spark_files) == set(local_files)
    for name, text in local_files.items():
        assert spark_files[name] == text, name
    assert spark_stdout == local_stdout
    # the case exercises what it claims to: edge values made it to the files
    assert "18446744073709551615" in local_files["ucalc.csv"]
    assert "1e+16" in local_files["text.csv"] and "1.5e-07" in local_files["text.csv"]
    assert local_files["flag.csv"] == "()\n" and local_files["noflag.csv"] == ""


def write(directory: Path, files: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")


def both(spark, tmp_path, program_text: str, facts: dict[str, str], **options):
    """Runs a program with both engines; ``(local, spark)`` results or errors."""
    write(tmp_path / "facts", facts)
    path = tmp_path / "p.dl"
    path.write_text(program_text)
    results = []
    for engine in ("local", "spark"):
        try:
            results.append(run(engine, str(path), str(tmp_path / "facts"),
                               str(tmp_path / f"out-{engine}"),
                               spark if engine == "spark" else None, **options))
        except DatalogError as error:
            results.append(error)
    return results


EDGE = ".decl edge(x: number, y: number)\n.input edge\n"


def test_bad_row_names_file_and_line(spark, tmp_path):
    local, remote = both(spark, tmp_path, EDGE + ".decl p(x: number)\n.output p\n"
                         "p(x) :- edge(x, _).\n",
                         {"edge.facts": "1\t2\n3\t4\n5\tfive\n"})
    assert isinstance(remote, DataError) and isinstance(local, DataError)
    assert str(remote) == str(local)
    assert str(remote).endswith("edge.facts:3: error: column 2 (y) of `edge` is a number; "
                                "found `five`")
    assert not (tmp_path / "out-spark" / "p.csv").exists()


def test_wrong_number_of_columns(spark, tmp_path):
    local, remote = both(spark, tmp_path, EDGE, {"edge.facts": "1\t2\n3\n"})
    assert str(remote) == str(local)
    assert str(remote).endswith("edge.facts:2: error: `edge` has 2 columns; found 1")


def test_missing_fact_file(spark, tmp_path):
    local, remote = both(spark, tmp_path, EDGE, {})
    assert isinstance(remote, DataError)
    assert str(remote) == str(local)
    assert "cannot open fact file for `edge`" in str(remote)


def test_directives_are_validated_by_the_backend_too(spark, tmp_path):
    # `datalog check` rejects these; a plan made by other means meets the same
    # rule (datalog.dialect.io.check_io) in the Spark backend as in the local one
    edge = RelationPlan("edge", ("x", "y"), ("number", "number"))
    for io in (IOPlan("input", "edge", (("IO", "stdout"),)),
               IOPlan("output", "edge", (("IO", "stdin"),))):
        plan = ProgramPlan({"edge": edge}, (), inputs=(io,) if io.kind == "input" else (),
                           outputs=(io,) if io.kind == "output" else ())
        with pytest.raises(DataError, match="is not supported"):
            run_on_spark(plan, str(tmp_path), str(tmp_path / "out"), spark=spark)


def test_functor_error_names_the_rule(spark, tmp_path):
    local, remote = both(spark, tmp_path, EDGE + ".decl q(x: number)\n.output q\n"
                         "q(x / y) :- edge(x, y).\n", {"edge.facts": "1\t0\n"})
    assert isinstance(remote, EvaluationError) and isinstance(local, EvaluationError)
    # the same located diagnostic as the local engine: the rule's place, its text
    # and a caret under it
    assert str(remote) == str(local)
    assert str(remote).splitlines() == [
        f"{tmp_path / 'p.dl'}:5:1: error: division by zero in `q((x / y)) :- edge(x, y).`",
        "    q(x / y) :- edge(x, y).", "    ^~~~~~~~"]
    assert not os.listdir(tmp_path / "out-spark")   # nothing written, no staging left


def test_iteration_limit(spark, tmp_path):
    text = (".decl c(x: number)\n.output c\nc(0).\nc(x + 1) :- c(x), x < 50.\n")
    local, remote = both(spark, tmp_path, text, {}, max_iterations=3)
    assert isinstance(remote, EvaluationError)
    assert str(remote) == str(local)
    assert str(remote).startswith(
        f"{tmp_path / 'p.dl'}:4:1: error: iteration limit reached: the recursive stratum "
        "{c} did not reach a fixed point within 3 iterations")


def test_parquet_output(spark, tmp_path):
    text = (".decl p(name: symbol, n: number, u: unsigned, f: float)\n.output p\n"
            'p("b", -1, 18446744073709551615u, 0.5).\np("a", 2, 3u, 1e16).\n')
    path = tmp_path / "p.dl"
    path.write_text(text)
    plan = Program.from_file(str(path)).plan
    run_on_spark(plan, str(tmp_path), str(tmp_path / "out"), spark=spark,
                 output_format="parquet")
    table = pq.read_table(str(tmp_path / "out" / "p.parquet"))
    assert table.column_names == ["name", "n", "u", "f"]
    rows = table.to_pylist()
    assert [(r["name"], r["n"], int(r["u"]), r["f"]) for r in rows] == \
        [("a", 2, 3, 1e16), ("b", -1, 2**64 - 1, 0.5)]


def test_standard_input_is_read_as_locally(spark, tmp_path, monkeypatch):
    import io

    path = tmp_path / "p.dl"
    path.write_text(".decl e(x: number, y: symbol)\n.input e(IO=stdin)\n"
                    ".decl o(x: number, y: symbol)\n.output o(IO=stdout)\no(x, y) :- e(x, y).\n")
    outputs = []
    for engine in ("local", "spark"):
        monkeypatch.setattr("sys.stdin", io.StringIO("2\tb\n1\ta\n"))
        outputs.append(run(engine, str(path), str(tmp_path), str(tmp_path / f"out-{engine}"),
                           spark if engine == "spark" else None))
    local, remote = outputs
    assert remote == local
    assert "o\n===============\n1\ta\n2\tb\n" in remote[1]
