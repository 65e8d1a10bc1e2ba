"""A Python 3.12 interpreter with pydbsp, for the one peer that needs it.

pydbsp requires Python 3.12 and the project runs on 3.11. This module finds an
interpreter of version 3.12 or later that is already on the machine (on the
``PATH`` or among pyenv's installed versions: nothing is downloaded but the
pydbsp package itself, from PyPI), makes a virtual environment with it, and
installs the pinned pydbsp there. When no such interpreter exists,
:class:`Unavailable` says so, and the table reports pydbsp as not measured.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

PYDBSP = "pydbsp==2.1.0"
VENV = os.environ.get("DATALOG_BENCH_PY312_VENV",
                      os.path.expanduser("~/.cache/datalog-circuits/bench-py312"))


class Unavailable(Exception):
    """No Python 3.12 with pydbsp can be had here; the message says why."""


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    major, minor = done.stdout.split()
    return int(major), int(minor)


def candidates() -> list[str]:
    """Interpreters that might be 3.12 or later: on the PATH, then pyenv's."""
    found = [shutil.which(name) for name in ("python3.12", "python3.13", "python3.14")]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found += sorted(glob.glob(os.path.join(root, "versions", "3.1[2-9]*", "bin", "python3")))
    return [python for python in found if python]


def interpreter() -> str:
    """The first candidate that really runs as Python 3.12 or later."""
    for python in candidates():
        version = _version(python)
        if version is not None and version >= (3, 12):
            return python
    raise Unavailable("no Python >= 3.12 interpreter on this machine "
                      "(searched the PATH and pyenv's versions)")


def python_with_pydbsp() -> str:
    """The path of a Python >= 3.12 that can ``import pydbsp``, creating and
    filling the virtual environment on first use."""
    python = os.path.join(VENV, "bin", "python")
    if os.path.exists(python) and _has_pydbsp(python):
        return python
    base = interpreter()
    steps = [[base, "-m", "venv", "--clear", VENV],
             [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PYDBSP]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
            raise Unavailable(f"{' '.join(step[1:4])} failed: {lines[-1]}")
    if not _has_pydbsp(python):
        raise Unavailable(f"{PYDBSP} installed but does not import under {base}")
    return python


def _has_pydbsp(python: str) -> bool:
    done = subprocess.run([python, "-c", "import pydbsp.datalog_stratified"],
                          capture_output=True, timeout=60, check=False)
    return done.returncode == 0
