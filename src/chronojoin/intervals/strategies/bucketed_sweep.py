"""``bucketed_sweep``: the sweep cut into time buckets, exact for any bucket layout.

Seed: "time range join in Spark, with skew". Every event gets a bucket that never
decreases with time (equal times share a bucket). Then

1. per (keys, bucket): the totals of the deltas (a small aggregate; groups that
   hold only points are kept, they need a carry too);
2. per keys, ordered by bucket: the *carry* of each bucket = the sum of the totals of
   all earlier buckets (a window over the small totals);
3. the carry enters its bucket as one extra row ranked before every event, and the
   running sums are taken per (keys, bucket) instead of per keys.

A point in bucket ``b`` thus sees the events of earlier buckets (through the carry, so
an interval that started many buckets ago still counts until its end event) and the
events of its own bucket up to its time and tie rank; events in later buckets have a
larger time. The result equals :mod:`sweep` for any number of buckets, while a hot key
is spread over many window partitions. Cost: the sweep's shuffle and sort, plus one
small aggregate and a window over (keys, bucket) totals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from chronojoin._plan.binning import bin_of
from chronojoin._plan.windows import per_key
from chronojoin.intervals.events import (
    POINT,
    RANK,
    T_COL,
    delta_types,
    events,
    finish,
    key_names,
    point_struct_type,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin.intervals.plan import Plan
    from chronojoin.intervals.spec import IntervalSpec

BUCKET = "__cj_b"


def _scaled(t: Column, lo: Column, hi: Column, n: Column) -> Column:
    """``n`` equal-width buckets over ``[lo, hi]``: monotone in ``t``, in ``[0, n - 1]``.

    In doubles: the difference of two longs may leave the long range.
    """
    lo = lo.cast("double")
    span = F.greatest(hi.cast("double") - lo, F.lit(1e-300))
    raw = F.floor((t.cast("double") - lo) / span * n.cast("double"))
    clamped = F.least(F.greatest(raw, F.lit(0)), (n - F.lit(1)).cast("long")).cast("long")
    return F.when(t.isNotNull(), clamped)


def _with_buckets(ev: DataFrame, spec: IntervalSpec, plan: Plan) -> DataFrame:
    t = F.col(T_COL)
    if plan.width is not None:
        return ev.withColumn(BUCKET, bin_of(t, plan.width))
    if plan.count is not None:
        lo, hi = F.lit(plan.lo or 0.0), F.lit(plan.hi or 0.0)
        return ev.withColumn(BUCKET, _scaled(t, lo, hi, F.lit(plan.count)))
    if plan.target is None:
        msg = "bucketed_sweep needs a bucket width, a count or a per-key target"
        raise ValueError(msg)
    keys = key_names(spec)
    per_key = (
        ev.filter(t.isNotNull())
        .groupBy(*keys)
        .agg(F.count(F.lit(1)).alias("__cj_e"), F.min(t).alias("__cj_lo"),
             F.max(t).alias("__cj_hi"))
        .filter(F.col("__cj_e") > F.lit(plan.target))
        .select(
            *keys, "__cj_lo", "__cj_hi",
            F.least(F.ceil(F.col("__cj_e") / F.lit(plan.target)),
                    F.lit(plan.max_buckets)).cast("long").alias("__cj_nb"),
        )
    )
    on = keys if keys else F.lit(True)
    joined = ev.join(F.broadcast(per_key), on=on, how="left")
    nb = F.col("__cj_nb")
    bucket = F.when(nb.isNull(), F.lit(0).cast("long")).otherwise(
        _scaled(t, F.col("__cj_lo"), F.col("__cj_hi"), nb)
    )
    return joined.withColumn(BUCKET, bucket).drop("__cj_lo", "__cj_hi", "__cj_nb")


def build(spec: IntervalSpec, plan: Plan) -> DataFrame:
    """Build the lazy plan of a bucketed sweep with the bucket layout of ``plan``."""
    keys = key_names(spec)
    deltas = list(delta_types(spec))
    ev = _with_buckets(events(spec), spec, plan)
    # Every (keys, bucket) group gets a total, also groups holding only points: their
    # carry is still needed. Point rows add NULL deltas, which sums skip.
    totals = (
        ev.groupBy(*keys, BUCKET)
        .agg(*[F.sum(d).alias(d) for d in deltas])
    )
    # One row per (keys, bucket).
    totals, by_key = per_key(totals, keys, BUCKET)
    earlier = by_key.orderBy(BUCKET).rowsBetween(Window.unboundedPreceding, -1)
    carry = totals.select(
        *keys, BUCKET,
        F.lit(None).cast(ev.schema[T_COL].dataType).alias(T_COL),
        F.lit(-1).alias(RANK),
        F.lit(None).cast(point_struct_type(spec)).alias(POINT),
        *[F.sum(d).over(earlier).alias(d) for d in deltas],
    ).filter(F.col("__cj_n").isNotNull())
    window = (
        Window.partitionBy(*keys, BUCKET)
        .orderBy(F.col(T_COL).asc_nulls_first(), F.col(RANK))
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    stream = ev.select(*carry.columns).unionByName(carry)
    running = stream.select(POINT, *[F.sum(d).over(window).alias(d) for d in deltas])
    return finish(running, spec)
