"""Fact files in and output files out, by Spark, in the local engine's format.

Inputs and outputs follow :mod:`datalog.dialect.io` (its paths, parameters,
validation and messages; this module only says how Spark does it). ``.input r`` reads
``FACTS/r.facts`` (or the directive's ``filename=``): one row per line, columns
separated by a tab (or ``delimiter=``), symbols unquoted, ``headers=true`` skips
the first line, blank lines are skipped. Spark's text reader reads each file as
one string column per line (the line as it is); the split into columns and
the typing happen in Spark expressions, by the dialect's rules (lines end at
``\\n``, a byte-order mark opening the file skipped, blanks are ASCII's, a
line holding the delimiter is a row, numbers in :data:`INTEGER_TEXT` /
:data:`FLOAT_TEXT`). A row that does not fit raises inside
the job with its file and text; :func:`locate` then finds its line number for
the message (the error path reads the file, nothing else does).

Outputs: each ``.output r`` becomes ``OUT/r.csv`` (or ``filename=``): the rows
sorted (by the typed columns: numbers numerically, unsigned as unsigned,
symbols by code point), values as the local engine writes them, columns joined
by the delimiter, ``\\n`` after each row -- byte for byte the local engine's
file. Spark writes it as one partition into a temporary directory beside the
target; the part file is renamed into place once every output has been
written, so a failed run leaves no partial output. ``--output-format parquet``
writes ``OUT/r.parquet`` (a Spark directory of one part file, typed columns
named after the attributes, unsigned as ``decimal(20,0)``).

>>> split_pattern(",")
'\\\\Q,\\\\E'
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

from datalog import sandbox
from datalog.backends.spark.expressions import (
    F,
    big,
    bind,
    flip,
    parse_float,
    text,
    unsigned_decimal,
)
from datalog.backends.spark.pipeline import SPARK_TYPES
from datalog.dialect.io import (
    BOM,
    FLOAT_TEXT,
    INTEGER_TEXT,
    data_error,
    delimiter,
    frame_stdout,
    is_true,
    missing_file,
    output_path,
    unreadable_error,
    wrong_arity,
    wrong_value,
)
from datalog.dialect.journal import STAGING_PREFIX, recover, rename_all
from datalog.errors import DataError, Diagnostic
from datalog.plan.ir import IOPlan, RelationPlan

#: The mark of a bad input row inside a Spark error: ``[path] message|line``.
DATA_MARK = "datalog data error "
_DATA = re.compile(re.escape(DATA_MARK) + r"\[([^\]]*)\] (.*?)\x1f(.*?)\x1f")
#: The mark of an output row the format cannot hold: ``message`` then the row.
OUTPUT_MARK = "datalog output error "
_OUTPUT = re.compile(re.escape(OUTPUT_MARK) + r"(.*?)\x1f(.*?)\x1f", re.DOTALL)
_INPUT_INTEGER = f"^{INTEGER_TEXT}$"
_INPUT_FLOAT = f"^{FLOAT_TEXT}$"

def split_pattern(delimiter: str) -> str:
    """A Java regular expression matching ``delimiter`` literally."""
    return "\\Q" + delimiter.replace("\\E", "\\E\\\\E\\Q") + "\\E"


# ---------------------------------------------------------------- reading


def read_input(spark, io: IOPlan, relation: RelationPlan, path: str):
    """The rows of ``relation``'s input file at ``path`` as a DataFrame (``c0``, ...)."""
    sandbox.check(path, f"fact file for `{relation.name}`")
    if "://" not in path and not os.path.isfile(path):
        raise missing_file(relation, path)
    f = F()
    # absolute: a Spark Connect server resolves relative paths in its own directory
    where = path if "://" in path else os.path.abspath(path)
    # The text reader, not the CSV reader: that one drops every line of characters
    # below U+0021 (a line of spaces, "\t", "\x1c"), which are rows here.
    raw = spark.read.option("lineSep", "\n").text(where)
    # the file's first line: the first row of the split at offset 0, which is the
    # first split of its partition (Spark packs a file's splits in offset order)
    first = ((f.input_file_block_start() == 0)
             & (f.monotonically_increasing_id().bitwiseAND(2**33 - 1) == 0))
    lines = raw.select(f.regexp_replace("value", "\r$", "").alias("line"),
                       first.alias("first"))
    if is_true(io.param("headers")):
        lines = lines.filter(~f.col("first"))
    elif starts_with_bom(path):
        lines = lines.select(f.when(f.col("first"), f.regexp_replace("line", f"^{BOM}", ""))
                             .otherwise(f.col("line")).alias("line"))
    lines = lines.select("line")
    arity = relation.arity
    if arity == 0:
        return lines.limit(1).select()
    sep = delimiter(io)
    blank = f.col("line").rlike(r"^[ \t\n\x0b\f\r]*$")
    if arity > 1:  # `\t` is a row of two empty symbols
        keep = f.instr(f.col("line"), sep) > 0
    elif relation.types[0] == "symbol":  # a line of spaces is a symbol
        keep = f.length("line") > 0
    else:
        keep = f.lit(False)
    lines = lines.filter(~blank | keep)
    fields = f.split(f.col("line"), split_pattern(sep), -1)
    count = f.size(fields)

    def error(message):
        return f.raise_error(f.concat(f.lit(f"{DATA_MARK}[{path}] "), message,
                                      f.lit("\x1f"), f.col("line"), f.lit("\x1f")))

    def message(text: str, found):
        """The dialect's message ``text`` with Spark's column ``found`` in place of
        the NUL that stands for it."""
        before, after = text.split("\0")
        return error(f.concat(f.lit(before), found, f.lit(after)))

    columns = []
    for i, type_ in enumerate(relation.types):
        value = fields.getItem(i)
        columns.append((value, type_, message(wrong_value(relation, i, "\0"), value)))
    arity_error = message(wrong_arity(relation, "\0"), count.cast("string"))
    # Every column checks the arity first, so no column can be read unchecked.
    return lines.select(*[
        f.when(count != arity, arity_error).otherwise(typed(value, type_, wrong))
        .cast(SPARK_TYPES[type_]).alias(f"c{i}")
        for i, (value, type_, wrong) in enumerate(columns)])


