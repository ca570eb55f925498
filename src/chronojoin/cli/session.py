"""The only place that builds a SparkSession, and input/output helpers for commands."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING

from chronojoin.cli.errors import CliError
from chronojoin.cli.options import key_value_pairs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def require_java() -> None:
    """Stop with a clear message when no Java runtime is installed."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        msg = (
            "Java is required (Spark runs on the JVM): install Java 17, e.g. "
            "`apt-get install openjdk-17-jre-headless`, or set JAVA_HOME"
        )
        raise CliError(msg)


def session(
    args: argparse.Namespace,
    app: str = "chronojoin",
    *,
    hive: bool = False,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Build (or reuse) the SparkSession for ``--master`` and ``--conf``.

    ``hive=True`` enables Hive support (a persistent metastore, e.g. for bucketed
    tables); ``conf`` holds a command's own defaults, which ``--conf`` overrides.
    """
    require_java()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(args.master).appName(app)
    builder = builder.config("spark.sql.session.timeZone", "UTC")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    if hive:
        builder = builder.enableHiveSupport()
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    for key, value in key_value_pairs(getattr(args, "conf", [])).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def read(spark: SparkSession, path: str, fmt: str | None = None) -> DataFrame:
    """Read a Parquet or CSV input; a missing path is a one-line error."""
    if not os.path.exists(path) and "://" not in path:
        msg = f"input path does not exist: {path}"
        raise CliError(msg)
    fmt = fmt or ("csv" if path.lower().endswith(".csv") else "parquet")
    if fmt == "csv":
        return spark.read.csv(path, header=True, inferSchema=True)
    return spark.read.parquet(path)


def write(df: DataFrame, path: str, mode: str = "errorifexists") -> None:
    """Write ``df`` as Parquet; an existing output without ``--mode overwrite`` is an error."""
    if mode != "overwrite" and os.path.exists(path):
        msg = f"output path exists: {path} (use --mode overwrite)"
        raise CliError(msg)
    df.write.mode(mode).parquet(path)
