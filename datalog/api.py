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

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from datalog.backends.circuit.compile import UNIT, child_label, compile_plan
from datalog.backends.errors import iteration_limit
from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.dialect.io import (
    check_io,
    check_outputs,
    format_rows,
    format_stdout,
    input_path,
    is_stdout,
    output_path,
    read_facts,
    write_files,
)
from datalog.errors import DataError, DatalogError, Diagnostic, EvaluationError, did_you_mean
from datalog.plan.lower import plan_program
from datalog.plan.query import Pattern
from engine import EngineError, IterationLimitError

_EMPTY: frozenset = frozenset()
#: A session keeps the patterns of this many distinct query texts, parsed.
_PATTERNS_KEPT = 1024


class Program:
    """A parsed, checked and planned program. ``text`` is its source; ``path``
    names it in error messages (and resolves ``#include``). Raises
    :class:`~datalog.errors.ParseError` / :class:`~datalog.errors.CheckError`.
    ``macros`` (name -> value, a string or an integer) are defined before the
    text, as Soufflé's ``-M``; ``#include`` looks in ``include_dirs`` after the
    including file's folder, as ``-I``."""

    def __init__(self, text: str, path: str | None = None, *,
                 macros: Mapping[str, object] | None = None,
                 include_dirs: Sequence[str | os.PathLike] = ()):
        from datalog.analysis.frontend import load

        self.path = path
        self.checked = load(text, path if path is not None else "<string>", macros=macros,
                            include_dirs=include_dirs)
        self.plan = plan_program(self.checked)

    @classmethod
    def from_file(cls, path: str | os.PathLike, *,
                  macros: Mapping[str, object] | None = None,
                  include_dirs: Sequence[str | os.PathLike] = ()) -> Program:
        """The program in the file at ``path`` (``#include`` relative to it, then
        in ``include_dirs``); ``macros`` as for :class:`Program`."""
        from datalog.analysis.frontend import load_file

        program = cls.__new__(cls)
        program.path = os.fspath(path)
        program.checked = load_file(program.path, macros=macros, include_dirs=include_dirs)
        program.plan = plan_program(program.checked)
        return program

    @property
    def relations(self) -> tuple[str, ...]:
        """Every declared relation, in declaration order."""
        return tuple(self.plan.relations)

    @property
    def warnings(self):
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
                spill_threshold: int | None = None) -> Session:
        """A new :class:`Session`: reads the ``.input`` relations from
        ``fact_dir`` (none when ``None``) and evaluates them (epoch 0)."""
        return Session(self, fact_dir, max_iterations=max_iterations,
                       spill_threshold=spill_threshold)

    def describe(self, code: bool = False) -> str:
        """How the program is evaluated, as ``datalog plan`` prints it: the
        relational plan, the shared indexes, the circuit's nodes and, with
        ``code``, the generated function of every fused step."""
        return compile_plan(self.plan).describe(code=code)

    def circuit_dot(self) -> str:
        """The compiled circuit in Graphviz DOT (``datalog graph --circuit``)."""
        return compile_plan(self.plan).circuit.to_dot()


def diagnose_file(path: str | os.PathLike, *, macros: Mapping[str, object] | None = None,
                  include_dirs: Sequence[str | os.PathLike] = ()
                  ) -> tuple[list[Diagnostic], dict[str, str]]:
    """Every error and warning of the program at ``path`` (``datalog check``),
    sorted by place, and the text of its files (path -> text) for formatting."""
    from datalog.analysis.frontend import diagnose_file as diagnose

    return diagnose(path, macros=macros, include_dirs=include_dirs)


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
    warnings: list[str] = field(default_factory=list)


ENGINES = ("local", "spark")


