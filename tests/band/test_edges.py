"""band_join at the edges of its types, against the plain Spark SQL join.

Infinities and NaN in double times and per-row bounds (compared as Spark compares
doubles: NaN equals NaN and is above +inf), times and windows at and beyond the ends of
the long range, and bin sizes that would copy every row into too many bins.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections import Counter

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin._plan.binning import (
    MAX_BINS_PER_ROW,
    SideStats,
    choose_bin_size,
    side_stats,
)
from tests.band.helpers import sql_reference
from tests.oracles.band import band_condition, spark_batch

CLOSED = ["both", "left", "right", "neither"]
INF, NAN = float("inf"), float("nan")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
FLOATS = [0.0, 1.0, 1.5, 2.0, 2.5, -1.0, INF, -INF, NAN, None, 1e308, -1e308, 3.0, INF, NAN]
LONGS = [LONG_MIN, LONG_MIN + 1, -3, 0, 2, LONG_MAX - 1, LONG_MAX, None, LONG_MIN, LONG_MAX]


@pytest.fixture(scope="module")
def floats(spark):
    """Double times with +-inf, NaN, NULL, +-1e308; per-row bounds with the same."""
    los = [-1.0, -INF, NAN, None, -0.5, 0.0, INF]
    his = [1.0, INF, NAN, 0.5, None, -INF, 2.0, 1e308]
    left = spark.createDataFrame(
        [(i, [1, 1, 2, None][i % 4], t, los[i % len(los)], his[i % len(his)])
         for i, t in enumerate(FLOATS)],
        "id long, k int, t double, lo double, hi double",
    )
    right = spark.createDataFrame(
        [(100 + j, [1, 2, 1][j % 3], t) for j, t in enumerate([*FLOATS, 0.5, -INF])],
        "id long, k int, t double",
    )
    return left, right


def _keyed(condition: str) -> str:
    return f"l.k = r.k AND {condition}"


def test_float_constant_windows_every_closed(floats):
    """Constant windows: automatic and explicit bin sizes, inner and left, every closed."""
    left, right = floats
    frames, expected = {}, {}
    windows = [(-1, 1), (0, 0), (-2.5, -0.5), (0.5, 3)]
    sizes = [None, 1.0, 0.25]
    for i, (lower, upper) in enumerate(windows):
        for j, closed in enumerate(CLOSED):
            how = "left" if (i + j) % 2 else "inner"
            size = sizes[(i + j) % len(sizes)]
            tag = (lower, upper, closed, how, size)
            frames[tag] = cj.band_join(left, right, left_on="t", right_on="t", lower=lower,
                                       upper=upper, closed=closed, how=how, by="k",
                                       bin_size=size)
            cond = band_condition(f"l.t + {lower}", "r.t", f"l.t + {upper}", closed)
            expected[tag] = sql_reference(left, right, _keyed(cond), how=how)
    got = spark_batch({**frames, **{("ref", *k): v for k, v in expected.items()}})
    assert {k: got[k] for k in frames} == {k: got[("ref", *k)] for k in frames}
    # inf meets inf and NaN meets NaN (inf - 1 <= inf <= inf + 1; NaN <= NaN <= NaN)
    assert {(13, 106), (6, 113), (8, 108), (8, 114)} <= set(got[(-1, 1, "both", "inner", None)])


def test_float_per_row_bounds_with_infinities(floats):
    """Per-row bounds of -inf, +inf, NaN and NULL: open-ended, empty or no window.

    With times of +-1e308 and windows reaching +-inf, an explicit bin size of 0.5 needs
    more levels than a grid has: the top level's bins are widened to hold the longest.
    """
    left, right = floats
    for j, closed in enumerate(CLOSED):  # one job each: grids of many levels
        frames, expected = {}, {}
        how = "left" if j % 2 else "inner"
        size = None if j < 2 else 0.5
        frames[("rows", closed)] = cj.band_join(
            left, right, left_on="t", right_on="t", lower="lo", upper="hi", closed=closed,
            how=how, bin_size=size,
        )
        cond = band_condition("l.t + l.lo", "r.t", "l.t + l.hi", closed)
        expected[("rows", closed)] = sql_reference(left, right, cond, how=how)
        frames[("mixed", closed)] = cj.band_join(
            left, right, left_on="t", right_on="t", lower=-1, upper="hi", closed=closed,
            how=how, by="k", bin_size=size if j == 2 else None,
        )
        cond = _keyed(band_condition("l.t + -1", "r.t", "l.t + l.hi", closed))
        expected[("mixed", closed)] = sql_reference(left, right, cond, how=how)
        got = spark_batch({**frames, **{("ref", *k): v for k, v in expected.items()}})
        assert {k: got[k] for k in frames} == {k: got[("ref", *k)] for k in frames}


def test_the_reported_infinity_case(spark):
    """The user's probe: an infinite right time, automatic and explicit bin sizes."""
    left = spark.createDataFrame([(1, 1, 1.0), (2, 1, INF), (3, 1, NAN)], "id int, k int, t double")
    right = spark.createDataFrame(
        [(10, 1, 1.5), (11, 1, INF), (12, 1, NAN), (13, 1, -INF)], "id int, k int, t double"
    )
    frames = {
        size: cj.band_join(left, right, left_on="t", right_on="t", lower=-1, upper=1, by="k",
                           bin_size=size)
        for size in (None, 1.0, 1e-3)
    }
    # inf + -1 <= inf <= inf + 1 and NaN <= NaN <= NaN hold in Spark SQL
    want = {(1, 10): 1, (2, 11): 1, (3, 12): 1}
    assert spark_batch(frames) == dict.fromkeys(frames, want)


