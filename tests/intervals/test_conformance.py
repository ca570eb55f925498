"""Every strategy against DuckDB on seeded random data, for every function and option."""

from __future__ import annotations

from functools import reduce

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import chronojoin as cj
from tests.oracles.intervals import (
    INTERVAL_SCHEMA,
    POINT_SCHEMA,
    arrow,
    assert_same,
    duckdb_interval_aggregate,
    random_data,
    spark_schema,
)

SWEEPABLE = {
    "total": ("sum", "v"),
    "n": ("count", None),
    "nv": ("count", "v"),
    "avg": ("mean", "v"),
    "wsum": ("sum", "w"),
    "wavg": ("mean", "w"),
}
EVERYTHING = {
    **SWEEPABLE,
    "lo": ("min", "v"),
    "hi": ("max", "s"),
    "all": ("collect_list", "v"),
    "kinds": ("collect_set", "s"),
}
STRATEGIES = ["sweep", "bucketed_sweep", "join", "auto"]


@pytest.fixture(scope="module")
def data(spark):
    points, intervals = random_data(seed=7)
    pdf = spark.createDataFrame(points, spark_schema(POINT_SCHEMA))
    idf = spark.createDataFrame(intervals, spark_schema(INTERVAL_SCHEMA))
    return (pdf, idf, arrow(points, POINT_SCHEMA), arrow(intervals, INTERVAL_SCHEMA))


def _aggs(strategy):
    return SWEEPABLE if strategy in ("sweep", "bucketed_sweep") else EVERYTHING


def _run(data, strategy, variants):
    """One Spark job for several (closed, how, buckets) variants: union with a tag."""
    pdf, idf, pa_points, pa_intervals = data
    aggs = _aggs(strategy)
    outs, expected = [], []
    for tag, (closed, how, buckets) in enumerate(variants):
        out = cj.interval_aggregate(
            pdf, idf, by="id", aggs=aggs, closed=closed, how=how, strategy=strategy,
            buckets=buckets,
        )
        assert out.columns == ["id", "time", "label", *aggs]
        outs.append(out.select(F.lit(tag).alias("tag"), *out.columns))
        rows = duckdb_interval_aggregate(
            pa_points, pa_intervals, left_by=["id"], right_by=["id"], time="time",
            start="start", end="end", aggs=aggs, closed=closed, how=how,
        )
        expected.extend((tag, *r) for r in rows)
    assert_same(reduce(DataFrame.unionByName, outs).collect(), expected)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_closed_and_how(data, strategy):
    buckets = {"bucketed_sweep": 5}.get(strategy)
    variants = [(c, "left", buckets) for c in ("both", "left", "right", "neither")]
    variants.append((("neither", "left", "right", "both")[STRATEGIES.index(strategy)], "inner",
                     "9" if strategy == "bucketed_sweep" else None))
    _run(data, strategy, variants)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_sides(spark, strategy):
    points, intervals = random_data(seed=3, n_points=40, n_intervals=20)
    pschema, ischema = spark_schema(POINT_SCHEMA), spark_schema(INTERVAL_SCHEMA)
    aggs = _aggs(strategy)
    cases = [(points, []), ([], intervals)]
    outs, expected = [], []
    for tag, (pts, ivs) in enumerate(cases):
        out = cj.interval_aggregate(
            spark.createDataFrame(pts, pschema), spark.createDataFrame(ivs, ischema),
            by="id", aggs=aggs, strategy=strategy,
        )
        outs.append(out.select(F.lit(tag).alias("tag"), *out.columns))
        rows = duckdb_interval_aggregate(
            arrow(pts, POINT_SCHEMA), arrow(ivs, INTERVAL_SCHEMA), left_by=["id"],
            right_by=["id"], time="time", start="start", end="end", aggs=aggs,
        )
        expected.extend((tag, *r) for r in rows)
    assert_same(reduce(DataFrame.unionByName, outs).collect(), expected)


@pytest.mark.parametrize("strategy", ["sweep", "bucketed_sweep", "join"])
def test_without_keys(spark, strategy):
    points, intervals = random_data(seed=11, n_points=80, n_intervals=30)
    aggs = {"total": ("sum", "v"), "n": ("count", None)}
    out = cj.interval_aggregate(
        spark.createDataFrame(points, spark_schema(POINT_SCHEMA)),
        spark.createDataFrame(intervals, spark_schema(INTERVAL_SCHEMA)),
        aggs=aggs, strategy=strategy, closed="left",
    )
    expected = duckdb_interval_aggregate(
        arrow(points, POINT_SCHEMA), arrow(intervals, INTERVAL_SCHEMA), left_by=[],
        right_by=[], time="time", start="start", end="end", aggs=aggs, closed="left",
    )
    assert_same(out.collect(), expected)
