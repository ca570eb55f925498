"""The automatic bin size on small inputs: bins as wide as the window, no statistics.

Each choice is read from the log of ``chronojoin.band`` and each result checked against
DuckDB.
"""

from __future__ import annotations

import logging

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.band import plan
from tests.band.helpers import points, to_spark
from tests.helpers import classic_only, refuse
from tests.oracles.band import band_condition, pairs, spark_batch

SCHEMA = "id long, k long, t long"


@pytest.fixture(scope="module")
def inputs(spark):
    lp, rp = points(11, 200), points(12, 250)
    return lp, rp, to_spark(spark, lp, SCHEMA), to_spark(spark, rp, SCHEMA)


def _choices(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("band_join:")]


def test_small_integer_windows_take_their_width(inputs, caplog, monkeypatch):
    """Closed ends are exact integers: [t-30, t+5) is [t-30, t+4], 34 wide; a window
    of zero width takes bins of 1 (an equi-join on the time)."""
    lp, rp, left, right = inputs
    cases = {(-30, 5, "left", "inner"): 34.0, (0, 0, "both", "left"): 1.0,
             (10, 60, "neither", "inner"): 48.0}
    frames, expected = {}, {}
    with monkeypatch.context() as mp, caplog.at_level(logging.INFO, logger="chronojoin.band"):
        refuse(mp, plan, "sides_stats")
        for (lower, upper, closed, how) in cases:
            frames[(lower, upper)] = cj.band_join(left, right, left_on="t", right_on="t",
                                                  lower=lower, upper=upper, closed=closed,
                                                  how=how, by="k")
            cond = band_condition(f"l.t + {lower}", "r.t", f"l.t + {upper}", closed)
            expected[(lower, upper)] = pairs(lp, rp, cond, keys=[("k", "k")], how=how)
    assert _choices(caplog) == [
        f"band_join: bin size {size} (small inputs (about 0.0 MiB by Spark's estimate): "
        "bins as wide as the window, no statistics)" for size in cases.values()
    ]
    assert spark_batch(frames) == expected


@classic_only
def test_small_frames_spark_cannot_size_are_counted(spark, caplog, monkeypatch):
    lp, rp = points(13, 150, span=10_000), points(14, 120, span=10_000)
    left = to_spark(spark, lp, SCHEMA, temporal=["t"], local=False)
    right = to_spark(spark, rp, SCHEMA, temporal=["t"], local=False)
    with monkeypatch.context() as mp, caplog.at_level(logging.INFO, logger="chronojoin.band"):
        refuse(mp, plan, "sides_stats")
        out = cj.band_join(left, right, left_on="t", right_on="t", lower="-1 millisecond",
                           upper="0 seconds", closed="right")
    # (t - 1000 us, t] is [t - 999 us, t]: 999 wide
    assert _choices(caplog) == ["band_join: bin size 999.0 (small inputs (270 row(s)): "
                                "bins as wide as the window, no statistics)"]
    cond = band_condition("l.t - INTERVAL 1 MILLISECOND", "r.t", "l.t", "right")
    assert spark_batch({0: out}) == {0: pairs(lp, rp, cond, temporal=["t"])}


def test_float_windows_and_their_zero_width(spark, caplog):
    """A float window takes its own width; one of zero width has none to take and runs
    the statistics."""
    lp, rp = points(15, 200), points(16, 220)
    lp["t"] = lp["t"].astype("float64") / 7.0
    rp["t"] = rp["t"].astype("float64") / 3.0
    schema = "id long, k long, t double"
    left, right = to_spark(spark, lp, schema), to_spark(spark, rp, schema)
    frames, expected = {}, {}
    with caplog.at_level(logging.INFO, logger="chronojoin.band"):
        for lower, upper in [(-2.5, 0.5), (0.0, 0.0)]:
            frames[lower] = cj.band_join(left, right, left_on="t", right_on="t", lower=lower,
                                         upper=upper, by="k")
            cond = band_condition(f"l.t + {lower}", "r.t", f"l.t + {upper}", "both")
            expected[lower] = pairs(lp, rp, cond, keys=[("k", "k")])
    found = _choices(caplog)
    assert len(found) == 2 and found[0].startswith("band_join: bin size 3.0 (small inputs")
    assert "(statistics: " in found[1], found
    assert spark_batch(frames) == expected


@classic_only
def test_over_either_limit_and_per_row_windows_run_the_statistics(inputs, caplog,
                                                                   monkeypatch):
    lp, rp, left, right = inputs
    rows = len(lp) + len(rp)
    unsized = [to_spark(left.sparkSession, p, SCHEMA, local=False) for p in (lp, rp)]
    with_hi = left.withColumn("hi", F.lit(3).cast("long"))  # a per-row window
    runs = [({"SMALL_INPUT_ROWS": rows - 1}, unsized[0], unsized[1], {"lower": -5, "upper": 3}),
            ({"SMALL_INPUT_BYTES": 1}, left, right, {"lower": -5, "upper": 3}),
            ({}, with_hi, right, {"lower": -5, "upper": "hi"})]
    for limits, lx, rx, window in runs:
        caplog.clear()
        with monkeypatch.context() as mp, caplog.at_level(logging.INFO,
                                                          logger="chronojoin.band"):
            for name, value in limits.items():
                mp.setattr(plan, name, value)
            out = cj.band_join(lx, rx, left_on="t", right_on="t", by="k", **window)
        assert not [m for m in _choices(caplog) if "small inputs" in m], (limits, window)
        cond = band_condition("l.t - 5", "r.t", "l.t + 3", "both")
        assert spark_batch({0: out.drop("hi")}) == {0: pairs(lp, rp, cond, keys=[("k", "k")])}
