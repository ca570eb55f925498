"""Benchmark inputs kept on disk: generated once, then read back as Parquet.

Cases read their inputs from Parquet (as the thesis read them from S3), so the timed
plans include the scan and nothing is cached in memory between methods.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from chronojoin._session import local_cores
from chronojoin.datagen.store import write_bucketed, write_tables

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Database of the bucketed tables the benchmarks create in their own session.
BENCH_DATABASE = "chronojoin_bench"

#: The DuckDB connection each thread is running a query on (see :func:`interrupt_duckdb`).
_RUNNING: dict[int, Any] = {}
_RUNNING_LOCK = threading.Lock()


def default_data_dir() -> str:
    """Where generated inputs go when no directory is given."""
    return os.path.join(tempfile.gettempdir(), "chronojoin-bench-data")


def cached_parquet(
    spark: SparkSession, data_dir: str | None, name: str,
    make: Callable[[], Mapping[str, DataFrame]], params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Read ``data_dir/name/<table>``; generate and write it first if incomplete.

    Returns table name -> DataFrame, plus ``<table>_path`` -> its directory.
    """
    root = os.path.join(data_dir or default_data_dir(), name)
    marker = os.path.join(root, "_COMPLETE")
    if not os.path.exists(marker):
        write_tables(make(), root, mode="overwrite", params=params)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write("ok\n")
    out: dict[str, Any] = {}
    for table in sorted(os.listdir(root)):
        path = os.path.join(root, table)
        if os.path.isdir(path):
            out[table] = spark.read.parquet(path)
            out[f"{table}_path"] = path
    return out


def bucketed_tables(
    spark: SparkSession, tables: Mapping[str, DataFrame], *, name: str, buckets: int
) -> dict[str, DataFrame]:
    """Bucketed copies (by ``id``, sorted by ``time``) in this session's catalog."""
    found = {
        t: f"{BENCH_DATABASE}.{name}_{t}_b{buckets}" for t in tables
    }
    if not all(spark.catalog.tableExists(q) for q in found.values()):
        found = write_bucketed(tables, buckets=buckets, database=BENCH_DATABASE, prefix=name)
    return {t: spark.table(q) for t, q in found.items()}


def duckdb_threads(spark: Any) -> int:
    """Threads for the DuckDB reference: the cores of a local master, else this machine's."""
    return local_cores(str(spark.conf.get("spark.master", "local[*]"))) or os.cpu_count() or 1


def duckdb_row(inputs: Mapping[str, Any], query: str, paths: list[str]) -> tuple[Any, ...]:
    """Run the DuckDB reference ``query`` over Parquet datasets and return its one row.

    ``paths`` are the inputs' Parquet folders, bound to the query's ``?`` in order (a
    folder may stand twice); DuckDB runs on ``inputs["threads"]`` threads (default 1).
    """
    import duckdb

    con = duckdb.connect()
    thread = threading.get_ident()
    with _RUNNING_LOCK:
        _RUNNING[thread] = con
    try:
        con.execute(f"SET threads = {int(inputs.get('threads', 1))}")
        row = con.execute(query, [os.path.join(p, "*.parquet") for p in paths]).fetchone()
    finally:
        with _RUNNING_LOCK:
            _RUNNING.pop(thread, None)
        con.close()
    if row is None:
        msg = "DuckDB returned no row"
        raise RuntimeError(msg)
    return tuple(row)


def interrupt_duckdb(thread: int | None) -> bool:
    """Interrupt the DuckDB query :func:`duckdb_row` runs in thread ``thread``, if any.

    The benchmark runner calls it when a local method exceeds its time limit.
    """
    with _RUNNING_LOCK:
        con = _RUNNING.get(thread) if thread is not None else None
    if con is None:
        return False
    con.interrupt()
    return True
