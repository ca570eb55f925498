"""interval_join at the edges of its types, against the plain Spark SQL join.

Points and interval bounds at +-inf and NaN (compared as Spark compares doubles: NaN
equals NaN and is above +inf), intervals reaching Long.MIN/MAX and wider than the long
range, and very small bin sizes.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections import Counter

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin._plan.binned_join import key_share_unless_plain
from chronojoin._plan.binning import (
    Extent,
    Levels,
    SideStats,
    bin_of,
    choose_bin_size,
    level_sizes,
    plain_join_pays,
    planned_level,
    planned_levels,
    side_stats,
    sides_stats,
)
from chronojoin._plan.stats import broadcast_threshold, estimated_bytes, same_key_share
from tests.band.helpers import sql_reference
from tests.oracles.band import overlap_condition, point_in_condition, spark_batch

CLOSED = ["both", "left", "right", "neither"]
INF, NAN = float("inf"), float("nan")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

FLOAT_POINTS = [0.0, 1.0, 1.5, 2.0, -1.0, INF, -INF, NAN, None, 1e308, -1e308, 5.0, 0.5]
FLOAT_INTERVALS = [
    (0.0, 1.0), (1.0, 1.0), (-INF, 0.0), (2.0, INF), (-INF, INF), (INF, INF), (-INF, -INF),
    (NAN, NAN), (0.0, NAN), (NAN, 0.0), (1e308, INF), (-1e308, 1e308), (None, 1.0),
    (3.0, 2.0), (1.5, 2.5), (-INF, NAN), (INF, NAN),
]
LONG_POINTS = [LONG_MIN, LONG_MIN + 1, -1, 0, 1, LONG_MAX - 1, LONG_MAX, None, 7]
LONG_INTERVALS = [
    (-(2**62), 2**62), (LONG_MIN, LONG_MAX), (0, LONG_MAX), (LONG_MIN, 0), (LONG_MAX, LONG_MAX),
    (LONG_MIN, LONG_MIN), (5, 10), (LONG_MAX - 1, LONG_MAX), (-1, 1), (10, 5),
    (LONG_MIN, LONG_MIN + 1), (None, 3), (-(2**62) - 1, -(2**62) + 100),
]


def _frames(spark, points, intervals, dtype):
    p = spark.createDataFrame([(i, [1, 2, 1][i % 3], t) for i, t in enumerate(points)],
                              f"id long, k int, t {dtype}")
    i = spark.createDataFrame([(100 + j, [1, 1, 2][j % 3], s, e)
                               for j, (s, e) in enumerate(intervals)],
                              f"id long, k int, s {dtype}, e {dtype}")
    return p, i


def _check(p, i, sizes, closed_options=CLOSED):
    """Point-in-interval and overlap (each way in turn), every closed, against Spark SQL.

    One job per ``closed`` (grids of many levels make large plans).
    """
    got = {}
    for j, closed in enumerate(closed_options):
        got.update(_check_closed(p, i, sizes, j, closed))
    return got


def _check_closed(p, i, sizes, j, closed):
    frames, expected = {}, {}
    for n, shape in enumerate(("point", ("overlap", "overlap_r")[j % 2])):
        how = "left" if (j + n) % 2 else "inner"
        size = sizes[(j + n) % len(sizes)]
        by = "k" if j % 2 else None
        keys = "l.k = r.k AND " if by else ""
        tag = (closed, shape, how, size)
        if shape == "point":
            frames[tag] = cj.interval_join(p, i, left_start="t", right_start="s",
                                           right_end="e", closed=closed, how=how, by=by,
                                           bin_size=size)
            cond = point_in_condition("l.t", "r.s", "r.e", closed)
            expected[tag] = sql_reference(p, i, keys + cond, how=how)
        else:
            lhs, rhs = (i, i.where("k = 1")) if shape == "overlap" else (i.where("k = 1"), i)
            frames[tag] = cj.interval_join(lhs, rhs, left_start="s", left_end="e",
                                           right_start="s", right_end="e", closed=closed,
                                           how=how, by=by, bin_size=size)
            cond = overlap_condition("l.s", "l.e", "r.s", "r.e", closed)
            expected[tag] = sql_reference(lhs, rhs, keys + cond, how=how)
    got = spark_batch({**frames, **{("ref", *k): v for k, v in expected.items()}})
    assert {k: got[k] for k in frames} == {k: got[("ref", *k)] for k in frames}
    return got


@pytest.mark.slow
def test_float_infinities_and_nan(spark):
    """Points and bounds at +-inf and NaN; +-1e308 next to them; NULL and inverted bounds."""
    p, i = _frames(spark, FLOAT_POINTS, FLOAT_INTERVALS, "double")
    got = _check(p, i, [None, 0.5, None])
    # inf lies in [2, inf] and [-inf, inf]; NaN in [0, NaN] and [NaN, NaN] (Spark's order)
    point = got[("both", "point", "inner", None)]
    assert {(5, 103), (5, 104), (7, 107), (7, 108)} <= set(point)


def test_float_column_with_infinite_bounds(spark):
    """A ``float`` (not double) right side: the same order after widening to double."""
    p, i = _frames(spark, FLOAT_POINTS[:9], FLOAT_INTERVALS, "double")
    i = i.select("id", "k", F.col("s").cast("float").alias("s"),
                 F.col("e").cast("float").alias("e"))
    _check(p, i, [None, 0.25], ["left", "right"])


def test_infinite_spans_with_generated_code(spark):
    """Spark's default generated code evaluates the statistics' span octave for every
    row: an interval reaching infinity (or +-1e308 apart) stopped the statistics job
    with an overflow in ``floor``; the suite's interpreted setting hid it."""
    from tests.fuzz import session_settings

    p, i = _frames(spark, [0.0, 3.0, 10.0], [(-INF, 5.0), (-1e308, 1e308), (1.0, 2.0)],
                   "double")
    left = p.withColumn("lo", F.lit(-INF)).withColumn("hi", F.lit(1.0))
    codegen = {"spark.sql.codegen.factoryMode": "FALLBACK",
               "spark.sql.codegen.wholeStage": "true"}
    with session_settings(spark, codegen):
        frames = {
            "point": cj.interval_join(p, i, left_start="t", right_start="s", right_end="e"),
            "band": cj.band_join(left, p, left_on="t", right_on="t", lower="lo", upper="hi",
                                 bin_size=1.0),
        }
        got = spark_batch(frames)
    assert got == {"point": Counter({(0, 100): 1, (1, 100): 1, (0, 101): 1, (1, 101): 1,
                                     (2, 101): 1}),
                   "band": Counter({(0, 0): 1, (1, 0): 1, (1, 1): 1, (2, 0): 1, (2, 1): 1,
                                    (2, 2): 1})}


