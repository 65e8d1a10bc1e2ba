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
import time
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
from datalog.errors import (
    DataError,
    DatalogError,
    Diagnostic,
    EvaluationError,
    StoreError,
    did_you_mean,
)
from datalog.explain import WhyNot, answer  # noqa: F401 (the CLI's `datalog explain`)
from datalog.plan.lower import plan_program
from datalog.plan.query import Pattern
from datalog.rows import Rows, sorted_rows
from engine import EngineError, IterationLimitError

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
                spill_threshold: int | None = None,
                spill_cache: int | None = None,
                store: str | os.PathLike | None = None,
                migrate: bool = False) -> Session:
        """A new :class:`Session`: reads the ``.input`` relations from
        ``fact_dir`` (none when ``None``) and evaluates them (epoch 0).

        ``store``: a directory that makes the session durable
        (:mod:`datalog.store`): created with the facts of ``fact_dir`` as
        transaction 0, or, if it exists, reopened to the inputs after its last
        transaction (``fact_dir`` is then not read). A store written by another
        program is refused unless ``migrate``. ``spill_threshold`` (rows) moves
        larger join traces to Spark; ``spill_cache`` (rows, default 1,000,000)
        bounds the entries of those kept in Python for the lookups to come."""
        return Session(self, fact_dir, max_iterations=max_iterations,
                       spill_threshold=spill_threshold, spill_cache=spill_cache,
                       store=store, migrate=migrate)

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
        include_dirs: Sequence[str | os.PathLike] = ()) -> RunResult:
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
    ``include_dirs`` are for a program given by path (see :class:`Program`).
    Outputs are written only once the whole evaluation succeeded; any failure
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
    if not isinstance(program, Program):
        program = Program.from_file(program, macros=macros, include_dirs=include_dirs)
    elif macros or include_dirs:
        raise DatalogError("macros and include_dirs apply when the program is read: give "
                           "them to Program(...) or pass a path")
    fact_dir, output_dir = os.fspath(fact_dir), os.fspath(output_dir)
    try:
        if engine == "spark":
            if spill_threshold is not None or verify is not None:
                raise DatalogError("spill_threshold and verify are for the local engine "
                                   "(on Spark everything runs in Spark)")
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
                                  spill_threshold, verify)
        sources = program.sources
        result.warnings = [w.format(sources) for w in program.warnings]
        return result
    except DatalogError as error:
        raise program.located(error) from None
    except EngineError as error:  # the runtime's own (no Spark to spill to, ...)
        raise DatalogError(error.args[0] if error.args else str(error)) from None


def parse_spark_conf(pairs) -> dict[str, str]:
    """``KEY=VALUE`` texts (``--spark-conf``) as Spark settings; ValueError for a
    text that is not one."""
    from engine.spark.session import parse_conf

    return parse_conf(pairs)


def _run_locally(program: Program, fact_dir: str, output_dir: str,
                 max_iterations: int | None, spill_threshold: int | None,
                 verify: str | os.PathLike | None) -> RunResult:
    session = program.session(fact_dir=fact_dir, max_iterations=max_iterations,
                              spill_threshold=spill_threshold)
    verified = None
    if verify is not None:
        from datalog.verify import describe, run_transactions

        checked = run_transactions(session, os.fspath(verify))
        verified = describe(checked, os.fspath(verify))
        if checked.failed is not None:
            raise EvaluationError(verified)
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
    return RunResult(list(files), "".join(stdout), verified)


def _run_on_spark(program: Program, fact_dir: str, output_dir: str, **options) -> RunResult:
    from datalog.backends.spark.run import run_on_spark

    result = run_on_spark(program.plan, fact_dir, output_dir, **options)
    return RunResult(result.files, result.stdout)


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
        self.inserted = Rows({k: frozenset(v) for k, v in (inserted or {}).items()})
        self.retracted = Rows({k: frozenset(v) for k, v in (retracted or {}).items()})

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
        return Delta({name: self.inserted[name]}, {name: self.retracted[name]})


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
    exception in the block discards them. With ``dry_run`` the end computes
    :attr:`delta` and commits nothing: the session, its store and its
    subscribers see no change."""

    def __init__(self, session: Session, dry_run: bool = False):
        self.session = session
        self.dry_run = dry_run
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
                 _initial=None):
        self.program = program
        plan = program.plan
        self._relations = plan.relations
        self._patterns: dict[str, Pattern] = {}     # query text -> its pattern
        self._open: Transaction | None = None        # the `with` block in progress
        self._max_iterations = max_iterations
        self._compiled = compile_plan(plan, max_iterations=max_iterations,
                                      spill_threshold=spill_threshold,
                                      spill_cache=spill_cache)
        self._circuit = self._compiled.circuit
        self._inputs: dict[str, set] = {name: set() for name in plan.relations}
        self._contents: dict[str, set] = {name: set() for name in plan.relations}
        self._subscriptions: dict[str, list[Subscription]] = {
            name: [] for name in plan.relations}
        self._store = None
        self._read_only: str | None = None
        self.messages: tuple[str, ...] = ()
        self.fact_dir = fact_dir
        reopening = store is not None and os.path.exists(
            os.path.join(os.fspath(store), "store.json"))
        if fact_dir is not None and _initial is None and not reopening:
            for io in plan.inputs:
                check_io(io)
                path = input_path(io, os.fspath(fact_dir))
                self._inputs[io.relation] |= read_facts(path, plan.relations[io.relation], io)
        if store is not None:
            from datalog.store import Store

            start = time.perf_counter()
            self._store = Store(store)
            opened = self._store.open(program, self._inputs, migrate=migrate)
            _initial = opened.inputs
        if _initial is not None:
            for name, rows in _initial.items():
                if name in self._inputs:
                    self._inputs[name] = set(rows)
                elif rows:
                    self.close()
                    raise StoreError(f"the inputs hold rows of `{name}`, which this "
                                     "program does not declare")
        try:
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
        """Epoch 0: the program's facts and the inputs."""
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
            return delta
        delta = self._run(batches) if batches else Delta()
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
        if delta:
            self._notify(delta)
        return delta

    def _apply(self, batches: dict[str, dict]) -> None:
        for name, batch in batches.items():
            current = self._inputs[name]
            for row, weight in batch.items():
                (current.add if weight > 0 else current.discard)(row)

    def _run(self, batches: dict[str, dict], dry_run: bool = False) -> Delta:
        """One epoch; the session's own state changes only if it succeeds (and
        not at all for a ``dry_run``)."""
        try:
            output = self._circuit.step(batches, dry_run=dry_run)
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
        if dry_run:
            return Delta(inserted, retracted)
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