def _wide(expr: str) -> str:
    return f"CAST({expr} AS DECIMAL(38, 0))"


@pytest.fixture(scope="module")
def longs(spark):
    """Long times at and next to Long.MIN/MAX; per-row offsets up to the long range's ends."""
    los = [LONG_MIN, -1, 0, LONG_MAX, None, -(2**62)]
    his = [LONG_MAX, 1, 0, LONG_MIN, 2**62, None, 5]
    left = spark.createDataFrame(
        [(i, [1, 2][i % 2], t, los[i % len(los)], his[i % len(his)])
         for i, t in enumerate(LONGS)],
        "id long, k int, t long, lo long, hi long",
    )
    right = spark.createDataFrame(
        [(100 + j, [1, 2, 1][j % 3], t)
         for j, t in enumerate([*LONGS, LONG_MIN + 2, 5, LONG_MAX - 2, -1])],
        "id long, k int, t long",
    )
    return left, right


LONG_WINDOWS = [
    (-1, 1), (0, 0), (-5, -1), (1, 5), (10, -10),
    (-(2**62), 2**62), (LONG_MIN, LONG_MAX), (-(2**64), 2**64), (2**63, 2**64),
    (-(2**64), -(2**63) - 1), (0, LONG_MAX), (-2.5, 1.5),
]


def test_long_extremes_constant_windows(longs):
    """Windows reaching past Long.MIN/MAX, inverted, beyond the long range; exact."""
    left, right = longs
    few = left.where(F.col("t").isin(LONG_MIN, 0, LONG_MAX))
    frames, expected = {}, {}
    for i, (lower, upper) in enumerate(LONG_WINDOWS):
        for j, closed in enumerate(CLOSED[i % 2::2]):  # each window two, each closed six
            how = "left" if (i + j) % 2 else "inner"
            # replicate right (explicit size, or automatic with a smaller right side)
            # and replicate left (automatic, inner join, left smaller)
            size = 3 if (i < 5 and j == 0) else None
            lhs = few if (how == "inner" and size is None and i % 2) else left
            tag = (lower, upper, closed, how, size, lhs is few)
            frames[tag] = cj.band_join(lhs, right, left_on="t", right_on="t", lower=lower,
                                       upper=upper, closed=closed, how=how, by="k",
                                       bin_size=size)
            cond = band_condition(f"{_wide('l.t')} + {lower}", "r.t",
                                  f"{_wide('l.t')} + {upper}", closed)
            expected[tag] = sql_reference(lhs, right, _keyed(cond), how=how)
    got = spark_batch({**frames, **{("ref", *k): v for k, v in expected.items()}})
    assert {k: got[k] for k in frames} == {k: got[("ref", *k)] for k in frames}


