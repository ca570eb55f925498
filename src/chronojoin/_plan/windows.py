"""Windows over one timeline per key, also when there are no keys."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F


def per_key(df: DataFrame, keys: Sequence[str | Column],
            integer: str) -> tuple[DataFrame, WindowSpec]:
    """``df`` and a window partitioned by ``keys``; with no keys, one partition on purpose.

    Without keys the rows form one timeline, meant to be one partition: a few rows per
    bucket (bucket ends, bucket totals), or events that ``auto`` found small enough.
    A window without a partition spec does the same, but Spark then logs on every use
    that moving all data to one partition "can cause serious performance degradation".
    So ``df`` is moved to one partition first and the window is partitioned by
    ``coalesce(integer & 0, 0)`` (``integer`` names an integer column of ``df``): 0 on
    every row, an expression the optimizer keeps (it drops a literal and folds
    ``x * 0``) and that the single partition already satisfies (no second exchange).
    """
    if keys:
        return df, Window.partitionBy(*keys)
    zero = F.coalesce(F.col(integer).bitwiseAND(F.lit(0)), F.lit(0))
    return df.repartition(1), Window.partitionBy(zero)
