"""Durable sessions: a write-ahead log of committed transactions and periodic
snapshots of a session's inputs, in one directory.

A store holds the *inputs* of a session (every relation's rows inserted from
outside: fact files and transactions), never derived rows: reopening evaluates
the program once, from scratch, over the inputs the store replays to. Layout::

    DIR/store.json          which program wrote the store (its fingerprint)
    DIR/log                 one record per committed transaction, appended
    DIR/snapshots/N.json    the inputs after transaction N (0: the initial load)
    DIR/lock                held (flock) while a session has the store open

**Records.** A record is one line ``CRC LENGTH PAYLOAD``: the CRC-32 of the
payload in 8 hex digits, the payload's length in bytes, and the payload, a JSON
object ``{"n": 7, "+": {"edge": [[1, 2]]}, "-": {...}}`` (transaction 7 inserted
``edge(1, 2)``). Commit appends the record and ``fsync``s the file before it
returns. A crash can leave only the last record torn (each earlier one was
synced before the next began): reopening checks length, checksum and sequence
number of every record, drops a torn last record with a message, and refuses a
log that is damaged anywhere else. A record is never half-applied: it is parsed
whole before its changes are folded in.

**Values** are JSON, self-describing so that they come back exactly, whatever the
column's type: an ``int`` (``number`` and ``unsigned``, any size: JSON integers
are arbitrary precision in Python) as a JSON integer, a symbol as a JSON string
(``ensure_ascii``: every code point, lone surrogates too, as an escape), a
``float`` as ``{"f": float.hex()}``, which keeps every bit, ``-0.0`` and the
infinities included (JSON numbers cannot write those). JSON lines rather than
pickle: a log that a person can read with ``less`` and that loads no code.

>>> encode_row((1, -0.0, "é\\ud800", float("inf"), 2**64 - 1))
[1, {'f': '-0x0.0p+0'}, 'é\\ud800', {'f': 'inf'}, 18446744073709551615]
>>> decode_row(encode_row((1, -0.0, "é\\ud800", float("inf"))))
(1, -0.0, 'é\\ud800', inf)
>>> frame(b'{"n": 1}')
b'0af73c42 8 {"n": 1}\\n'
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from datalog.dialect.records import ADTValue
from datalog.errors import StoreError

FORMAT = "datalog-store 1"
#: A snapshot of the inputs is written after every this many transactions.
SNAPSHOT_EVERY = 1000

#: relation -> set of rows
Inputs = dict[str, set]
#: relation -> row -> True (inserted) / False (retracted)
Changes = Mapping[str, Mapping[tuple, bool]]


def encode_value(value):
    if isinstance(value, float):
        return {"f": value.hex()}
    if isinstance(value, ADTValue):
        return {"a": [encode_value(v) for v in value]}
    if isinstance(value, tuple):    # a record
        return {"r": [encode_value(v) for v in value]}
    return value


def decode_value(value):
    if isinstance(value, dict):
        if "r" in value:
            return tuple(decode_value(v) for v in value["r"])
        if "a" in value:
            return ADTValue(decode_value(v) for v in value["a"])
        return float.fromhex(value["f"])
    return value


def encode_row(row: tuple) -> list:
    return [encode_value(v) for v in row]


def decode_row(values: list) -> tuple:
    return tuple(decode_value(v) for v in values)


def frame(payload: bytes) -> bytes:
    """One log record: checksum, length, payload, newline."""
    return b"%08x %d %s\n" % (zlib.crc32(payload), len(payload), payload)


def fingerprint(program) -> str:
    """What identifies a program for its store: its plan's description (relations,
    types, rules as evaluated; comments, layout and file names do not count) and
    its facts."""
    plan = program.plan
    facts = sorted((name, sorted(map(repr, rows))) for name, rows in plan.facts.items())
    text = plan.describe() + "\n" + json.dumps(facts)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Opened:
    """What opening a store found: the inputs after its last transaction, how
    many transactions it holds, and messages for the user."""

    inputs: Inputs
    transactions: int
    created: bool
    messages: list[str] = field(default_factory=list)
    #: (the snapshot's transaction, log records replayed after it)
    replayed: tuple[int, int] = (0, 0)

    def reopened(self, path: str, seconds: float) -> str:
        """The message of a reopened store, ``seconds`` after it began."""
        snapshot, records = self.replayed
        count = self.transactions
        return (f"reopened {path}: replayed {count} transaction{'s' if count != 1 else ''}"
                f" (the snapshot of transaction {snapshot}, then {records} from the log) "
                f"in {seconds * 1000:.1f} ms")


class Store:
    """A store directory opened for one session (see the module docstring).
    :meth:`open` creates it or reads it back; :meth:`append` logs one committed
    transaction durably; :meth:`inputs_at` reads the inputs after any earlier
    transaction."""

    def __init__(self, path: str | os.PathLike, snapshot_every: int | None = None):
        self.path = os.fspath(path)
        self.snapshot_every = snapshot_every or SNAPSHOT_EVERY
        self.transactions = 0
        self._log = None
        self._lock = None

    # ------------------------------------------------------------ opening

    def open(self, program, initial: Inputs, migrate: bool = False) -> Opened:
        """Create the store with ``initial`` as transaction 0, or read it back
        (then ``initial`` is not used). Raises :class:`StoreError` if the store
        belongs to another program (unless ``migrate``) or is damaged."""
        print_ = fingerprint(program)
        header_path = os.path.join(self.path, "store.json")
        if os.path.isdir(self.path) and not os.path.exists(header_path):
            # a store whose creation was cut short holds only our own files
            foreign = set(os.listdir(self.path)) - {"snapshots", "log", "lock"}
            if foreign:
                raise StoreError(f"{self.path} is not a store and not empty (it holds "
                                 f"`{min(foreign)}`); give a new or empty directory")
        try:
            os.makedirs(os.path.join(self.path, "snapshots"), exist_ok=True)
            self._lock = open(os.path.join(self.path, "lock"), "a")  # noqa: SIM115
        except OSError as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.close()
            raise StoreError(f"the store {self.path} is open in another session "
                             "(another process holds its lock)") from None
        try:
            if not os.path.exists(header_path):
                return self._create(program, print_, initial)
            return self._reopen(program, print_, migrate)
        except BaseException:
            self.close()
            raise

    def _create(self, program, print_: str, initial: Inputs) -> Opened:
        self._write_snapshot(0, 0, initial)
        with open(os.path.join(self.path, "log"), "wb") as log:
            os.fsync(log.fileno())
        self._write_header({"format": FORMAT, "program": print_,
                            "source": _program_name(program),
                            "snapshot_every": self.snapshot_every})
        self._log = open(os.path.join(self.path, "log"), "ab")  # noqa: SIM115
        return Opened({name: set(rows) for name, rows in initial.items()}, 0, True,
                      [f"created the store {self.path}"])

    def _reopen(self, program, print_: str, migrate: bool) -> Opened:
        header = self._read_header()
        messages: list[str] = []
        number, offset, inputs = self._latest_snapshot()
        log_path = os.path.join(self.path, "log")
        records, good_end, torn = read_records(log_path, offset, number)
        if torn:
            with open(log_path, "r+b") as log:
                log.truncate(good_end)
                os.fsync(log.fileno())
            messages.append(f"dropped a torn last record of the log ({torn} bytes at "
                            f"offset {good_end}): a crash interrupted its commit, which "
                            "had not returned")
        for record in records:
            apply_record(inputs, record)
        self.transactions = number + len(records)
        self._log = open(log_path, "ab")  # noqa: SIM115
        if header["program"] != print_:
            if not migrate:
                raise StoreError(_refusal(self.path, header))
            self._migrate(program, header, print_, inputs)
            messages.append(f"migrated the store {self.path} to this program at "
                            f"transaction {self.transactions}")
        return Opened(inputs, self.transactions, False, messages, (number, len(records)))

    def _migrate(self, program, header: dict, print_: str, inputs: Inputs) -> None:
        """Point the store at ``program``: its inputs must fit the new relations
        (the session validates them before this is called through
        :meth:`check_inputs`)."""
        check_inputs(program, inputs, self.path)
        self._write_snapshot(self.transactions, os.path.getsize(
            os.path.join(self.path, "log")), inputs)
        migrations = list(header.get("migrations", []))
        migrations.append({"at": self.transactions, "from": header["program"]})
        self._write_header({**header, "program": print_,
                            "source": _program_name(program),
                            "migrations": migrations})

    @property
    def closed(self) -> bool:
        return self._log is None

    def close(self) -> None:
        for handle in (self._log, self._lock):
            if handle is not None:
                handle.close()
        self._log = self._lock = None

    # ------------------------------------------------------------ writing

    def append(self, changes: Changes, inputs: Inputs) -> int:
        """Log the next transaction (``changes``: relation -> row -> inserted?),
        durably; every so many, a snapshot of ``inputs`` (the state after it).
        Returns its number."""
        number = self.transactions + 1
        payload = {"n": number}
        for sign, present in (("+", True), ("-", False)):
            part = {name: [encode_row(row) for row, p in rows.items() if p is present]
                    for name, rows in changes.items()}
            part = {name: rows for name, rows in part.items() if rows}
            if part:
                payload[sign] = part
        data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode()
        log = self._log
        position = log.tell()
        try:
            log.write(frame(data))
            log.flush()
            os.fsync(log.fileno())
        except OSError as exc:
            try:
                log.truncate(position)
            except OSError:
                pass
            raise StoreError(f"cannot write the log of {self.path}: {exc.strerror}; "
                             "the transaction was not committed") from None
        self.transactions = number
        if number % self.snapshot_every == 0:
            self._write_snapshot(number, log.tell(), inputs)
        return number

    def _write_snapshot(self, number: int, offset: int, inputs: Inputs) -> None:
        data = {"n": number, "log_offset": offset,
                "inputs": {name: [encode_row(row) for row in rows]
                           for name, rows in inputs.items() if rows}}
        _write_atomically(os.path.join(self.path, "snapshots", f"{number}.json"),
                          json.dumps(data, ensure_ascii=True).encode())

    def _write_header(self, header: dict) -> None:
        _write_atomically(os.path.join(self.path, "store.json"),
                          json.dumps(header, indent=1).encode())

    # ------------------------------------------------------------ reading

    def _read_header(self) -> dict:
        try:
            with open(os.path.join(self.path, "store.json"), "rb") as f:
                header = json.loads(f.read())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.path}/store.json cannot be read: {exc}") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise StoreError(f"{self.path} is not a store of this version "
                             f"(expected format `{FORMAT}`)")
        return header

    def _snapshots(self) -> list[int]:
        names = os.listdir(os.path.join(self.path, "snapshots"))
        return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())

    def _latest_snapshot(self, at_most: int | None = None) -> tuple[int, int, Inputs]:
        """(transaction, log offset, inputs) of the latest snapshot (not after
        transaction ``at_most``)."""
        for number in reversed(self._snapshots()):
            if at_most is not None and number > at_most:
                continue
            path = os.path.join(self.path, "snapshots", f"{number}.json")
            with open(path, "rb") as f:
                data = json.loads(f.read())
            inputs = {name: {decode_row(row) for row in rows}
                      for name, rows in data["inputs"].items()}
            return data["n"], data["log_offset"], inputs
        raise StoreError(f"the store {self.path} has no snapshot of transaction 0")

    def inputs_at(self, number: int) -> Inputs:
        """The inputs after transaction ``number`` (0 <= number <= transactions)."""
        first, offset, inputs = self._latest_snapshot(at_most=number)
        records, _, _ = read_records(os.path.join(self.path, "log"), offset, first,
                                     last=number)
        for record in records:
            apply_record(inputs, record)
        return inputs


def read_records(path: str, offset: int, before: int, last: int | None = None):
    """The records of the log at ``path`` from byte ``offset`` on, numbered from
    ``before + 1`` (up to ``last``); returns ``(records, end of the last good
    record, bytes of a torn tail or 0)``. Raises :class:`StoreError` when a
    damaged record is followed by good ones (not a crash: the log is corrupt)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    records: list[dict] = []
    position = 0
    expected = before + 1
    while position < len(data):
        if last is not None and expected > last:
            break
        record, end = _parse_record(data, position)
        if record is None or record.get("n") != expected:
            if _has_good_record_after(data, position):
                raise StoreError(
                    f"the log of {os.path.dirname(path)} is damaged at byte "
                    f"{offset + position} (transaction {expected}) and has records after "
                    "it: not a torn last record; refusing to guess")
            return records, offset + position, len(data) - position
        records.append(record)
        position = end
        expected += 1
    return records, offset + position, 0


