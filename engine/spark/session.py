"""Getting a SparkSession: local by default, any cluster by master URL.

:func:`get_session` is the one place a session is made. Its defaults suit one
machine: master ``local[*]``, the web UI off, everything bound to the loopback
address (Spark otherwise binds the machine's external address), quiet logs, and
few shuffle partitions (one job per partition costs time; a laptop has few
cores). The same call reaches a cluster:

======================  ==================================================
``master``              what runs where
======================  ==================================================
``None``/``local[N]``   a Spark inside this process's JVM, on this machine
``spark://host:7077``   a standalone cluster; the driver stays here
``yarn``, ``k8s://..``  a YARN or Kubernetes cluster; the driver stays here
``sc://host:15002``     Spark Connect: the driver runs on the server, this
                        process only sends plans (DataFrame API only)
======================  ==================================================

An application that already has a session hands it in (``spark=``) and keeps
control of it: it is used as it is and never stopped here.

Without pyspark or Java, :func:`get_session` raises
:class:`~engine.errors.SparkUnavailableError` whose text says what to
install; pyspark is imported only when a session is asked for.

>>> is_connect_url("sc://localhost:15002"), is_local_master("local[2]"), is_local_master("yarn")
(True, True, False)
>>> shuffle_partitions(4)
8
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from typing import Any

from engine.errors import SparkUnavailableError

DEFAULT_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"
INSTALL_HINT = 'pip install "datalog-circuits[spark]" (PySpark 4) and a Java 17+ runtime'


def is_connect_url(master: str | None) -> bool:
    """Whether ``master`` names a Spark Connect server (``sc://...``)."""
    return bool(master) and master.startswith("sc://")


def is_local_master(master: str | None) -> bool:
    """Whether ``master`` runs Spark inside this machine's JVM (``local``,
    ``local[N]``, ``local[*]``, ``local[N,F]``)."""
    return master is None or master == "local" or master.startswith("local[")


def shuffle_partitions(cores: int | None = None) -> int:
    """Shuffle partitions for a local session: two per core. The default 200
    turns every small join into hundreds of tasks; with one per core (as
    RaSQL sets it) a core whose task ends first waits idle for the other's.
    Measured on 2 cores (``benchmarks.bigger_than_memory --engines spark``,
    1,000 nodes): 4 partitions 25% faster than 2, 8 10% slower than 4."""
    return 2 * (cores or os.cpu_count() or 1)


def driver_memory(total_bytes: int | None = None) -> str:
    """The JVM heap of a local session: a quarter of the machine's memory,
    between 1 and 16 GiB.

    >>> driver_memory(24 * 2**30), driver_memory(2 * 2**30), driver_memory(256 * 2**30)
    ('6g', '1g', '16g')
    """
    if total_bytes is None:
        try:
            total_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total_bytes = 4 * 2**30
    return f"{min(16, max(1, total_bytes // 4 // 2**30))}g"


def import_pyspark():
    """The ``pyspark.sql`` module, or :class:`SparkUnavailableError` saying what
    to install."""
    try:
        from pyspark import sql
    except ImportError as exc:
        raise SparkUnavailableError(
            f"the Spark engine needs PySpark, which is not installed ({exc}): "
            f"install it with {INSTALL_HINT}") from None
    return sql


_defaults: dict[str, Any] = {"master": None, "conf": {}, "verbose": False}


def configure(master: str | None = None, conf: Mapping[str, str] | None = None,
              verbose: bool = False) -> None:
    """The master, settings and verbosity of the session :func:`get_session`
    makes when called without a master: what spilled traces use, which ask
    for a session only when they first spill. Call it before the first
    session of the process is made (a running session is kept)."""
    _defaults.update(master=master, conf=dict(conf or {}), verbose=verbose)


def parse_conf(pairs) -> dict[str, str]:
    """``key=value`` texts (``--spark-conf``) as settings; a text without ``=``
    or with an empty key raises ValueError naming it.

    >>> parse_conf(["spark.ui.enabled=true", "spark.executor.memory=2g"])
    {'spark.ui.enabled': 'true', 'spark.executor.memory': '2g'}
    >>> parse_conf(["spark.ui.enabled"])
    Traceback (most recent call last):
    ...
    ValueError: `spark.ui.enabled` is not key=value
    """
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"`{pair}` is not key=value")
        settings[key.strip()] = value
    return settings


