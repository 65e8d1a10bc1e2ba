"""The public API: programs, sessions, transactions, queries, subscriptions, and
whole runs over fact files (:func:`run`, what ``datalog run`` calls).

>>> import datalog
>>> program = datalog.Program('''
...     .decl edge(x: number, y: number)
...     .decl path(x: number, y: number)
...     .output path
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''')
>>> session = program.session()
>>> delta = session.insert("edge", (1, 2), (2, 3))
>>> sorted(delta.inserted["path"])
[(1, 2), (1, 3), (2, 3)]
>>> sorted(session.query("path(1, x)"))
[(1, 2), (1, 3)]
>>> with session.transaction() as tx:
...     tx.retract("edge", (2, 3))
...     tx.insert("edge", (2, 4))
>>> sorted(tx.delta.retracted["path"]), sorted(tx.delta.inserted["path"])
([(1, 3), (2, 3)], [(1, 4), (2, 4)])

A session is a circuit at its latest epoch: each transaction is one epoch (its
inserts and retractions applied together); inputs have set semantics (inserting a
present row or retracting an absent one changes nothing); the program's own facts
are always there. Rows are validated before anything is touched, and a
transaction that fails for any reason leaves the session as it was.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from operator import itemgetter
from types import MappingProxyType

from datalog.answers import Answers
from datalog.backends.circuit.compile import UNIT, child_label, compile_plan
from datalog.backends.errors import iteration_limit
from datalog.changes import ChangedRows, Changes
from datalog.dialect import records
from datalog.dialect.io import (
    check_io,
    check_outputs,
    format_stdout,
    input_path,
    is_stdout,
    output_file,
    read_facts,
    write_files,
)
from datalog.dialect.records import is_structured
from datalog.dialect.user_functors import AUTOINC, AutoInc
from datalog.errors import (
    CheckError,
    DataError,
    DatalogError,
    Diagnostic,
    EvaluationError,
    ParseError,
    StoreError,
    did_you_mean,
)
from datalog.frames import check_value
from datalog.functors import bind_functors
from datalog.inputs import InputRows, input_rows
from datalog.plan.ir import RelationPlan
from datalog.plan.lower import plan_program
from datalog.plan.query import Pattern
from datalog.rows import Rows, sorted_rows
from datalog.sandbox import active as sandboxed
from datalog.sandbox import check as check_sandbox
from datalog.sandbox import folders as sandbox_folders
from engine import EngineError, IterationLimitError, MemoryLimitError
from engine.contents import Contents

#: More rows than this in one insert are validated a column at a time.
_ROWS_AT_ONCE = 64
#: A session keeps the patterns of this many distinct query texts, parsed.
_PATTERNS_KEPT = 1024


@dataclass(frozen=True)
class Relation:
    """A declared relation: its ``name``, the attribute name of each column
    (``columns``) and its primitive type (``types``: ``number``, ``unsigned``,
    ``float`` or ``symbol``), and whether a ``.input`` / ``.output`` directive
    names it."""

    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    input: bool = False
    output: bool = False

    @property
    def arity(self) -> int:
        """How many columns the relation has."""
        return len(self.columns)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(f'{c}: {t}' for c, t in zip(self.columns, self.types))})"

    def __repr__(self) -> str:
        roles = [role for role in ("input", "output") if getattr(self, role)]
        return f"Relation({str(self)!r}{''.join(', ' + r for r in roles)})"


class Program:
    """A parsed, checked and planned program. ``text`` is its source; ``path``
    names it in error messages (and resolves ``#include``). Raises
    :class:`~datalog.errors.ParseError` / :class:`~datalog.errors.CheckError`.
    ``macros`` (name -> value, a string or an integer) are defined before the
    text, as Soufflé's ``-M``; ``#include`` looks in ``include_dirs`` after the
    including file's folder, as ``-I``. ``functors`` binds the program's
    user-defined functors (``.functor f(..)``) to Python callables by name
    (:mod:`datalog.functors`). ``sandbox`` (folders) confines every file the
    program and its sessions read or write (:mod:`datalog.sandbox`)."""

    def __init__(self, text: str, path: str | None = None, *,
                 macros: Mapping[str, object] | None = None,
                 include_dirs: Sequence[str | os.PathLike] = (),
                 functors: Mapping[str, Callable] | None = None,
                 sandbox: Sequence[str | os.PathLike] | str | None = None):
        from datalog.analysis.frontend import load

        self.path = path
        self.sandbox = sandbox_folders(sandbox)
        with sandboxed(self.sandbox):
            self.checked = load(text, path if path is not None else "<string>",
                                macros=macros, include_dirs=include_dirs)
        self.plan = plan_program(self.checked)
        self._pieces = ((text, path if path is not None else "<string>", False),)
        self._options = {"macros": macros, "include_dirs": include_dirs}
        self._callables = dict(functors or {})
        self.functors = bind_functors(self.checked.program, functors)

    @classmethod
    def from_file(cls, path: str | os.PathLike, *,
                  macros: Mapping[str, object] | None = None,
                  include_dirs: Sequence[str | os.PathLike] = (),
                  functors: Mapping[str, Callable] | None = None,
                  sandbox: Sequence[str | os.PathLike] | str | None = None) -> Program:
        """The program in the file at ``path`` (``#include`` relative to it, then
        in ``include_dirs``); ``macros``, ``functors`` and ``sandbox`` as for
        :class:`Program`."""
        from datalog.analysis.frontend import load_file

        program = cls.__new__(cls)
        program.path = os.fspath(path)
        program.sandbox = sandbox_folders(sandbox)
        with sandboxed(program.sandbox):
            program.checked = load_file(program.path, macros=macros,
                                        include_dirs=include_dirs)
        program.plan = plan_program(program.checked)
        program._pieces = ((None, program.path, True),)
        program._options = {"macros": macros, "include_dirs": include_dirs}
        program._callables = dict(functors or {})
        program.functors = bind_functors(program.checked.program, functors)
        return program

    def extended(self, text: str, path: str | None = None) -> Program:
        """A new program: this one with ``text`` added (rules, facts,
        declarations, directives), checked as a whole; errors in ``text`` are
        placed in it, named ``path`` (``<added N>`` by default). The program's
        files are read again (``#include`` too), with the same macros.

        >>> p = Program(".decl e(x: number)").extended(".decl f(x: number)\\nf(x) :- e(x).")
        >>> list(p.relations)
        ['e', 'f']
        """
        from datalog.analysis.frontend import check_program
        from datalog.syntax.ast import Module
        from datalog.syntax.parser import parse, parse_file

        if not isinstance(text, str):
            raise DatalogError(f"rules must be a string, not {type(text).__name__}")
        pieces = (*self._pieces, (text, path or f"<added {len(self._pieces)}>", False))
        with sandboxed(self.sandbox):
            modules = [parse_file(name, **self._options) if from_file
                       else parse(piece, name, **self._options)
                       for piece, name, from_file in pieces]
        merged = Module(**{kind.name: tuple(item for module in modules
                                            for item in getattr(module, kind.name))
                           for kind in dataclasses.fields(Module)})
        program = Program.__new__(Program)
        program.path = self.path
        program.sandbox = self.sandbox
        program.checked = check_program(merged)
        program.plan = plan_program(program.checked)
        program._pieces = pieces
        program._options = self._options
        program._callables = self._callables
        program.functors = bind_functors(program.checked.program, self._callables)
        return program

    @property
    def relations(self) -> Mapping[str, Relation]:
        """Every declared relation by name, in declaration order: a read-only
        mapping to :class:`Relation` (its columns and their types).

        >>> program = Program(".decl edge(x: number, y: symbol)\\n.input edge")
        >>> program.relations["edge"]
        Relation('edge(x: number, y: symbol)', input)
        >>> list(program.relations), program.relations["edge"].columns
        (['edge'], ('x', 'y'))
        """
        plan = self.plan
        inputs = {io.relation for io in plan.inputs}
        outputs = {io.relation for io in plan.outputs}
        return MappingProxyType({
            name: Relation(name, r.attributes, r.types, name in inputs, name in outputs)
            for name, r in plan.relations.items()})

    def __repr__(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return (f"<datalog.Program{where}: {len(self.plan.relations)} relations, "
                f"{len(self.plan.rules())} rules>")

    @property
    def warnings(self):
        """The program's warnings (:class:`~datalog.errors.Diagnostic`), as
        ``datalog check`` finds them."""
        return tuple(self.checked.warnings)

    @property
    def sources(self) -> dict[str, str]:
        """path -> text of every file the program was read from."""
        return dict(self.checked.program.sources)

    def located(self, error: DatalogError) -> DatalogError:
        """``error`` with this program's text, so its text shows the source line
        and a caret under the place (errors raised while evaluating carry spans
        but not the text)."""
        if error.sources or not any(d.span for d in error.diagnostics):
            return error
        return type(error)(error.diagnostics, self.sources)

    def session(self, fact_dir: str | os.PathLike | None = None, *,
                max_iterations: int | None = None,
                spill_threshold: int | None = None,
                spill_cache: int | None = None,
                store: str | os.PathLike | None = None,
                migrate: bool = False, memory_limit: int | str | None = None) -> Session:
        """A new :class:`Session`: reads the ``.input`` relations from
        ``fact_dir`` (none when ``None``) and evaluates them (epoch 0).

        ``store``: a directory that makes the session durable
        (:mod:`datalog.store`): created with the facts of ``fact_dir`` as
        transaction 0, or, if it exists, reopened to the inputs after its last
        transaction (``fact_dir`` is then not read). A store written by another
        program is refused unless ``migrate``. ``spill_threshold`` (rows) moves
        larger join traces to Spark; ``spill_cache`` (rows, default 1,000,000)
        bounds the entries of those kept in Python for the lookups to come.

        ``memory_limit`` (bytes, or a size such as ``"2G"``, ``"512M"``) bounds
        the process's resident memory while a transaction evaluates: past it the
        transaction fails and is rolled back (:mod:`engine.memory`)."""
        return Session(self, fact_dir, max_iterations=max_iterations,
                       spill_threshold=spill_threshold, spill_cache=spill_cache,
                       store=store, migrate=migrate, memory_limit=memory_limit)

    def describe(self, code: bool = False) -> str:
        """How the program is evaluated, as ``datalog plan`` prints it: the
        relational plan, the shared indexes, the circuit's nodes and, with
        ``code``, the generated function of every fused step."""
        return compile_plan(self.plan, functors=self._implementations()).describe(code=code)

    def circuit_dot(self) -> str:
        """The compiled circuit in Graphviz DOT (``datalog graph --circuit``)."""
        return compile_plan(self.plan, functors=self._implementations()).circuit.to_dot()

    def _implementations(self, autoinc: AutoInc | None = None, peek: bool = False) -> dict:
        """What the executors call for ``@name`` and ``autoinc()``."""
        counter = autoinc if autoinc is not None else AutoInc()
        return {**self.functors, AUTOINC: counter.overload(peek)}


def diagnose_file(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
                  include_dirs: Sequence[str | os.PathLike] = (),
                  functors: Mapping[str, Callable] | None = None
                  ) -> tuple[list[Diagnostic], dict[str, str]]:
    """Every error and warning of the program at ``path`` (``datalog check``),
    sorted by place, and the text of its files (path -> text) for formatting.
    With ``functors`` (name -> callable), also each declared functor that has
    no callable among them."""
    from datalog.analysis.check import sort_diagnostics
    from datalog.analysis.frontend import diagnose
    from datalog.syntax.parser import parse_file

    try:
        module = parse_file(path, macros=macros, include_dirs=include_dirs)
    except ParseError as error:
        return list(error.diagnostics), error.sources
    diagnostics, sources = diagnose(module), dict(module.sources)
    if functors is not None:
        try:
            bind_functors(module, functors)
        except CheckError as error:
            diagnostics = sort_diagnostics(diagnostics + list(error.diagnostics))
    return diagnostics, sources


def precedence_dot(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
                   include_dirs: Sequence[str | os.PathLike] = ()) -> str:
    """The precedence graph of the program at ``path`` in Graphviz DOT
    (``datalog graph``); drawn for any program that parses, so an unstratifiable
    cycle can be seen (in red)."""
    from datalog.analysis.dot import precedence_dot as dot
    from datalog.syntax.parser import parse_file

    return dot(parse_file(path, macros=macros, include_dirs=include_dirs))


@dataclass
class RunResult:
    """What :func:`run` did: the output ``files`` it wrote (paths, in directive
    order) and the ``stdout`` text (``IO=stdout`` relations, ``-D -``,
    ``.printsize`` lines) for the caller to print, and the program's
    ``warnings``, each formatted as ``datalog check`` prints it."""

    files: list[str] = field(default_factory=list)
    stdout: str = ""
    #: With ``verify=``: the report of the transactions checked.
    verified: str | None = None
    #: The program's warnings, each as ``datalog check`` prints it.
    warnings: list[str] = field(default_factory=list)


ENGINES = ("local", "spark")


def run(program: Program | str | os.PathLike, fact_dir: str | os.PathLike = ".",
        output_dir: str | os.PathLike = ".", *, engine: str = "local",
        max_iterations: int | None = None, spill_threshold: int | None = None,
        master: str | None = None, output_format: str = "csv", spark=None,
        verify: str | os.PathLike | None = None,
        spark_conf: Mapping[str, str] | None = None, verbose: bool = False,
        macros: Mapping[str, object] | None = None,
        include_dirs: Sequence[str | os.PathLike] = (),
        functors: Mapping[str, Callable] | None = None,
        profile: str | os.PathLike | None = None,
        memory_limit: int | str | None = None,
        sandbox: Sequence[str | os.PathLike] | str | None = None) -> RunResult:
    """Evaluate ``program`` (a :class:`Program` or a path) over the fact files of
    ``fact_dir`` and write its ``.output`` relations under ``output_dir`` (``"-"``
    prints them all), as ``datalog run`` does. ``engine`` is ``"local"`` (the
    circuit, in this process; ``spill_threshold`` moves traces larger than that
    many rows to Spark) or ``"spark"`` (the whole program on Spark: ``master``
    names the cluster, ``spark`` is a session of the caller's, ``output_format``
    may be ``"parquet"``). ``verify`` (local engine) names a transaction file
    (:mod:`datalog.verify`) applied after the evaluation, one transaction at a
    time, each checked against a from-scratch evaluation: a difference is an
    :class:`~datalog.errors.EvaluationError` naming the transaction, and the
    outputs are those after the last transaction. ``spark_conf`` (settings) and
    ``verbose`` (print the master and web UI on standard error) are for the Spark
    session of either engine (the local engine's only with ``spill_threshold``,
    which with ``master`` also chooses where traces spill to). ``macros`` and
    ``include_dirs`` are for a program given by path, and so is ``functors``
    (name -> callable: the program's user-defined functors; see :class:`Program`).
    ``profile`` (local engine) names a JSON file to write the run's profile to
    (:mod:`datalog.profile`: time, tuples and memory per stratum, rule and
    iteration). Outputs are written only once the whole evaluation succeeded; any failure
    raises a :class:`~datalog.errors.DatalogError`.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "p.dl"), "w") as f:
    ...     _ = f.write('.decl e(x: number)\\n.input e\\n.decl p(x: number)\\n'
    ...                 '.output p\\n.printsize p\\np(x + 1) :- e(x).\\n')
    >>> with open(os.path.join(d, "e.facts"), "w") as f:
    ...     _ = f.write("1\\n2\\n")
    >>> result = run(os.path.join(d, "p.dl"), d, d)
    >>> [os.path.basename(p) for p in result.files], result.stdout
    (['p.csv'], 'p\\t2\\n')
    >>> open(os.path.join(d, "p.csv")).read()
    '2\\n3\\n'
    """
    if engine not in ENGINES:
        raise DatalogError(f"unknown engine `{engine}` (expected one of {', '.join(ENGINES)})")
    with sandboxed(sandbox_folders(sandbox)):
        return _run(program, fact_dir, output_dir, engine=engine,
                    max_iterations=max_iterations, spill_threshold=spill_threshold,
                    master=master, output_format=output_format, spark=spark, verify=verify,
                    spark_conf=spark_conf, verbose=verbose, macros=macros,
                    include_dirs=include_dirs, functors=functors, profile=profile,
                    memory_limit=memory_limit)


def _run(program, fact_dir, output_dir, *, engine, max_iterations, spill_threshold, master,
         output_format, spark, verify, spark_conf, verbose, macros, include_dirs, functors,
         profile, memory_limit) -> RunResult:
    if not isinstance(program, Program):
        program = Program.from_file(program, macros=macros, include_dirs=include_dirs,
                                    functors=functors)
    elif macros or include_dirs or functors:
        raise DatalogError("macros, include_dirs and functors apply when the program is "
                           "read: give them to Program(...) or pass a path")
    fact_dir, output_dir = os.fspath(fact_dir), os.fspath(output_dir)
    try:
        if engine == "spark":
            if (spill_threshold is not None or verify is not None or profile is not None
                    or memory_limit is not None):
                raise DatalogError("spill_threshold, verify, profile and memory_limit are for "
                                   "the local engine (on Spark everything runs in Spark)")
            result = _run_on_spark(program, fact_dir, output_dir,
                                   max_iterations=max_iterations, master=master,
                                   output_format=output_format, spark=spark,
                                   conf=spark_conf, verbose=verbose)
        else:
            if spark is not None or output_format != "csv":
                raise DatalogError("a Spark session and parquet output need "
                                   "engine=\"spark\"")
            if master is not None or spark_conf:
                if spill_threshold is None:
                    raise DatalogError("a Spark master and settings need engine=\"spark\" "
                                       "or a spill_threshold")
                from engine.spark.session import configure

                configure(master, spark_conf, verbose)
            result = _run_locally(program, fact_dir, output_dir, max_iterations,
                                  spill_threshold, verify, profile, memory_limit)
        sources = program.sources
        result.warnings = [w.format(sources) for w in program.warnings]
        return result
    except DatalogError as error:
        raise program.located(error) from None
    except EngineError as error:  # the runtime's own (no Spark to spill to, ...)
        raise DatalogError(error.args[0] if error.args else str(error)) from None


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(size: int | str | None) -> int | None:
    """A memory size in bytes: an ``int``, or text such as ``"512M"``, ``"2G"``,
    ``"1.5GiB"`` (binary units); ``DataError`` for anything else.

    >>> parse_size("512M"), parse_size("2g"), parse_size(4096), parse_size(None)
    (536870912, 2147483648, 4096, None)
    """
    if size is None:
        return None
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    text = str(size).strip().upper().removesuffix("IB").removesuffix("B")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    try:
        value = float(text[:len(text) - len(unit)])
    except ValueError:
        value = 0.0
    if not (value > 0 and math.isfinite(value)):
        raise DataError(f"a memory limit is a positive size such as 512M or 2G; got {size!r}")
    return int(value * _UNITS[unit])


def parse_spark_conf(pairs) -> dict[str, str]:
    """``KEY=VALUE`` texts (``--spark-conf``) as Spark settings; ValueError for a
    text that is not one."""
    from engine.spark.session import parse_conf

    return parse_conf(pairs)


def _run_locally(program: Program, fact_dir: str, output_dir: str,
                 max_iterations: int | None, spill_threshold: int | None,
                 verify: str | os.PathLike | None,
                 profile: str | os.PathLike | None = None, memory_limit=None) -> RunResult:
    recording = None
    if profile is not None:
        from datalog.profile import Recording

        recording = Recording(program, profile)
    session = Session(program, fact_dir, max_iterations=max_iterations,
                      spill_threshold=spill_threshold, memory_limit=memory_limit,
                      _profile=recording)
    if recording is not None:
        recording.mark("evaluate")
    verified = None
    if verify is not None:
        from datalog.verify import describe, run_transactions

        checked = run_transactions(session, os.fspath(verify))
        verified = describe(checked, os.fspath(verify))
        if checked.failed is not None:
            raise EvaluationError(verified)
        if recording is not None:
            recording.mark("verify transactions")
    plan = program.plan
    check_outputs(plan.outputs, output_dir)
    files: dict[str, str] = {}
    stdout: list[str] = []
    for io in plan.outputs:
        check_io(io)
        relation = plan.relations[io.relation]
        rows = session._rows_of(io.relation)    # read where kept, not copied
        if output_dir == "-" or is_stdout(io):
            stdout.append(format_stdout(rows, relation, io))
        else:
            output_file(files, io, rows, relation, output_dir)
    for io in plan.printsize:
        stdout.append(f"{io.relation}\t{session.size(io.relation)}\n")
    write_files(files, None if output_dir == "-" else output_dir)
    if recording is not None:
        recording.mark("write outputs")
        recording.finish(session)
        recording.write(profile)
    return RunResult(list(files), "".join(stdout), verified)


def _run_on_spark(program: Program, fact_dir: str, output_dir: str, **options) -> RunResult:
    from datalog.backends.spark.run import run_on_spark

    _refuse_structured(program, "the Spark engine cannot evaluate",
                       "run this program with the local engine (the default)")

    result = run_on_spark(program.plan, fact_dir, output_dir, **options)
    return RunResult(result.files, result.stdout)


def _refuse_structured(program: Program, what: str, hint: str) -> None:
    """A located error at the first column of a record or ADT type: Spark frames
    carry primitive columns only (records and ADT values are Python tuples)."""
    for decl in program.checked.program.relations:
        for attr, type_ in zip(decl.attributes, program.plan.relations[decl.name].types):
            if is_structured(type_):
                raise CheckError([Diagnostic(
                    "error", f"{what} records or algebraic data types: column "
                             f"`{attr.name}` of `{decl.name}` has type `{attr.type}`",
                    attr.span, hint=hint)], program.sources)


class Delta:
    """What one transaction changed: ``inserted`` and ``retracted`` map relation
    names to sets of rows. Iterating yields ``(relation, row, +1 | -1)``
    (retractions first, each relation's rows sorted); ``bool(delta)`` is false
    when nothing changed; :meth:`count` says how many rows changed.

    A session's delta keeps the engine's differences as they came (columns for
    a large recursive relation: :mod:`datalog.changes`) and makes a relation's
    set of rows the first time it is asked for.

    >>> d = Delta({"p": {(1,)}}, {"p": {(0,)}})
    >>> list(d), bool(d), d.inserted["q"], d.count()
    ([('p', (0,), -1), ('p', (1,), 1)], True, frozenset(), 2)
    """

    def __init__(self, inserted: Mapping[str, set] | None = None,
                 retracted: Mapping[str, set] | None = None):
        self.inserted = Rows({k: frozenset(v) for k, v in (inserted or {}).items()})
        self.retracted = Rows({k: frozenset(v) for k, v in (retracted or {}).items()})
        self._diffs: Changes | None = None

    @classmethod
    def _of(cls, changes: Changes) -> Delta:
        """The delta of the engine's differences, kept as they are."""
        delta = cls.__new__(cls)
        delta.inserted = ChangedRows(changes, 1)
        delta.retracted = ChangedRows(changes, -1)
        delta._diffs = changes
        return delta

    def count(self, relation: str | None = None) -> int:
        """How many rows the transaction inserted or retracted, in ``relation``
        or in all relations; counted without making the rows.

        >>> Delta({"p": {(1,), (2,)}, "q": {(3,)}}, {"p": {(0,)}}).count("p")
        3
        """
        names = [relation] if relation is not None else \
            dict.fromkeys([*self.inserted, *self.retracted])
        return sum(self.inserted.size(name) + self.retracted.size(name) for name in names)

    def __iter__(self) -> Iterator[tuple[str, tuple, int]]:
        names = list(dict.fromkeys([*self.retracted, *self.inserted]))
        for name in names:
            for row in sorted_rows(self.retracted[name]):
                yield name, row, -1
            for row in sorted_rows(self.inserted[name]):
                yield name, row, 1

    def __bool__(self) -> bool:
        return bool(self.inserted) or bool(self.retracted)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Delta) and dict(self.inserted) == dict(other.inserted)
                and dict(self.retracted) == dict(other.retracted))

    def __repr__(self) -> str:
        return f"Delta(inserted={self.inserted!r}, retracted={self.retracted!r})"

    def explain(self, fact: str):
        """Why ``fact`` (``"path(1, 5)"``) appeared or disappeared in the
        transaction that gave this delta: a :class:`~datalog.explain.Change`
        naming the input changes that caused it and the derivation gained or
        lost. Asked before the session's next transaction."""
        from datalog.explain import explain_change

        return explain_change(self, fact)

    def only(self, name: str) -> Delta:
        """The part of this delta about relation ``name``."""
        if self._diffs is not None:
            part = Delta._of(self._diffs.only(name))
        else:
            part = Delta({name: self.inserted[name]}, {name: self.retracted[name]})
        part._relations = self._relations
        return part

    #: The declarations of the relations (set by the session that made it).
    _relations: Mapping[str, RelationPlan] = MappingProxyType({})

    def _check(self, relation: str) -> None:
        if relation not in self._relations:
            raise DataError([Diagnostic("error", f"no relation `{relation}` in this "
                                        "delta's program", None,
                                        did_you_mean(relation, self._relations))])

    def _changes(self, relation: str) -> tuple[list[tuple], list[int]]:
        self._check(relation)
        changes = sorted([(row, -1) for row in self.retracted[relation]]
                         + [(row, 1) for row in self.inserted[relation]],
                         key=lambda change: change[0])
        return [row for row, _ in changes], [weight for _, weight in changes]

    def _columns(self, relation: str) -> tuple[list, list]:
        """``relation``'s changed rows as columns sorted by row, and their
        weights: read from the engine's columns when it gave them so."""
        self._check(relation)
        found = self._diffs.columns(relation) if self._diffs is not None else None
        if found is None:
            rows, weights = self._changes(relation)
            arity = self._relations[relation].arity
            found = ([list(c) for c in zip(*rows)] if rows else [[]] * arity), weights
        return found

    def frame(self, relation: str, weight: str = "weight"):
        """``relation``'s changes as a pandas DataFrame: its columns (typed as
        :meth:`Session.frame` types them) and a ``weight`` column, ``+1`` for an
        inserted row and ``-1`` for a retracted one; sorted by row."""
        from datalog.frames import pandas_of

        columns, weights = self._columns(relation)
        return pandas_of(columns, len(weights), self._relations[relation], {weight: weights})

    def to_arrow(self, relation: str, weight: str = "weight"):
        """``relation``'s changes as an Arrow table, as :meth:`frame`."""
        from datalog.frames import arrow_of

        columns, weights = self._columns(relation)
        return arrow_of(columns, self._relations[relation], {weight: weights})


