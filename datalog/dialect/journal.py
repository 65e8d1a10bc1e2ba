"""Replacing several output files as one unit, through a journal.

``rename(2)`` replaces one file atomically, never several. A run that writes
several outputs therefore goes through four steps, in a folder ``DIR`` that it
holds locked (an advisory ``flock`` on the folder: one writer at a time):

1. every output is written to a temporary file ``.datalog-*.tmp`` beside its
   target and flushed to disk (``fsync``); the targets are untouched (when a
   target lies outside ``DIR``, ``DIR/.datalog-places`` first lists the folders
   that will hold temporary files, so that a crash in this step leaves nothing
   behind that :func:`recover` does not find);
2. the journal ``DIR/.datalog-journal`` (the list of renames, JSON) is written
   to a temporary file, flushed, and renamed into place: this rename is the
   commit point;
3. each temporary file is renamed onto its target;
4. the journal is removed.

A crash (``kill -9``, a power cut) before the commit point leaves every old
output as it was; after it, every new output is on disk in full. The next
writer into ``DIR`` (:func:`recover`, which every run calls first) finishes an
interrupted journal (step 3 again for the renames not done, then 4) and removes
temporary files that no journal names. Between a crash and that next run, a
reader may see some outputs new and some old: the journal's presence marks that
state.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> replace_all({os.path.join(d, "a.csv"): "1\\n", os.path.join(d, "b.csv"): "2\\n"}, d)
>>> sorted(os.listdir(d))
['a.csv', 'b.csv']
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator

#: The journal of an interrupted replacement, in the folder of the outputs.
JOURNAL = ".datalog-journal"
#: The folders other than ``DIR`` where temporary files are being written.
PLACES = ".datalog-places"
#: Temporary files are ``.datalog-<random>.tmp``.
TEMP_PREFIX, TEMP_SUFFIX = ".datalog-", ".tmp"
#: Spark's writer stages its outputs in folders ``.datalog-spark-<random>``.
STAGING_PREFIX = ".datalog-spark-"


class OutputError(OSError):
    """An output cannot be written (its path is a folder, ...)."""


def replace_all(contents: dict, folder: str) -> None:
    """Write ``contents`` (path -> text, bytes, or a callable that writes the
    temporary file whose path it is given) so that either every file is replaced
    or none (module docstring); ``folder`` holds the lock and the journal.
    Files get ``0666`` less the umask, as ``open()`` gives them."""
    for path in contents:
        if os.path.isdir(path):
            raise OutputError(f"{path} is a folder")
    os.makedirs(folder, exist_ok=True)
    with locked(folder):
        recover(folder, locked_already=True)
        _write_places(folder, {os.path.dirname(os.path.abspath(path)) for path in contents})
        temps: list[tuple[str, str]] = []
        try:
            mode = 0o666 & ~_umask()
            for path, text in contents.items():
                directory = os.path.dirname(os.path.abspath(path))
                os.makedirs(directory, exist_ok=True)
                fd, temp = tempfile.mkstemp(dir=directory, prefix=TEMP_PREFIX,
                                            suffix=TEMP_SUFFIX)
                temps.append((temp, os.path.abspath(path)))
                os.fchmod(fd, mode)  # mkstemp makes 0600 files
                if callable(text):  # a writer that fills the file itself (a database)
                    os.close(fd)
                    text(temp)
                    fd = os.open(temp, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                    continue
                with (os.fdopen(fd, "wb") if isinstance(text, bytes) else
                      os.fdopen(fd, "w", encoding="utf-8", newline="")) as handle:
                    handle.write(text)
                    handle.flush()
                    os.fsync(handle.fileno())
        except BaseException:  # an OSError, or Ctrl-C: no temporary file stays
            for temp, _ in temps:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
            _drop(folder, PLACES)
            raise
        rename_all(temps, folder, locked_already=True)


def rename_all(renames: list[tuple[str, str]], folder: str,
               locked_already: bool = False) -> None:
    """Rename each ``(temp, final)`` of ``renames`` (complete files, flushed to
    disk) as one unit: steps 2 to 4 of the module docstring."""
    with contextlib.nullcontext() if locked_already else locked(folder):
        try:
            _write_journal(folder, renames)
        except BaseException:
            for temp, _ in renames:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
            raise
        _finish(folder, renames)


def recover(folder: str, locked_already: bool = False) -> None:
    """Finish the replacement a crash interrupted in ``folder`` (if its journal
    is there) and remove temporary files no journal names."""
    if not os.path.isdir(folder):
        return
    with contextlib.nullcontext() if locked_already else locked(folder):
        journal = os.path.join(folder, JOURNAL)
        renames: list[tuple[str, str]] = []
        if os.path.exists(journal):
            with open(journal, encoding="utf-8") as handle:
                renames = [tuple(pair) for pair in json.load(handle)]
        places = _read_places(folder)
        if renames:
            _finish(folder, renames)
        for directory in ({folder} | places
                          | {os.path.dirname(final) for _, final in renames}):
            for temp in _temporaries(directory):
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        _drop(folder, PLACES)
        for name in os.listdir(folder):  # the staging folders of Spark's writer
            if name.startswith(STAGING_PREFIX):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _temporaries(directory: str) -> Iterator[str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
            yield os.path.join(directory, name)


def _write_journal(folder: str, renames: list[tuple[str, str]]) -> None:
    fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(renames, handle)
            handle.flush()
            os.fsync(handle.fileno())
        for directory in {os.path.dirname(final) for _, final in renames}:
            _sync_folder(directory)  # the temporary files' names are durable
        os.replace(temp, os.path.join(folder, JOURNAL))  # the commit point
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _sync_folder(folder)


def _finish(folder: str, renames: list[tuple[str, str]]) -> None:
    """Steps 3 and 4: rename what is still to rename, then drop the journal."""
    for temp, final in renames:
        if os.path.exists(temp):
            os.replace(temp, final)
    for directory in {os.path.dirname(final) for _, final in renames}:
        _sync_folder(directory)
    _drop(folder, JOURNAL)
    _drop(folder, PLACES)
    _sync_folder(folder)


def _write_places(folder: str, directories: set[str]) -> None:
    """Step 1's list of the folders other than ``folder`` that will hold
    temporary files, on disk before any of them is made (none needed when
    every target is in ``folder``)."""
    others = sorted(directories - {os.path.abspath(folder)})
    if not others:
        return
    with open(os.path.join(folder, PLACES), "w", encoding="utf-8") as handle:
        json.dump(others, handle)
        handle.flush()
        os.fsync(handle.fileno())
    _sync_folder(folder)


def _read_places(folder: str) -> set[str]:
    """The folders a crash in step 1 may have left temporary files in. A list
    torn by the crash was not complete on disk, so no temporary file was made
    yet: it names none."""
    try:
        with open(os.path.join(folder, PLACES), encoding="utf-8") as handle:
            return set(json.load(handle))
    except (FileNotFoundError, ValueError):
        return set()


def _drop(folder: str, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(folder, name))


@contextlib.contextmanager
def locked(folder: str) -> Iterator[None]:
    """``folder``'s lock held (an advisory ``flock`` on the folder itself; waits
    for another writer)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _sync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
