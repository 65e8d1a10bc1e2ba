"""Sessions and the command line: the default local session, a session handed
in by an application, the one-sentence errors without pyspark or Java, and
``import datalog`` never importing pyspark."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from engine.errors import SparkUnavailableError
from engine.spark.session import get_session

ROOT = Path(__file__).resolve().parents[2]
TC = ROOT / "programs" / "transitive_closure"


def test_import_datalog_does_not_import_pyspark():
    code = ("import sys, datalog, datalog.api, datalog.backends.spark.run, cli; "
            "print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_without_pyspark_one_sentence_says_what_to_install():
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from engine.spark.session import get_session\n"
            "try:\n    get_session()\nexcept Exception as e:\n    print(type(e).__name__, e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.startswith("SparkUnavailableError error: the Spark engine needs PySpark")
    assert 'pip install "datalog-circuits[spark]"' in out.stdout


def test_without_java_the_command_fails_with_one_sentence(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    python_dir = os.path.dirname(sys.executable)
    env["PATH"] = python_dir      # the python tools, and no java
    command = [os.path.join(python_dir, "datalog"), "run", str(TC / "transitive_closure.dl"),
               "-F", str(TC / "facts"), "-D", str(tmp_path), "--engine", "spark"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1
    assert "needs a Java runtime (17 or newer)" in out.stderr
    assert not list(tmp_path.iterdir())


def test_missing_java_is_detected_before_starting(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SparkUnavailableError, match="Java runtime"):
        get_session("local[1]")


@pytest.mark.spark
def test_a_handed_in_session_is_used_as_it_is(spark):
    assert get_session(spark=spark) is spark
    assert spark.conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.driver.bindAddress") == "127.0.0.1"


@pytest.mark.spark
def test_cli_run_engine_spark(spark, tmp_path):
    result = CliRunner().invoke(main, ["run", str(TC / "transitive_closure.dl"), "-F",
                                       str(TC / "facts"), "-D", str(tmp_path),
                                       "--engine", "spark"])
    assert result.exit_code == 0, result.output
    for expected in (TC / "expected").iterdir():
        assert (tmp_path / expected.name).read_text() == expected.read_text()


def test_parquet_needs_the_spark_engine(tmp_path):
    result = CliRunner().invoke(main, ["run", str(TC / "transitive_closure.dl"), "-F",
                                       str(TC / "facts"), "-D", str(tmp_path),
                                       "--output-format", "parquet"])
    assert result.exit_code == 2
    assert "--engine spark" in result.output


@pytest.mark.spark
def test_verbose_prints_master_and_ui_and_nothing_else(tmp_path):
    # the real command: a JVM of its own, whose standard error is the test's
    command = ["datalog", "run", str(TC / "transitive_closure.dl"), "-F", str(TC / "facts"),
               "-D", str(tmp_path), "--engine", "spark", "--master", "local[1]", "-v",
               "--spark-conf", "spark.ui.enabled=true", "--spark-conf", "spark.ui.port=0"]
    out = subprocess.run(command, capture_output=True, text=True, check=False,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    master, ui = out.stderr.splitlines()   # no log line, no JVM notice
    assert master == "spark: master local[1]"
    assert re.fullmatch(r"spark: web UI http://127\.0\.0\.1:\d+", ui)
    for expected in (TC / "expected").iterdir():
        assert (tmp_path / expected.name).read_text() == expected.read_text()


def test_spark_conf_must_be_key_value(tmp_path):
    result = CliRunner().invoke(main, ["run", str(TC / "transitive_closure.dl"), "-F",
                                       str(TC / "facts"), "-D", str(tmp_path),
                                       "--engine", "spark", "--spark-conf", "spark.ui"])
    assert result.exit_code == 2
    assert "Invalid value for '--spark-conf': `spark.ui` is not key=value" in result.output
    assert list(tmp_path.iterdir()) == []


def test_master_needs_spark_or_spilling(tmp_path):
    result = CliRunner().invoke(main, ["run", str(TC / "transitive_closure.dl"), "-F",
                                       str(TC / "facts"), "-D", str(tmp_path),
                                       "--spark-conf", "spark.ui.enabled=true"])
    assert result.exit_code == 2
    assert "--master and --spark-conf need --engine spark or --spill-threshold" in result.output
