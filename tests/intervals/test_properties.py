"""Metamorphic properties: bucketed_sweep equals sweep for any bucket layout."""

from __future__ import annotations

from functools import reduce

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.intervals.plan import Plan, bucket_target, buckets_for
from chronojoin.intervals.spec import build_spec
from chronojoin.intervals.strategies import bucketed_sweep
from tests.oracles.intervals import (
    INTERVAL_SCHEMA,
    POINT_SCHEMA,
    normalise,
    random_data,
    spark_schema,
)

AGGS = {"total": ("sum", "v"), "n": ("count", None), "avg": ("mean", "w")}


@pytest.fixture(scope="module")
def frames(spark):
    points, intervals = random_data(seed=23, n_points=250, n_intervals=150, keys=4)
    return (spark.createDataFrame(points, spark_schema(POINT_SCHEMA)),
            spark.createDataFrame(intervals, spark_schema(INTERVAL_SCHEMA)))


def test_bucketed_equals_sweep_for_any_layout(frames):
    pdf, idf = frames
    kw = {"by": "id", "aggs": AGGS, "closed": "both"}
    layouts = [1, 1000, 3, 2.5]  # 1 bucket; ~1 event per bucket; a count; a width
    outs = [cj.interval_aggregate(pdf, idf, strategy="sweep", **kw)]
    outs += [cj.interval_aggregate(pdf, idf, strategy="bucketed_sweep", buckets=b, **kw)
             for b in layouts]
    spec = build_spec(pdf, idf, left_by=None, right_by=None, time="time", start="start",
                      end="end", how="left", strategy="bucketed_sweep", buckets=None, **kw)
    outs += [bucketed_sweep.build(spec, Plan("bucketed_sweep", target=t)) for t in (3,)]
    tagged = [o.select(F.lit(i).alias("tag"), *o.columns) for i, o in enumerate(outs)]
    rows = reduce(DataFrame.unionByName, tagged).collect()
    by_tag: dict[int, list] = {}
    for r in rows:
        by_tag.setdefault(r["tag"], []).append(tuple(r)[1:])
    reference = normalise(by_tag[0])
    assert sum(reference.values()) == pdf.count()
    for tag in range(1, len(outs)):
        assert normalise(by_tag[tag]) == reference, f"layout #{tag}"


def test_inner_is_left_minus_uncovered(frames):
    pdf, idf = frames
    left = cj.interval_aggregate(pdf, idf, by="id", aggs=AGGS, strategy="sweep", closed="right")
    inner = cj.interval_aggregate(pdf, idf, by="id", aggs=AGGS, strategy="sweep",
                                  closed="right", how="inner")
    both = left.select(F.lit(0).alias("tag"), *left.columns).unionByName(
        inner.select(F.lit(1).alias("tag"), *inner.columns)).collect()
    lrows = [tuple(r)[1:] for r in both if r["tag"] == 0]
    irows = [tuple(r)[1:] for r in both if r["tag"] == 1]
    assert normalise(irows) == normalise([r for r in lrows if r[4] > 0])


def test_bucket_formula():
    assert bucket_target(10, 4) == 20_000  # never tiny buckets
    assert bucket_target(10**9, 200) == 625_000
    assert buckets_for(5_000_000, 20_000) == 250
    assert buckets_for(10, 20_000) == 1
    assert buckets_for(10**12, 1) == 4096
