"""What a benchmark case is. Every family describes its cases with these two classes.

A :class:`Case` knows how to obtain its inputs (``load``: generate or read them, once
per case and dataset) and lists :class:`Method` objects, each building the plan of one
way to compute the same answer. The runner forces each plan (a ``noop`` write), times
it, reads metrics from Spark's monitoring REST API, and checks that every method of a
case returns the same row count and checksum (the hash sum of :func:`checksum`, or the
case's ``checksum_plan``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Inputs of a case: name -> DataFrame (or any object a method needs, e.g. a path).
Inputs = Mapping[str, Any]


@dataclass(frozen=True)
class Method:
    """One way to compute a case's answer.

    Parameters
    ----------
    name
        Shown in results, e.g. ``"union"``, ``"floor"``, ``"naive"``, ``"duckdb"``.
    build
        Spark methods: ``inputs -> DataFrame`` (lazy; the runner executes it).
        Local methods (``local=True``): ``inputs -> (row_count, checksum)``, run and
        timed in the driver process (e.g. DuckDB on the same Parquet files).
    baseline
        Ratios in reports are computed against the baseline method of the same run.
    checked
        Whether the answer takes part in the cross-method check (the floor does not).
    timeout_s
        Give up (recorded as timed out, not as a result) after this many seconds.
    spark_conf
        Session confs set around this method only (e.g. enabling Spark's own
        sort-merge as-of join); the runner restores the previous values.
    """

    name: str
    build: Callable[[Inputs], Any]
    baseline: bool = False
    checked: bool = True
    local: bool = False
    timeout_s: float | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """A benchmark case: a dataset recipe and the methods compared on it."""

    name: str
    load: Callable[[SparkSession], Inputs]
    methods: tuple[Method, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    checksum_columns: tuple[str, ...] | None = None
    #: The answer check of the Spark methods, ``result -> one row (rows, checksum)``,
    #: instead of :func:`checksum`: a case whose local methods (DuckDB) compute the same
    #: numbers gives it, so that their answers are compared on more than the row count.
    checksum_plan: Callable[[DataFrame], DataFrame] | None = None


def checksum(df: DataFrame, columns: tuple[str, ...] | None = None) -> DataFrame:
    """A one-row plan ``(rows, checksum)``: count and order-independent hash sum."""
    from pyspark.sql import functions as F

    cols = [F.col("`" + c + "`") for c in (columns or tuple(df.columns))]
    h = F.xxhash64(*cols) if cols else F.lit(0)
    return df.select(h.alias("h")).agg(
        F.count(F.lit(1)).alias("rows"), F.sum(F.col("h").cast("decimal(38,0)")).alias("checksum")
    )
