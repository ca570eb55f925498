"""Worked examples of seed 002: measurements in the hour before each event, and after."""

from __future__ import annotations

from pyspark.sql import functions as F

import chronojoin as cj


def _seed_data(spark, n):
    """Events every 10 s, measurements every ~10 s (+ up to 5 s), as in the seed."""
    base = 1_700_000_000
    events = spark.range(n).selectExpr(
        "id AS eid", f"timestamp_seconds({base} - 10 * id) AS eventTime",
        "element_at(array('LoginEvent', 'PurchaseEvent', 'DetailsUpdateEvent'),"
        " CAST(id % 3 AS INT) + 1) AS eventType",
    )
    measurements = spark.range(n).selectExpr(
        "id AS mid",
        f"timestamp_seconds({base} - 10 * id + CAST(pmod(id * 7919, 5) AS INT)) "
        "AS measurementTime",
        "CAST(pmod(id * 31, 97) AS DOUBLE) / 97 AS value",
    )
    return events, measurements


def test_seed_sanity_check_30_seconds(spark):
    """The seed's sanity check: 10 events, 10 measurements, rangeBack 30 seconds."""
    events, measurements = _seed_data(spark, 10)
    got = cj.band_join(events, measurements, left_on="eventTime", right_on="measurementTime",
                       lower="-30 seconds", upper="0 seconds", closed="right")
    assert got.columns == ["eid", "eventTime", "eventType", "mid", "measurementTime", "value"]
    rows = got.select("eid", "mid").collect()
    # measurement m is at base - 10 m + (7919 m mod 5); event e at base - 10 e
    expect = set()
    for e in range(10):
        for m in range(10):
            d = (-10 * m + (7919 * m) % 5) - (-10 * e)
            if -30 < d <= 0:
                expect.add((e, m))
    assert {(r.eid, r.mid) for r in rows} == expect
    assert len(rows) == len(expect)


def test_hour_before_and_future_window_counts(spark):
    """Matches per event: the hour before (closed right) and 60..120 minutes after (left)."""
    n = 1000
    events, measurements = _seed_data(spark, n)
    before = cj.band_join(events, measurements, left_on="eventTime", right_on="measurementTime",
                          lower="-1 hour", upper="0 seconds", closed="right")
    after = cj.band_join(events, measurements, left_on="eventTime", right_on="measurementTime",
                         lower="60 minutes", upper="120 minutes", how="left")
    got = before.groupBy("eid").agg(F.count("mid").alias("n")).select(
        F.lit("before").alias("w"), "eid", "n"
    ).unionByName(
        after.groupBy("eid").agg(F.count("mid").alias("n")).select(F.lit("after").alias("w"),
                                                                   "eid", "n")
    ).collect()
    offs = [(7919 * m) % 5 for m in range(n)]
    want = {}
    for e in range(n):
        ds = [-10 * m + offs[m] + 10 * e for m in range(max(0, e - 800), min(n, e + 400))]
        nb = sum(1 for d in ds if -3600 < d <= 0)
        if nb:
            want[("before", e)] = nb
        want[("after", e)] = sum(1 for d in ds if 3600 <= d <= 7200)  # 0: the NULL row
    assert {(r.w, r.eid): r.n for r in got} == want
    assert after.count() == sum(max(v, 1) for (w, _), v in want.items() if w == "after")
