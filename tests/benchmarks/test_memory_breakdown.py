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


def test_profile_engine_cpu_prints_times_and_paths():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-m", "benchmarks.profile_engine", "tc-chain-400",
                           "--cpu", "--updates", "2"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": root}, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "== tc-chain-400: batch" and lines[3] == "== tc-chain-400: 2 updates"
    assert lines[1].startswith("cpu ") and "(per step, 4 steps)" in lines[4]
    # the chain's batch runs the columnar joins and Distinct (engine.colbatch.COUNTS)
    paths = dict(p.split("=") for p in lines[2].removeprefix("paths ").split())
    assert int(paths["join"]) > 0 and int(paths["distinct"]) > 0