def typed(value, type_: str, wrong):
    """The text ``value`` as a ``type_`` column; ``wrong`` where it does not fit."""
    f = F()
    if type_ == "symbol":
        return value
    if type_ == "float":
        return f.when(~value.rlike(_INPUT_FLOAT), wrong).otherwise(
            parse_float(value, error=lambda _: wrong))
    hexa = value.rlike(r"^\s*0[xX]")
    binary = value.rlike(r"^\s*0[bB]")
    digits = f.regexp_replace(f.trim(value), "^0[xXbB]", "")
    magnitude = (f.when(hexa & (f.length(f.regexp_replace(digits, "^0+", "")) <= 16),
                        f.conv(digits, 16, 10).cast("decimal(38,0)"))
                 .when(binary & (f.length(f.regexp_replace(digits, "^0+", "")) <= 64),
                       f.conv(digits, 2, 10).cast("decimal(38,0)"))
                 .when(~hexa & ~binary & (f.length(value) <= 60),
                       f.trim(value).cast("decimal(38,0)")))
    low, high = (big(-(2**63)), big(2**63 - 1)) if type_ == "number" else (
        big(0), big(2**64 - 1))
    bits = f.when(magnitude >= big(2**63), magnitude - big(2**64)).otherwise(magnitude)
    return (f.when(~value.rlike(_INPUT_INTEGER) | magnitude.isNull()
                   | (magnitude < low) | (magnitude > high), wrong)
            .otherwise(bits.cast("long")))


def starts_with_bom(path: str) -> bool:
    """Whether the local file at ``path`` opens with a UTF-8 byte-order mark."""
    if "://" in path:
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(3) == BOM.encode("utf-8")
    except OSError:
        return False


def explain_data_error(exc: BaseException) -> DataError | None:
    """The bad input row inside a Spark exception, with its line number when
    the file can be read here."""
    match = _DATA.search(str(exc))
    if match is None:
        return None
    path, message, line = match.groups()
    return data_error(path, locate(path, line), message)


