"""The Spark engine against a real standalone cluster on 127.0.0.1 (a master
and two workers, each its own JVM, and a Spark Connect server: the
session-scoped ``cluster`` fixture): ``datalog run --engine spark --master
spark://...`` and ``sc://...`` write what the local engine writes, byte for
byte, also when a worker is killed mid-run; a spilling session whose traces live
on the cluster answers what the in-memory one does.

Every run is the real ``datalog`` command in a subprocess (a process has one
SparkContext, and the other Spark tests hold a local one). A cluster this small
wants few shuffle partitions (``--spark-conf``), as the README says.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.spark.engines import read_outputs

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
BILL = ROOT / "programs" / "bill_of_materials"   # recursion, aggregation, negation
TC = ROOT / "programs" / "transitive_closure"
SMALL = ["--spark-conf", "spark.sql.shuffle.partitions=4",
         "--spark-conf", "spark.default.parallelism=4"]


def datalog(*args: str, cwd_: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(["datalog", *args], capture_output=True, text=True, env=env,
                          cwd=cwd_, timeout=600, check=False)


def local_outputs(program: Path, facts: Path, out: Path) -> dict[str, str]:
    result = datalog("run", str(program), "-F", str(facts), "-D", str(out))
    assert result.returncode == 0, result.stderr
    return read_outputs(str(out))


def test_run_on_the_cluster_equals_the_local_engine(cluster, tmp_path):
    expected = local_outputs(BILL / "bill_of_materials.dl", BILL / "facts", tmp_path / "local")
    result = datalog("run", str(BILL / "bill_of_materials.dl"), "-F", str(BILL / "facts"),
                     "-D", str(tmp_path / "spark"), "--engine", "spark",
                     "--master", cluster.master_url, *SMALL)
    assert (result.returncode, result.stderr) == (0, "")
    assert read_outputs(str(tmp_path / "spark")) == expected
    apps = cluster.status()["completedapps"]
    assert any(app["name"] == "datalog" for app in apps)  # it ran on the cluster


def test_run_through_spark_connect(cluster, tmp_path):
    expected = local_outputs(TC / "transitive_closure.dl", TC / "facts", tmp_path / "local")
    # relative paths, as a user types them: they name files here, not on the server
    result = datalog("run", "transitive_closure.dl", "-F", "facts",
                     "-D", str(tmp_path / "spark"), "--engine", "spark",
                     "--master", cluster.connect_url, "-v", *SMALL, cwd_=TC)
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"spark: master {cluster.connect_url}\n"
    assert read_outputs(str(tmp_path / "spark")) == expected


SPILLED_SESSION = """
import json, sys
import datalog
from engine.spark.session import configure
from tests.datalog.differential import MUTUAL_RECURSION, MUTUAL_RECURSION_TXS

configure(sys.argv[1], {"spark.sql.shuffle.partitions": "2"})
program = datalog.Program(MUTUAL_RECURSION)
sessions = [program.session(), program.session(spill_threshold=0)]
answers = []
for tx in [[]] + MUTUAL_RECURSION_TXS:
    for session in sessions:
        with session.transaction() as t:
            for op, relation, row in tx:
                getattr(t, op)(relation, row)
    answers.append([{name: sorted(map(list, session.query(name)))
                     for name in program.relations} for session in sessions])
from pyspark.sql import SparkSession  # the one the spilled traces use
print(json.dumps({"master": SparkSession.getActiveSession().sparkContext.master,
                  "answers": answers}))
"""


def test_spilling_session_on_the_cluster_equals_in_memory(cluster):
    import json

    result = subprocess.run([sys.executable, "-c", SPILLED_SESSION, cluster.master_url],
                            capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["master"] == cluster.master_url
    assert len(report["answers"]) > 1
    for number, (in_memory, spilled) in enumerate(report["answers"]):
        assert spilled == in_memory, f"transaction {number}"


CHAIN = 24   # iterations of the closure: long enough to kill a worker inside it


def test_a_worker_killed_mid_run_is_survived(cluster, tmp_path):
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text("".join(f"{i}\t{i + 1}\n" for i in range(CHAIN)))
    program = TC / "transitive_closure.dl"
    expected = local_outputs(program, facts, tmp_path / "local")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # Reliable checkpoints: a local checkpoint dies with its executor.
    run = subprocess.Popen(
        ["datalog", "run", str(program), "-F", str(facts), "-D", str(tmp_path / "spark"),
         "--engine", "spark", "--master", cluster.master_url, *SMALL,
         "--spark-conf", f"spark.checkpoint.dir={tmp_path / 'checkpoints'}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        victim = cluster.wait_for_executors("datalog", count=2)
        time.sleep(5)   # inside the loop: both executors hold shuffle files by now
        assert run.poll() is None, "the run ended before the worker could be killed"
        cluster.kill(victim)
        _, stderr = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        cluster.start_worker(f"{victim}-again")   # for the tests that follow
        cluster.wait_for_workers(2)
    assert run.returncode == 0, stderr
    assert read_outputs(str(tmp_path / "spark")) == expected
