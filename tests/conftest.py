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


def _build_session():
    from pyspark.sql import SparkSession

    remote = os.environ.get("CHRONOJOIN_TEST_REMOTE")
    if remote:
        return SparkSession.builder.remote(remote).getOrCreate()
    from tests.servers import TEST_SESSION_CONF

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
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    }
    builder = SparkSession.builder.master("local[2]").appName("chronojoin-tests")
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


#: markers of the tests whose work runs in child processes of their own
APART = ("processes", "connect", "cluster")


def pytest_collection_modifyitems(config, items):
    """Two groups for ``pytest -n 2 --dist loadgroup`` (pytest-xdist), as CI runs them.

    The tests whose Spark work runs in child processes (a Connect server, a standalone
    cluster, killed loader workers, the metastore worker, the ``load`` and ``bench``
    commands) go to one worker; every other test goes to the other, which keeps one
    warm local session for them all (the wheel, mypy and mkdocs runs too, which
    balances the two). The two use the machine's two cores side by side.
    """
    for item in items:
        apart = any(item.get_closest_marker(name) for name in APART)
        item.add_marker(pytest.mark.xdist_group("processes" if apart else "session"))


@pytest.fixture(scope="session")
def spark():
    session = _build_session()
    if not os.environ.get("CHRONOJOIN_TEST_REMOTE"):
        session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
