"""One session-scoped local SparkSession for the whole suite."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.exit(
        "Java is required to run the tests (Spark runs on the JVM): install Java 17, "
        "e.g. `apt-get install openjdk-17-jre-headless`, or set JAVA_HOME",
        returncode=3,
    )

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("TZ", "UTC")


def _build_session(metastore: str | None = None):
    """The suite's local session; with ``metastore`` (a directory) a Hive-enabled one
    whose warehouse, embedded Derby metastore and Derby log are kept there."""
    from pyspark.sql import SparkSession

    remote = os.environ.get("CHRONOJOIN_TEST_REMOTE")
    if remote and metastore is None:
        return SparkSession.builder.remote(remote).getOrCreate()
    from tests.servers import TEST_JIT, TEST_SESSION_CONF, remember_java_classes

    conf = {
        **TEST_SESSION_CONF,
        "spark.default.parallelism": TEST_SESSION_CONF["spark.sql.shuffle.partitions"],
        "spark.ui.showConsoleProgress": "false",
        # Several joins of one test build their broadcasts at once; 2g failed once with
        # "Not enough memory to build and broadcast the table" on tiny inputs.
        "spark.driver.memory": "4g",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # the throughput collector: tests/interval_join and tests/band/test_edges.py took
        # 345 s against 367 s with the default G1
        "spark.driver.extraJavaOptions": f"-XX:+UseParallelGC {TEST_JIT}",
    }
    builder = SparkSession.builder.master("local[2]").appName("chronojoin-tests")
    if metastore is not None:
        from tests.servers import metastore_conf

        conf.update(metastore_conf(metastore))
        conf["spark.driver.extraJavaOptions"] += f" -Dderby.system.home={metastore}"
        builder = builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    remember_java_classes(session)
    return session


#: markers of the tests whose work runs in child processes of their own
APART = ("processes", "connect", "cluster")
#: the longest of those, longest first (several minutes each on two cores)
LONGEST = ("tests/loader/test_crash.py", "tests/connect/", "tests/cluster/")


def _start_rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(LONGEST):
        if path.startswith(prefix):
            return rank
    if any(item.get_closest_marker(name) for name in APART):
        return len(LONGEST)
    return len(LONGEST) + 1


def pytest_collection_modifyitems(config, items):
    """The tests whose work runs in child processes first, the longest of them first.

    ``pytest -n 2`` (pytest-xdist, as CI runs it) hands the tests out in this order, so
    the runs of several minutes (killed loader workers, a Connect server, a standalone
    cluster) start at once on the two workers and the many short in-process tests fill
    the time around them, instead of one long run being left alone at the end. Each
    worker keeps one local session for the in-process tests.
    """
    items.sort(key=_start_rank)  # stable: the rest keep their order


@pytest.fixture(scope="session")
def spark():
    session = _build_session()
    if not os.environ.get("CHRONOJOIN_TEST_REMOTE"):
        session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def full_auto(monkeypatch):
    """``strategy="auto"`` runs its statistics even on the tests' tiny inputs.

    (Inputs this small otherwise get a plan at once: see
    :data:`chronojoin.asof.choose.SMALL_INPUT_BYTES`,
    :data:`chronojoin.intervals.choose.SMALL_INPUT_BYTES` and
    :data:`chronojoin.band.plan.SMALL_INPUT_BYTES`.)
    """
    from tests.helpers import small_input_modules

    for module in small_input_modules():
        monkeypatch.setattr(module, "SMALL_INPUT_BYTES", 0)


@pytest.fixture(scope="session")
def class_archive(tmp_path_factory):
    """A class-data archive for the short-lived child sessions of this run, built once.

    Its path goes to the children through the environment
    (:data:`tests.servers.CLASS_ARCHIVE_ENV`). The pytest-xdist workers of one run share
    it: the first to ask builds it, under a file lock, in their common directory.
    """
    import fcntl

    from tests.servers import CLASS_ARCHIVE_ENV, build_class_archive

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "spark-classes.jsa"
    with open(root / "spark-classes.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = root / "spark-classes.failed"
        if not path.exists() and not failed.exists() and not build_class_archive(path):
            failed.touch()
    if path.exists():
        os.environ[CLASS_ARCHIVE_ENV] = str(path)
    yield path if path.exists() else None
    os.environ.pop(CLASS_ARCHIVE_ENV, None)
