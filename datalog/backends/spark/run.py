"""A whole program on Spark, files in, files out (``datalog run --engine spark``).

:func:`run_on_spark` takes the program's plan and a session
(:mod:`engine.spark.session`), reads every ``.input`` with Spark, evaluates
(:mod:`~datalog.backends.spark.executor`), writes every ``.output`` with Spark and
returns the text for standard output (``IO=stdout`` relations, ``-D -``,
``.printsize`` lines) -- the same files and text as the circuit backend's run
(:func:`datalog.api.run` is the entry point for both).

What runs where: the plan is built in this Python process; every row is read,
joined, deduplicated, aggregated, sorted and written by Spark's executors
(threads of this process's JVM for ``local[*]``, a cluster's machines
otherwise); only the rows printed to standard output come back, as Arrow
batches. ``IO=stdin`` inputs are read here and handed to Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.backends.spark.choice import refuse_matchings
from datalog.backends.spark.errors import is_spark_failure, translate
from datalog.backends.spark.executor import (
    SparkExecutor,
    materialize,
    refuse_bound_functors,
    run_settings,
)
from datalog.backends.spark.io import (
    OutputWriter,
    explain_data_error,
    explain_output_error,
    read_input,
    stdout_text,
)
from datalog.dialect.io import (
    check_io,
    check_outputs,
    input_path,
    is_stdout,
    local_reader_only,
    local_writer_only,
    read_facts,
)
from datalog.errors import DataError, DatalogError, Diagnostic
from datalog.plan.ir import ProgramPlan
from engine.spark.session import get_session

OUTPUT_FORMATS = ("csv", "parquet")


@dataclass
class SparkRun:
    """What a run did: ``files`` written, ``stdout`` text, and ``iterations``
    per recursive stratum."""

    files: list[str] = field(default_factory=list)
    stdout: str = ""
    iterations: dict = field(default_factory=dict)


def read_inputs(executor: SparkExecutor, fact_dir: str) -> dict:
    """Every ``.input`` relation read and checked (one job each, so that a bad
    row is reported now, with its file and line, even in an unused relation)."""
    plan, spark = executor.plan, executor.spark
    inputs = {}
    with run_settings(spark):
        for io in plan.inputs:
            check_io(io)
            relation = plan.relations[io.relation]
            path = input_path(io, fact_dir)
            if path == "-" or local_reader_only(io, path):
                rows = read_facts(path, relation, io)
                inputs[io.relation] = executor.facts_frame(io.relation, rows)
                continue
            df = read_input(spark, io, relation, path)
            try:
                inputs[io.relation] = materialize(df, eager=True)
            except Exception as exc:
                if not is_spark_failure(exc):
                    raise
                raise spark_error(exc, plan) from None
    return inputs


def run_on_spark(plan: ProgramPlan, fact_dir: str = ".", output_dir: str = ".", *,
                 master: str | None = None, spark=None, output_format: str = "csv",
                 max_iterations: int | None = None, checkpoint_dir: str | None = None,
                 conf: dict | None = None, verbose: bool = False) -> SparkRun:
    """Evaluates ``plan`` on Spark; ``output_dir`` ``"-"`` prints every output.
    ``spark`` is a session the caller owns (else one is made for ``master``
    with the settings ``conf``; ``verbose`` prints its master and web UI)."""
    if output_format not in OUTPUT_FORMATS:
        raise DatalogError(f"unknown output format `{output_format}` "
                           f"(expected one of {', '.join(OUTPUT_FORMATS)})")
    for io in plan.outputs:
        check_io(io)
        writer_only = local_writer_only(io)
        if writer_only is not None and (writer_only.startswith("IO=json") or (
                output_dir != "-" and not is_stdout(io))):
            raise DataError([Diagnostic(
                "error", f".output {io.relation}({local_writer_only(io)}) is not supported "
                         "by --engine spark", None,
                hint="run this program with the local engine (the default), or drop "
                     "the parameter")])
    check_outputs(plan.outputs, output_dir, "parquet" if output_format == "parquet" else "csv")
    refuse_bound_functors(plan)   # before starting Spark
    refuse_matchings(plan)
    spark = get_session(master, spark=spark, checkpoint_dir=checkpoint_dir, conf=conf,
                        verbose=verbose)
    executor = SparkExecutor(spark, plan, **(
        {"max_iterations": max_iterations} if max_iterations else {}))
    try:
        relations = executor.evaluate(read_inputs(executor, fact_dir))
        return write_outputs(spark, plan, relations, output_dir, output_format,
                             executor.iterations)
    finally:
        executor.release()


def write_outputs(spark, plan: ProgramPlan, relations: dict, output_dir: str,
                  output_format: str, iterations: dict) -> SparkRun:
    """Writes (or prints) every output and ``.printsize`` count; all files or
    none."""
    result = SparkRun(iterations=dict(iterations))
    stdout: list[str] = []
    to_print = [io for io in plan.outputs if output_dir == "-" or is_stdout(io)]
    to_write = [io for io in plan.outputs if io not in to_print]
    writer = OutputWriter(output_dir, output_format) if to_write else None
    with run_settings(spark):
        try:
            for io in to_write:
                writer.write(relations[io.relation], plan.relations[io.relation], io)
            for io in to_print:
                stdout.append(stdout_text(relations[io.relation],
                                          plan.relations[io.relation], io))
            for io in plan.printsize:
                stdout.append(f"{io.relation}\t{relations[io.relation].count()}\n")
        except Exception as exc:
            if writer is not None:
                writer.abort()
            if not is_spark_failure(exc):
                raise
            raise spark_error(exc, plan) from None
    if writer is not None:
        result.files = writer.commit()
    result.stdout = "".join(stdout)
    return result


def spark_error(exc: BaseException, plan: ProgramPlan) -> DatalogError:
    """A failure inside a Spark job as one of our errors."""
    return (explain_data_error(exc) or explain_output_error(exc)
            or translate(exc, plan.rules()))
