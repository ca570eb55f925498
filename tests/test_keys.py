"""Equality keys: which pairs of key types every function joins, and which it refuses."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import TimeTypeError


def _calls(left, right):
    """Each public function, joining ``left`` and ``right`` on their key ``k``."""
    return {
        "asof_join": lambda: cj.asof_join(left, right, on="t", by="k"),
        "band_join": lambda: cj.band_join(left, right, left_on="t", right_on="t", lower=0,
                                          upper=5, by="k"),
        "interval_join": lambda: cj.interval_join(left, right.withColumn("e", F.col("t") + 5),
                                                  left_start="t", right_start="t",
                                                  right_end="e", by="k"),
        "interval_aggregate": lambda: cj.interval_aggregate(
            left, right.withColumn("e", F.col("t") + 5), by="k", time="t", start="t",
            end="e", aggs={"n": ("count", None)}),
    }


@pytest.mark.parametrize("key", ["array", "struct"])
def test_keys_that_differ_only_in_nullability_join(spark, key):
    """``createDataFrame`` gives nullable elements, ``F.array``/``F.struct`` of literals
    non-nullable ones: the same key for Spark, and so for every function."""
    left = spark.createDataFrame([([1, 2], (1, "a"), 10), ([3], (2, "b"), 10)],
                                 "a array<int>, s struct<x:int, y:string>, t int")
    right = spark.createDataFrame([(12,)], "t int").select(
        F.array(F.lit(1), F.lit(2)).alias("a"),
        F.struct(F.lit(1).alias("x"), F.lit("a").alias("y")).alias("s"), "t")
    column = "a" if key == "array" else "s"
    left, right = left.withColumnRenamed(column, "k"), right.withColumnRenamed(column, "k")
    assert left.schema["k"].dataType != right.schema["k"].dataType
    got = {name: call().count() for name, call in _calls(left, right).items()}
    assert got == {"asof_join": 2, "band_join": 1, "interval_join": 0,
                   "interval_aggregate": 2}


@pytest.mark.parametrize("function", ["asof_join", "band_join", "interval_join",
                                      "interval_aggregate"])
def test_string_keys_of_different_collations_are_refused(spark, function):
    """Spark cannot compare them; each function says so before building a plan."""
    left = spark.createDataFrame([("A", 10)], "k string, t int").select(
        F.collate("k", "UTF8_LCASE").alias("k"), "t")
    right = spark.createDataFrame([("a", 12)], "k string, t int")
    with pytest.raises(TimeTypeError, match="string collate UTF8_LCASE but key 'k' of "
                       r"\w+ is string; give both the same collation"):
        _calls(left, right)[function]()


@pytest.mark.parametrize("function", ["asof_join", "band_join", "interval_join",
                                      "interval_aggregate"])
def test_an_empty_key_list_means_no_keys(spark, function):
    """``by=[]`` joins on time alone, as ``by=None`` does (asof_join refused it with
    "`by` and `by` must be given together")."""
    left = spark.createDataFrame([(1, 10), (2, 10)], "k int, t int")
    right = spark.createDataFrame([(3, 12)], "k int, t int")
    calls = {
        "asof_join": lambda by: cj.asof_join(left, right, on="t", by=by, direction="forward"),
        "band_join": lambda by: cj.band_join(left, right, left_on="t", right_on="t", lower=0,
                                             upper=5, by=by),
        "interval_join": lambda by: cj.interval_join(
            left, right.withColumn("e", F.col("t") + 5), left_start="t", right_start="t",
            right_end="e", by=by),
        "interval_aggregate": lambda by: cj.interval_aggregate(
            left, right.withColumn("e", F.col("t")), by=by, time="t", start="t", end="e",
            aggs={"n": ("count", None)}, closed="both"),
    }
    call = calls[function]

    def rows(df):
        return sorted(tuple(r) for r in df.collect())

    assert rows(call([])) == rows(call(None))
