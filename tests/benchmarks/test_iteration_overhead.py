"""`python -m benchmarks.iteration_overhead`: the CPU time of one iteration."""

from __future__ import annotations

import os
import subprocess
import sys


def test_the_command_prints_one_row_per_size():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    done = subprocess.run([sys.executable, "-m", "benchmarks.iteration_overhead",
                           "--sizes", "200", "300", "--runs", "1"], capture_output=True,
                          text=True, env=env, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["iterations", "engine", "us", "loop", "us", "ratio"]
    assert [row.split()[0] for row in rows] == ["200", "300"]
    for row in rows:
        engine, loop, ratio = map(float, row.split()[1:])
        assert engine > 0 and loop > 0 and abs(engine / loop - ratio) < 0.1 + ratio / 10
