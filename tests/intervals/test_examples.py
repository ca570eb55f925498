"""Worked examples: seed 000's data (sums 10, 40, 50), time types, names, decimals."""

from __future__ import annotations

import datetime as dt
import logging
import math
from decimal import Decimal
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import chronojoin as cj

D = dt.datetime


def _seed000(spark):
    a = spark.createDataFrame(
        [(1, D(2017, 10, 23, 10, 0)), (1, D(2017, 10, 23, 10, 15)), (2, D(2017, 10, 23, 10, 1))],
        ["id", "time"],
    )
    b = spark.createDataFrame(
        [
            (1, D(2017, 10, 23, 9, 30), D(2017, 10, 23, 10, 30), 10),
            (1, D(2017, 10, 23, 10, 1), D(2017, 10, 23, 10, 5), 20),
            (1, D(2017, 10, 23, 10, 8), D(2017, 10, 23, 10, 20), 30),
            (1, D(2017, 10, 23, 10, 30), D(2017, 10, 23, 10, 45), 40),
            (2, D(2017, 10, 23, 9, 30), D(2017, 10, 23, 10, 30), 50),
        ],
        ["id", "start_time", "end_time", "points"],
    )
    return a, b


def test_seed_000_every_strategy(spark, caplog):
    a, b = _seed000(spark)
    outs = []
    with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
        for strategy, buckets in [("sweep", None), ("bucketed_sweep", None),
                                  ("bucketed_sweep", "7 minutes"),
                                  ("join", None), ("auto", None)]:
            out = cj.interval_aggregate(
                a, b, by="id", start="start_time", end="end_time",
                aggs={"total": ("sum", "points")}, strategy=strategy, buckets=buckets,
            )
            assert out.columns == ["id", "time", "total"]
            outs.append(out.select(F.lit(f"{strategy}/{buckets}").alias("s"), *out.columns))
    assert "strategy" in caplog.text
    rows = reduce(DataFrame.unionByName, outs).collect()
    got: dict[str, list] = {}
    for r in rows:
        got.setdefault(r["s"], []).append((r["id"], r["time"].strftime("%H:%M"), r["total"]))
    assert len(got) == 5
    for name, result in got.items():
        assert sorted(result) == [(1, "10:00", 10), (1, "10:15", 40), (2, "10:01", 50)], name


def test_seed_000_closed_bounds(spark):
    a, b = _seed000(spark)
    # a point exactly on the bounds of the 10:30-10:45 interval and the 9:30-10:30 one
    a = a.unionByName(spark.createDataFrame([(1, D(2017, 10, 23, 10, 30))], a.schema))
    expected = {"both": 50, "left": 40, "right": 10, "neither": None}
    outs = [
        cj.interval_aggregate(a, b, by="id", start="start_time", end="end_time",
                              closed=c, strategy="sweep")
        .filter(F.minute("time") == 30).select(F.lit(c).alias("c"), "total")
        for c in expected
    ]
    got = {r["c"]: r["total"] for r in reduce(DataFrame.unionByName, outs).collect()}
    assert got == expected


def test_time_types_names_and_decimals(spark):
    # timestamp points against date intervals; names with dots and spaces; different keys
    points = spark.createDataFrame(
        [("k", D(2024, 1, 2, 12, 0)), ("k", D(2024, 1, 5, 0, 0)), ("k", None),
         (None, D(2024, 1, 2))],
        "`the key` string, `t.s` timestamp",
    )
    intervals = spark.createDataFrame(
        [("k", dt.date(2024, 1, 1), dt.date(2024, 1, 3), Decimal("1.25")),
         ("k", dt.date(2024, 1, 2), dt.date(2024, 1, 5), Decimal("2.50")),
         ("k", dt.date(2024, 1, 6), dt.date(2024, 1, 4), Decimal("9.00"))],
        "kk string, s date, e date, `a value` decimal(10,2)",
    )
    out = cj.interval_aggregate(
        points, intervals, left_by="the key", right_by="kk", time="t.s", start="s", end="e",
        aggs={"sum": ("sum", "a value"), "mean": ("mean", "a value"), "n": ("count", None)},
        strategy="sweep",
    )
    assert out.columns == ["the key", "t.s", "sum", "mean", "n"]
    assert dict(out.dtypes)["sum"] == "decimal(20,2)"
    rows = sorted(out.collect(), key=lambda r: (str(r[0]), str(r[1])))
    got = [(r["sum"], r["n"]) for r in rows]
    assert got == [(None, 0), (Decimal("3.75"), 2), (Decimal("2.50"), 1), (None, 0)]


