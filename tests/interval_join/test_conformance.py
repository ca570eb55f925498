"""interval_join against DuckDB: point-in-interval and overlap, every closed, heavy tails."""

from __future__ import annotations

import pytest

import chronojoin as cj
from tests.band.helpers import intervals, points, to_spark
from tests.oracles.band import (
    overlap_condition,
    pairs,
    point_in_condition,
    spark_batch,
)

CLOSED = ["both", "left", "right", "neither"]


@pytest.fixture(scope="module")
def data(spark):
    """Points; short intervals; intervals with a heavy tail (4% up to 20x the time span)."""
    pp = points(21, 250)
    short = intervals(22, 250, length=15)
    heavy = intervals(23, 200, length=20, tail=0.04)
    schema_p = "id long, k long, t long"
    schema_i = "id long, k long, s long, e long"
    return {
        "pp": pp, "short": short, "heavy": heavy,
        "p": to_spark(spark, pp, schema_p),
        "i_short": to_spark(spark, short, schema_i),
        "i_heavy": to_spark(spark, heavy, schema_i),
    }


def test_point_in_interval(data):
    frames, expected = {}, {}
    for j, closed in enumerate(CLOSED):
        for name in ("short", "heavy"):
            how = "left" if (j + (name == "heavy")) % 2 else "inner"
            by = "k" if j >= 2 else None
            frames[(closed, name)] = cj.interval_join(
                data["p"], data[f"i_{name}"], left_start="t", right_start="s", right_end="e",
                closed=closed, how=how, by=by, bin_size=None if j == 0 else 8,
            )
            cond = point_in_condition("l.t", "r.s", "r.e", closed)
            expected[(closed, name)] = pairs(
                data["pp"], data[name], cond, how=how, keys=[("k", "k")] if by else []
            )
    assert spark_batch(frames) == expected


def test_overlap(data):
    frames, expected = {}, {}
    for j, closed in enumerate(CLOSED):
        for a, b in (("short", "heavy"), ("heavy", "short")):
            how = "left" if (j + (a == "heavy")) % 2 else "inner"
            by = "k" if j % 2 else None
            frames[(closed, a)] = cj.interval_join(
                data[f"i_{a}"], data[f"i_{b}"], left_start="s", left_end="e", right_start="s",
                right_end="e", closed=closed, how=how, by=by, bin_size=None if j < 2 else 4,
            )
            cond = overlap_condition("l.s", "l.e", "r.s", "r.e", closed)
            expected[(closed, a)] = pairs(
                data[a], data[b], cond, how=how, keys=[("k", "k")] if by else []
            )
    assert spark_batch(frames) == expected


def test_timestamps_and_empty(spark, data):
    """Timestamp columns (intervals spanning many bins) and an empty right side."""
    pp = data["pp"].assign(t=data["pp"]["t"] * 1_000_000)
    iv = data["heavy"].assign(s=data["heavy"]["s"] * 1_000_000, e=data["heavy"]["e"] * 1_000_000)
    p = to_spark(spark, pp, "id long, k long, t long", temporal=["t"], local=False)
    i = to_spark(spark, iv, "id long, k long, s long, e long", temporal=["s", "e"], local=False)
    frames = {
        "point": cj.interval_join(p, i, left_start="t", right_start="s", right_end="e",
                                  closed="right", bin_size="3 seconds"),
        "overlap": cj.interval_join(i, i, left_start="s", left_end="e", right_start="s",
                                    right_end="e", by="k", how="left"),
        "empty": cj.interval_join(p, i.limit(0), left_start="t", right_start="s",
                                  right_end="e", how="left"),
    }
    expected = {
        "point": pairs(pp, iv, point_in_condition("l.t", "r.s", "r.e", "right"),
                       temporal=["t", "s", "e"]),
        "overlap": pairs(iv, iv, overlap_condition("l.s", "l.e", "r.s", "r.e", "both"),
                         how="left", keys=[("k", "k")], temporal=["s", "e"]),
        "empty": {(x, None): 1 for x in pp["id"]},
    }
    assert spark_batch(frames) == expected


def test_output_columns(data):
    got = cj.interval_join(data["p"], data["i_short"], left_start="t", right_start="s",
                           right_end="e", by="k")
    assert got.columns == ["id", "k", "t", "id_right", "s", "e"]


@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"left_start": "x"}, ValueError, "`left_start`: column 'x' not found in left"),
    ({"left_end": "x"}, ValueError, "`left_end`: column 'x' not found in left"),
    ({"right_end": "x"}, ValueError, "`right_end`: column 'x' not found in right"),
    ({"closed": "half"}, ValueError, "`closed` must be one of"),
    ({"how": "right"}, ValueError, "`how` must be one of"),
    ({"bin_size": -1}, ValueError, "`bin_size` must be positive"),
    ({"bin_size": "1 hour"}, ValueError, "`bin_size`: '1 hour' is a time span"),
    # interval_join takes no prefix: the clash message suggests only another suffix
    ({"suffix": ""}, ValueError, "clashes with another output column; choose another suffix$"),
])
def test_errors(data, kw, exc, match):
    args = {"left_start": "t", "right_start": "s", "right_end": "e"} | kw
    with pytest.raises(exc, match=match):
        cj.interval_join(data["p"], data["i_short"], **args)


def test_type_mismatch(spark):
    left = spark.sql("SELECT 1 AS t")
    right = spark.sql("SELECT TIMESTAMP'2024-01-01 00:00:00' AS s, 2 AS e")
    with pytest.raises(TypeError, match="incompatible time columns"):
        cj.interval_join(left, right, left_start="t", right_start="s", right_end="e")
