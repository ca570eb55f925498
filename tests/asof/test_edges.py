"""Edge values every strategy must agree on: infinities, the long range, odd key types.

The reference is a scan in Python, whose ints never overflow and whose comparisons
are written out so that an equal infinite time is at distance 0.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import itertools
import random

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import InvalidArgumentError, TimeTypeError

STRATEGIES = ["exploding", "union", "sort_merge", "broadcast", "auto"]
#: The keyed plans whose own code applies a tolerance or a distance to times: the
#: exploded pairs' order, the broadcast join's condition, and the choice between carried
#: candidates. ``sort_merge`` carries its candidates through Spark's sort and a pass that
#: compares keys only, then chooses between them as ``union`` does, so the tests of
#: extreme times run it only with time buckets (whose ends it computes). ``auto`` plans
#: ``union`` on the few local rows below (checked by tests/asof/test_auto_layout.py).
ARITHMETIC_PLANS = ["exploding", "union", "broadcast"]
INF = float("inf")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def _reference(left, right, *, direction, exact, tolerance, keyed=True):
    """``(lid, v)`` per left row: the value of the one right row that must match."""

    def distance(a, b):
        return 0 if a == b else abs(a - b)

    out = set()
    for lid, lk, lt in left:
        best = None
        for rk, rt, v in right:
            if keyed and rk != lk:
                continue
            if not exact and rt == lt:
                continue
            if (direction == "backward" and rt > lt) or (direction == "forward" and rt < lt):
                continue
            d = distance(lt, rt)
            if tolerance is not None and d > tolerance:
                continue
            # The latest (earliest) on its side; nearest: the closer of the two, and on
            # equal distance the backward one (infinite distances are equal too).
            side = -rt if rt <= lt else rt
            rank = {"backward": (-rt,), "forward": (rt,), "nearest": (d, rt > lt, side)}
            rank = rank[direction]
            if best is None or rank < best[0]:
                best = (rank, v)
        out.add((lid, None if best is None else best[1]))
    return out


def _run(spark, left, right, time_type, strategy, keyed=True, **kw):
    return _run_many(spark, left, right, time_type, strategy, [kw], keyed=keyed)[0]


def _run_many(spark, left, right, time_type, strategy, options, keyed=True):
    """``(lid, v)`` of one join per dict of ``options``, all computed by one job (a union)."""
    ldf = spark.createDataFrame(left, f"lid int, k int, t {time_type}")
    rdf = spark.createDataFrame(right, f"k int, t {time_type}, v string")
    joins = [
        cj.asof_join(ldf, rdf, on="t", by="k" if keyed else None, strategy=strategy, **kw)
        .select(F.lit(n).alias("case"), "lid", "v")
        for n, kw in enumerate(options)
    ]
    out: list[set] = [set() for _ in options]
    for r in functools.reduce(DataFrame.unionByName, joins).collect():
        out[r["case"]].add((r["lid"], r["v"]))
    return out


@pytest.mark.parametrize("strategy", ARITHMETIC_PLANS)
def test_infinite_times_match_as_equal_times(spark, strategy):
    """An equal infinite time is an exact match at distance 0 (``inf - inf`` is NaN)."""
    left = [(1, 1, INF), (2, 1, -INF), (3, 1, 2.0), (4, 2, INF), (5, 2, 7.0)]
    right = [(1, INF, "pinf"), (1, -INF, "ninf"), (1, 0.0, "zero"), (1, 5.0, "five"),
             (2, -INF, "ninf2"), (2, 100.0, "hundred")]
    options = [{"direction": d, "allow_exact_matches": e, "tolerance": t} for d, e, t in
               itertools.product(["backward", "forward", "nearest"], [True, False], [None, 1.0])]
    for kw, got in zip(options, _run_many(spark, left, right, "double", strategy, options)):
        assert got == _reference(left, right, direction=kw["direction"],
                                 exact=kw["allow_exact_matches"], tolerance=kw["tolerance"]), kw


# (``auto`` plans ``union`` for a join without keys)
@pytest.mark.parametrize("strategy", ["union", "sort_merge", "exploding"])
def test_infinite_times_without_keys(spark, strategy):
    left = [(1, 0, INF), (2, 0, -INF), (3, 0, 3.0)]
    right = [(0, INF, "pinf"), (0, -INF, "ninf"), (0, 1.0, "one"), (0, 4.0, "four")]
    options = [{"direction": d} for d in ["backward", "forward", "nearest"]]
    results = _run_many(spark, left, right, "double", strategy, options, keyed=False)
    for kw, got in zip(options, results):
        assert got == _reference(left, right, direction=kw["direction"], exact=True,
                                 tolerance=None, keyed=False), kw


@pytest.mark.parametrize(("strategy", "buckets"), [
    *[(s, None) for s in ARITHMETIC_PLANS], ("union", 3), ("sort_merge", 3)])
def test_times_at_the_limits_of_long(spark, strategy, buckets):
    """Tolerances, nearest distances and the ends of time buckets never overflow near the
    long range's ends."""
    rng = random.Random(7)
    edge = [LONG_MIN, LONG_MIN + 1, LONG_MIN + 10, -5, 0, 3, LONG_MAX - 10, LONG_MAX - 1,
            LONG_MAX]
    left = [(i, rng.randrange(2), rng.choice(edge)) for i in range(30)]
    right = [(rng.randrange(2), t, f"r{i}") for i, t in enumerate(edge)]
    right += [(1 - k, t, f"s{i}") for i, (k, t, _) in enumerate(right)]
    options = [{"direction": d, "allow_exact_matches": e, "tolerance": t, "buckets": buckets}
               for d, e, t in itertools.product(["backward", "forward", "nearest"],
                                                [True, False], [None, 10, LONG_MAX])]
    for kw, got in zip(options, _run_many(spark, left, right, "bigint", strategy, options)):
        assert got == _reference(left, right, direction=kw["direction"],
                                 exact=kw["allow_exact_matches"], tolerance=kw["tolerance"]), kw


