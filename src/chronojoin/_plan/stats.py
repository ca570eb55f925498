"""Cheap statistics for strategy choice (one small job each, key columns only)."""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from chronojoin._validate.columns import col, not_null


class HotSpan(NamedTuple):
    """A hot key and the range of its sampled times (``None`` when no time was asked)."""

    key: tuple[object, ...]
    low: float | None
    high: float | None


def sampled_hot_spans(
    df: DataFrame,
    keys: tuple[str, ...],
    time: Column | None,
    share: float,
    *,
    fraction: float = 0.01,
    min_sampled: int = 100,
    seed: int = 7,
) -> list[HotSpan]:
    """Keys holding more than ``share`` of a seeded ``fraction`` sample (one cheap job).

    Only the key columns (and ``time``, whose sampled range is returned for each hot
    key) are read and only sampled rows are aggregated. A key must also appear
    ``min_sampled`` times in the sample (about ``min_sampled / fraction`` rows in all),
    so small inputs never count as skewed. A key missed by the sample only costs
    speed, never correctness.
    """
    if not keys:
        return []
    cols = [col(k) for k in keys]
    timed = [] if time is None else [time.alias("__time")]
    sample = df.select(*cols, *timed).sample(fraction=fraction, seed=seed)
    ranges = ([] if time is None
              else [F.min("__time").alias("__low"), F.max("__time").alias("__high")])
    counts = sample.groupBy(*cols).agg(F.count(F.lit(1)).alias("count"), *ranges)
    total = F.sum("count").over(Window.partitionBy())
    top = (
        counts.withColumn("__total", total)
        .where((F.col("count") >= min_sampled) & (F.col("count") > F.col("__total") * share))
        .orderBy(F.col("count").desc())
        .limit(64)
        .collect()
    )
    spans = [HotSpan(tuple(row[: len(keys)]),
                     None if time is None else row["__low"],
                     None if time is None else row["__high"]) for row in top]
    return [s for s in spans if all(v is not None for v in s.key)]


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
