"""Cheap statistics for strategy choice (one small job each, key columns only)."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from chronojoin._validate.columns import col


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


def max_rows_per_key(df: DataFrame, keys: tuple[str, ...]) -> int:
    """The most rows any non-NULL key holds in ``df`` (one job over the key columns).

    ``0`` for an empty frame. Rows with a NULL key are left out: they never match.
    """
    cols = [col(k) for k in keys]
    valid = F.lit(True)
    for c in cols:
        valid = valid & c.isNotNull()
    counts = df.select(*cols).where(valid).groupBy(*cols).count()
    row = counts.agg(F.max("count").alias("m")).collect()[0]
    return int(row["m"] or 0)