@pytest.mark.parametrize("strategy", ARITHMETIC_PLANS)
def test_tolerances_beyond_the_long_range(spark, strategy):
    """A tolerance past Long.MAX (a long time, a timedelta of microseconds) is exact."""
    edge = [LONG_MIN, -1, 0, LONG_MAX]
    left = [(i, 0, t) for i, t in enumerate(edge)]
    right = [(0, t, f"r{i}") for i, t in enumerate(edge)]
    options = [{"direction": d, "allow_exact_matches": False, "tolerance": t} for d, t in
               itertools.product(["backward", "forward", "nearest"],
                                 [2**63, 2**64 - 2, 2**64 - 1, 2**70])]
    for kw, got in zip(options, _run_many(spark, left, right, "bigint", strategy, options)):
        assert got == _reference(left, right, direction=kw["direction"], exact=False,
                                 tolerance=kw["tolerance"]), kw
    # the first and last microsecond of Spark's timestamps, cast in Spark (a Python
    # datetime of year 1 does not survive a Connect client's time-zone conversion)
    ts = ["0001-01-01 00:00:00", "9999-12-31 23:59:59.999999"]
    ldf = spark.createDataFrame([(i, 0, t) for i, t in enumerate(ts)], "lid int, k int, t string")
    rdf = spark.createDataFrame([(0, t, f"r{i}") for i, t in enumerate(ts)],
                                "k int, t string, v string")
    ldf, rdf = (df.withColumn("t", F.col("t").cast("timestamp")) for df in (ldf, rdf))
    got = cj.asof_join(ldf, rdf, on="t", by="k", strategy=strategy, direction="backward",
                       allow_exact_matches=False, tolerance=datetime.timedelta.max)
    assert sorted(map(tuple, got.select("lid", "v").collect()), key=str) == [(0, None), (1, "r0")]