def test_long_extremes_per_row_bounds(longs):
    left, right = longs
    frames, expected = {}, {}
    for j, closed in enumerate(CLOSED):
        how = "left" if j % 2 else "inner"
        size = None if j < 2 else 4
        frames[closed] = cj.band_join(left, right, left_on="t", right_on="t", lower="lo",
                                      upper="hi", closed=closed, how=how, bin_size=size)
        cond = band_condition(f"{_wide('l.t')} + l.lo", "r.t", f"{_wide('l.t')} + l.hi", closed)
        expected[closed] = sql_reference(left, right, cond, how=how)
    got = spark_batch({**frames, **{("ref", k): v for k, v in expected.items()}})
    assert {k: got[k] for k in frames} == {k: got[("ref", k)] for k in frames}


def test_timestamps_at_the_ends_of_the_long_range(spark, longs):
    """Timestamps of Long.MIN/MAX microseconds with an hour's window on either side."""
    left, right = longs
    lt = left.withColumn("t", F.timestamp_micros("t"))
    rt = right.withColumn("t", F.timestamp_micros("t"))
    frames, expected = {}, {}
    for j, closed in enumerate(CLOSED):
        how = "left" if j % 2 else "inner"
        frames[closed] = cj.band_join(lt, rt, left_on="t", right_on="t", lower="-1 hour",
                                      upper=dt.timedelta(hours=1), closed=closed, how=how,
                                      bin_size=None if j < 2 else "1 minute")
        lo = f"{_wide('unix_micros(l.t)')} - 3600000000"
        hi = f"{_wide('unix_micros(l.t)')} + 3600000000"
        expected[closed] = sql_reference(
            lt, rt, band_condition(lo, "unix_micros(r.t)", hi, closed), how=how
        )
    got = spark_batch({**frames, **{("ref", k): v for k, v in expected.items()}})
    assert {k: got[k] for k in frames} == {k: got[("ref", k)] for k in frames}


def test_infinite_seconds_bounds_on_timestamps(spark):
    """A per-row bound of +-inf seconds is open-ended, NaN seconds matches nothing."""
    left = spark.sql(
        "SELECT * FROM VALUES (1, TIMESTAMP'2024-01-01 00:00:00', -1.0D, 'Infinity'::double), "
        "(2, TIMESTAMP'2024-01-01 00:00:00', '-Infinity'::double, 0.0D), "
        "(3, TIMESTAMP'2024-01-01 00:00:00', 'NaN'::double, 1.0D), "
        "(4, TIMESTAMP'2024-01-01 00:00:00', 1e300D, 'Infinity'::double) AS l(id, t, lo, hi)"
    )
    right = spark.sql(
        "SELECT id, timestamp_micros(m) AS t FROM VALUES (10, -9223372036854775808), "
        "(11, 1704067199000000), (12, 1704067200000000), (13, 1704067260000000), "
        "(14, 9223372036854775807) AS r(id, m)"
    )
    got = cj.band_join(left, right, left_on="t", right_on="t", lower="lo", upper="hi",
                       how="left")
    assert spark_batch({"x": got})["x"] == {
        (1, 11): 1, (1, 12): 1, (1, 13): 1, (1, 14): 1,
        (2, 10): 1, (2, 11): 1, (2, 12): 1,
        (3, None): 1, (4, None): 1,
    }