def explain_output_error(exc: BaseException) -> DataError | None:
    """The output row the format cannot hold inside a Spark exception, with
    the local writer's message."""
    match = _OUTPUT.search(str(exc))
    if match is None:
        return None
    prefix, line = match.groups()
    problem = str(exc)[match.end():].split("\n")[0].split(" SQLSTATE")[0].rstrip('". ')
    return unreadable_error(prefix.removeprefix(OUTPUT_MARK) + ascii(line), problem,
                            hinted=True)


def locate(path: str, line: str) -> int | None:
    """The number of the first line of ``path`` whose text is ``line``."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            for number, text in enumerate(handle, start=1):
                if text.rstrip("\n").removesuffix("\r") == line:
                    return number
    except OSError:
        return None
    return None


# ---------------------------------------------------------------- writing


def sort_columns(relation: RelationPlan):
    """The columns to sort rows by, in the local engine's order."""
    f = F()
    return [flip(f.col(f"c{i}")) if t == "unsigned" else f.col(f"c{i}")
            for i, t in enumerate(relation.types)]


def text_lines(df, relation: RelationPlan, io: IOPlan | None, target: str | None = None):
    """One string column ``line``: each row as the local engine writes it,
    sorted. With ``target`` (the file it is for), a row that would not read back
    as itself fails the job as the local writer fails
    (:func:`datalog.dialect.io.unreadable`; the byte-order mark of a first line
    is checked on the written file, :meth:`OutputWriter.commit`)."""
    f = F()
    if relation.arity == 0:
        return df.limit(1).select(f.lit("()").alias("line"))
    sep = delimiter(io)
    parts = [text(t, f.col(f"c{i}")) for i, t in enumerate(relation.types)]
    line = parts[0] if len(parts) == 1 else f.concat_ws(sep, *parts)
    if target is not None and "symbol" in relation.types:
        line = bind(line, lambda ln: readable(ln, parts, relation, sep, target))
    return df.orderBy(*sort_columns(relation)).select(line.alias("line"))


def readable(line, parts, relation: RelationPlan, sep: str, target: str):
    """``line`` if it reads back as the row of ``parts``, else a failure whose
    message is the local writer's."""
    f = F()
    split = f.split(line, split_pattern(sep), -1)
    problem = (f.when(f.instr(line, "\n") > 0, f.lit("a line break"))
               .when(line.endswith("\r"), f.lit("a carriage return at the end of its line"))
               .when(split != f.array(*parts), f.lit(
                   "a tab (the delimiter)" if sep == "\t" else f"the delimiter {sep!r}"))
               .when((f.length(line) == 0) & f.lit(relation.arity == 1), f.lit(
                   "nothing: an empty symbol alone on its line is a blank line, which "
                   "readers skip")))
    prefix = f"{OUTPUT_MARK}cannot write `{relation.name}` to {target}: the row "
    return f.when(problem.isNull(), line).otherwise(f.raise_error(f.concat(
        f.lit(prefix), f.lit("\x1f"), line, f.lit("\x1f"), problem)))


def typed_frame(df, relation: RelationPlan):
    """The relation with its attribute names, unsigned columns as decimals."""
    f = F()
    return df.orderBy(*sort_columns(relation)).select(*[
        (unsigned_decimal(f.col(f"c{i}")) if t == "unsigned" else f.col(f"c{i}")).alias(a)
        for i, (t, a) in enumerate(zip(relation.types, relation.attributes))])


