"""Cheap statistics for strategy choice (one small job each, key columns only)."""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from chronojoin._validate.columns import col, not_null


def sampled_hot_keys(
    df: DataFrame,
    keys: tuple[str, ...],
    share: float,
    *,
    fraction: float = 0.01,
    min_sampled: int = 100,
    seed: int = 7,
) -> list[tuple[object, ...]]:
    """Keys holding more than ``share`` of a seeded ``fraction`` sample (one cheap job).

    Only the key columns are read and only sampled rows are aggregated. A key must
    also appear ``min_sampled`` times in the sample (about ``min_sampled / fraction``
    rows in all), so small inputs never count as skewed. A key missed by the sample
    only costs speed, never correctness.
    """
    if not keys:
        return []
    sample = df.select(*[col(k) for k in keys]).sample(fraction=fraction, seed=seed)
    counts = sample.groupBy(*[col(k) for k in keys]).count()
    total = F.sum("count").over(Window.partitionBy())
    top = (
        counts.withColumn("__total", total)
        .where((F.col("count") >= min_sampled) & (F.col("count") > F.col("__total") * share))
        .orderBy(F.col("count").desc())
        .limit(64)
        .collect()
    )
    found = [tuple(row[: len(keys)]) for row in top]
    return [values for values in found if all(v is not None for v in values)]


class KeyCounts(NamedTuple):
    """Rows per non-NULL key of a frame: the most any key holds, and their total."""

    most: int
    rows: int


def key_counts(df: DataFrame, keys: tuple[str, ...]) -> KeyCounts:
    """The most rows any non-NULL key holds in ``df`` and the rows with a non-NULL key.

    One job over the key columns; ``(0, 0)`` for an empty frame. Rows with a NULL key
    are left out: they never match.
    """
    cols = [col(k) for k in keys]
    counts = df.select(*cols).where(not_null(*cols)).groupBy(*cols).count()
    row = counts.agg(F.max("count").alias("m"), F.sum("count").alias("n")).collect()[0]
    return KeyCounts(int(row["m"] or 0), int(row["n"] or 0))
