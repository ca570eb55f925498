"""Every public operation on a real standalone cluster (master + two workers).

The cluster is started from the pyspark wheel on 127.0.0.1 and stopped by pid. The
operations and then the ``chronojoin asof`` command run in a child process (one
SparkContext per process; this process already has a local one) and write their results
as Parquet; the same operations run here on the local session, and the rows must be
equal.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chronojoin.bench.cluster import StandaloneCluster
from tests.cluster.operations import NATIVE_CONF, operations
from tests.servers import TEST_JIT, child_env

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _rows(df) -> list[tuple]:
    rows = [tuple(r) for r in df.collect()]
    return sorted(rows, key=lambda r: [(v is None, str(type(v)), v) for v in r])


def _same(actual, expected, name: str) -> None:
    assert actual.columns == expected.columns, name
    a, e = _rows(actual), _rows(expected)
    assert len(a) == len(e), f"{name}: {len(a)} rows on the cluster, {len(e)} locally"
    assert a == e, name


def _env() -> dict[str, str]:
    """The driver's environment: :func:`~tests.servers.child_env`, and the Python of the
    executors' workers."""
    return {**child_env(), "PYSPARK_PYTHON": sys.executable}


def test_every_operation_on_a_standalone_cluster(spark, tmp_path, monkeypatch):
    out, shared = tmp_path / "out", tmp_path / "cluster_table"
    left, right = tmp_path / "left", tmp_path / "right"
    from tests.cluster.operations import inputs

    data = inputs(spark)
    data["left"].write.parquet(str(left))
    data["right"].write.parquet(str(right))
    monkeypatch.setenv("SPARK_DAEMON_JAVA_OPTS", TEST_JIT)  # the master's and workers' JVMs
    cluster = StandaloneCluster(workers=2, cores_per_worker=1, memory_per_worker="1g",
                                executor_memory="512m", start_timeout_s=150)
    try:
        master = cluster.start()
        cli = ["asof", str(left), str(right), "--out", str(tmp_path / "cli_out"), "--on", "t",
               "--by", "id", "--strategy", "sort_merge"]
        job = subprocess.run(
            [sys.executable, "-m", "tests.cluster.operations", master, str(out), str(shared),
             *cli],
            cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False,
        )
        assert job.returncode == 0, job.stderr[-4000:]
        assert f"master {master}" in job.stdout   # it really ran on the cluster
        assert "wrote" in job.stdout.split("wrote loader", 1)[1]   # the command's output
    finally:
        cluster.stop()
    spark.conf.set(NATIVE_CONF, "true")
    try:
        expected = operations(spark, str(tmp_path / "local_table"))
        assert sorted(p.name for p in out.iterdir()) == sorted(expected)
        for name, df in expected.items():
            _same(spark.read.parquet(str(out / name)), df, name)
    finally:
        spark.conf.unset(NATIVE_CONF)
    _same(spark.read.parquet(str(tmp_path / "cli_out")), expected["asof_union"], "cli asof")
