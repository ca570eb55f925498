"""Windows over one timeline without keys name their one partition.

A window without a partition spec makes Spark log, on every use, that moving all data
to one partition "can cause serious performance degradation". Without keys the plans
mean one partition (a row per bucket, or events ``auto`` found small), so they say so
with a constant partition expression instead; the warning would only alarm users.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pytest
from pyspark.sql import functions as F

import chronojoin as cj


def _windows(df) -> list[str]:
    """The argument lists of the plan's window functions (partition spec first)."""
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain()
    return re.findall(r"windowspecdefinition\(([^)]*)", buffer.getvalue())


def _unpartitioned(df) -> list[str]:
    # With no partition spec, the first argument is already an ordering.
    return [w for w in _windows(df) if re.match(r"[^,]*\b(ASC|DESC)\b", w)]


@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
@pytest.mark.parametrize("strategy", ["auto", "union", "sort_merge"])
def test_asof_without_keys(spark, strategy, direction):
    left = spark.range(40).select((F.col("id") * 7 % 200).alias("t"))
    right = spark.range(60).select((F.col("id") * 3).alias("t"), F.col("id").alias("v"))
    out = cj.asof_join(left, right, on="t", direction=direction, strategy=strategy)
    assert _windows(out), "expected a carry window"
    assert _unpartitioned(out) == []
    expected = cj.asof_join(left.withColumn("k", F.lit(1)), right.withColumn("k", F.lit(1)),
                            on="t", by="k", direction=direction, strategy="exploding")
    assert sorted(out.collect()) == sorted(expected.drop("k").collect())


@pytest.mark.parametrize("strategy", ["sweep", "bucketed_sweep"])
def test_interval_aggregate_without_keys(spark, strategy):
    points = spark.range(50).select(F.col("id").alias("time"), F.lit(1).alias("w"))
    intervals = spark.range(20).select((F.col("id") * 2).alias("start"),
                                       (F.col("id") * 2 + 5).alias("end"),
                                       F.col("id").alias("points"))
    kw = {"buckets": 4} if strategy == "bucketed_sweep" else {}
    out = cj.interval_aggregate(points, intervals, strategy=strategy, **kw)
    assert _windows(out)
    assert _unpartitioned(out) == []
    expected = cj.interval_aggregate(points, intervals, strategy="join")
    assert sorted(out.collect()) == sorted(expected.collect())