def _parse_record(data: bytes, position: int) -> tuple[dict | None, int]:
    """The record starting at ``position`` and where it ends, or ``(None, _)``."""
    try:
        first = data.index(b" ", position, position + 9)
        second = data.index(b" ", first + 1, first + 22)
        crc = int(data[position:first], 16)
        length = int(data[first + 1:second])
    except ValueError:
        return None, position
    start = second + 1
    end = start + length
    if data[end:end + 1] != b"\n":
        return None, position
    payload = data[start:end]
    if zlib.crc32(payload) != crc:
        return None, position
    try:
        record = json.loads(payload)
    except ValueError:
        return None, position
    return (record if isinstance(record, dict) else None), end + 1


def _has_good_record_after(data: bytes, position: int) -> bool:
    newline = data.find(b"\n", position)
    while newline != -1 and newline + 1 < len(data):
        record, _ = _parse_record(data, newline + 1)
        if record is not None:
            return True
        newline = data.find(b"\n", newline + 1)
    return False


def apply_record(inputs: Inputs, record: dict) -> None:
    for name, rows in record.get("+", {}).items():
        inputs.setdefault(name, set()).update(decode_row(row) for row in rows)
    for name, rows in record.get("-", {}).items():
        inputs.setdefault(name, set()).difference_update(decode_row(row) for row in rows)