@pytest.mark.slow
def test_long_extremes_and_very_wide_intervals(spark):
    """Intervals [-2**62, 2**62], [Long.MIN, Long.MAX], ending at Long.MAX; exact."""
    p, i = _frames(spark, LONG_POINTS, LONG_INTERVALS, "long")
    _check(p, i, [None, 2**20])


def test_timestamps_at_the_ends_of_the_long_range(spark):
    p, i = _frames(spark, LONG_POINTS, LONG_INTERVALS, "long")
    p = p.withColumn("t", F.timestamp_micros("t"))
    i = i.withColumn("s", F.timestamp_micros("s")).withColumn("e", F.timestamp_micros("e"))
    _check(p, i, [None, "1 second"], ["both", "neither"])


def test_reported_wide_interval(spark):
    """The report's [-2**62, 2**62] with an explicit bin size (was ARITHMETIC_OVERFLOW)."""
    p = spark.createDataFrame([(1, 0), (2, LONG_MAX), (3, LONG_MIN)], "id int, t long")
    i = spark.createDataFrame([(10, -(2**62), 2**62), (11, LONG_MIN, LONG_MAX), (12, 0, LONG_MAX)],
                              "id int, s long, e long")
    frames = {
        size: cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                               bin_size=size)
        for size in (None, 1, 10)
    }
    want = {(1, 10): 1, (1, 11): 1, (1, 12): 1, (2, 11): 1, (2, 12): 1, (3, 11): 1}
    assert spark_batch(frames) == dict.fromkeys(frames, want)


