"""band_join against DuckDB on seeded random data: every closed, window shape, kind, how."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import chronojoin as cj
from tests.band.helpers import points, to_spark
from tests.oracles.band import band_condition, pairs, spark_batch, spark_pairs

CLOSED = ["both", "left", "right", "neither"]
# (lower, upper): negative, positive, straddling, zero-width, inverted (matches nothing)
WINDOWS = [(-50, -10), (10, 60), (-20, 20), (0, 0), (10, -10)]


@pytest.fixture(scope="module")
def ints(spark):
    lp, rp = points(1, 300), points(2, 400)
    schema = "id long, k long, t long"
    return lp, rp, to_spark(spark, lp, schema), to_spark(spark, rp, schema)


def _oracle(lp, rp, lower, upper, *, closed, how, keys=()):
    cond = band_condition(f"l.t + {lower}", "r.t", f"l.t + {upper}", closed)
    return pairs(lp, rp, cond, keys=keys, how=how)


def test_integer_windows_every_closed_and_how(ints):
    """5 window shapes x 4 closed, alternating how (each closed gets both), one job."""
    lp, rp, left, right = ints
    frames, expected = {}, {}
    for i, (lower, upper) in enumerate(WINDOWS):
        for j, closed in enumerate(CLOSED):
            how = "inner" if (i + j) % 2 == 0 else "left"
            tag = (lower, upper, closed, how)
            frames[tag] = cj.band_join(left, right, left_on="t", right_on="t", lower=lower,
                                       upper=upper, closed=closed, how=how, bin_size=16)
            expected[tag] = _oracle(lp, rp, lower, upper, closed=closed, how=how)
    assert spark_batch(frames) == expected


@pytest.mark.parametrize("statistics", [False, True])
def test_automatic_bin_size_keys_hot_key(ints, request, statistics):
    """Automatic bin size, equality keys (key 0 on half of the rows, NULL keys); with
    the statistics these small inputs otherwise skip."""
    if statistics:
        request.getfixturevalue("full_auto")
    lp, rp, left, right = ints
    r2 = right.withColumnRenamed("k", "key")
    frames = {
        "inner": cj.band_join(left, right, left_on="t", right_on="t", lower=-30, upper=5,
                              closed="right", by="k"),
        "left": cj.band_join(left, r2, left_on="t", right_on="t", lower=0, upper=25,
                             left_by="k", right_by="key", how="left"),
    }
    assert spark_batch(frames) == {
        "inner": _oracle(lp, rp, -30, 5, closed="right", how="inner", keys=[("k", "k")]),
        "left": _oracle(lp, rp, 0, 25, closed="both", how="left", keys=[("k", "k")]),
    }


def test_fixed_bin_sizes_agree(ints):
    lp, rp, left, right = ints
    frames = {
        size: cj.band_join(left, right, left_on="t", right_on="t", lower=-40, upper=3,
                           closed="left", by="k", bin_size=size)
        for size in (1, 7, 64, 5000)
    }
    want = _oracle(lp, rp, -40, 3, closed="left", how="inner", keys=[("k", "k")])
    assert spark_batch(frames) == dict.fromkeys(frames, want)


def test_timestamps_hour_before(spark):
    """The seed's hour-before join on microsecond timestamps (scaled: minutes apart)."""
    rng = np.random.default_rng(7)
    lp, rp = points(3, 250, span=10_000), points(4, 300, span=10_000)
    lp["t"] = lp["t"] * 1_000_000 + rng.integers(0, 1_000_000, len(lp))
    rp["t"] = rp["t"] * 1_000_000
    schema = "id long, k long, t long"
    left = to_spark(spark, lp, schema, temporal=["t"], local=False)
    right = to_spark(spark, rp, schema, temporal=["t"], local=False)
    frames, expected = {}, {}
    for closed, how in [("right", "inner"), ("both", "left"), ("neither", "inner"),
                        ("left", "left")]:
        frames[closed] = cj.band_join(
            left, right, left_on="t", right_on="t", lower="-1 hour", upper="0 seconds",
            closed=closed, how=how, bin_size=None if closed == "right" else "16 minutes",
        )
        cond = band_condition("l.t - INTERVAL 1 HOUR", "r.t", "l.t", closed)
        expected[closed] = pairs(lp, rp, cond, how=how, temporal=["t"])
    frames["future"] = cj.band_join(left, right, left_on="t", right_on="t",
                                    lower=dt.timedelta(minutes=60), upper="120 minutes", by="k")
    cond = band_condition("l.t + INTERVAL 60 MINUTE", "r.t", "l.t + INTERVAL 120 MINUTE", "both")
    expected["future"] = pairs(lp, rp, cond, keys=[("k", "k")], temporal=["t"])
    assert spark_batch(frames) == expected


def test_floats_with_nan(spark):
    lp, rp = points(5, 200), points(6, 300)
    lp["t"] = lp["t"].astype("float64") / 7.0
    rp["t"] = rp["t"].astype("float64") / 3.0
    lp.loc[3, "t"] = np.nan
    schema = "id long, k long, t double"
    left, right = to_spark(spark, lp, schema), to_spark(spark, rp, schema)
    frames, expected = {}, {}
    for closed, how in [("both", "inner"), ("right", "left")]:
        frames[closed] = cj.band_join(left, right, left_on="t", right_on="t", lower=-2.5,
                                      upper=0.5, closed=closed, how=how, by="k")
        cond = band_condition("l.t + -2.5", "r.t", "l.t + 0.5", closed)
        expected[closed] = pairs(lp, rp, cond, keys=[("k", "k")], how=how)
    assert spark_batch(frames) == expected


def test_integer_left_float_right(spark, ints):
    lp, rp, left, _ = ints
    rp = rp.assign(t=rp["t"].astype("float64") + 0.5)
    right = to_spark(spark, rp, "id long, k long, t double")
    got = cj.band_join(left, right, left_on="t", right_on="t", lower=-10, upper=10)
    assert spark_pairs(got) == pairs(lp, rp, band_condition("l.t - 10", "r.t", "l.t + 10", "both"))


def test_date_left_timestamp_right(spark):
    left = spark.sql("SELECT 1 AS id, DATE'2024-01-02' AS d UNION ALL SELECT 2, NULL")
    right = spark.sql(
        "SELECT id, timestamp_micros(unix_micros(TIMESTAMP'2024-01-01 00:00:00') + id * 3600000000)"
        " AS ts FROM range(0, 60)"
    )
    got = cj.band_join(left, right, left_on="d", right_on="ts", lower="-2 hours", upper="0 s",
                       closed="right", how="left")
    assert spark_pairs(got) == {(1, 23): 1, (1, 24): 1, (2, None): 1}


def test_empty_sides(spark, ints):
    _, _, left, right = ints
    empty_r = right.limit(0)
    got = cj.band_join(left, empty_r, left_on="t", right_on="t", lower=-5, upper=5, how="left")
    assert got.count() == left.count()
    assert got.where("id_right IS NOT NULL").count() == 0
    got = cj.band_join(left.limit(0), right, left_on="t", right_on="t", lower=-5, upper=5)
    assert got.count() == 0


def test_output_columns_and_self_join(spark, ints):
    _, _, left, _ = ints
    got = cj.band_join(left, left, left_on="t", right_on="t", lower=0, upper=0, by="k",
                       suffix="_r")
    assert got.columns == ["id", "k", "t", "id_r", "t_r"]
    assert got.where("id = id_r").count() == left.where("t IS NOT NULL AND k IS NOT NULL").count()