def test_bin_size_copying_too_many_bins_is_refused_before_any_job(spark):
    """The report's bin_size=0.001 with a 200000 wide window: an error, nothing runs."""
    # reading this DataFrame fails: any job before the error would raise another error
    left = spark.range(3).select(F.col("id"), F.expr("raise_error('a job ran')").alias("t"))
    left = left.select("id", F.col("t").cast("double").alias("t"))
    with pytest.raises(cj.InvalidArgumentError,
                       match=r"`bin_size` 0.001 would copy every row into about "
                             r"200,000,001 bins \(the window from lower=-100000 to "
                             r"upper=100000 is 200000 wide\); at most 1,000,000"):
        cj.band_join(left, left, left_on="t", right_on="t", lower=-100000, upper=100000,
                     bin_size=0.001)
    with pytest.raises(ValueError, match="microseconds wide"):
        ts = left.select("id", F.timestamp_seconds("t").alias("t"))
        cj.band_join(ts, ts, left_on="t", right_on="t", lower="-1 day", upper="1 day",
                     bin_size="1 microsecond")


def test_bin_size_counts_the_bins_of_the_long_range_only(spark, longs):
    """A window wider than the long range copies a row into the bins of that range only."""
    left, right = longs
    got = cj.band_join(left, right, left_on="t", right_on="t", lower=0, upper=10**30,
                       bin_size=2**62, by="k")
    expected = cj.band_join(left, right, left_on="t", right_on="t", lower=0, upper=10**30,
                            by="k")
    batch = spark_batch({"got": got, "expected": expected})
    assert batch["got"] == batch["expected"]
    assert batch["got"]


