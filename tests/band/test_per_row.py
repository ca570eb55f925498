"""Per-row windows (``lower``/``upper`` naming columns of left) against DuckDB."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import chronojoin as cj
from tests.band.helpers import points, to_spark
from tests.fuzz import session_settings
from tests.oracles.band import band_condition, pairs, spark_batch, with_nulls


@pytest.fixture(scope="module")
def windows(spark):
    """Left rows with their own windows: NULL bounds, inverted ones, a heavy tail."""
    rng = np.random.default_rng(11)
    lp = points(12, 250)
    lo = rng.integers(-60, 10, len(lp))
    width = rng.integers(0, 40, len(lp))
    width[rng.random(len(lp)) < 0.04] = rng.integers(2_000, 20_000)  # very long windows
    lp["lo"] = with_nulls(lo, rng, 0.05)
    lp["hi"] = with_nulls(np.where(rng.random(len(lp)) < 0.05, lo - 5, lo + width), rng, 0.05)
    # exact duplicate left rows (every copy must come back, matched or not)
    lp = pd.concat([lp, lp.iloc[:20]], ignore_index=True)
    rp = points(13, 400, span=1000)
    schema_l = "id long, k long, t long, lo long, hi long"
    schema_r = "id long, k long, t long"
    return lp, rp, to_spark(spark, lp, schema_l), to_spark(spark, rp, schema_r)


def test_integer_per_row_windows(windows):
    lp, rp, left, right = windows
    frames, expected = {}, {}
    for closed, how, by, size in [("both", "inner", None, None), ("right", "left", None, None),
                                  ("neither", "left", "k", 4), ("left", "inner", "k", 3)]:
        frames[closed] = cj.band_join(left, right, left_on="t", right_on="t", lower="lo",
                                      upper="hi", closed=closed, how=how, by=by, bin_size=size)
        cond = band_condition("l.t + l.lo", "r.t", "l.t + l.hi", closed)
        keys = [("k", "k")] if by else []
        expected[closed] = pairs(lp, rp, cond, how=how, keys=keys)
    frames["mixed"] = cj.band_join(left, right, left_on="t", right_on="t", lower=-3,
                                   upper="hi", how="left")
    expected["mixed"] = pairs(lp, rp, band_condition("l.t - 3", "r.t", "l.t + l.hi", "both"),
                              how="left")
    assert spark_batch(frames) == expected


def test_timestamp_per_row_bounds(spark, windows):
    """Seconds (numeric), interval day to second, and absolute timestamp bounds."""
    lp, rp, left, right = windows
    lt = left.selectExpr(
        "id", "k", "timestamp_seconds(t) AS t", "lo AS lo_s",
        "make_dt_interval(0, 0, 0, CAST(hi AS DECIMAL(18, 6)) + 0.5) AS hi_iv",
        "timestamp_seconds(t + hi) AS hi_ts",
    )
    rt = right.selectExpr("id", "k", "timestamp_seconds(t) AS t")
    lq = lp.assign(t=lp["t"] * 1_000_000)
    rq = rp.assign(t=rp["t"] * 1_000_000)
    frames = {
        "seconds": cj.band_join(lt, rt, left_on="t", right_on="t", lower="lo_s",
                                upper="hi_iv", closed="right", how="left"),
        "absolute": cj.band_join(lt, rt, left_on="t", right_on="t", lower="-30 seconds",
                                 upper="hi_ts", by="k"),
    }
    expected = {
        "seconds": pairs(
            lq, rq,
            band_condition("l.t + to_seconds(l.lo)", "r.t",
                           "l.t + to_microseconds(l.hi * 1000000 + 500000)", "right"),
            how="left", temporal=["t"],
        ),
        "absolute": pairs(
            lq, rq,
            band_condition("l.t - INTERVAL 30 SECOND", "r.t", "l.t + to_seconds(l.hi)", "both"),
            keys=[("k", "k")], temporal=["t"],
        ),
    }
    assert spark_batch(frames) == expected


def test_float_seconds_bound_rounds_to_microseconds(spark):
    left = spark.sql("SELECT 1 AS id, TIMESTAMP'2024-01-01 00:00:10' AS t, -1.0000004 AS lo")
    right = spark.sql(
        "SELECT 7 AS id, TIMESTAMP'2024-01-01 00:00:09' AS t UNION ALL "
        "SELECT 8, TIMESTAMP'2024-01-01 00:00:08.999999'"
    )
    got = cj.band_join(left, right, left_on="t", right_on="t", lower="lo", upper=0)
    assert sorted(got.select("id_right").toPandas()["id_right"]) == [7]


def test_left_rows_with_map_column_and_duplicates(spark):
    """The unmatched-row rule compares whole left rows, map columns included."""
    left = spark.sql(
        "SELECT * FROM VALUES (1, 10, 5, map('a', 1)), (1, 10, 5, map('a', 1)), "
        "(2, 100, 5, map('b', 2)), (3, NULL, 5, map('c', 3)) AS l(id, t, w, m)"
    )
    right = spark.sql("SELECT * FROM VALUES (7, 12), (8, 14) AS r(id, t)")
    got = cj.band_join(left, right, left_on="t", right_on="t", lower=0, upper="w", how="left")
    pairs_ = sorted((r.id, r.id_right or 0) for r in got.collect())
    assert pairs_ == [(1, 7), (1, 7), (1, 8), (1, 8), (2, 0), (3, 0)]


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_interval_bounds_are_fixed_durations_in_any_time_zone(spark, zone):
    """A day of an interval bound is 24 hours, also across a daylight saving change and
    for the interval types that end in days, hours or minutes; the widest interval
    (``Long.MIN`` microseconds) is exact too, without overflowing."""
    hour = 3_600_000_000
    t0 = 1_720_612_800_000_000  # 2024-07-10 12:00 UTC; 180 days later is after the DST end
    left = spark.sql(
        f"SELECT 1 AS id, timestamp_micros({t0}) AS t, INTERVAL '180' DAY AS d, "
        "INTERVAL '4320' HOUR AS h, INTERVAL '259200:00' MINUTE TO SECOND AS m, "
        "INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND AS widest"
    )
    right = spark.sql(
        f"SELECT * FROM VALUES (1, {t0 + 4319 * hour}), (2, {t0 + 4320 * hour}), "
        f"(3, {t0 + 4321 * hour}), (4, {t0 - 2**63}), (5, {t0 - 2**63 - 1}) AS r(id, m)"
    ).selectExpr("id", "timestamp_micros(m) AS t")
    with session_settings(spark, {"spark.sql.session.timeZone": zone}):
        frames = {
            upper: cj.band_join(left, right, left_on="t", right_on="t", lower="widest",
                                upper=upper)
            for upper in ("d", "h", "m", "180 days")
        }
        got = {name: sorted(r.id_right for r in df.select("id_right").collect())
               for name, df in frames.items()}
    assert got == {name: [1, 2, 4] for name in frames}
