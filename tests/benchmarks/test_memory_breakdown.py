"""`python -m benchmarks.memory_breakdown`: where a session's memory is."""

from __future__ import annotations

import os
import subprocess
import sys

import datalog
from benchmarks import workloads
from benchmarks.memory_breakdown import breakdown


def test_the_traces_hold_what_the_closure_of_a_chain_adds():
    program = datalog.Program(workloads.TC_PROGRAM)
    sizes = {}
    for nodes in (100, 200):
        session = program.session()
        session.insert("edge", [(i, i + 1) for i in range(nodes - 1)])
        parts = dict(breakdown(session))
        traces = {label: size for label, size in parts.items() if "Trace" in label}
        assert traces and max(parts.values()) == max(traces.values())
        sizes[nodes] = sum(traces.values())
    # 4,950 paths, then 19,900: the traces grow with the paths (rows and histories)
    assert 3 < sizes[200] / sizes[100] < 5


def test_the_command_prints_the_parts_per_derived_tuple():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root}
    for extra in ([], ["--tracemalloc", "3"]):
        done = subprocess.run([sys.executable, "-m", "benchmarks.memory_breakdown",
                               "negagg-25-35", *extra], capture_output=True, text=True,
                              env=env, cwd=root, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("negagg-25-35: ")
        assert "B/tuple" in done.stdout
    assert "session inputs" in subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_breakdown", "tc-chain-12"],
        capture_output=True, text=True, env=env, cwd=root, timeout=120).stdout