def test_float_times(spark):
    points = spark.createDataFrame([(0.5,), (1.0,), (float("nan"),), (2.25,)], "time double")
    intervals = spark.createDataFrame(
        [(0, 1, 3), (1, 3, 4), (None, 2, 5)], "start int, end long, points int"
    )
    out = cj.interval_aggregate(points, intervals, strategy="bucketed_sweep", buckets=0.75)
    got = {("nan" if r["time"] != r["time"] else r["time"]): r["total"] for r in out.collect()}
    assert got == {0.5: 3, 1.0: 7, "nan": None, 2.25: 4}


def test_nan_and_infinite_values_are_not_running_sums(spark):
    inf, nan = float("inf"), float("nan")
    points = spark.createDataFrame([(1, t) for t in (1, 3, 5, 6, 8, 9, 11)], "id int, time int")
    intervals = spark.createDataFrame(
        [(1, 0, 10, 1.5), (1, 2, 4, nan), (1, 5, 7, inf), (1, 6, 8, -inf), (1, 9, 9, 2.0)],
        "id long, start int, end int, v double",  # int keys of points vs long keys here
    )
    expected = {1: 1.5, 3: "nan", 5: inf, 6: "nan", 8: -inf, 9: 3.5, 11: None}
    layouts = [("sweep", None), ("bucketed_sweep", 3), ("join", None)]
    got = _sums_by_layout(points, intervals, layouts)
    assert got == dict.fromkeys(range(len(layouts)), expected)


def test_infinite_times_in_every_bucket_layout(spark):
    inf, nan = float("inf"), float("nan")
    points = spark.createDataFrame(
        [(1, t) for t in (inf, 5.0, -inf, nan, None, 1e308)], "id int, time double"
    )
    intervals = spark.createDataFrame(
        [(1, 0.0, 10.0, 1.0), (1, -inf, inf, 2.0), (1, 3.0, inf, 4.0), (1, -inf, -1e308, 8.0)],
        "id int, start double, end double, v double",
    )
    # Covering intervals, by hand: -inf lies in [-inf, inf] and [-inf, -1e308] only.
    expected = {inf: 6.0, 5.0: 7.0, -inf: 10.0, "nan": None, None: None, 1e308: 6.0}
    layouts = [("sweep", None), ("bucketed_sweep", 2.0), ("bucketed_sweep", 1e300),
               ("bucketed_sweep", 3), ("bucketed_sweep", None), ("join", None)]
    got = _sums_by_layout(points, intervals, layouts)
    assert got == dict.fromkeys(range(len(layouts)), expected)


def test_a_bucket_width_past_the_float_range(spark):
    """A width of 10**400 seconds holds every time in one bucket (it stopped the plan
    with an OverflowError, int too large to convert to float)."""
    points = spark.sql("SELECT 1 AS id, TIMESTAMP'2024-01-02 00:00:00' AS time")
    intervals = spark.sql("SELECT 1 AS id, TIMESTAMP'2024-01-01 00:00:00' AS start, "
                          "TIMESTAMP'2024-01-03 00:00:00' AS end, 2.5D AS v")
    huge = "1" + "0" * 400 + " seconds"
    layouts = [("bucketed_sweep", huge), ("bucketed_sweep", dt.timedelta.max), ("join", None)]
    expected = {dt.datetime(2024, 1, 2): 2.5}
    got = _sums_by_layout(points, intervals, layouts)
    assert got == dict.fromkeys(range(len(layouts)), expected)


