"""A Spark standalone cluster on 127.0.0.1: a master and workers, each its own
JVM, started with the launcher classes that ship inside the pyspark package.

The tests start one for the whole run (``cluster`` in ``conftest.py``); a user
tries the engine against a cluster with::

    python -m tests.spark.cluster            # a master and two workers
    python -m tests.spark.cluster --connect  # also a Spark Connect server

which prints the URLs to pass as ``--master`` and runs until Ctrl-C.

Every JVM is started in a process group of its own (a worker's executors are
its children, in its group), so :meth:`Cluster.stop` ends each group with
SIGTERM, then SIGKILL after a grace period; on Linux each JVM also dies with
the process that started it (``PR_SET_PDEATHSIG``), so a killed test run leaves
no JVM behind. Logs and the workers' scratch space live in one temporary
directory, removed by :meth:`Cluster.stop`.

>>> Cluster(master_port=7077).master_url, Cluster(connect_port=15002).connect_url
('spark://127.0.0.1:7077', 'sc://127.0.0.1:15002')
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


class ClusterError(RuntimeError):
    """A JVM of the cluster did not start, or the workers did not register."""


def spark_home() -> str:
    """The pyspark package directory: it holds ``bin/spark-class`` and the jars."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def free_port() -> int:
    """A TCP port nothing listens on now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _death_signal():
    """On Linux, a function that asks for SIGKILL when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``), looked up before any fork so that the child
    only makes one foreign call; elsewhere None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGKILL)