@pytest.mark.parametrize("strategy", ARITHMETIC_PLANS)
def test_fractional_tolerance_of_large_long_times(spark, strategy):
    """Whole times (nanoseconds since the epoch) are whole distances apart: a tolerance
    of 1.5 admits 1, and is not compared in double precision (256 ns apart there)."""
    base = 1_700_000_000_000_000_000
    left = [(1, 0, base + 100), (2, 0, base - 100), (3, 0, base + 1), (4, 0, base - 1)]
    right = [(0, base, "r")]
    options = [{"direction": d, "tolerance": t}
               for d, t in itertools.product(["backward", "forward", "nearest"], [1.5, 0.5])]
    for kw, got in zip(options, _run_many(spark, left, right, "bigint", strategy, options)):
        assert got == _reference(left, right, direction=kw["direction"], exact=True,
                                 tolerance=kw["tolerance"]), kw


@pytest.mark.parametrize("strategy", ARITHMETIC_PLANS)
def test_tolerance_of_large_double_times(spark, strategy):
    """Double times (nanoseconds since the epoch, 256 apart there) are compared with
    the tolerance by their exact distance: ``1.7e18 + 256 - 200`` rounds to ``1.7e18``."""
    x = 1.7e18
    left = [(1, 0, 1e16 + 2), (2, 0, 1e16 - 2), (3, 0, x + 256), (4, 0, x - 256), (5, 0, x)]
    right = [(0, 1e16, "a"), (0, x, "b")]
    options = [{"direction": d, "tolerance": t}
               for d, t in itertools.product(["backward", "forward", "nearest"], [1.0, 200.0])]
    for kw, got in zip(options, _run_many(spark, left, right, "double", strategy, options)):
        assert got == _reference(left, right, direction=kw["direction"], exact=True,
                                 tolerance=kw["tolerance"]), kw


def test_nearest_across_the_whole_long_range(spark):
    """Both candidates farther than a long can hold: compared exactly, not clamped."""
    left = [(1, 0, 0)]
    right = [(0, LONG_MIN, "low"), (0, LONG_MAX, "high")]  # 2^63 below, 2^63 - 1 above
    for strategy in STRATEGIES:
        got = _run(spark, left, right, "bigint", strategy, direction="nearest")
        assert got == {(1, "high")}, strategy
    left = [(1, 0, -1)]  # now 2^63 - 1 below and 2^63 above: a tie goes backward
    for strategy in STRATEGIES:
        got = _run(spark, left, right, "bigint", strategy, direction="nearest")
        assert got == {(1, "low")}, strategy


def test_decimal_times(spark):
    """Whole decimals up to 18 digits compare as longs, up to 15 digits as doubles."""
    d = decimal.Decimal
    left = spark.createDataFrame([(1, d("123456789012345678"))], "k int, t decimal(18,0)")
    right = spark.createDataFrame([(1, d("123456789012345677"), "before"),
                                   (1, d("123456789012345679"), "after")],
                                  "k int, t decimal(18,0), v string")
    assert [r.v for r in cj.asof_join(left, right, on="t", by="k").collect()] == ["before"]
    left = spark.createDataFrame([(1, d("1234567890.123"))], "k int, t decimal(13,3)")
    right = spark.createDataFrame([(1, d("1234567890.122"), "before"),
                                   (1, d("1234567890.124"), "after")],
                                  "k int, t decimal(13,3), v string")
    out = cj.asof_join(left, right, on="t", by="k", direction="forward").collect()
    assert [r.v for r in out] == ["after"]
    wide = spark.createDataFrame([(1, d("1.00"))], "k int, t decimal(20,2)")
    with pytest.raises(TimeTypeError, match=r"`on`: column 't' of left has type "
                                            r"decimal\(20,2\), too wide"):
        cj.asof_join(wide, wide, on="t", by="k")


# the three ways a tolerance and a distance are applied: the exploded pairs' order,
# the broadcast join's condition, and the choice between carried candidates
@pytest.mark.parametrize(("strategy", "buckets"),
                         [("exploding", None), ("broadcast", None), ("union", 3)])