def get_session(master: str | None = None, *, spark: Any = None,
                app_name: str = "datalog", conf: Mapping[str, str] | None = None,
                checkpoint_dir: str | None = None, verbose: bool | None = None):
    """A SparkSession for ``master`` (see the module docstring), or ``spark``
    itself when one is handed in.

    ``conf`` adds or overrides Spark settings. ``checkpoint_dir`` sets
    ``spark.checkpoint.dir``: with it, recursive loops cut their lineage with
    reliable checkpoints in that directory (what a cluster wants) instead of
    executor-local ones. ``verbose`` prints the master URL and the web UI's
    address (when enabled) on standard error. Without ``master``, the
    defaults given to :func:`configure` apply.
    """
    if spark is not None:
        return spark
    if master is None and conf is None:
        master, conf = _defaults["master"], _defaults["conf"]
    if verbose is None:
        verbose = _defaults["verbose"]
    sql = import_pyspark()
    builder = sql.SparkSession.builder.appName(app_name)
    settings: dict[str, str] = {}
    if is_connect_url(master):
        builder = builder.remote(master)
    else:
        _require_java()
        master = master or DEFAULT_MASTER
        builder = builder.master(master)
        settings.update({
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            # PySpark prints Python worker tracebacks into every error otherwise.
            "spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled": "true",
        })
        settings["spark.driver.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile=file:{quiet_log_config()}")
        if is_local_master(master) or is_loopback_master(master):
            # Loopback only: nothing listens on the machine's external address.
            os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
            settings.update({
                "spark.driver.bindAddress": LOOPBACK,
                "spark.driver.host": LOOPBACK,
            })
        if is_local_master(master):
            settings.update({
                "spark.sql.shuffle.partitions": str(shuffle_partitions()),
                "spark.default.parallelism": str(shuffle_partitions()),
                # executors are threads of the driver's JVM: its default 1g
                # heap holds little of a relation of millions of rows
                "spark.driver.memory": driver_memory(),
            })
    if checkpoint_dir:
        settings["spark.checkpoint.dir"] = checkpoint_dir
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        if not is_connect_url(master):
            # what pyspark itself would hand to spark-submit
            _start_driver({"spark.master": master, "spark.app.name": app_name, **settings})
        session = builder.getOrCreate()
    except ImportError as exc:
        # Spark Connect needs grpcio and friends (the ``pyspark[connect]`` extra).
        raise SparkUnavailableError(
            f"Spark Connect ({master}) needs packages that are not installed ({exc}): "
            'install them with pip install "pyspark[connect]"') from None
    except Exception as exc:  # no JVM, a bad master or setting, no Connect server
        if not _is_start_failure(exc):
            raise
        raise SparkUnavailableError(
            f"could not start Spark with master {master!r}: {_first_line(exc)}; "
            f"the Spark engine needs {INSTALL_HINT}") from None
    if not is_connect_url(master):
        quiet(session)
    if verbose:
        sys.stderr.write(describe(session, master))
    return session


def is_loopback_master(master: str | None) -> bool:
    """Whether ``master`` is a cluster on this machine's loopback address (then
    the driver listens there too).

    >>> is_loopback_master("spark://127.0.0.1:7077"), is_loopback_master("spark://db1:7077")
    (True, False)
    """
    host = (master or "").partition("://")[2].rpartition(":")[0]
    return host in (LOOPBACK, "localhost")


def describe(session, master: str | None) -> str:
    """The lines ``-v`` prints: the master URL and the web UI's address."""
    lines = [f"spark: master {master}\n"]
    if not is_connect_url(master):
        url = session.sparkContext.uiWebUrl
        lines.append(f"spark: web UI {url}\n" if url else
                     "spark: web UI off (--spark-conf spark.ui.enabled=true turns it on)\n")
    return "".join(lines)


# What the driver's JVM prints on standard error before any setting can take
# effect: the module system's notice of the incubator module Spark 4 loads.
JVM_NOISE = (b"WARNING: Using incubator modules:",)


def _start_driver(settings: Mapping[str, str]) -> None:
    """Starts the driver's JVM (unless this process has one) with its standard
    error passed on line by line, except :data:`JVM_NOISE`."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    read_end, write_end = os.pipe()
    reader = threading.Thread(target=_pass_on, args=(read_end,), daemon=True,
                              name="spark-stderr")
    reader.start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    except BaseException:
        os.close(write_end)
        reader.join(5)  # the JVM's last words, before the error that follows them
        raise
    os.close(write_end)
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _pass_on(read_end: int) -> None:
    with os.fdopen(read_end, "rb") as pipe:
        for line in pipe:
            if not line.startswith(JVM_NOISE):
                os.write(2, line)


def _is_start_failure(exc: BaseException) -> bool:
    """A JVM that did not start, a master that cannot be reached, or a setting
    Spark refused (py4j's and PySpark's errors)."""
    return (isinstance(exc, (RuntimeError, OSError, ValueError))
            or type(exc).__module__.startswith(("py4j", "pyspark.errors")))


def quiet(session) -> None:
    """Nothing but fatal errors in Spark's log from now on: a failing job
    reaches the caller as an exception, which the executor turns into one
    message (the JVM's start-up banner is printed before any setting can take
    effect; a Spark Connect server keeps its own log)."""
    session.sparkContext.setLogLevel("FATAL")


_LOG_CONFIG = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = fatal
"""


def quiet_log_config() -> str:
    """A log4j2 configuration that logs fatal errors only (Spark's default
    profile announces itself and warns about native libraries on every start,
    and logs every failed task with its stack trace). PySpark's gateway
    initialises logging as a shell does, which prints "Setting default log
    level" unless its own logger has a level of its own equal to the root's."""
    path = os.path.join(tempfile.gettempdir(), "datalog-spark-log4j2.properties")
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == _LOG_CONFIG:
                return path
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_LOG_CONFIG)
    return path


def _require_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise SparkUnavailableError(
            f"the Spark engine needs a Java runtime (17 or newer), and none was found "
            f"(no `java` on PATH, JAVA_HOME unset): install one, e.g. OpenJDK 17; "
            f"the full set-up is {INSTALL_HINT}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
