"""``auto`` is a pure function of the spec and the statistics: its decisions, no Spark job."""

from __future__ import annotations

import numpy as np
import pytest

from chronojoin.intervals.choose import Stats, choose, needs_stats
from chronojoin.intervals.spec import build_spec


@pytest.fixture(scope="module")
def frames(spark):
    points = spark.createDataFrame([(1, 5)], "id int, time long")
    intervals = spark.createDataFrame([(1, 0, 9, 2)], "id int, start long, end long, v int")
    return points, intervals


def spec(frames, **kw):
    args = {"by": "id", "left_by": None, "right_by": None, "time": "time", "start": "start",
            "end": "end", "aggs": {"s": ("sum", "v")}, "closed": "both", "how": "left",
            "strategy": "auto", "buckets": None}
    args.update(kw)
    return build_spec(*frames, **args)


def stats(points, intervals, keys, pairs, max_key_events, partitions=200):
    return Stats(keys=keys, points=points, intervals=intervals, pairs=pairs,
                 max_key_events=max_key_events, lo=0.0, hi=100.0, partitions=partitions)


# the benchmark's shapes: (a) few pairs, (b) many pairs, (c) a hot key; and sparse
# coverage (about one pair per event)
FEW = stats(10_000_000, 1_000_000, 100_000, 1e8, 200)
SPARSE = stats(10_000_000, 1_000_000, 100_000, 1.2e7, 200)
MANY = stats(10_000_000, 1_000_000, 1_000, 1e10, 12_000)
HOT = stats(10_000_000, 1_000_000, 50_000, 2.5e12, 6_000_000)


def test_few_pairs_per_event_use_the_join(frames):
    assert choose(spec(frames), SPARSE).strategy == "join"
    # 8.3 pairs per event: the sweep (the join measured 1.38x the sweep at 10M points)
    assert choose(spec(frames), FEW).strategy == "sweep"


def test_many_pairs_use_the_sweep(frames):
    assert choose(spec(frames), MANY).strategy == "sweep"


def test_hot_key_uses_buckets_with_the_formula(frames):
    plan = choose(spec(frames), HOT)
    assert plan.strategy == "bucketed_sweep"
    assert plan.target == 20_000  # max(20000, 12M / (8 * 200))
    assert "largest key" in plan.reason


def test_no_keys_use_buckets(frames):
    plan = choose(spec(frames, by=None), stats(1_000_000, 100_000, 1, 1e11, 1_200_000))
    assert plan.strategy == "bucketed_sweep"
    # a timeline that fits in one bucket is the plain sweep
    plan = choose(spec(frames, by=None), stats(100, 10, 1, 1000.0, 120))
    assert plan.strategy == "sweep" and "one bucket" in plan.reason


def test_requested_buckets_on_small_keys_run_the_sweep(frames):
    plan = choose(spec(frames, strategy="bucketed_sweep"), MANY)
    assert plan.strategy == "sweep"
    assert choose(spec(frames, strategy="bucketed_sweep"), HOT).strategy == "bucketed_sweep"


def test_non_invertible_functions_use_the_join(frames):
    s = spec(frames, aggs={"m": ("max", "v"), "s": ("sum", "v")})
    plan = choose(s, HOT)
    assert plan.strategy == "join"
    assert "max" in plan.reason


def test_decimals_wider_than_the_sweeps_use_the_join(spark, frames):
    points, _ = frames
    intervals = spark.createDataFrame(
        [], "id int, start long, end long, d28 decimal(28,2), d29 decimal(29,0), "
        "m24 decimal(24,2), m25 decimal(25,2), m22 decimal(22,0), m23 decimal(23,0)")
    for aggs, limit in [({"s": ("sum", "d28"), "m": ("mean", "m24"), "z": ("mean", "m22")},
                         None),
                        ({"s": ("sum", "d29")}, "running sum of decimal(29,0)"),
                        ({"m": ("mean", "m25")}, "mean of decimal(25,2)"),
                        ({"m": ("mean", "m23")}, "mean of decimal(23,0)")]:
        s = spec((points, intervals), aggs=aggs, buckets=4)
        plan = choose(s, None if limit else MANY)
        assert needs_stats(s) is (limit is None), aggs
        if limit is None:
            assert plan.strategy == "bucketed_sweep", aggs
        else:
            assert (plan.strategy, limit in plan.reason) == ("join", True), plan


def test_buckets_given_are_used(frames):
    plan = choose(spec(frames, buckets=8), MANY)
    assert (plan.strategy, plan.count, plan.lo, plan.hi) == ("bucketed_sweep", 8, 0.0, 100.0)
    plan = choose(spec(frames, strategy="bucketed_sweep", buckets=2.5), None)
    assert (plan.strategy, plan.width) == ("bucketed_sweep", 2.5)
    # a numpy integer (a pandas user's number) is a count too, never a width
    plan = choose(spec(frames, buckets=np.int64(8)), MANY)
    assert (plan.count, plan.width) == (8, None)
    assert type(plan.count) is int


@pytest.mark.parametrize("name", ["sweep", "join"])
def test_named_strategy_overrides(frames, name):
    s = spec(frames, strategy=name)
    assert not needs_stats(s)
    assert choose(s, None).strategy == name


def test_needs_stats(frames):
    assert needs_stats(spec(frames))
    assert needs_stats(spec(frames, strategy="bucketed_sweep"))
    assert needs_stats(spec(frames, strategy="bucketed_sweep", buckets=4))
    assert not needs_stats(spec(frames, strategy="bucketed_sweep", buckets="3"))
    # only the join computes max: auto needs no statistics to pick it
    s = spec(frames, aggs={"m": ("max", "v")})
    assert not needs_stats(s)
    assert choose(s, None).strategy == "join"


def test_sampled_statistics_estimate_the_exact_ones(spark):
    from pyspark.sql import functions as F

    from chronojoin.intervals.choose import gather

    # 40 keys, 500 points and 50 intervals each, one key holding a third of the points
    pts = spark.range(30_000).select(
        F.when(F.col("id") % 3 == 0, F.lit(0)).otherwise(F.col("id") % 40).alias("id"),
        (F.col("id") * 7 % 1000).alias("time"))
    ivs = spark.range(2_000).select((F.col("id") % 40).alias("id"),
                                    (F.col("id") % 900).alias("start"),
                                    (F.col("id") % 900 + 50).alias("end"), F.lit(1).alias("v"))
    s = spec((pts, ivs))
    exact, est = gather(s), gather(s, 0.3)
    assert est.fraction == 0.3 and est.sampled == pytest.approx(0.3 * 32_000, rel=0.1)
    for name in ("points", "intervals", "max_key_events"):
        assert getattr(est, name) == pytest.approx(getattr(exact, name), rel=0.15), name
    # Pairs multiply two sampled counts per key, and the hot key's 50 intervals are
    # sampled as about 15 (a relative error of about 0.2 on its share alone).
    assert est.pairs == pytest.approx(exact.pairs, rel=0.3)
    assert choose(s, est).strategy == choose(s, exact).strategy
    assert gather(s, 0.3) == est  # seeded: the same inputs give the same estimate
