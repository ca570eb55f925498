"""Real Spark servers for tests, started from the pyspark wheel on 127.0.0.1.

Each server is a child process in its own process group, stopped by its process id.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
from py4j.java_gateway import JavaClass, JavaMember

SPARK_HOME = Path(pyspark.__file__).parent

#: Settings shared by the tests' local session and their Connect server. Tiny inputs:
#: one partition per core, and every operator and expression interpreted instead of
#: compiled per query (no whole-stage code, no generated projections: the JVM's JIT
#: then warms up once instead of for every query's new classes). The cluster test and
#: ``chronojoin bench --quick`` keep Spark's code generation on.
TEST_SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Spark sizes the memory pages of its sorts, aggregates and broadcast hash tables
    # from the JVM's memory: 64 MiB each with a 4g driver, one page at least per task and
    # per broadcast, however few the rows. The tests' tiny inputs fit in 1 MiB (larger
    # records get a page of their own size). After four rounds of 18 unioned joins in one
    # session, a full collection left 170 MB of live heap instead of 2 GB.
    "spark.buffer.pageSize": "1m",
}


#: The JIT of the JVMs the tests start (all but the installed wheel's demo, which runs
#: as a user's would): the quick compiler only (C1, no profiling, no C2). The suite
#: runs thousands of small, different queries, whose code seldom runs long enough to
#: repay C2: with it, compiling took a third of a test session's CPU time, and on two
#: cores that work competes with the tests themselves. A JVM that compiles with C1 only
#: reserves 48 MB for compiled code, as a client VM does; the suite's sessions filled it
#: within minutes (107 s of tests/asof/test_edges.py compiled 26,600 methods and left
#: 7 MB free), after which the JVM flushed compiled methods and compiled them again.
#: With the tiered default of 240 MB, three files of as-of tests took 269-274 s on two
#: workers instead of 312-321 s, the JIT's threads 8-9 s of CPU per worker instead of
#: 31-33 s.
TEST_JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


#: The environment variable through which child processes find the class-data archive.
CLASS_ARCHIVE_ENV = "CHRONOJOIN_TEST_CLASS_ARCHIVE"


def short_lived_java_options() -> str:
    """JVM options of a short-lived child session: a collector and a JIT that start
    fast and, when :func:`build_class_archive` made one for this run, the classes that
    a Spark session loads mapped from that archive instead of loaded one by one (about
    half of a local session's start and of its first job)."""
    options = f"-XX:+UseSerialGC {TEST_JIT}"
    archive = os.environ.get(CLASS_ARCHIVE_ENV)
    if archive and os.path.exists(archive):
        options += f" -XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off"
    return options


def short_lived_conf() -> dict[str, str]:
    """The settings of a short-lived child session: the tests' settings (no code
    generation, which a short-lived JVM would spend its time on), no console progress
    and a fast-starting JVM (:func:`short_lived_java_options`)."""
    return {**TEST_SESSION_CONF, "spark.ui.showConsoleProgress": "false",
            "spark.driver.extraJavaOptions": short_lived_java_options()}


def short_lived_builder(app_name: str):  # type: ignore[no-untyped-def]
    """A ``local[1]`` session builder for a child process, with :func:`short_lived_conf`."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName(app_name)
    for key, value in short_lived_conf().items():
        builder = builder.config(key, value)
    return builder


#: The Java classes PySpark looks up by name in its gateway on every column function,
#: ``select``, Python function and local table: a short name (``PythonUtils``) is first
#: tried as a class of the default package, then under each package the gateway imports,
#: and every miss searches all ~280 jars of Spark's class path. Resolved once instead,
#: a ``select`` took 4-5 ms instead of 8, building a keyed ``broadcast`` join 155 ms
#: instead of 220, and tests/asof/test_edges.py, run alone, 173 s instead of 205.
LOOKED_UP_CLASSES = (
    "functions", "org.apache.spark.sql.functions", "PythonUtils", "PythonSQLUtils",
    "PythonRDD", "SerDeUtil", "SimplePythonFunction",
    "org.apache.spark.sql.classic.SparkSession", "org.apache.spark.sql.expressions.Window",
)


class _Remembered(JavaClass):
    """A Java class whose static methods are looked up once."""

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        member = super().__getattr__(name)
        if isinstance(member, JavaMember):  # a method, not a field's current value
            self.__dict__[name] = member
        return member


def remember_java_classes(spark) -> None:  # type: ignore[no-untyped-def]
    """Let a classic session's Python side resolve :data:`LOOKED_UP_CLASSES` and their
    static methods once, to the same classes and methods the gateway resolves them to,
    instead of asking the JVM on every call."""
    jvm = spark.sparkContext._jvm
    for name in LOOKED_UP_CLASSES:
        found = getattr(jvm, name)
        if isinstance(found, JavaClass):
            jvm.__dict__[name] = _Remembered(found._fqn, jvm._gateway_client)


def child_env() -> dict[str, str]:
    """The environment of a Python child process: this one's, with its import path.

    The child imports ``tests`` and ``chronojoin`` as this process does, and Spark
    binds to 127.0.0.1.
    """
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SPARK_LOCAL_IP": "127.0.0.1"}


def metastore_conf(root: str | Path) -> dict[str, str]:
    """A Hive-enabled session's warehouse and embedded Derby metastore, under ``root``."""
    root = Path(root)
    return {"spark.sql.warehouse.dir": str(root / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"}


def build_class_archive(path: Path, timeout: float = 300.0) -> bool:
    """Write a JVM class-data archive (Java 13+) of a short-lived session's classes.

    A child process (:mod:`tests.class_archive`) runs an incremental load in a
    short-lived session whose JVM writes the classes it loaded to ``path`` when it
    exits. The archive is complete once every process of that child's group is gone;
    it is then renamed into place. Returns whether it exists (without it, sessions
    start as they would anyway).
    """
    partial = path.with_name(path.name + ".partial")
    cmd = [sys.executable, "-m", "tests.class_archive", str(partial), str(path.parent)]
    env = child_env()
    env.pop(CLASS_ARCHIVE_ENV, None)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        proc.wait(timeout=timeout)
        while time.monotonic() < deadline:   # the JVM writes the archive as it exits
            os.killpg(proc.pid, 0)
            time.sleep(0.2)
    except ProcessLookupError:
        if proc.returncode == 0 and partial.exists():
            partial.replace(path)
    except subprocess.TimeoutExpired:
        pass
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return path.exists()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    """Block until ``port`` accepts connections, or fail if ``proc`` died or time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"server exited with code {proc.returncode} before listening on {port}"
            raise RuntimeError(msg)
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        time.sleep(0.5)
    msg = f"nothing listening on 127.0.0.1:{port} after {timeout} s"
    raise RuntimeError(msg)


def stop(proc: subprocess.Popen) -> None:
    """Stop a server started here: SIGTERM its process group, SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@contextlib.contextmanager
def connect_server(log_path: Path, master: str = "local[2]") -> Iterator[str]:
    """Run the Spark Connect server that ships in the wheel; yield its ``sc://`` URL."""
    port = free_port()
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(SPARK_HOME))
    cmd = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", master,
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--driver-java-options", TEST_JIT,
        *[arg for k, v in TEST_SESSION_CONF.items() for arg in ("--conf", f"{k}={v}")],
    ]
    with open(log_path, "wb") as log:
        # in the log's directory: tables saved without a path go to its spark-warehouse/
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=log_path.parent)
    try:
        wait_for_port(port, proc)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop(proc)