def test_tiny_bin_size_is_bounded(spark):
    """A bin size far below the interval lengths: coarser levels keep the copies bounded."""
    p = spark.createDataFrame([(1, 0.0), (2, 150000.0), (3, 1e300)], "id int, t double")
    i = spark.createDataFrame(
        [(10, -100000.0, 100000.0), (11, 0.0, 1e300), (12, 1.0, 2.0)], "id int, s double, e double"
    )
    frames = {
        "point": cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                                  bin_size=0.001),
        "overlap": cj.interval_join(i, i, left_start="s", left_end="e", right_start="s",
                                    right_end="e", closed="neither", bin_size=1e-300),
    }
    got = spark_batch(frames)
    assert got["point"] == {(1, 10): 1, (1, 11): 1, (2, 11): 1, (3, 11): 1}
    assert got["overlap"] == {
        (10, 10): 1, (10, 11): 1, (10, 12): 1, (11, 10): 1, (11, 11): 1, (11, 12): 1,
        (12, 10): 1, (12, 11): 1, (12, 12): 1,
    }


@pytest.mark.parametrize("bin_size", [float("inf"), float("nan")])
def test_non_finite_bin_size(spark, bin_size):
    p, i = _frames(spark, [1.0], [(0.0, 2.0)], "double")
    with pytest.raises(ValueError, match="bin_size"):
        cj.interval_join(p, i, left_start="t", right_start="s", right_end="e", bin_size=bin_size)


def test_bin_size_beyond_every_float(spark):
    """An integer bin size too large for a float (``10**400``) is one bin for every long
    time; it stopped both joins with an OverflowError."""
    p, i = _frames(spark, [LONG_MIN, 0, 5, LONG_MAX], [(-3, 1), (4, 6), (0, LONG_MAX)], "long")
    frames = {
        "point": cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                                  bin_size=10**400, how="left"),
        "band": cj.band_join(p, i, left_on="t", right_on="s", lower=-5, upper=5,
                             bin_size=10**400),
    }
    assert spark_batch(frames) == {
        "point": Counter({(0, None): 1, (1, 100): 1, (1, 102): 1, (2, 101): 1, (2, 102): 1,
                          (3, 102): 1}),
        "band": Counter({(1, 100): 1, (1, 101): 1, (1, 102): 1, (2, 101): 1, (2, 102): 1}),
    }


def _sparse_levels(spark):
    """Short intervals and a few very long ones: the levels between them hold no row."""
    rng = random.Random(41)
    points = [rng.randrange(-50, 3000) for _ in range(300)] + [None, 10**9, 2 * 10**9]
    intervals = [(s, s + rng.choice([0, 1, 3, 9, 20])) for s in
                 (rng.randrange(0, 3000) for _ in range(120))]
    intervals += [(5, 10**9), (-(10**9), 7), (100, 100 + 2**31), (2**31, 2**31 + 5), (9, 3)]
    return _frames(spark, points, intervals, "long")


def test_levels_without_rows_are_not_joined(spark, capsys):
    p, i = _sparse_levels(spark)
    _check(p, i, [None, 1, 4])
    cj.interval_join(p, i, left_start="t", right_start="s", right_end="e", bin_size=1).explain()
    plan = capsys.readouterr().out
    physical = plan[plan.index("Physical Plan"):]
    # bins of width 1: the short intervals on level 0, the long ones on levels 6 and 7
    # (log16(span / 64)); the grid has levels 0 to 8, the others hold no interval. The
    # three are joined in one join, each row binned on its level's width (16**level).
    assert physical.count("Join ") == 1, physical
    assert "[1.0,1.6777216E7,2.68435456E8]" in physical, physical


def test_bins_on_levels_equal_each_levels_own_grid(spark):
    """A row binned on its level's grid (one plan, :class:`Levels`) gets exactly the bin
    of that level's grid alone: at infinities, NaN, NULL and the ends of the doubles."""
    values = [0.0, -0.0, 1.0, -1.0, 2.5, 1e-300, 2.0**62, -(2.0**63), 1e308, -1e308,
              INF, -INF, NAN, None, 123456789.123]
    sizes = (1.0, 16.0, 2.0**40, 1e300)
    rows = [(v, at) for v in values for at in range(len(sizes))]
    df = spark.createDataFrame(rows, "v double, at int")
    for extent in (Extent(), Extent(-5.0, 1e12)):
        one_plan = bin_of(F.col("v"), Levels(sizes, F.col("at")), extent)
        own = F.lit(None).cast("long")
        for at, size in enumerate(sizes):
            own = F.when(F.col("at") == F.lit(at), bin_of(F.col("v"), size, extent)).otherwise(own)
        differ = df.where(~one_plan.eqNullSafe(own)).select("v", "at")
        assert differ.collect() == [], extent