def test_decimal_tolerances_and_distances_are_exact(spark, strategy, buckets):
    """Decimals with a fraction: ``0.80 - 0.10`` is ``0.70``, within a tolerance of 0.7,
    and ``0.20`` is as far from ``0.10`` as from ``0.30`` (doubles say otherwise)."""
    d = decimal.Decimal
    rng = random.Random(11)
    grid = [d(n) / 10 for n in range(-3, 12)] + [d("0.05"), d("0.15"), d("1.15")]
    left = [(i, rng.randrange(2), rng.choice(grid)) for i in range(40)]
    right = [(rng.randrange(2), t, f"r{i}") for i, t in enumerate(grid)]
    right += [(1 - k, t, f"s{i}") for i, (k, t, _) in enumerate(right) if i % 3]
    # each tolerance as given, and the decimal it counts as (None: no limit)
    exact = {None: None, 0.7: d("0.7"), "0.1": d("0.1"), 0.299: d("0.29"),
             d("0.35"): d("0.35"), 10**400: None}
    cases = [(dr, True, t) for dr in ("backward", "forward", "nearest")
             for t in (None, 0.7, "0.1", 0.299)]
    cases += [("nearest", False, d("0.35")), ("backward", False, 10**400)]
    options = [{"direction": dr, "allow_exact_matches": e, "tolerance": t, "buckets": buckets}
               for dr, e, t in cases]
    results = _run_many(spark, left, right, "decimal(6,2)", strategy, options)
    for kw, got in zip(options, results):
        assert got == _reference(left, right, direction=kw["direction"],
                                 exact=kw["allow_exact_matches"],
                                 tolerance=exact[kw["tolerance"]]), kw


def test_decimal_times_exact_against_integers_and_other_scales(spark):
    """A ``decimal(4,1)`` left time against ``int`` and ``decimal(7,3)`` right times:
    ``3 - 2.3`` and ``0.8 - 0.1`` are 0.7, within the tolerance (not in doubles)."""
    d = decimal.Decimal
    left = spark.createDataFrame([(1, d("2.3")), (2, d("0.8"))], "id int, t decimal(4,1)")
    ints = spark.createDataFrame([(3, "three")], "t int, v string")
    fine = spark.createDataFrame([(d("0.100"), "a")], "t decimal(7,3), v string")
    rights = [cj.Right(ints, prefix="i_", direction="forward"),
              cj.Right(fine, prefix="f_", direction="backward")]
    out = cj.asof_join(left, rights, on="t", tolerance=0.7).orderBy("id").collect()
    assert [(r.i_v, r.f_v) for r in out] == [("three", None), (None, "a")]


def test_names_that_differ_only_in_case_clash(spark):
    """In a case-insensitive session ``Price`` and ``price`` are one name."""
    left = spark.createDataFrame([(1, 10, 1.0)], "id int, t int, Price double")
    right = spark.createDataFrame([(1, 8, 2.0)], "ID int, t int, price double")
    out = cj.asof_join(left, right, on="t", left_by="id", right_by="ID")
    assert out.columns == ["id", "t", "Price", "t_right", "price_right"]
    assert out.select("price_right").first()[0] == 2.0
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        out = cj.asof_join(left, right, on="t", left_by="id", right_by="ID")
        assert out.columns == ["id", "t", "Price", "ID", "t_right", "price"]
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


def test_columns_named_twice_are_refused(spark):
    df = spark.createDataFrame([(1, 2, 3, 4)], "k int, t int, x int, y int").toDF(
        "k", "t", "x", "x")
    ok = spark.createDataFrame([(1, 2)], "k int, t int")
    with pytest.raises(InvalidArgumentError, match=r"`left` has the column 'x' twice"):
        cj.asof_join(df, ok, on="t", by="k")
    both = spark.createDataFrame([(1, 2, 3, 4)], "k int, t int, x int, X int")
    with pytest.raises(InvalidArgumentError, match=r"`right` has the column 'x'/'X' twice"):
        cj.asof_join(ok, both, on="t", by="k")


