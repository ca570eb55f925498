"""Every argument is validated before a plan is built; errors name argument and column."""

from __future__ import annotations

import pytest

import chronojoin as cj


@pytest.fixture(scope="module")
def frames(spark):
    points = spark.createDataFrame([(1, 5, "a")], "id int, time long, label string")
    intervals = spark.createDataFrame([(1, 0, 9, 2.5, "x")],
                                      "id long, start int, end int, points double, tag string")
    return points, intervals


def call(frames, **kw):
    points, intervals = frames
    kw.setdefault("by", "id")
    return cj.interval_aggregate(points, intervals, **kw)


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"closed": "open"}, cj.InvalidArgumentError, r"`closed` must be one of"),
        ({"how": "outer"}, cj.InvalidArgumentError, r"`how` must be one of"),
        ({"strategy": "magic"}, cj.InvalidArgumentError, r"`strategy` must be one of"),
        ({"time": "ts"}, cj.ColumnNotFoundError, r"`time`: column 'ts' not found in points"),
        ({"start": "s"}, cj.ColumnNotFoundError, r"`start`: column 's' not found in intervals"),
        ({"by": "nope"}, cj.ColumnNotFoundError, r"`by`: column 'nope' not found in points"),
        ({"by": None, "left_by": "id"}, cj.InvalidArgumentError, "must be given together"),
        ({"end": "tag"}, cj.TimeTypeError, r"`end`: column 'tag' of intervals has type string"),
        ({"aggs": {}}, cj.InvalidArgumentError, r"`aggs` must be a non-empty dict"),
        ({"aggs": {"t": ("median", "points")}}, cj.InvalidArgumentError,
         r"`aggs\['t'\] function` must be one of"),
        ({"aggs": {"t": ("sum", "nope")}}, cj.ColumnNotFoundError,
         r"`aggs\['t'\]`: column 'nope' not found in intervals"),
        ({"aggs": {"t": ("sum", "tag")}}, cj.InvalidArgumentError,
         r"'sum' needs a numeric column; column 'tag' of intervals is string"),
        ({"aggs": {"t": ("sum", None)}}, cj.InvalidArgumentError, r"only 'count' takes None"),
        ({"aggs": {"label": ("count", None)}}, cj.InvalidArgumentError,
         r"output name 'label' clashes with a column of points"),
        ({"aggs": {"m": ("max", "points")}, "strategy": "sweep"}, cj.InvalidArgumentError,
         r"cannot compute 'max' \(aggs\['m'\]\); use strategy='join' or 'auto'"),
        ({"aggs": {"m": ("collect_list", "tag")}, "strategy": "bucketed_sweep"},
         cj.InvalidArgumentError, r"cannot compute 'collect_list'"),
        ({"buckets": 0, "strategy": "bucketed_sweep"}, cj.InvalidArgumentError,
         r"`buckets` must be a bucket count from 1 to 2,147,483,647; got 0"),
        ({"buckets": 2**31, "strategy": "bucketed_sweep"}, cj.InvalidArgumentError,
         r"`buckets` must be a bucket count from 1 to 2,147,483,647; got 2147483648"),
        ({"buckets": -2.5, "strategy": "bucketed_sweep"}, cj.DurationError,
         r"`buckets`: a bucket width must be positive"),
        ({"buckets": "1 hour", "strategy": "bucketed_sweep"}, cj.DurationError,
         r"`buckets`: '1 hour' is a time span but the time columns are numeric"),
        ({"buckets": 4, "strategy": "sweep"}, cj.InvalidArgumentError,
         r"`buckets` applies to strategy 'bucketed_sweep'"),
    ],
)
def test_invalid_arguments(frames, kw, error, match):
    with pytest.raises(error, match=match):
        call(frames, **kw)


def test_not_a_dataframe(frames):
    with pytest.raises(TypeError, match=r"`intervals` must be a pyspark\.sql\.DataFrame"):
        cj.interval_aggregate(frames[0], [(1, 2)], by="id")


def test_incompatible_time_types(spark, frames):
    points = spark.createDataFrame([(1, "2024-01-01")], "id int, time string").selectExpr(
        "id", "to_timestamp(time) AS time")
    with pytest.raises(cj.TimeTypeError, match=r"incompatible time columns: time 'time'"):
        cj.interval_aggregate(points, frames[1], by="id")


def test_key_type_mismatch(spark, frames):
    points = spark.createDataFrame([("1", 5)], "id string, time long")
    with pytest.raises(cj.TimeTypeError, match=r"key 'id' of points is string"):
        cj.interval_aggregate(points, frames[1], by="id")


def test_keywords_only(frames):
    with pytest.raises(TypeError):
        cj.interval_aggregate(frames[0], frames[1], "id")  # type: ignore[misc]