class OutputWriter:
    """Writes outputs into a staging directory under ``output_dir``, then
    :meth:`commit` moves them into place (or :meth:`abort` removes them)."""

    def __init__(self, output_dir: str, output_format: str = "csv"):
        self.output_dir = output_dir
        self.output_format = output_format
        #: A URI (``hdfs://``, ``s3a://``): Spark writes each output as its usual
        #: directory ``OUT/<name>`` of part files; nothing is renamed.
        self.local = "://" not in output_dir
        self.staging = None
        if self.local:
            os.makedirs(output_dir, exist_ok=True)
            recover(output_dir)
            self.staging = os.path.abspath(  # as read_input's paths
                tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=output_dir))
        self.pending: list[tuple[str, str]] = []

    def write(self, df, relation: RelationPlan, io: IOPlan) -> None:
        name = output_path(io, "", "parquet" if self.output_format == "parquet" else "csv")
        sandbox.check(os.path.join(self.output_dir, name), "output")
        if self.local:
            target = os.path.join(self.staging, f"{len(self.pending)}")
        else:
            target = f"{self.output_dir.rstrip('/')}/{name}"
        if self.output_format == "parquet":
            typed_frame(df, relation).coalesce(1).write.mode("overwrite").parquet(target)
        else:
            final = os.path.join(self.output_dir, name)
            (text_lines(df, relation, io, target=final).coalesce(1).write.mode("overwrite")
             .option("lineSep", "\n").text(target))
            if self.local and is_true(io.param("headers")):
                self._prepend(target, delimiter(io).join(relation.attributes) + "\n")
            if self.local and relation.arity and not is_true(io.param("headers")):
                first = self._first_line(target)
                if first.startswith(BOM):
                    raise unreadable_error(
                        f"cannot write `{relation.name}` to {final}: the line {ascii(first)}",
                        "a byte-order mark at the start of the file (readers skip it)",
                        hinted=False)
        self.pending.append((target, name))

    @staticmethod
    def _prepend(directory: str, line: str) -> None:
        """``line`` (the attribute names of ``headers=true``) put before the
        rows Spark wrote in ``directory`` (one part file: the frame is coalesced)."""
        parts = sorted(p for p in os.listdir(directory) if p.startswith("part-"))
        path = os.path.join(directory, parts[0] if parts else "part-00000")
        rows = ""
        if parts:
            with open(path, encoding="utf-8", newline="") as handle:
                rows = handle.read()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(line + rows)

    @staticmethod
    def _first_line(directory: str) -> str:
        parts = sorted(p for p in os.listdir(directory) if p.startswith("part-"))
        if not parts:
            return ""
        with open(os.path.join(directory, parts[0]), encoding="utf-8", newline="") as handle:
            return handle.readline().rstrip("\n")

    def commit(self) -> list[str]:
        """Moves every written output to its place, all or nothing for text
        outputs (:func:`datalog.dialect.journal.rename_all`; parquet folders are
        replaced one by one); the paths written."""
        if not self.local:
            return [target for target, _ in self.pending]
        written, renames = [], []
        for target, name in self.pending:
            final = os.path.join(self.output_dir, name)
            if self.output_format == "parquet":
                if os.path.isdir(final):
                    shutil.rmtree(final)
                os.replace(target, final)
            else:
                parts = sorted(p for p in os.listdir(target) if p.startswith("part-"))
                os.makedirs(os.path.dirname(os.path.abspath(final)), exist_ok=True)
                part = os.path.join(target, parts[0]) if parts else os.path.join(target, "empty")
                with open(part, "ab") as handle:  # Spark does not flush to disk
                    os.fsync(handle.fileno())
                os.chmod(part, 0o666 & ~_umask())
                renames.append((part, os.path.abspath(final)))
            written.append(final)
        try:
            if renames:
                rename_all(renames, self.output_dir)
        except OSError as exc:
            raise DataError([Diagnostic("error", f"cannot write output: {exc}", None)]) \
                from None
        finally:
            self.abort()
        return written

    def abort(self) -> None:
        if self.local:
            shutil.rmtree(self.staging, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def stdout_text(df, relation: RelationPlan, io: IOPlan | None) -> str:
    """A relation framed for standard output as the local engine prints it; the
    rows come back through Arrow."""
    table = text_lines(df, relation, io).toArrow()
    name = relation.name
    if io is not None and is_true(io.param("headers")):  # as the local engine frames it
        name += "\n" + delimiter(io).join(relation.attributes)
    return frame_stdout(name,
                        "".join(line + "\n" for line in table.column("line").to_pylist()))