def test_side_stats_octaves_and_planned_levels(spark):
    df = spark.createDataFrame([(0.0, 0.0), (1.0, 4.0), (2.0, 3.5), (0.0, 2.0**40), (5.0, INF)],
                               "lo double, hi double")
    stats = side_stats(df, F.col("lo"), F.col("hi"))
    assert stats.octaves == frozenset({-1074, 0, 1, 40})  # the infinite span has none
    assert stats.unbounded == 1
    sizes = level_sizes(1.0, 2.0**40)
    assert planned_levels(sizes, [stats]) == tuple(range(len(sizes)))  # unbounded: all
    assert len(sizes) == 11  # levels 0 to 10; 2**40 is on level 9 (log16(2**40 / 64) = 8.5)
    assert planned_levels(sizes, [dataclasses.replace(stats, unbounded=0)]) == (0, 9)
    # a row on a level left out joins the next planned one, or the highest
    levels = spark.range(len(sizes)).select(planned_level(F.col("id"), (0, 2, 9), 10).alias("to"))
    # (as positions in the planned levels: 0, 2 and 9 are at 0, 1 and 2)
    assert [r["to"] for r in levels.collect()] == [0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]


def test_side_stats_octaves_at_the_edges_of_their_bits(spark):
    # spans of 2**-64, just under 1 and 2**63: the first and last bits of both masks
    edges = [(0.0, 2.0**-64), (0.0, 0.75), (0.0, 2.0**63), (1.0, 1.0)]
    df = spark.createDataFrame(edges, "lo double, hi double")
    assert side_stats(df, F.col("lo"), F.col("hi")).octaves == frozenset({-1074, -64, -1, 63})
    # a span beyond the bits' octaves (2**64 or more, under 2**-64): unknown, every level
    for far in (2.0**64, 2.0**-70):
        beyond = spark.createDataFrame([*edges, (0.0, far)], "lo double, hi double")
        stats = side_stats(beyond, F.col("lo"), F.col("hi"))
        assert stats.octaves is None
        sizes = level_sizes(2.0**-70, 2.0**64)
        assert planned_levels(sizes, [stats]) == tuple(range(len(sizes)))


def test_same_key_share_and_the_bin_size_it_gives(spark):
    rng = random.Random(5)
    left = [(rng.choice([1, 1, 1, 2, 3, None]), i) for i in range(600)]
    right = [(rng.choice([1, 2, 2, 4]), i) for i in range(400)]
    ldf = spark.createDataFrame(left, "k int, t long")
    rdf = spark.createDataFrame(right, "k long, t long")
    lk = Counter(k for k, _ in left if k is not None)
    rk = Counter(k for k, _ in right)
    exact = sum(n * rk[k] for k, n in lk.items()) / (len(left) * len(right))
    share = same_key_share(ldf, ("k",), len(left), rdf, ("k",), len(right))
    assert share == pytest.approx(exact)  # all rows: exact
    assert same_key_share(ldf, (), 600, rdf, (), 400) == 1.0
    disjoint = same_key_share(ldf.where("k = 3"), ("k",), 10, rdf, ("k",), 400)
    assert disjoint == 1 / 400  # no common key: one pair per row of the larger side
    # selective keys: wider bins, at most the data's whole range
    rep = SideStats(1000, 0.0, 1e6, 100.0, 150.0, 200.0)
    probe = SideStats(100_000, 0.0, 1e6, 0.0, 0.0, 0.0)
    sizes = [choose_bin_size(rep, probe, integral=True, key_share=s) for s in (1.0, 0.01, 1e-9)]
    assert sizes[0] < sizes[1] < sizes[2] <= 2 * 1e6