class Subscription:
    """A handle on a subscription; :meth:`close` stops the callbacks."""

    def __init__(self, session: Session, relation: str, callback: Callable[[Delta], None]):
        self.session = session
        self.relation = relation
        self.callback = callback
        self.closed = False

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<datalog.Subscription to {self.relation} ({state})>"

    def close(self) -> None:
        """Stop calling the callback (closing twice does nothing)."""
        if not self.closed:
            self.closed = True
            self.session._subscriptions[self.relation].remove(self)


class Transaction:
    """One transaction under construction (``with session.transaction() as tx``):
    :meth:`insert` and :meth:`retract` record changes, validated at once; the
    block's normal end commits them as one epoch and sets :attr:`delta`; an
    exception in the block discards them. With ``dry_run`` the end computes
    :attr:`delta` and commits nothing: the session, its store and its
    subscribers see no change."""

    def __init__(self, session: Session, dry_run: bool = False):
        self.session = session
        self.dry_run = dry_run
        self.delta: Delta | None = None
        self._changes: dict[str, dict[tuple, bool]] = {}
        self._done = False

    def __repr__(self) -> str:
        state = "finished" if self._done else "open"
        changes = sum(len(rows) for rows in self._changes.values())
        kind = " (dry run)" if self.dry_run else ""
        return f"<datalog.Transaction{kind}, {state}: {changes} changes recorded>"

    def insert(self, relation: str, *rows) -> None:
        """Record ``rows`` to insert into ``relation`` (see :meth:`Session.insert`
        for the forms rows take); validated now, applied at the block's end."""
        self._record(relation, rows, True)

    def retract(self, relation: str, *rows) -> None:
        """Record ``rows`` to retract from ``relation``, as :meth:`insert`."""
        self._record(relation, rows, False)

    def _record(self, relation: str, rows: tuple, present: bool) -> None:
        if self._done:
            raise DatalogError("this transaction is already finished")
        checked = self.session._rows(relation, rows)
        # the last change of a row wins
        self._changes.setdefault(relation, {}).update(dict.fromkeys(checked, present))

    def __enter__(self) -> Transaction:
        # One transaction at a time: a block nested in another would commit first
        # and alone, so it is an error rather than a silent second transaction.
        if self.session._open is not None:
            raise DatalogError("a transaction is already open on this session: record "
                               "the changes on it (tx.insert, tx.retract) instead of "
                               "opening another inside it")
        self.session._open = self
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if self.session._open is self:
            self.session._open = None
        if self._done:
            return False
        self._done = True
        if kind is None:
            self.delta = self.session._commit(self._changes, self.dry_run)
        return False


