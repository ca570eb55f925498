"""Time buckets with exact carry-over, for timelines that must be split.

A global timeline (``by=None``) or a hot key would put all its rows on one task. We
cut time into buckets, run the strategy inside each ``(keys, bucket)``, and give every
left row that found no candidate in its own bucket the last right row of all earlier
buckets of its key (backward) and the first right row of all later buckets (forward).
Bucket numbers grow with time, so a carried row is always strictly earlier (later)
than every row of the bucket: the result is identical for any bucket count.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from chronojoin.asof.frames import BACK, BUCKET, FORWARD, RIGHT_STRUCT, SIDE, TIME

log = logging.getLogger("chronojoin.asof")


@dataclass(frozen=True)
class Layout:
    """How a strategy splits timelines: ``buckets`` per key, for ``hot_keys`` or all.

    ``buckets=None`` with keys: no split. Without keys the timeline is always split
    (into :func:`default_count` buckets unless ``buckets`` is given).
    """

    buckets: int | None = None
    hot_keys: tuple[tuple[object, ...], ...] | None = None


@dataclass(frozen=True)
class TimeBuckets:
    """An equal-width grid of ``count`` buckets starting at ``low``."""

    low: float
    width: float
    count: int

    def column(self, t: Column) -> Column:
        """The bucket number of time ordinal ``t`` (NULL for a NULL time)."""
        raw = F.floor((t - F.lit(self.low)) / F.lit(self.width))
        return F.least(F.greatest(raw, F.lit(0)), F.lit(self.count - 1)).cast("int")


def grid(tagged: DataFrame, count: int) -> TimeBuckets:
    """Equal-width buckets over the range of ``__t`` in ``tagged`` (one small job)."""
    row = tagged.agg(F.min(TIME).alias("lo"), F.max(TIME).alias("hi")).first()
    lo, hi = (row["lo"], row["hi"]) if row is not None else (None, None)
    if lo is None or hi is None or hi <= lo:
        return TimeBuckets(0.0, 1.0, 1)
    width = (float(hi) - float(lo)) / count
    log.info("as-of: %d time buckets of width %s over [%s, %s]", count, width, lo, hi)
    return TimeBuckets(float(lo), width, count)


def default_count(df: DataFrame) -> int:
    """Buckets for a global timeline: the session's shuffle partition count."""
    value = df.sparkSession.conf.get("spark.sql.shuffle.partitions") or "200"
    return max(1, int(value))


def bucketize(
    union: DataFrame, keys: list[str], layout: Layout
) -> tuple[DataFrame, list[str], bool]:
    """Add the bucket column when the layout asks for it; return the partition columns."""
    if keys and layout.buckets is None:
        return union, list(keys), False
    count = layout.buckets or default_count(union)
    rows = union
    hot = None
    if keys and layout.hot_keys:
        key = F.struct(*[F.col(k) for k in keys])
        hot = F.lit(False)
        for values in layout.hot_keys:
            hot = hot | (key == F.struct(*[F.lit(v) for v in values]))
        rows = union.where(hot)
    bucket = grid(rows, count).column(F.col(TIME))
    if hot is not None:
        bucket = F.when(hot, bucket).otherwise(F.lit(0))
    return union.withColumn(BUCKET, bucket), [*keys, BUCKET], True


def carry(
    union: DataFrame,
    matched: DataFrame,
    keys: list[str],
    right_code: int,
    tiebreaks: list[str],
    *,
    backward: bool,
    forward: bool,
) -> DataFrame:
    """Fill candidates from earlier (later) buckets of the same key into ``matched``."""
    is_right = F.col(SIDE) == F.lit(right_code)
    tb = [F.col(c) for c in tiebreaks]
    aggs = []
    if backward:
        last = F.struct(F.col(TIME), *tb)
        aggs.append(F.max_by(RIGHT_STRUCT, F.when(is_right, last)).alias("__cb"))
    if forward:
        neg = F.struct((-F.col(TIME)).alias("nt"), *tb)
        aggs.append(F.max_by(RIGHT_STRUCT, F.when(is_right, neg)).alias("__cf"))
    part = [*keys, BUCKET]
    per_bucket = union.groupBy(*part).agg(*aggs)
    w = Window.partitionBy(*keys).orderBy(BUCKET) if keys else Window.orderBy(BUCKET)
    carried = [F.col(c) for c in part]
    if backward:
        prev = w.rowsBetween(Window.unboundedPreceding, -1)
        carried.append(F.last("__cb", ignorenulls=True).over(prev).alias("__pb"))
    if forward:
        nxt = w.rowsBetween(1, Window.unboundedFollowing)
        carried.append(F.first("__cf", ignorenulls=True).over(nxt).alias("__nf"))
    out = matched.join(per_bucket.select(*carried), on=part, how="left")
    if backward:
        out = out.withColumn(BACK, F.coalesce(F.col(BACK), F.col("__pb")))
    if forward:
        out = out.withColumn(FORWARD, F.coalesce(F.col(FORWARD), F.col("__nf")))
    return out
