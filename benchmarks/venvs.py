"""Virtual environments for the peers that cannot share the project's.

pydbsp requires Python 3.12 (the project runs on 3.11), and Pathway brings
about 1.5 GiB of dependencies whose pins we do not want in the project's
environment. For each such peer, this module finds an interpreter of the
version it needs that is already on the machine (on the ``PATH`` or among
pyenv's installed versions: nothing is downloaded but the peer's pinned
package and its dependencies, from the configured package index), makes a
virtual environment with it under ``~/.cache/datalog-circuits/``, and installs
the package there. When that cannot be done, :class:`Unavailable` says why,
and the table reports the peer as not measured.

>>> ENVIRONMENTS["pydbsp"].requirement
'pydbsp==2.1.0'
>>> ENVIRONMENTS["pathway"].python >= (3, 10)
True
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

CACHE = os.path.expanduser("~/.cache/datalog-circuits")


@dataclass(frozen=True)
class Environment:
    """A virtual environment holding one peer's package: the oldest Python it
    runs on, the pinned requirement, and the import that proves it works."""

    name: str
    python: tuple[int, int]
    requirement: str
    probe: str

    @property
    def path(self) -> str:
        variable = f"DATALOG_BENCH_{self.name.upper()}_VENV"
        return os.environ.get(variable, os.path.join(CACHE, f"bench-{self.name}"))


ENVIRONMENTS = {
    "pydbsp": Environment("pydbsp", (3, 12), "pydbsp==2.1.0", "import pydbsp.datalog_stratified"),
    "pathway": Environment("pathway", (3, 10), "pathway==0.33.0", "import pathway"),
}


class Unavailable(Exception):
    """A peer's environment cannot be had here; the message says why."""


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
    """Interpreters to try, in order: this one, then newer ones on the PATH,
    then pyenv's."""
    found = [sys.executable]
    found += [shutil.which(f"python3.{minor}") for minor in range(12, 15)]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found += sorted(glob.glob(os.path.join(root, "versions", "3.1[2-9]*", "bin", "python3")))
    return [python for python in found if python]


def interpreter(at_least: tuple[int, int]) -> str:
    """The first candidate that really runs as Python ``at_least`` or later."""
    for python in candidates():
        version = _version(python)
        if version is not None and version >= at_least:
            return python
    wanted = ".".join(map(str, at_least))
    raise Unavailable(f"no Python >= {wanted} interpreter on this machine "
                      "(searched the PATH and pyenv's versions)")


def python_for(name: str) -> str:
    """The path of a Python that can run peer environment ``name``, creating
    and filling its virtual environment on first use."""
    env = ENVIRONMENTS[name]
    python = os.path.join(env.path, "bin", "python")
    if os.path.exists(python) and _works(python, env):
        return python
    base = interpreter(env.python)
    steps = [[base, "-m", "venv", "--clear", env.path],
             [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              env.requirement]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=1200, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
            raise Unavailable(f"{' '.join(step[1:4])} failed: {lines[-1]}")
    if not _works(python, env):
        raise Unavailable(f"{env.requirement} installed but does not import under {base}")
    return python


def _works(python: str, env: Environment) -> bool:
    done = subprocess.run([python, "-c", env.probe], capture_output=True, timeout=120,
                          check=False)
    return done.returncode == 0