class Session:
    """A program being evaluated incrementally (see the module docstring).
    ``max_iterations`` bounds the iterations of each recursive stratum per
    transaction; ``spill_threshold`` (rows) moves larger traces to Spark,
    ``spill_cache`` (rows) bounds what of them stays cached in Python;
    ``store`` and ``migrate``: see :meth:`Program.session`. ``messages`` says
    what opening the store did (created, replayed, dropped a torn record)."""

    def __init__(self, program: Program, fact_dir=None, *, max_iterations=None,
                 spill_threshold=None, spill_cache=None, store=None, migrate=False,
                 memory_limit=None, _initial=None, _profile=None):
        self.program = program
        plan = program.plan
        self._relations = plan.relations
        self._plain = _plain_types(plan.relations)
        self._patterns: dict[str, Pattern] = {}     # query text -> its pattern
        self._open: Transaction | None = None        # the `with` block in progress
        self._max_iterations = max_iterations
        self._spill_threshold, self._spill_cache = spill_threshold, spill_cache
        self._memory_limit = memory_limit
        self._autoinc = AutoInc()
        self._functors = program._implementations(self._autoinc, peek=True)  # explain
        if spill_threshold is not None:
            _refuse_structured(program, "traces cannot spill to Spark with",
                               "leave out the spill threshold for this program")
        self._compiled = compile_plan(plan, max_iterations=max_iterations,
                                      spill_threshold=spill_threshold,
                                      spill_cache=spill_cache,
                                      functors=program._implementations(self._autoinc))
        self._circuit = self._compiled.circuit
        self._circuit.limit_memory(parse_size(memory_limit))
        # The rows given to each relation: what retracting can take away, and
        # the one store of a relation that no rule or fact adds to (the engine
        # keeps every other relation's rows: see `_rows_of`), in sorted arrays
        # where the columns allow (datalog.inputs).
        self._inputs: dict[str, InputRows | set] = {
            name: input_rows(relation.types) for name, relation in plan.relations.items()}
        self._subscriptions: dict[str, list[Subscription]] = {
            name: [] for name in plan.relations}
        self._store = None
        self._read_only: str | None = None
        self.messages: tuple[str, ...] = ()
        self.fact_dir = fact_dir
        with sandboxed(getattr(program, "sandbox", None)):
            self._open_inputs(fact_dir, store, migrate, _initial, _profile)

    def _open_inputs(self, fact_dir, store, migrate, _initial, _profile) -> None:
        plan = self.program.plan
        program = self.program
        if store is not None:
            check_sandbox(os.fspath(store), "store")
        reopening = store is not None and os.path.exists(
            os.path.join(os.fspath(store), "store.json"))
        if fact_dir is not None and _initial is None and not reopening:
            for io in plan.inputs:
                check_io(io)
                path = input_path(io, os.fspath(fact_dir))
                self._inputs[io.relation].update(
                    read_facts(path, plan.relations[io.relation], io))
        if store is not None:
            from datalog.store import Store

            start = time.perf_counter()
            self._store = Store(store)
            opened = self._store.open(program, self._inputs, migrate=migrate)
            _initial = opened.inputs
        if _initial is not None:
            for name, rows in _initial.items():
                if name in self._inputs:
                    self._inputs[name] = input_rows(plan.relations[name].types, rows)
                elif rows:
                    self.close()
                    raise StoreError(f"the inputs hold rows of `{name}`, which this "
                                     "program does not declare")
        try:
            if _profile is not None:  # a datalog.profile.Recording, from run()
                _profile.attach(self._compiled)
            self._load()
        except BaseException:
            self.close()
            raise
        if store is not None:
            messages = list(opened.messages)
            if not opened.created:
                messages.append(opened.reopened(os.fspath(store),
                                                time.perf_counter() - start))
                if fact_dir is not None:
                    messages.append(f"{os.fspath(fact_dir)} was not read: the store holds "
                                    "the inputs (the facts were read when it was created)")
            self.messages = tuple(messages)

    def _load(self) -> None:
        """Epoch 0: the program's facts and the inputs (nobody is told of its
        changes, so they are not kept: the engine holds the rows)."""
        batches = self._compiled.initial_batches()
        for name, rows in self._inputs.items():
            if rows:
                batch = batches.setdefault(name, {})
                for row in rows:
                    batch[row] = batch.get(row, 0) + 1
        self._step(batches)

    # ------------------------------------------------------------ transactions

    def insert(self, relation: str, *rows) -> Delta:
        """Insert rows into ``relation`` as one transaction and return its
        :class:`Delta`. The rows are given one by one (``insert("edge", (1, 2),
        (2, 3))``) or as one iterable of rows: a list, a generator, a pandas
        DataFrame, an Arrow table or a 2-D numpy array (columns matched to the
        relation's attributes by name, or by position: :mod:`datalog.frames`).
        Values are Python's or numpy's ``int``, ``float`` and ``str``."""
        with self.transaction() as tx:
            tx.insert(relation, *rows)
        return tx.delta

    def retract(self, relation: str, *rows) -> Delta:
        """Retract rows from ``relation`` as one transaction (rows given as for
        :meth:`insert`)."""
        with self.transaction() as tx:
            tx.retract(relation, *rows)
        return tx.delta

    def transaction(self, dry_run: bool = False) -> Transaction:
        """A :class:`Transaction` (``with session.transaction() as tx:``);
        ``dry_run=True`` computes its :attr:`~Transaction.delta` and leaves the
        session unchanged."""
        if self._read_only is not None:
            raise DatalogError(f"this session is {self._read_only}: read-only")
        if self._closed:
            raise StoreError("this session is closed")
        return Transaction(self, dry_run)

    def _commit(self, changes: dict[str, dict[tuple, bool]], dry_run: bool = False) -> Delta:
        batches: dict[str, dict] = {}
        for name, rows in changes.items():
            current = self._inputs[name]
            batch = {row: (1 if present else -1) for row, present in rows.items()
                     if present != (row in current)}
            if batch:
                batches[name] = batch
        if dry_run:
            delta = self._run(batches, dry_run=True) if batches else Delta()
            delta._origin = (self, self.epoch, batches, True)
            delta._relations = self._relations
            return delta
        delta = self._run(batches) if batches else Delta()
        delta._relations = self._relations
        self._apply(batches)
        if self._store is not None:
            try:
                self._store.append({name: {row: weight > 0 for row, weight in batch.items()}
                                    for name, batch in batches.items()}, self._inputs)
            except StoreError:
                # not logged, so not committed: put the state back as it was
                undo = {name: {row: -weight for row, weight in batch.items()}
                        for name, batch in batches.items()}
                self._run(undo)
                self._apply(undo)
                raise
        delta._origin = (self, self.epoch, batches, False)
        # (a delta's truth counts its rows: asked only when someone listens)
        if any(self._subscriptions.values()) and delta:
            self._notify(delta)
        return delta

    def _apply(self, batches: dict[str, dict]) -> None:
        """The inputs changed by ``batches``, each row's weight +1 for a row not
        among the inputs and -1 for one that is (as :meth:`_commit` makes
        them and as their undo is): no row's membership is looked up again."""
        for name, batch in batches.items():
            current = self._inputs[name]
            added = [row for row, weight in batch.items() if weight > 0]
            removed = ([row for row, weight in batch.items() if weight < 0]
                       if len(added) < len(batch) else [])
            if isinstance(current, InputRows):
                current.change(added, removed)
            else:
                current.update(added)
                current.difference_update(removed)

    def _run(self, batches: dict[str, dict], dry_run: bool = False) -> Delta:
        """One epoch and its :class:`Delta`; the session's state changes only if
        it succeeds (and not at all for a ``dry_run``)."""
        output = self._step(batches, dry_run)
        output.pop(UNIT, None)
        return Delta._of(Changes(output))    # rows made only when asked for

    def _step(self, batches: dict[str, dict], dry_run: bool = False) -> dict:
        """One epoch of the circuit: each relation's difference."""
        self._autoinc.begin()
        kept = False
        try:
            output = self._circuit.step(batches, dry_run=dry_run)
            kept = not dry_run
        except IterationLimitError as exc:
            stratum = next(s for s in self.program.plan.strata
                           if child_label(s) == exc.child)
            raise self.program.located(iteration_limit(stratum, exc.limit)) from None
        except MemoryLimitError as exc:
            raise EvaluationError([Diagnostic(
                "error", f"{exc}; the transaction was rolled back", None,
                hint="raise it with memory_limit= (API) or --memory-limit "
                     "(datalog run, datalog repl)")]) from None
        except DatalogError as exc:
            raise self.program.located(exc) from None
        except EngineError as exc:
            # A failing rule function (division by zero, ...) arrives wrapped,
            # its DatalogError (naming the rule's place) as the cause.
            if isinstance(exc.__cause__, DatalogError):
                raise self.program.located(exc.__cause__) from None
            raise EvaluationError(str(exc)) from None
        finally:
            # a failed epoch, or a dry run, gives back the autoinc() numbers it took
            if kept:
                self._autoinc.commit()
            else:
                self._autoinc.rollback()
        return output

    def _notify(self, delta: Delta) -> None:
        errors = []
        for name, subscriptions in self._subscriptions.items():
            if subscriptions and (name in delta.inserted or name in delta.retracted):
                part = delta.only(name)
                for subscription in list(subscriptions):
                    try:
                        subscription.callback(part)
                    except Exception as exc:    # the transaction stands; report after
                        errors.append(exc)
        if errors:
            raise errors[0]

    # ------------------------------------------------------------ reading

    def _rows_of(self, relation: str) -> AbstractSet[tuple]:
        """``relation``'s current rows, read where they are kept, never copied:
        the engine's trace of the relation (its distinct), or, for a relation
        no rule or fact adds to, the session's inputs (its one store)."""
        rows = self._circuit.contents(relation)
        return self._inputs[relation] if rows is None else rows

    def _columns_of(self, relation: str) -> list | None:
        """``relation``'s rows as numpy columns (sorted, typed as
        :mod:`datalog.frames` types them) when the engine keeps them packed
        in columns (a relation of numbers whose Distinct state is in runs):
        read off the runs' arrays, no row made; else ``None``."""
        rows = self._rows_of(relation)
        types = self._relations[relation].types
        if not (isinstance(rows, Contents) and types
                and all(t in ("number", "unsigned") for t in types)):
            return None
        columns = rows.columns()
        if columns is None:
            return None
        return [c.astype("uint64") if t == "unsigned" else c for c, t in zip(columns, types)]

    def _select(self, pattern: Pattern, relation: str) -> frozenset:
        """The rows of ``relation`` that ``pattern`` matches (on the engine's
        columns when it keeps them so: :meth:`_columns_of`)."""
        if pattern.constants or pattern.equal:
            rows = self._rows_of(relation)
            columns = (rows.columns() if isinstance(rows, Contents) and not pattern.shapes
                       else None)
            if columns:
                return pattern.select_columns(columns)
        return pattern.select(self._rows_of(relation))

    @property
    def _contents(self) -> dict[str, AbstractSet[tuple]]:
        """relation name -> its current rows (:meth:`_rows_of`, read-only)."""
        return {name: self._rows_of(name) for name in self._relations}

    def query(self, pattern: str, **columns) -> frozenset:
        """The rows of a relation (``"path"``) or those matching a pattern
        (``"path(1, x)"``: constants, written as in facts, must match; a variable
        used twice must match the same value; ``_`` matches anything). A bad
        pattern raises a :class:`~datalog.errors.DatalogError` located in it
        (see :mod:`datalog.plan.query`).

        With a relation's name, keyword arguments are values its columns must
        hold, by attribute name, as Python values (nothing to quote or escape):
        ``session.query("path", x=1)``, ``session.query("person", name='a "b"')``.
        For several atoms, comparisons and named answers, see :meth:`ask`."""
        if columns:
            return self._query_columns(pattern, columns)
        parsed = self._patterns.get(pattern) if isinstance(pattern, str) else None
        if parsed is None:
            parsed = Pattern.parse(pattern, self.program.checked)
            if len(self._patterns) < _PATTERNS_KEPT:
                self._patterns[pattern] = parsed
        return self._select(parsed, parsed.relation)

    def add_rules(self, text: str) -> Delta:
        """Extend the session's program with ``text`` (rules, declarations,
        directives, facts), as the REPL does: the program is checked again as a
        whole, compiled and evaluated over the session's current inputs, which
        it keeps. Returns how every relation changed (new relations' rows as
        inserted); subscribers are told. An error (located in ``text``, named
        ``<added N>``) changes nothing. The session starts a new circuit, so
        :attr:`epoch` counts again from 1; a durable session (``store=``)
        cannot change its program.

        >>> s = Program(".decl e(x: number)").session()
        >>> _ = s.insert("e", (1,), (2,))
        >>> s.add_rules(".decl big(x: number)\\nbig(x) :- e(x), x > 1.")
        Delta(inserted={'big': [(2,)]}, retracted={})
        """
        if self._store is not None:
            raise DatalogError("a durable session's program cannot change (its store "
                               "belongs to one program): open the store with the new "
                               "program and migrate=True")
        if self._read_only is not None:
            raise DatalogError(f"this session is {self._read_only}: read-only")
        if self._open is not None:
            raise DatalogError("a transaction is open on this session: finish it first")
        program = self.program.extended(text)
        fresh = Session(program, max_iterations=self._max_iterations,
                        spill_threshold=self._spill_threshold, spill_cache=self._spill_cache,
                        memory_limit=self._memory_limit, _initial=self._inputs)
        before = self._contents     # the old circuit's rows, read before it goes
        self.program = program
        self._relations, self._plain = fresh._relations, fresh._plain
        self._patterns = {}
        self._compiled, self._circuit = fresh._compiled, fresh._circuit
        self._autoinc, self._functors = fresh._autoinc, fresh._functors
        self._inputs = fresh._inputs
        for name in self._relations:
            self._subscriptions.setdefault(name, [])
        inserted, retracted = {}, {}
        for name in self._relations:
            rows, old = frozenset(self._rows_of(name)), frozenset(before.get(name, ()))
            if rows != old:
                inserted[name], retracted[name] = rows - old, old - rows
        delta = Delta(inserted, retracted)
        delta._relations = self._relations
        if delta:
            self._notify(delta)
        return delta

    def _query_columns(self, relation: str, columns: dict) -> frozenset:
        self._check_relation(relation)
        plan = self._relations[relation]
        constants = []
        for name, value in columns.items():
            if name not in plan.attributes:
                raise DataError([Diagnostic(
                    "error", f"`{relation}` has no column `{name}` (its columns: "
                    f"{', '.join(plan.attributes)})", None,
                    did_you_mean(name, plan.attributes))])
            column = plan.attributes.index(name)
            checked = check_value(value, plan.types[column])
            if checked is None:
                raise DataError(f"column {name} of `{relation}` is {plan.types[column]}; "
                                f"got {value!r}")
            constants.append((column, checked))
        return self._select(Pattern(relation, tuple(constants), ()), relation)

    def ask(self, query: str, **values) -> Answers:
        """The answers to a conjunctive query: every binding of its named
        variables that makes the body true, as :class:`Answers` (named, sorted).
        The query is a rule's body: atoms, negated atoms, comparisons,
        arithmetic, aggregates, ``;`` (``"path(1, x), edge(x, y), y > 3"``).
        ``values`` bind variables by name to Python values, so nothing needs
        quoting (``ask("person(n, a), a > lo", lo=30)``). Variables starting
        with ``_`` are not reported. Errors are located in the query's text
        (``<query>:1:9``), as a rule's are in a program.

        >>> s = Program(".decl e(x: number, y: number)").session()
        >>> _ = s.insert("e", [(1, 2), (2, 3), (2, 5)])
        >>> s.ask("e(1, x), e(x, y), y > 3")
        Answers(x, y: 1 answer)
        >>> list(s.ask("e(1, x), e(x, y), y > lo", lo=2))
        [{'x': 2, 'y': 3}, {'x': 2, 'y': 5}]
        """
        from datalog.plan.conjunctive import Conjunction

        conjunction = Conjunction.parse(query, self.program.checked, values=values)
        return self.solve(conjunction)

    def solve(self, conjunction) -> Answers:
        """The answers to a conjunctive query already parsed and checked against
        this session's program (a :class:`~datalog.plan.conjunctive.Conjunction`;
        the REPL's ``?-`` parses its own, placed in the session's input)."""
        return Answers(conjunction.variables, conjunction.types, self._solve(conjunction))

    def _solve(self, conjunction) -> list[tuple]:
        # the rule pipelines interpreted over the current rows, as explanations do
        from datalog.explain import _Evaluator, _Tables

        contents = _Tables(self._contents)
        evaluator = _Evaluator(self.program.plan, contents, contents)
        found: set[tuple] = set()
        try:
            for rule in conjunction.rules:
                found.update(row for row, _ in evaluator.rule(rule))
        except DatalogError as error:   # a failing functor: placed in the query
            raise type(error)(error.diagnostics, conjunction.sources) from None
        return sorted_rows(found)

    def frame(self, relation: str):
        """Every row of ``relation`` (sorted) as a pandas DataFrame whose
        columns are its attributes, typed by the declaration: ``number``
        int64, ``unsigned`` uint64, ``float`` float64, ``symbol`` string (see
        :mod:`datalog.frames`; needs pandas, the ``frames`` extra)."""
        from datalog.frames import pandas_of, to_pandas

        self._check_relation(relation)
        columns = self._columns_of(relation)
        if columns is not None:  # straight from the engine's columns
            return pandas_of(columns, len(columns[0]), self._relations[relation])
        return to_pandas(self._rows_of(relation), self._relations[relation])

    #: The same as :meth:`frame`.
    to_pandas = frame

    def to_arrow(self, relation: str):
        """Every row of ``relation`` (sorted) as an Arrow table, typed as in
        :meth:`frame` (needs pyarrow, the ``frames`` extra)."""
        from datalog.frames import arrow_of, to_arrow

        self._check_relation(relation)
        columns = self._columns_of(relation)
        if columns is not None:  # straight from the engine's columns
            return arrow_of(columns, self._relations[relation])
        return to_arrow(self._rows_of(relation), self._relations[relation])

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}: {len(self._rows_of(name))}" for name in self._relations)
        return f"<datalog.Session at epoch {self.epoch}: {sizes}>"

    def subscribe(self, relation: str, callback: Callable[[Delta], None]) -> Subscription:
        """Call ``callback(delta)`` with ``relation``'s part of every committed
        transaction that changes it. A callback that raises does not undo the
        transaction (it is committed by then): every other callback still runs,
        then the first exception propagates to the caller of the transaction."""
        self._check_relation(relation)
        subscription = Subscription(self, relation, callback)
        self._subscriptions[relation].append(subscription)
        return subscription

    @property
    def epoch(self) -> int:
        """How many transactions (epochs, the initial load included) ran."""
        return self._circuit.epoch

    def size(self, relation: str) -> int:
        """How many rows ``relation`` holds."""
        self._check_relation(relation)
        return len(self._rows_of(relation))

    def contains(self, relation: str, row: tuple) -> bool:
        """Whether ``relation`` holds ``row`` (a tuple of its columns' values)."""
        self._check_relation(relation)
        return tuple(row) in self._rows_of(relation)

    def inputs(self, relation: str) -> frozenset:
        """The rows inserted into ``relation`` (and read from its fact files)
        and not retracted since: what retracting can take away; rows its rules
        derive and the program's facts are not among them."""
        self._check_relation(relation)
        return frozenset(self._inputs[relation])

    # ------------------------------------------------------------ explaining

    def explain(self, fact: str):
        """Why ``fact`` (``"path(1, 5)"``) holds: its shortest derivation, a
        :class:`~datalog.explain.Derivation` tree down to input tuples and the
        program's facts (see :mod:`datalog.explain`)."""
        from datalog.explain import explain

        return explain(self, fact)

    def why_not(self, fact: str):
        """Why ``fact`` does not hold: for each rule of its relation, the body
        step that fails for it (a :class:`~datalog.explain.WhyNot`)."""
        from datalog.explain import why_not

        return why_not(self, fact)

    # ------------------------------------------------------------ checking, history

    def verify(self):
        """Recompute every relation from scratch from the session's current
        inputs and compare with the incremental state: a
        :class:`~datalog.verify.Verification`, false when they are equal, else
        listing the differences relation by relation."""
        from datalog.verify import verify

        return verify(self)

    @property
    def committed(self) -> int | None:
        """How many transactions the session's store holds (``None`` without a
        store); :meth:`at` reaches back to any of them."""
        return None if self._store is None else self._store.transactions

    def at(self, transaction: int) -> Session:
        """The state after transaction ``transaction`` of a durable session
        (0: the initial load), as a read-only session to query."""
        if self._store is None:
            raise DatalogError("time travel needs a durable session: "
                               "program.session(store=DIR) (`--store DIR` in the REPL)")
        last = self._store.transactions
        if isinstance(transaction, bool) or not isinstance(transaction, int) \
                or not 0 <= transaction <= last:
            raise DataError(f"no transaction {transaction!r}: the store holds "
                            f"transactions 0 to {last}")
        past = Session(self.program, max_iterations=self._max_iterations,
                       _initial=self._store.inputs_at(transaction))
        past._read_only = f"the state after transaction {transaction}"
        return past

    @property
    def _closed(self) -> bool:
        return self._store is not None and self._store.closed

    def close(self) -> None:
        """Close the session's store (a durable session); it takes no more
        transactions. Without a store there is nothing to close."""
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> Session:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ validation

    def _check_relation(self, name: str) -> None:
        if name not in self._relations and name in self.program.checked.inlined:
            raise DataError([Diagnostic(
                "error", f"`{name}` is an inline relation: it is not stored (its rules are "
                "substituted where it is used)", None,
                f"ask for its rows with a query, evaluated on demand: "
                f"session.ask(\"{name}(..)\")")])
        if name not in self._relations:
            raise DataError([Diagnostic("error", f"no relation `{name}`", None,
                                        did_you_mean(name, self._relations))])

    def _validate(self, relation: str, row) -> tuple:
        """``row`` as a tuple of ``relation``'s column types, or a DataError."""
        self._check_relation(relation)
        plan = self._relations[relation]
        if not isinstance(row, (tuple, list)):
            raise DataError(f"a row of `{relation}` must be a tuple; got {row!r}")
        if len(row) != plan.arity:
            raise DataError(f"`{relation}` has {plan.arity} column"
                            f"{'s' if plan.arity != 1 else ''}; got {len(row)} in {row!r}")
        values = []
        for value, type_, attribute in zip(row, plan.types, plan.attributes):
            if is_structured(type_):
                try:
                    checked = records.validate(value, type_, _checked_value)
                except ValueError:
                    checked = None
            else:
                checked = check_value(value, type_)
            if checked is None:
                raise DataError(f"column {attribute} of `{relation}` is {type_}; "
                                f"got {value!r} in {tuple(row)!r}")
            values.append(checked)
        return tuple(values)

    def _rows(self, relation: str, rows: tuple) -> list[tuple]:
        """The validated rows of ``insert(relation, *rows)``: rows one by one, or
        one iterable of rows (a list, a generator, a DataFrame, an Arrow table,
        a 2-D numpy array)."""
        if len(rows) == 1:
            # one row of numbers and symbols, every value already fits its
            # column (what a single-fact update gives): checked in one pass;
            # anything else (a value to convert or refuse, an iterable of
            # rows) takes the general path below, which names what is wrong
            types = self._plain.get(relation)
            row = rows[0]
            if types is not None and type(row) is tuple and len(row) == len(types):
                values = tuple(map(check_value, row, types))
                if None not in values:
                    return [values]
        self._check_relation(relation)
        plan = self._relations[relation]
        if len(rows) != 1 or _is_row(rows[0], plan):
            return self._validate_all(relation, rows)
        data = rows[0]
        from datalog.frames import is_frame, rows_from

        if is_frame(data):
            return rows_from(data, plan)
        if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
            raise DataError(f"a row of `{relation}` must be a tuple; got {data!r}")
        return self._validate_all(relation, data if isinstance(data, (list, tuple))
                                  else list(data))

    def _validate_all(self, relation: str, rows: Sequence) -> list[tuple]:
        """Every row validated: at once, a column at a time, when the rows are
        tuples of the right length whose columns already hold the engine's
        values; else row by row (which names the first bad row)."""
        from datalog.frames import all_fit

        plan = self._relations[relation]
        if len(rows) > _ROWS_AT_ONCE and set(map(type, rows)) == {tuple} and \
                set(map(len, rows)) == {plan.arity} and plan.arity and \
                all(all_fit(list(map(itemgetter(i), rows)), type_)
                    for i, type_ in enumerate(plan.types)):
            return rows if isinstance(rows, list) else list(rows)
        return [self._validate(relation, row) for row in rows]


def _plain_types(relations: Mapping) -> dict[str, tuple]:
    """relation name -> its column types, for the relations with columns none
    of which is a record or an ADT (their values checked by :func:`check_value`
    alone)."""
    return {name: tuple(relation.types) for name, relation in relations.items()
            if relation.types and not any(is_structured(t) for t in relation.types)}


def _is_row(value, plan) -> bool:
    """Whether the one argument of ``insert(relation, value)`` is a row rather
    than an iterable of rows: a tuple or list of values (no element is itself
    a tuple or list, except in a record or ADT column), or an empty one when the
    relation has no columns."""
    if not isinstance(value, (tuple, list)):
        return False
    if not value:
        return plan.arity == 0
    if len(value) == plan.arity:
        return all(not isinstance(v, (tuple, list)) or is_structured(t)
                   for v, t in zip(value, plan.types))
    return not any(isinstance(v, (tuple, list)) for v in value)


def _checked_value(value, type_: str):
    """``value`` as a value of the primitive ``type_`` (:func:`check_value`), or
    ``ValueError``: how :func:`datalog.dialect.records.validate` checks fields."""
    checked = check_value(value, type_)
    if checked is None:
        raise ValueError(value)
    return checked