def run(program: Program | str | os.PathLike, fact_dir: str | os.PathLike = ".",
        output_dir: str | os.PathLike = ".", *, engine: str = "local",
        max_iterations: int | None = None, spill_threshold: int | None = None,
        master: str | None = None, output_format: str = "csv", spark=None,
        macros: Mapping[str, object] | None = None,
        include_dirs: Sequence[str | os.PathLike] = ()) -> RunResult:
    """Evaluate ``program`` (a :class:`Program` or a path) over the fact files of
    ``fact_dir`` and write its ``.output`` relations under ``output_dir`` (``"-"``
    prints them all), as ``datalog run`` does. ``engine`` is ``"local"`` (the
    circuit, in this process; ``spill_threshold`` moves traces larger than that
    many rows to Spark) or ``"spark"`` (the whole program on Spark: ``master``
    names the cluster, ``spark`` is a session of the caller's, ``output_format``
    may be ``"parquet"``). ``macros`` and ``include_dirs`` are for a program
    given by path (see :class:`Program`). Outputs are written only once the whole
    evaluation succeeded; any failure raises a :class:`~datalog.errors.DatalogError`.

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
    if not isinstance(program, Program):
        program = Program.from_file(program, macros=macros, include_dirs=include_dirs)
    elif macros or include_dirs:
        raise DatalogError("macros and include_dirs apply when the program is read: give "
                           "them to Program(...) or pass a path")
    fact_dir, output_dir = os.fspath(fact_dir), os.fspath(output_dir)
    try:
        if engine == "spark":
            if spill_threshold is not None:
                raise DatalogError("spill_threshold is for the local engine (on Spark "
                                   "everything runs in Spark)")
            result = _run_on_spark(program, fact_dir, output_dir,
                                   max_iterations=max_iterations, master=master,
                                   output_format=output_format, spark=spark)
        else:
            if master is not None or spark is not None or output_format != "csv":
                raise DatalogError("a Spark master or session and parquet output need "
                                   "engine=\"spark\"")
            result = _run_locally(program, fact_dir, output_dir, max_iterations,
                                  spill_threshold)
        sources = program.sources
        result.warnings = [w.format(sources) for w in program.warnings]
        return result
    except DatalogError as error:
        raise program.located(error) from None
    except EngineError as error:  # the runtime's own (no Spark to spill to, ...)
        raise DatalogError(error.args[0] if error.args else str(error)) from None


def _run_locally(program: Program, fact_dir: str, output_dir: str,
                 max_iterations: int | None, spill_threshold: int | None) -> RunResult:
    session = program.session(fact_dir=fact_dir, max_iterations=max_iterations,
                              spill_threshold=spill_threshold)
    plan = program.plan
    check_outputs(plan.outputs, output_dir)
    files: dict[str, str] = {}
    stdout: list[str] = []
    for io in plan.outputs:
        check_io(io)
        relation = plan.relations[io.relation]
        rows = session.query(io.relation)
        if output_dir == "-" or is_stdout(io):
            stdout.append(format_stdout(rows, relation, io))
        else:
            files[output_path(io, output_dir)] = format_rows(rows, relation, io)
    for io in plan.printsize:
        stdout.append(f"{io.relation}\t{session.size(io.relation)}\n")
    write_files(files)
    return RunResult(list(files), "".join(stdout))


def _run_on_spark(program: Program, fact_dir: str, output_dir: str, **options) -> RunResult:
    from datalog.backends.spark.run import run_on_spark

    result = run_on_spark(program.plan, fact_dir, output_dir, **options)
    return RunResult(result.files, result.stdout)


class _Rows(Mapping):
    """relation name -> frozenset of rows; an absent relation reads as empty."""

    def __init__(self, rows: dict[str, frozenset]):
        self._rows = {name: rows_ for name, rows_ in rows.items() if rows_}

    def __getitem__(self, name: str) -> frozenset:
        return self._rows.get(name, _EMPTY)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name) -> bool:
        return name in self._rows

    def __repr__(self) -> str:
        return repr({name: sorted(rows) for name, rows in self._rows.items()})


class Delta:
    """What one transaction changed: ``inserted`` and ``retracted`` map relation
    names to sets of rows. Iterating yields ``(relation, row, +1 | -1)``
    (retractions first, each relation's rows sorted); ``bool(delta)`` is false
    when nothing changed.

    >>> d = Delta({"p": {(1,)}}, {"p": {(0,)}})
    >>> list(d), bool(d), d.inserted["q"]
    ([('p', (0,), -1), ('p', (1,), 1)], True, frozenset())
    """

    def __init__(self, inserted: Mapping[str, set] | None = None,
                 retracted: Mapping[str, set] | None = None):
        self.inserted = _Rows({k: frozenset(v) for k, v in (inserted or {}).items()})
        self.retracted = _Rows({k: frozenset(v) for k, v in (retracted or {}).items()})

    def __iter__(self) -> Iterator[tuple[str, tuple, int]]:
        names = list(dict.fromkeys([*self.retracted, *self.inserted]))
        for name in names:
            for row in _sorted(self.retracted[name]):
                yield name, row, -1
            for row in _sorted(self.inserted[name]):
                yield name, row, 1

    def __bool__(self) -> bool:
        return bool(self.inserted) or bool(self.retracted)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Delta) and dict(self.inserted) == dict(other.inserted)
                and dict(self.retracted) == dict(other.retracted))

    def __repr__(self) -> str:
        return f"Delta(inserted={self.inserted!r}, retracted={self.retracted!r})"

    def only(self, name: str) -> Delta:
        """The part of this delta about relation ``name``."""
        return Delta({name: self.inserted[name]}, {name: self.retracted[name]})


def _sorted(rows) -> list:
    try:
        return sorted(rows)
    except TypeError:
        return list(rows)


class Subscription:
    """A handle on a subscription; :meth:`close` stops the callbacks."""

    def __init__(self, session: Session, relation: str, callback: Callable[[Delta], None]):
        self.session = session
        self.relation = relation
        self.callback = callback
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.session._subscriptions[self.relation].remove(self)


class Transaction:
    """One transaction under construction (``with session.transaction() as tx``):
    :meth:`insert` and :meth:`retract` record changes, validated at once; the
    block's normal end commits them as one epoch and sets :attr:`delta`; an
    exception in the block discards them."""

    def __init__(self, session: Session):
        self.session = session
        self.delta: Delta | None = None
        self._changes: dict[str, dict[tuple, bool]] = {}
        self._done = False

    def insert(self, relation: str, *rows) -> None:
        self._record(relation, rows, True)

    def retract(self, relation: str, *rows) -> None:
        self._record(relation, rows, False)

    def _record(self, relation: str, rows, present: bool) -> None:
        if self._done:
            raise DatalogError("this transaction is already finished")
        checked = [self.session._validate(relation, row) for row in rows]
        changes = self._changes.setdefault(relation, {})
        for row in checked:
            changes[row] = present

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if self._done:
            return False
        self._done = True
        if kind is None:
            self.delta = self.session._commit(self._changes)
        return False


class Session:
    """A program being evaluated incrementally (see the module docstring).
    ``max_iterations`` bounds the iterations of each recursive stratum per
    transaction; ``spill_threshold`` (rows) moves larger traces to Spark."""

    def __init__(self, program: Program, fact_dir=None, *, max_iterations=None,
                 spill_threshold=None):
        self.program = program
        plan = program.plan
        self._relations = plan.relations
        self._patterns: dict[str, Pattern] = {}     # query text -> its pattern
        self._compiled = compile_plan(plan, max_iterations=max_iterations,
                                      spill_threshold=spill_threshold)
        self._circuit = self._compiled.circuit
        self._inputs: dict[str, set] = {name: set() for name in plan.relations}
        self._contents: dict[str, set] = {name: set() for name in plan.relations}
        self._subscriptions: dict[str, list[Subscription]] = {
            name: [] for name in plan.relations}
        self.fact_dir = fact_dir
        if fact_dir is not None:
            for io in plan.inputs:
                check_io(io)
                path = input_path(io, os.fspath(fact_dir))
                self._inputs[io.relation] |= read_facts(path, plan.relations[io.relation], io)
        batches = self._compiled.initial_batches()
        for name, rows in self._inputs.items():
            if rows:
                batch = batches.setdefault(name, {})
                for row in rows:
                    batch[row] = batch.get(row, 0) + 1
        self.initial = self._run(batches)

    # ------------------------------------------------------------ transactions

    def insert(self, relation: str, *rows) -> Delta:
        """Insert ``rows`` into ``relation`` as one transaction."""
        with self.transaction() as tx:
            tx.insert(relation, *rows)
        return tx.delta

    def retract(self, relation: str, *rows) -> Delta:
        """Retract ``rows`` from ``relation`` as one transaction."""
        with self.transaction() as tx:
            tx.retract(relation, *rows)
        return tx.delta

    def transaction(self) -> Transaction:
        return Transaction(self)

    def _commit(self, changes: dict[str, dict[tuple, bool]]) -> Delta:
        batches: dict[str, dict] = {}
        for name, rows in changes.items():
            current = self._inputs[name]
            batch = {row: (1 if present else -1) for row, present in rows.items()
                     if present != (row in current)}
            if batch:
                batches[name] = batch
        delta = self._run(batches) if batches else Delta()
        for name, batch in batches.items():
            current = self._inputs[name]
            for row, weight in batch.items():
                (current.add if weight > 0 else current.discard)(row)
        if delta:
            self._notify(delta)
        return delta

    def _run(self, batches: dict[str, dict]) -> Delta:
        """One epoch; the session's own state changes only if it succeeds."""
        try:
            output = self._circuit.step(batches)
        except IterationLimitError as exc:
            stratum = next(s for s in self.program.plan.strata
                           if child_label(s) == exc.child)
            raise self.program.located(iteration_limit(stratum, exc.limit)) from None
        except DatalogError as exc:
            raise self.program.located(exc) from None
        except EngineError as exc:
            # A failing rule function (division by zero, ...) arrives wrapped,
            # its DatalogError (naming the rule's place) as the cause.
            if isinstance(exc.__cause__, DatalogError):
                raise self.program.located(exc.__cause__) from None
            raise EvaluationError(str(exc)) from None
        inserted: dict[str, frozenset] = {}
        retracted: dict[str, frozenset] = {}
        for name, diff in output.items():
            if name == UNIT or not diff:
                continue
            rows = frozenset([row for row, weight in diff.items() if weight > 0])
            if rows:
                inserted[name] = rows
            if len(rows) < len(diff):
                retracted[name] = frozenset([row for row, weight in diff.items()
                                             if weight < 0])
        for name, rows in retracted.items():
            self._contents[name] -= rows
        for name, rows in inserted.items():
            self._contents[name] |= rows
        return Delta(inserted, retracted)

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

    def query(self, pattern: str) -> frozenset:
        """The rows of a relation (``"path"``) or those matching a pattern
        (``"path(1, x)"``: constants, written as in facts, must match; a variable
        used twice must match the same value; ``_`` matches anything). A bad
        pattern raises a :class:`~datalog.errors.DatalogError` located in it
        (see :mod:`datalog.plan.query`)."""
        parsed = self._patterns.get(pattern) if isinstance(pattern, str) else None
        if parsed is None:
            parsed = Pattern.parse(pattern, self.program.checked)
            if len(self._patterns) < _PATTERNS_KEPT:
                self._patterns[pattern] = parsed
        return parsed.select(self._contents[parsed.relation])

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
        self._check_relation(relation)
        return len(self._contents[relation])

    # ------------------------------------------------------------ validation

    def _check_relation(self, name: str) -> None:
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
            ok = not isinstance(value, bool)
            if ok and type_ == "number":
                ok = isinstance(value, int) and NUMBER_MIN <= value <= NUMBER_MAX
            elif ok and type_ == "unsigned":
                ok = isinstance(value, int) and 0 <= value <= UNSIGNED_MAX
            elif ok and type_ == "float":
                ok = isinstance(value, (int, float)) and not math.isnan(value)
                value = float(value) if ok else value
            elif ok:
                ok = isinstance(value, str)
            if not ok:
                raise DataError(f"column {attribute} of `{relation}` is {type_}; "
                                f"got {value!r} in {tuple(row)!r}")
            values.append(value)
        return tuple(values)