def check_inputs(program, inputs: Inputs, path: str) -> None:
    """Every stored row must fit ``program``'s relations (for a migration)."""
    from datalog.errors import DataError

    relations = program.plan.relations
    for name, rows in inputs.items():
        if rows and name not in relations:
            raise StoreError(f"cannot migrate the store {path}: it holds "
                             f"{len(rows)} row(s) of `{name}`, which this program does "
                             "not declare")
    probe = program.session().transaction()
    for name, rows in inputs.items():
        for row in rows:
            try:
                probe.insert(name, row)
            except DataError as exc:
                raise StoreError(f"cannot migrate the store {path}: {exc}") from None


def _program_name(program) -> str:
    """The file the program comes from (the REPL's ``<repl>`` names the file it
    started from, its first include), for messages."""
    paths = [path for path, _ in program.checked.program.sources if not path.startswith("<")]
    if program.path and not program.path.startswith("<"):
        return program.path
    return paths[0] if paths else "<string>"


def _refusal(path: str, header: dict) -> str:
    return (f"the store {path} was written by another program "
            f"({header.get('source', '?')}: its relations, rules or facts differ); "
            "open it with that program, or with migrate=True (--migrate) to carry its "
            "inputs over to this one")


def _write_atomically(path: str, data: bytes) -> None:
    """Write ``path`` so that a crash leaves the old file or the new one."""
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)
    directory = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