def test_interval_aggregate_names_clash_by_case(spark):
    points = spark.createDataFrame([(1, 5, 1)], "k int, t int, Total int")
    intervals = spark.createDataFrame([(1, 0, 9, 2)], "k int, s int, e int, v int")
    with pytest.raises(InvalidArgumentError, match=r"output name 'total' clashes with a "
                                                   r"column of points"):
        cj.interval_aggregate(points, intervals, time="t", start="s", end="e", by="k",
                              aggs={"total": ("sum", "v")})
    with pytest.raises(InvalidArgumentError, match=r"clashes with the output name 'n'"):
        cj.interval_aggregate(points, intervals, time="t", start="s", end="e", by="k",
                              aggs={"n": ("count", None), "N": ("sum", "v")})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nan_keys_match_each_other(spark, strategy):
    """Spark's joins hold NaN equal to NaN; so does every strategy."""
    nan = float("nan")
    left = spark.createDataFrame([(nan, 5), (1.0, 5)], "k double, t int")
    right = spark.createDataFrame([(nan, 4, "x"), (1.0, 3, "y")], "k double, t int, v string")
    out = cj.asof_join(left, right, on="t", by="k", strategy=strategy).collect()
    assert sorted(r.v for r in out) == ["x", "y"]


def test_keys_the_arrow_pass_cannot_compare(spark):
    lcase = "select 'ABC' collate UTF8_LCASE as k, 5 as t"
    rcase = "select 'abc' collate UTF8_LCASE as k, 4 as t, 'x' as v"
    left, right = spark.sql(lcase), spark.sql(rcase)
    assert [r.v for r in cj.asof_join(left, right, on="t", by="k").collect()] == ["x"]
    with pytest.raises(InvalidArgumentError, match=r"'sort_merge' .* key 'k' of right "
                                                   r"\(string collate UTF8_LCASE\)"):
        cj.asof_join(left, right, on="t", by="k", strategy="sort_merge")
    left = spark.sql("select named_struct('a', 1) k, 5 t")
    right = spark.sql("select named_struct('a', 1) k, 4 t, 'x' v")
    for strategy in ["union", "exploding", "broadcast", "auto"]:
        out = cj.asof_join(left, right, on="t", by="k", strategy=strategy).collect()
        assert [r.v for r in out] == ["x"], strategy
    with pytest.raises(InvalidArgumentError, match=r"'sort_merge'"):
        cj.asof_join(left, right, on="t", by="k", strategy="sort_merge")


def test_map_keys_and_tiebreaks_are_refused(spark):
    left = spark.sql("select map('a', 1) k, 5 t")
    right = spark.sql("select map('a', 1) k, 4 t, map('b', 2) m")
    with pytest.raises(InvalidArgumentError, match=r"`by`: key 'k' of left has type "
                                                   r"map<string,int>; a map cannot be compared"):
        cj.asof_join(left, right, on="t", by="k")
    left, right = left.drop("k"), right.drop("k")
    with pytest.raises(InvalidArgumentError, match=r"`tiebreak`: column 'm' of right has "
                                                   r"type map<string,int>; a map cannot be"):
        cj.asof_join(left, right, on="t", tiebreak="m")


def test_dates_beyond_the_microsecond_range_name_the_column(spark):
    far = spark.sql("SELECT 1 AS k, date_add(DATE'2000-01-01', 200000000) AS day")
    near = spark.sql("SELECT 1 AS k, date_add(DATE'1970-01-01', 106751991) AS day, 7 AS v")
    ok = cj.asof_join(near.drop("v"), near, on="day", by="k").select("v").collect()
    assert [r["v"] for r in ok] == [7]  # the last day that fits still joins exactly
    with pytest.raises(Exception, match="date column 'day' holds a date more than"):
        cj.asof_join(far, near, on="day", by="k").select("v").collect()