def test_bin_size_below_the_limit_warns_and_is_exact(spark):
    left = spark.createDataFrame([(1, 0.0), (2, 50.0), (3, INF)], "id int, t double")
    right = spark.createDataFrame([(7, 0.0005), (8, 99.9), (9, INF)], "id int, t double")
    size = 200.0 / (MAX_BINS_PER_ROW // 2)
    with pytest.warns(cj.PerformanceWarning, match="copies every row into about") as caught:
        got = cj.band_join(left, right, left_on="t", right_on="t", lower=-100, upper=100,
                           bin_size=size)
    assert caught[0].filename == __file__  # points at the caller of band_join
    assert spark_batch({"x": got})["x"] == {(1, 7): 1, (1, 8): 1, (2, 7): 1, (2, 8): 1,
                                           (3, 9): 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cj.band_join(left, right, left_on="t", right_on="t", lower=-100, upper=100,
                     bin_size=0.01)


def test_side_stats_and_bin_size_ignore_non_finite_values(spark):
    df = spark.createDataFrame(
        [(v,) for v in (1.0, 3.0, INF, -INF, NAN, None, 2.0)], "t double"
    )
    ranges = df.select(F.col("t").alias("lo"), (F.col("t") + 2).alias("hi"))
    stats = side_stats(ranges, F.col("lo"), F.col("hi"))
    assert (stats.lo_min, stats.hi_max, stats.span_max, stats.unbounded) == (1.0, 5.0, 2.0, 0)
    assert stats.count == 6  # inf, -inf and NaN points can match (NULL cannot)
    points = side_stats(df, F.col("t"))
    assert (points.count, points.lo_min, points.hi_max, points.span_max) == (6, 1.0, 3.0, 0.0)
    wide = df.select(F.lit(-1e308).alias("lo"), F.lit(1e308).alias("hi"))
    assert side_stats(wide, F.col("lo"), F.col("hi")).unbounded == 7  # span overflows
    only_inf = SideStats(2, None, None, 0.0, 0.0, 0.0, unbounded=1)
    huge = SideStats(2, -1e308, 1e308, 1e308, 1e308, 1e308)
    for rep, probe, window in [(only_inf, only_inf, None), (huge, huge, None),
                               (huge, only_inf, 1e308), (only_inf, huge, 3.0)]:
        for integral in (True, False):
            size = choose_bin_size(rep, probe, integral=integral, window=window)
            assert 0 < size < INF


def test_names_that_differ_only_in_case_clash(spark):
    """In a case-insensitive session a right ``price`` clashes with a left ``Price``."""
    left = spark.createDataFrame([(1, 10, 1.0)], "id int, t int, Price double")
    right = spark.createDataFrame([(1, 9, 2.0)], "ID int, t int, price double")
    out = cj.band_join(left, right, left_on="t", right_on="t", lower=-1, upper=0,
                       left_by="id", right_by="ID")
    assert out.columns == ["id", "t", "Price", "t_right", "price_right"]
    out = cj.interval_join(left, right.withColumn("s", right.t - 5), left_start="t",
                           right_start="s", right_end="t")
    assert out.columns == ["id", "t", "Price", "ID_right", "t_right", "price_right", "s"]


def test_decimal_times_add_their_offsets_exactly(spark):
    """``0.20 + 0.10`` is ``0.30`` for decimal times, constant or per-row offsets, as in
    Spark SQL; in doubles it lies past ``0.30`` and missed the right time there."""
    from decimal import Decimal

    left = spark.createDataFrame([(1, Decimal("0.20"), Decimal("0.10"), 1),
                                  (2, Decimal("0.70"), Decimal("0.10"), 1)],
                                 "id int, t decimal(10,2), w decimal(4,2), n int")
    right = spark.createDataFrame([(1, Decimal("0.30")), (2, Decimal("0.80")),
                                   (3, Decimal("1.70"))], "id int, t decimal(10,2)")
    frames = {
        "constant": cj.band_join(left, right, left_on="t", right_on="t", lower=0.1, upper=0.1),
        "per-row": cj.band_join(left, right, left_on="t", right_on="t", lower="w", upper="w"),
        "binned": cj.band_join(left, right, left_on="t", right_on="t", lower=Decimal("0.10"),
                               upper=Decimal("0.10"), bin_size=0.05),
        "integer offset": cj.band_join(left, right, left_on="t", right_on="t", lower="n",
                                       upper="n"),
    }
    got = {name: sorted((r.id, r.id_right) for r in df.collect()) for name, df in frames.items()}
    assert got == {"constant": [(1, 1), (2, 2)], "per-row": [(1, 1), (2, 2)],
                   "binned": [(1, 1), (2, 2)], "integer offset": [(2, 3)]}


def test_integer_times_keep_an_offset_of_eighteen_decimals(spark):
    """A long left time plus ``1e-18`` is past ``0.0`` (a sum of 39 digits lost it);
    ``5 - 1e-18`` rounds to the double ``5.0``, as in Spark SQL."""
    left = spark.createDataFrame([(1, 0), (2, 5)], "id int, t long")
    right = spark.createDataFrame([(1, 0.0), (2, 1e-18), (3, 5.0)], "id int, t double")
    frames = {
        "lower": cj.band_join(left, right, left_on="t", right_on="t", lower=1e-18, upper=1.0),
        "upper": cj.band_join(left, right, left_on="t", right_on="t", lower=-1.0,
                              upper=-1e-18, how="left"),
    }
    assert spark_batch(frames) == {"lower": Counter({(1, 2): 1, (2, 3): 1}),
                                   "upper": Counter({(1, None): 1, (2, 3): 1})}


def test_offsets_beyond_every_float_are_exact(spark):
    """An integer offset too large for a float (``10**400``) reaches past every long
    time like any offset beyond the long range; it stopped the call with an
    OverflowError."""
    left = spark.createDataFrame([(1, 0), (2, 5)], "id int, t long")
    right = spark.createDataFrame([(1, -3), (2, 4), (3, 9)], "id int, t long")
    ts = {name: df.selectExpr("id", "timestamp_seconds(t) AS t")
          for name, df in (("left", left), ("right", right))}
    huge = 10**400
    frames = {
        "below": cj.band_join(left, right, left_on="t", right_on="t", lower=-huge, upper=0),
        "sized": cj.band_join(left, right, left_on="t", right_on="t", lower=-huge, upper=0,
                              bin_size=2**62, how="left"),
        "above": cj.band_join(left, right, left_on="t", right_on="t", lower=huge,
                              upper=huge * 10, how="left"),
        "seconds": cj.band_join(ts["left"], ts["right"], left_on="t", right_on="t",
                                lower=f"-{huge} seconds", upper="0 seconds"),
    }
    below = Counter({(1, 1): 1, (2, 1): 1, (2, 2): 1})
    assert spark_batch(frames) == {"below": below, "sized": below,
                                   "above": Counter({(1, None): 1, (2, None): 1}),
                                   "seconds": below}