def test_sides_stats_in_one_job_equal_each_sides_own(spark):
    ranges = spark.createDataFrame([(0.0, 0.0), (1.0, 4.0), (0.0, 2.0**40), (5.0, INF),
                                    (3.0, 2.0), (None, 1.0)], "lo double, hi double")
    points = spark.createDataFrame([(v,) for v in (1.0, INF, NAN, None, -3.0)], "t double")
    empty = ranges.where("lo > 1e300")
    sides = [(ranges, F.col("lo"), F.col("hi")), (points, F.col("t"), None),
             (empty, F.col("lo"), F.col("hi")), (empty, F.col("lo"), None),
             (points, F.col("t"), F.col("t") + 1)]
    assert sides_stats(sides) == [side_stats(*side) for side in sides]
    assert sides_stats([]) == []


@pytest.mark.parametrize("broadcast", [True, False])
def test_key_share_is_sampled_only_when_it_decides(spark, broadcast):
    """None (the plain join) exactly when the sampled share would give it too."""
    rng = random.Random(9)
    for n_left, n_right, n_keys in [(5, 8, 1), (60, 90, 3), (300, 400, 40), (2000, 3000, 1),
                                    (2000, 3000, 500)]:
        left = spark.createDataFrame([(rng.randrange(n_keys), i) for i in range(n_left)],
                                     "k int, t long")
        right = spark.createDataFrame([(rng.randrange(n_keys), i) for i in range(n_right)],
                                      "k long, t long")
        asked = []

        def copies(asked=asked) -> bool:
            asked.append(1)
            return broadcast

        got = key_share_unless_plain((left, ("k",), n_left), (right, ("k",), n_right), copies)
        share = same_key_share(left, ("k",), n_left, right, ("k",), n_right)
        plain = plain_join_pays(n_left, n_right, share, lambda: broadcast)
        assert (got is None) == plain, (n_left, n_right, n_keys)
        assert got is None or got == share
        assert len(asked) <= 1  # Spark's size estimate is read once at most
        if plain_join_pays(n_left, n_right, 1.0, lambda: broadcast):
            assert got is None  # decided without the share


def test_selective_keys_give_the_plain_join(spark, capsys):
    rng = random.Random(8)
    p = spark.createDataFrame([(i, rng.randrange(1000), rng.randrange(10**6))
                               for i in range(3000)], "id long, k int, t long")
    i = spark.createDataFrame([(10**6 + j, rng.randrange(1000), s, s + rng.randrange(10**5))
                               for j, s in enumerate(rng.randrange(10**6) for _ in range(1000))],
                              "id long, k int, s long, e long")
    frames, expected = {}, {}
    for how in ("inner", "left"):
        frames[how] = cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                                       by="k", how=how)
        cond = "l.k = r.k AND " + point_in_condition("l.t", "r.s", "r.e", "both")
        expected[how] = sql_reference(p, i, cond, how=how)
    got = spark_batch({**frames, **{("ref", h): v for h, v in expected.items()}})
    assert got["inner"] == got[("ref", "inner")] and got["left"] == got[("ref", "left")]
    frames["left"].explain()
    assert "_cj_bin" not in capsys.readouterr().out  # 3 same-key pairs per row: no grid
    # without the keys every pair shares the (empty) key: 750 pairs per row, a grid
    cj.interval_join(p, i, left_start="t", right_start="s", right_end="e").explain()
    assert "_cj_bin" in capsys.readouterr().out


