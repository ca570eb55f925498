"""TIME columns (time of day, Spark 4.1's type) as payload.

Spark 4.3 aggregates and writes TIME values only with ``spark.sql.timeType.enabled``
(off by default): without it every function refuses a TIME column before any job,
naming the argument and the column (some plans would run and others fail inside
Spark, depending on ``auto``'s choice). With it TIME columns pass through every plan
as any other value; each result is checked against the same call on the values as
strings.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import InvalidArgumentError
from tests.fuzz import session_settings

ON = {"spark.sql.timeType.enabled": "true"}


@pytest.fixture(scope="module")
def sides(spark):
    # a time of day per row, NULL where the row's number is; built from Python values,
    # which need no session setting (a Connect server analyses a frame again at every
    # use, and ``to_time`` fails to analyse while TIME is off)
    def clock(n):
        return None if n is None else dt.time(n % 24, n % 60, 1, 123)

    left = [(1, 10, 0), (1, 20, 1), (1, 20, 1), (2, 15, 2), (3, 1, 3), (None, 5, 4)]
    right = [(1, 5, 9), (1, 12, 30), (1, 13, 30), (2, 16, 16), (2, 0, 10**9), (3, 40, 41),
             (3, 40, None)]
    return (spark.createDataFrame([(*r, clock(r[2])) for r in left],
                                  "k int, t long, n int, tod time"),
            spark.createDataFrame([(*r, clock(r[2])) for r in right],
                                  "k int, t long, e long, tod_r time"))


def _strings(df):
    """``df`` with its TIME columns as strings (the reference's inputs)."""
    def as_strings(dtype):
        return dtype.simpleString().replace("time(6)", "string")

    return df.select(*[F.col(f.name).cast(as_strings(f.dataType)) for f in df.schema.fields])


def _rows(df):
    return sorted((tuple(r) for r in _strings(df).collect()), key=repr)


def _same(call, *frames):
    """``call`` on TIME columns gives the rows it gives on their strings."""
    with session_settings(frames[0].sparkSession, ON):
        got = _rows(call(*frames))
        assert got == _rows(call(*map(_strings, frames)))
    assert got
    return got


@pytest.mark.parametrize("strategy", ["auto", "union", "exploding", "sort_merge", "broadcast"])
def test_asof_join(sides, strategy, full_auto):
    _same(lambda left, right: cj.asof_join(left, right, on="t", by="k", strategy=strategy),
          *sides)


def test_asof_join_of_several_tables_with_tie_breaks_on_time(sides):
    got = _same(lambda left, right: cj.asof_join(
        left, [cj.Right(right, prefix="a_", tiebreak="tod_r"),
               cj.Right(right, direction="forward", prefix="b_")], on="t", by="k"), *sides)
    assert any(row[-1] is not None for row in got)


def test_band_and_interval_joins(sides):
    _same(lambda left, right: cj.band_join(left, right, left_on="t", right_on="t",
                                           lower=-10, upper=0, by="k", how="left"), *sides)
    for bin_size in (None, 1):  # 1: several grid levels, unmatched rows found by row
        _same(lambda left, right, size=bin_size: cj.interval_join(
            left, right, left_start="t", right_start="t", right_end="e", by="k",
            how="left", bin_size=size), *sides)


def test_interval_aggregate(sides, full_auto):
    _same(lambda left, right: cj.interval_aggregate(
        left, right, by="k", time="t", start="t", end="e",
        aggs={"first": ("min", "tod_r"), "last": ("max", "tod_r"),
              "all": ("collect_set", "tod_r"), "count": ("count", "tod_r")}), *sides)


def test_loader(spark, sides, tmp_path):
    left, _ = sides
    batch = left.where("k is not null").withColumn("day", F.lit("2024-01-01"))
    with session_settings(spark, ON):
        loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["k"],
                                      partition_by="day", order_by=["tod"])
        assert loader.append(batch).rows_appended == 3
        assert loader.append(batch).skipped
        assert loader.check().ok
        stored = _rows(spark.read.parquet(str(tmp_path / "t")).select("k", "t", "n", "tod"))
    assert stored == [(1, 10, 0, "00:00:01.000123"), (2, 15, 2, "02:02:01.000123"),
                      (3, 1, 3, "03:03:01.000123")]


def test_refused_without_the_session_setting(spark, sides, tmp_path):
    left, right = sides
    message = (r"`{}`: column '{}' has type time\(6\); Spark aggregates and writes TIME "
               r"values only with spark.sql.timeType.enabled=true")
    with pytest.raises(InvalidArgumentError, match=message.format("right", "tod_r")):
        cj.asof_join(left.drop("tod"), right, on="t", by="k")
    with pytest.raises(InvalidArgumentError, match=message.format(r"right\[1\].df", "tod_r")):
        cj.asof_join(left.drop("tod"), [cj.Right(right.drop("tod_r"), prefix="a_"),
                                        cj.Right(right, prefix="b_")], on="t", by="k")
    nested = left.select("k", "t", F.struct("n", "tod").alias("s"))
    with pytest.raises(InvalidArgumentError, match=message.format("points", "s").replace(
            r"time\(6\)", r"struct<n:int,tod:time\(6\)>")):
        cj.interval_aggregate(nested, right, time="t", start="t", end="e")
    loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["k"],
                                  partition_by="n")
    with pytest.raises(InvalidArgumentError, match=message.format("batch", "tod")):
        loader.append(left)