@dataclass
class Cluster:
    """A standalone master with ``workers`` workers (``worker_cores`` cores and
    ``worker_memory`` each), and a Spark Connect server when ``connect``."""

    workers: int = 2
    worker_cores: int = 2
    worker_memory: str = "2g"
    connect: bool = False
    timeout: float = 120.0
    directory: str = ""
    master_port: int = 0
    webui_port: int = 0
    connect_port: int = 0
    processes: dict = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def connect_url(self) -> str:
        return f"sc://{HOST}:{self.connect_port}"

    def start(self) -> Cluster:
        """Starts every JVM and returns once all workers (and the Connect server)
        are up; on failure everything started is stopped again."""
        self.directory = tempfile.mkdtemp(prefix="datalog-spark-cluster-")
        self.master_port, self.webui_port = free_port(), free_port()
        try:
            self._launch("master", MASTER_CLASS, "--host", HOST, "--port",
                         str(self.master_port), "--webui-port", str(self.webui_port))
            for number in range(self.workers):
                self.start_worker(f"worker-{number}")
            self.wait_for_workers(self.workers)
            if self.connect:
                self.connect_port = free_port()
                self._launch("connect", CONNECT_CLASS, "--master", self.master_url,
                             "--conf", f"spark.connect.grpc.binding.port={self.connect_port}",
                             "--conf", f"spark.connect.grpc.binding.address={HOST}",
                             "--conf", f"spark.driver.host={HOST}",
                             "--conf", f"spark.driver.bindAddress={HOST}",
                             "--conf", "spark.ui.enabled=false",
                             "--conf", "spark.sql.shuffle.partitions=2",
                             "--conf", "spark.executor.memory=512m",
                             # one core: the others are for applications run directly
                             "--conf", "spark.cores.max=1",
                             submit=True)
                self._wait_for_port(self.connect_port, "connect")
        except BaseException:
            self.stop()
            raise
        return self

    def start_worker(self, name: str) -> None:
        """Starts one more worker JVM (its own scratch directory, ports the OS picks)."""
        work_dir = os.path.join(self.directory, name)
        os.makedirs(work_dir, exist_ok=True)
        self._launch(name, WORKER_CLASS, self.master_url, "--host", HOST,
                     "--cores", str(self.worker_cores), "--memory", self.worker_memory,
                     "--port", "0", "--webui-port", "0", "--work-dir", work_dir)

    def _launch(self, name: str, cls: str, *args: str, submit: bool = False) -> None:
        home = spark_home()
        env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP=HOST,
                   SPARK_LOG_DIR=self.directory, SPARK_DAEMON_MEMORY="512m")
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        if submit:  # an application (the Connect server): through spark-submit
            command = [os.path.join(home, "bin", "spark-submit"), "--class", cls,
                       "--name", "Spark Connect server", *args]
        else:
            command = [os.path.join(home, "bin", "spark-class"), cls, *args]
        with open(os.path.join(self.directory, f"{name}.log"), "wb") as log:
            self.processes[name] = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, cwd=self.directory,
                preexec_fn=_death_signal())  # noqa: PLW1509 (one foreign call, no lock)

    def log(self, name: str) -> str:
        try:
            with open(os.path.join(self.directory, f"{name}.log"), encoding="utf-8",
                      errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    def status(self) -> dict:
        """The master's state as its web UI reports it (``/json``)."""
        url = f"http://{HOST}:{self.webui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)

    def alive_workers(self) -> int:
        try:
            workers = self.status().get("workers", [])
        except (OSError, ValueError):
            return 0
        return sum(1 for worker in workers if worker.get("state") == "ALIVE")

    def wait_for_workers(self, count: int) -> None:
        """Returns once ``count`` workers are registered and alive."""
        deadline = time.monotonic() + self.timeout
        while self.alive_workers() < count:
            self._check_running()
            if time.monotonic() > deadline:
                raise ClusterError(f"{count} workers did not register within "
                                   f"{self.timeout:.0f} s:\n{self.log('master')[-2000:]}")
            time.sleep(0.3)

    def wait_for_executors(self, app_name: str, count: int) -> str:
        """Waits until the running application ``app_name`` has executors on
        ``count`` workers; returns the name of one of those workers."""
        deadline = time.monotonic() + self.timeout
        while True:
            self._check_running()
            try:
                apps = self.status().get("activeapps", [])
            except (OSError, ValueError):
                apps = []
            ids = [app["id"] for app in apps if app.get("name") == app_name]
            hosts = [name for name in self.processes if name.startswith("worker")
                     and any(os.path.isdir(os.path.join(self.directory, name, app_id))
                             for app_id in ids)]
            if len(hosts) >= count:
                return hosts[0]
            if time.monotonic() > deadline:
                raise ClusterError(f"{app_name} had no executors on {count} workers "
                                   f"within {self.timeout:.0f} s")
            time.sleep(0.2)

    def _wait_for_port(self, port: int, name: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            self._check_running()
            try:
                with socket.create_connection((HOST, port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise ClusterError(f"{name} did not listen on port {port} within "
                                       f"{self.timeout:.0f} s:\n{self.log(name)[-2000:]}"
                                       ) from None
                time.sleep(0.3)

    def _check_running(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None and not name.startswith("worker"):
                raise ClusterError(f"{name} exited with status {process.returncode}:\n"
                                   f"{self.log(name)[-2000:]}")

    def kill(self, name: str) -> None:
        """SIGKILL to the process group of ``name``: a worker with its executors."""
        process = self.processes[name]
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()

    def stop(self, grace: float = 10.0) -> None:
        """Ends every JVM (SIGTERM, then SIGKILL after ``grace`` seconds) and
        removes the cluster's directory."""
        for process in self.processes.values():
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # the group too: executors outlive a worker that exited
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        self.processes.clear()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tests.spark.cluster",
        description="A Spark standalone cluster on 127.0.0.1 until Ctrl-C.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2, help="cores per worker")
    parser.add_argument("--memory", default="2g", help="memory per worker")
    parser.add_argument("--connect", action="store_true",
                        help="also start a Spark Connect server")
    args = parser.parse_args(argv)
    cluster = Cluster(workers=args.workers, worker_cores=args.cores,
                      worker_memory=args.memory, connect=args.connect)
    print(f"starting a master and {args.workers} workers ...", file=sys.stderr)
    with cluster:
        print(f"--master {cluster.master_url}")
        if args.connect:
            print(f"--master {cluster.connect_url}")
        print(f"master UI: http://{HOST}:{cluster.webui_port}; Ctrl-C stops the cluster",
              file=sys.stderr)
        sys.stdout.flush()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            signal.pause()
        except (KeyboardInterrupt, SystemExit):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