def test_a_broadcast_interval_side_gets_a_grid_from_fewer_pairs(spark, capsys):
    # 3,000 points and 1,000 intervals on 20 keys: about 37 same-key pairs per row,
    # between BROADCAST_PAIRS_PER_ROW and PLAIN_PAIRS_PER_ROW. Built from spark.range,
    # whose size Spark knows (the broadcast decision reads Spark's estimate).
    def hashed(seed, mod):
        return F.abs(F.xxhash64("id", F.lit(seed))) % F.lit(mod)

    p = spark.range(3000).select("id", hashed(1, 20).alias("k"), hashed(2, 10**6).alias("t"))
    i = spark.range(1000).select((F.col("id") + 10**6).alias("id"), hashed(3, 20).alias("k"),
                                 hashed(4, 10**6).alias("s"), hashed(5, 10**3).alias("n"))
    i = i.select("id", "k", "s", (F.col("s") + F.col("n")).alias("e"))
    conf = "spark.sql.autoBroadcastJoinThreshold"
    before = spark.conf.get(conf)
    frames, plans = {}, {}
    try:
        for threshold in ("10MB", "-1"):
            spark.conf.set(conf, threshold)
            for how in ("inner", "left"):
                frame = cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                                         by="k", how=how)
                frame.explain()
                plans[threshold, how] = capsys.readouterr().out
                frames[threshold, how] = frame
    finally:
        spark.conf.set(conf, before)
    for how in ("inner", "left"):
        assert "_cj_bin" in plans["10MB", how]  # the small intervals are broadcast: a grid
        assert "_cj_bin" not in plans["-1", how]  # no broadcast: the plain join pays
    cond = "l.k = r.k AND " + point_in_condition("l.t", "r.s", "r.e", "both")
    refs = {("ref", h): sql_reference(p, i, cond, how=h) for h in ("inner", "left")}
    got = spark_batch({**frames, **refs})
    for threshold, how in frames:
        assert got[threshold, how] == got["ref", how]


def test_broadcast_threshold_and_size_estimate(spark):
    conf = "spark.sql.autoBroadcastJoinThreshold"
    before = spark.conf.get(conf)
    df = spark.range(1000)
    try:
        for value, expected in (("10MB", 10 * 2**20), ("10485760b", 10 * 2**20),
                                ("2g", 2 * 2**30), ("512", 512), ("-1", None)):
            spark.conf.set(conf, value)
            assert broadcast_threshold(df) == expected, value
    finally:
        spark.conf.set(conf, before)
    # 1,000 longs as Spark estimates a range, printed rounded ("7.8 KiB")
    assert estimated_bytes(df) == pytest.approx(8000, rel=0.01)
    # a cross join: the product of the sizes, printed in MiB
    assert estimated_bytes(df.crossJoin(df)) == pytest.approx(8000.0**2, rel=0.01)


def test_far_reaching_intervals_do_not_thin_out_the_points():
    """The points' density is over their own extent: an interval ending in 9999 (micros)
    among short ones leaves the automatic bin size as it is."""
    month = 30 * 86_400e6
    points = SideStats(1_000_000, 0.0, month, 0.0, 0.0, 0.0)
    short = SideStats(100_000, 0.0, month, 1_800e6, 3_240e6, 7_200e6)
    forever = dataclasses.replace(short, hi_max=2.5e17, span_max=2.5e17)
    sizes = [choose_bin_size(rep, points, integral=True, key_share=0.001)
             for rep in (short, forever)]
    assert sizes[0] == sizes[1] <= 2.0**34  # hours, not years (2**34 micros: 4.8 hours)


def test_the_grid_choice_is_logged(spark, caplog):
    rng = random.Random(12)
    p = spark.createDataFrame([(i, rng.randrange(1000), rng.randrange(10**6))
                               for i in range(3000)], "id long, k int, t long")
    i = spark.createDataFrame([(j, rng.randrange(1000), s, s + rng.randrange(10**4))
                               for j, s in enumerate(rng.randrange(10**6) for _ in range(1000))],
                              "id long, k int, s long, e long")
    with caplog.at_level(logging.INFO, logger="chronojoin"):
        for by in ("k", None):
            cj.interval_join(p, i, left_start="t", right_start="s", right_end="e", by=by)
        cj.interval_join(p, i, left_start="t", right_start="s", right_end="e", bin_size=64)
        cj.band_join(p, i, left_on="t", right_on="s", lower="k", upper="k", by="k")
    lines = [r.getMessage() for r in caplog.records]
    plain = ("the plain join on the keys, few key-equal pairs (statistics: 3000 and 1000 "
             "rows)")
    assert lines[0] == "interval_join: " + plain
    assert lines[1].startswith("interval_join: automatic bin size "), lines
    assert "(statistics: 3000 and 1000 rows, key-equal share 1)" in lines[1]
    assert lines[2].startswith("interval_join: bin size 64 given; "), lines
    assert "grid levels joined" in lines[2]
    assert lines[3] == "band_join: per-row windows: " + plain