def _sums_by_layout(points, intervals, layouts):
    """``{layout index: {time: s}}`` of ``sum(v)`` per point (NaN as ``"nan"``), one job."""
    outs = []
    for tag, (strategy, buckets) in enumerate(layouts):
        out = cj.interval_aggregate(points, intervals, by="id", aggs={"s": ("sum", "v")},
                                    strategy=strategy, buckets=buckets)
        outs.append(out.select(F.lit(tag).alias("tag"), "time", "s"))
    got: dict[int, dict] = {}
    for r in reduce(DataFrame.unionByName, outs).collect():
        time, value = ("nan" if isinstance(v, float) and math.isnan(v) else v
                       for v in (r["time"], r["s"]))
        got.setdefault(r["tag"], {})[time] = value
    return got


def test_a_key_whose_times_span_more_than_the_long_range(spark):
    """The per-key bucket layout of a hot key measures its span without overflowing."""
    n, lo, hi = 25_000, -5 * 10**18, 5 * 10**18
    points = spark.range(n).selectExpr(f"(id - {n // 2}) * {(hi - lo) // n} AS time")
    intervals = spark.createDataFrame([(lo, hi, 1)], "start long, end long, points long")
    for strategy in ("bucketed_sweep", "sweep"):
        out = cj.interval_aggregate(points, intervals, strategy=strategy,
                                    aggs={"total": ("sum", "points")})
        assert out.groupBy("total").count().collect() == [(1, n)], strategy


def test_integer_sums_overflow_only_where_a_points_own_sum_does(spark):
    """A running sum holds every open interval: its values may pass the long range where
    no point's covering intervals do (Spark's ANSI mode would stop the query)."""
    big, top = 5 * 10**18, 2**63 - 1
    points = spark.createDataFrame([(1, 1), (1, 5), (2, 3), (2, 5), (2, 7), (3, 1), (3, 5),
                                    (4, 2), (4, 5)], "id int, time long")
    intervals = spark.createDataFrame(
        [(1, 0, 10, big), (1, 2, 3, big), (2, 0, 5, top), (2, 5, 10, top),
         (3, 0, 10, -big), (3, 2, 3, -big), (4, 0, 10, top), (4, 0, 10, -top - 1),
         (4, 2, 3, 7)],
        "id int, start long, end long, v long")
    aggs = {"s": ("sum", "v"), "m": ("mean", "v")}
    expected = {(1, 1): (big, float(big)), (1, 5): (big, float(big)),
                (2, 3): (top, float(top)), (2, 5): (top, float(top)), (2, 7): (top, float(top)),
                (3, 1): (-big, -float(big)), (3, 5): (-big, -float(big)),
                (4, 2): 6, (4, 5): -1}  # means of sums that cancel: Spark's avg rounds
    for strategy, buckets in [("sweep", None), ("bucketed_sweep", 2), ("join", None),
                              ("auto", None)]:
        out = cj.interval_aggregate(points, intervals, by="id", aggs=aggs, closed="left",
                                    strategy=strategy, buckets=buckets)
        got = {(r.id, r.time): r.s if r.id == 4 else (r.s, r.m) for r in out.collect()}
        assert got == expected, strategy


def test_decimal_means_of_the_sweeps_round_as_sparks_avg(spark):
    # Spark's avg divides exactly and rounds once to scale + 4; a quotient of the
    # running sum kept fewer digits, or rounded twice (at 6 digits, then at scale + 4).
    import random

    for precision, scale in [(6, 0), (6, 1), (15, 6), (24, 12)]:
        rnd = random.Random(precision * 100 + scale)
        top = 10**precision - 1
        points = spark.createDataFrame([(i % 3, rnd.randint(0, 100), i) for i in range(240)],
                                       "k int, t long, pid int")
        intervals = spark.createDataFrame(
            [(rnd.randint(0, 2), s, s + rnd.randint(0, 40),
              Decimal(rnd.randint(-top, top)).scaleb(-scale))
             for s in (rnd.randint(0, 100) for _ in range(160))],
            f"k int, s long, e long, v decimal({precision},{scale})")
        means = {}
        for strategy in ["join", "sweep", "bucketed_sweep"]:
            out = cj.interval_aggregate(points, intervals, by="k", time="t", start="s",
                                        end="e", aggs={"m": ("mean", "v")}, strategy=strategy)
            means[strategy] = dict(out.select("pid", "m").collect())
        assert means["sweep"] == means["join"], (precision, scale)
        assert means["bucketed_sweep"] == means["join"], (precision, scale)
