"""``strategy="auto"`` on real frames: which statistics it runs, and the rows it returns.

Small inputs take the sweep without statistics; functions only the join computes take
the join without statistics; otherwise (``full_auto``) the statistics choose. Every
result is checked against DuckDB.
"""

from __future__ import annotations

import logging
from decimal import Decimal

import pytest

import chronojoin as cj
from chronojoin.intervals import choose
from tests.helpers import classic_only, parquet_copies, refuse
from tests.oracles.intervals import (
    INTERVAL_SCHEMA,
    POINT_SCHEMA,
    arrow,
    assert_same,
    duckdb_interval_aggregate,
    random_data,
    spark_schema,
)

SWEEPABLE = {"total": ("sum", "v"), "n": ("count", None), "avg": ("mean", "w")}


def _inputs(spark, seed=5, keys=6):
    points, intervals = random_data(seed=seed, n_points=120, n_intervals=50, keys=keys)
    pdf = spark.createDataFrame(points, spark_schema(POINT_SCHEMA))
    idf = spark.createDataFrame(intervals, spark_schema(INTERVAL_SCHEMA))
    return points, intervals, pdf, idf


def _expected(points, intervals, aggs):
    return duckdb_interval_aggregate(
        arrow(points, POINT_SCHEMA), arrow(intervals, INTERVAL_SCHEMA), left_by=["id"],
        right_by=["id"], time="time", start="start", end="end", aggs=aggs)


def _chosen(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "interval_aggregate:" in r.getMessage()]


@classic_only
def test_small_inputs_get_the_sweep_without_statistics(spark, caplog, tmp_path, monkeypatch):
    """Local data is counted (one job that reads no column), files are sized from their
    plans; neither runs the statistics job."""
    points, intervals, pdf, idf = _inputs(spark)
    expected = _expected(points, intervals, SWEEPABLE)
    pfile, ifile = parquet_copies(tmp_path, pdf, idf)
    rows = len(points) + len(intervals)
    cases = [(pdf, idf, f"small inputs ({rows} row(s))"),
             (pfile, ifile, "small inputs (about 0.0 MiB by Spark's estimate)"),
             (pfile, idf, f"small inputs ({len(intervals)} row(s) and about 0.0 MiB")]
    with monkeypatch.context() as mp:
        refuse(mp, choose, "gather")
        for p, i, reason in cases:
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
                out = cj.interval_aggregate(p, i, by="id", aggs=SWEEPABLE)
            assert [f"strategy sweep ({reason}" in m for m in _chosen(caplog)] == [True], (
                reason, _chosen(caplog))
            assert_same(out.collect(), expected)


@classic_only
def test_over_either_limit_the_statistics_run(spark, caplog, tmp_path, monkeypatch):
    points, intervals, pdf, idf = _inputs(spark)
    pfile, ifile = parquet_copies(tmp_path, pdf, idf)
    rows = len(points) + len(intervals)
    for name, limit, p, i in [("SMALL_INPUT_ROWS", rows - 1, pdf, idf),
                              ("SMALL_INPUT_ROWS", rows, pdf, idf),
                              ("SMALL_INPUT_BYTES", 1, pfile, ifile)]:
        caplog.clear()
        with monkeypatch.context() as mp, caplog.at_level(logging.INFO,
                                                          logger="chronojoin.intervals"):
            mp.setattr(choose, name, limit)
            cj.interval_aggregate(p, i, by="id", aggs=SWEEPABLE)
        small = limit == rows
        assert [("small inputs" in m) is small and ("stats None" in m) is small
                for m in _chosen(caplog)] == [True], (name, limit, _chosen(caplog))


@pytest.mark.parametrize("buckets", [3, "7"])
def test_buckets_given_keep_their_layout(spark, caplog, buckets):
    points, intervals, pdf, idf = _inputs(spark)
    with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
        out = cj.interval_aggregate(pdf, idf, by="id", aggs=SWEEPABLE, buckets=buckets)
    assert [m for m in _chosen(caplog) if "small inputs" in m] == []
    assert_same(out.collect(), _expected(points, intervals, SWEEPABLE))


def test_functions_only_the_join_computes_skip_the_statistics(spark, caplog, monkeypatch):
    points, intervals, pdf, idf = _inputs(spark)
    aggs = {**SWEEPABLE, "hi": ("max", "v"), "kinds": ("collect_set", "s")}
    with monkeypatch.context() as mp:
        refuse(mp, choose, "gather")
        mp.setattr(choose, "SMALL_INPUT_BYTES", 0)
        with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
            out = cj.interval_aggregate(pdf, idf, by="id", aggs=aggs)
    assert [("strategy join" in m and "stats None" in m) for m in _chosen(caplog)] == [True]
    assert_same(out.collect(), _expected(points, intervals, aggs))


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize(("keys", "chosen"), [(6, "sweep"), (200, "join")])
def test_statistics_choose_on_real_frames(spark, caplog, keys, chosen):
    """Few keys: many key-equal pairs per event (the sweep); many: few (the join)."""
    points, intervals, pdf, idf = _inputs(spark, seed=9, keys=keys)
    with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
        out = cj.interval_aggregate(pdf, idf, by="id", aggs=SWEEPABLE)
    assert [f"strategy {chosen} (" in m for m in _chosen(caplog)] == [True], _chosen(caplog)
    assert_same(out.collect(), _expected(points, intervals, SWEEPABLE))


def test_decimals_wider_than_the_sweeps_take_the_join(spark, caplog):
    """A running sum of decimal(38,0) holds every open interval: 2 x 6e37 overflowed (an
    error with ANSI on) where the point's own sum is 7. A swept mean of decimal(38,18)
    kept 18 digits of scale where avg keeps 22 (4/3 ended in ...3330000)."""
    big, one, two, zero = Decimal(6 * 10**37), Decimal(1), Decimal(2), Decimal(0)
    points = spark.createDataFrame([(1, 5), (2, 5)], "id int, time long")
    intervals = spark.createDataFrame(
        [(1, 0, 1, big, one), (1, 0, 1, big, one), (1, 4, 6, Decimal(7), one),
         (2, 4, 6, zero, one), (2, 4, 6, zero, one), (2, 4, 6, zero, two)],
        "id int, start long, end long, v decimal(38,0), w decimal(38,18)")
    got = {}
    with caplog.at_level(logging.INFO, logger="chronojoin.intervals"):
        for name, agg in [("s", ("sum", "v")), ("m", ("mean", "w"))]:
            out = cj.interval_aggregate(points, intervals, by="id", aggs={name: agg})
            got[name] = dict(out.select("id", name).collect())
    assert got == {"s": {1: Decimal(7), 2: Decimal(0)},
                   "m": {1: Decimal(1), 2: Decimal("1.3333333333333333333333")}}
    assert ["strategy join (" in m for m in _chosen(caplog)] == [True, True], _chosen(caplog)
