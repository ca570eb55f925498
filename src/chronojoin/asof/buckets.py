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

from chronojoin.asof.frames import BACK, BUCKET, FORWARD, RIGHT_STRUCT, TIME, slot_name

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


def is_hot(keys: list[Column], hot_keys: tuple[tuple[object, ...], ...]) -> Column:
    """True where the ``keys`` columns hold one of ``hot_keys`` (False for NULL keys)."""
    hot = F.lit(False)
    for values in hot_keys:
        same = F.lit(True)
        for k, v in zip(keys, values, strict=True):
            same = same & (k == F.lit(v))
        hot = hot | same
    return F.coalesce(hot, F.lit(False))


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
        hot = is_hot([F.col(k) for k in keys], layout.hot_keys)
        rows = union.where(hot)
    bucket = grid(rows, count).column(F.col(TIME))
    if hot is not None:
        bucket = F.when(hot, bucket).otherwise(F.lit(0))
    return union.withColumn(BUCKET, bucket), [*keys, BUCKET], True


@dataclass(frozen=True)
class Carried:
    """One right table whose candidates are carried between buckets."""

    slot: int
    tiebreaks: tuple[str, ...]
    backward: bool
    forward: bool


def carry(
    union: DataFrame, matched: DataFrame, keys: list[str], tables: list[Carried]
) -> DataFrame:
    """Fill candidates from earlier (later) buckets of the same key into ``matched``.

    Per ``(keys, bucket)`` the last right row of each table (greatest time, then
    greatest tie-break) and its first one (smallest time, greatest tie-break) are
    aggregated; a running window over buckets carries them forward (backward).
    """
    aggs, carried = [], []
    part = [*keys, BUCKET]
    w = Window.partitionBy(*keys).orderBy(BUCKET) if keys else Window.orderBy(BUCKET)
    prev = w.rowsBetween(Window.unboundedPreceding, -1)
    nxt = w.rowsBetween(1, Window.unboundedFollowing)
    for t in tables:
        r = slot_name(RIGHT_STRUCT, t.slot)
        is_right = F.col(r).isNotNull()
        tb = [F.col(c) for c in t.tiebreaks]
        if t.backward:
            last = F.when(is_right, F.struct(F.col(TIME), *tb))
            aggs.append(F.max_by(r, last).alias(f"__cb{t.slot}"))
            last_before = F.last(f"__cb{t.slot}", ignorenulls=True).over(prev)
            carried.append(last_before.alias(f"__pb{t.slot}"))
        if t.forward:
            first = F.when(is_right, F.struct((-F.col(TIME)).alias("nt"), *tb))
            aggs.append(F.max_by(r, first).alias(f"__cf{t.slot}"))
            first_after = F.first(f"__cf{t.slot}", ignorenulls=True).over(nxt)
            carried.append(first_after.alias(f"__nf{t.slot}"))
    per_bucket = union.groupBy(*part).agg(*aggs)
    out = matched.join(per_bucket.select(*part, *carried), on=part, how="left")
    for t in tables:
        fills = [(BACK, f"__pb{t.slot}")] if t.backward else []
        fills += [(FORWARD, f"__nf{t.slot}")] if t.forward else []
        for base, name in fills:
            target = slot_name(base, t.slot)
            out = out.withColumn(target, F.coalesce(F.col(target), F.col(name)))
    return out
