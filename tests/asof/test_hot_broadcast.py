"""``hot_broadcast``: hot keys cut into time buckets that join the keys, exact for any count.

A hot key's left times join its right rows within equal-width time buckets, and a
left time whose own bucket holds no right row on its side also joins the nearest
bucket that does. Checked against the brute-force oracle with every option, bucket counts
from one to more buckets than times, spans narrower than the data, repeated left
times, right rows at left times, long gaps, several hot keys and several right
tables; then ``auto``'s choice of it.
"""

from __future__ import annotations

import functools
import logging

import pytest

import chronojoin as cj
from chronojoin.asof.buckets import Layout
from chronojoin.asof.strategies import hot_broadcast
from tests.asof.data import one_left_row_per_key, ordinal, random_rows, tolerance_for
from tests.asof.test_auto_layout import _plan_text, _sorted
from tests.asof.test_conformance import _check, _check_rows, _frames, _oracle, _spec
from tests.oracles.band import spark_batch


@pytest.mark.parametrize(("direction", "exact", "tol", "how", "buckets"), [
    ("backward", True, None, "left", 17), ("backward", False, 4, "inner", 200),
    ("forward", True, 4, "left", 3), ("forward", False, None, "inner", 17),
    ("nearest", True, None, "left", 1), ("nearest", False, 3, "left", 40),
])
def test_hot_buckets_match_the_oracle(spark, direction, exact, tol, how, buckets):
    left, right = random_rows(seed=buckets * 7 + len(direction), n_left=150, n_right=300,
                              t_max=80, null_share=0.05)
    ldf, rdf = _frames(spark, left, right, "int")
    spec = _spec(ldf, rdf, direction=direction, allow_exact_matches=exact,
                 tolerance=tolerance_for(tol, "int"), how=how, tiebreak="tb")
    layout = Layout(buckets=buckets, hot_keys=(("k0",),), span=(0.0, 79.0))
    out = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
    expected = _oracle(left, right, "int", direction=direction, allow_exact_matches=exact,
                       tolerance=tol, tiebreak=["tb"])
    _check(out, left, expected, how)


@pytest.mark.parametrize("buckets", [30, 500])
def test_repeated_times_shared_times_and_gaps(spark, buckets):
    """Left times repeated and shared with right rows, a long stretch without left
    times and one without right rows (empty buckets, at either bucket count; one bucket
    is among the cases above): every option is exact."""
    import numpy as np

    rng = np.random.default_rng(buckets)
    left_times = [3, 3, 3, 10, 11, 11, 40, 41, 90, 90, 91, 150]
    left = [{"lid": i, "k": "k0", "t": int(t), "label": 0} for i, t in enumerate(left_times)]
    left += [{"lid": 100 + i, "k": f"k{1 + i % 3}", "t": int(rng.integers(0, 160)),
              "label": 0} for i in range(12)]
    right_times = [3, 3, 10, 11, 12, 40, 41, 41, 60, 61, 89, 90, 160]   # none in 91..150
    right = [{"rid": i, "k": "k0", "t": t, "v": 0.0, "tb": int(rng.integers(0, 5))}
             for i, t in enumerate(right_times)]
    right += [{"rid": 100 + i, "k": f"k{1 + i % 3}", "t": int(rng.integers(0, 160)), "v": 0.0,
               "tb": int(rng.integers(0, 5))} for i in range(30)]
    ldf, rdf = _frames(spark, left, right, "int")
    layout = Layout(buckets=buckets, hot_keys=(("k0",),), span=(0.0, 159.0))
    options = [(d, exact, tol) for d in ("backward", "forward", "nearest")
               for exact in (True, False) for tol in (None, 30)]
    outs = {}
    for option in options:
        direction, exact, tol = option
        spec = _spec(ldf, rdf, direction=direction, allow_exact_matches=exact,
                     tolerance=tol, tiebreak="tb")
        outs[option] = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
    got = spark_batch(outs, "lid", "rid")  # one job
    for (direction, exact, tol), pairs in got.items():
        expected = _oracle(left, right, "int", direction=direction, allow_exact_matches=exact,
                           tolerance=tol, tiebreak=["tb"])
        _check_rows(list(pairs.elements()), left, expected, "left", (direction, exact, tol))


@pytest.mark.parametrize(("kind", "span"), [("timestamp", (20, 30)), ("double", (-5, 500)),
                                            ("date", (20, 30))])
def test_spans_narrower_or_wider_than_the_times(spark, kind, span):
    """Times outside the sampled span fall into the first or last bucket, still exact."""
    left, right = random_rows(seed=61, n_left=120, n_right=240, t_max=60)
    ldf, rdf = _frames(spark, left, right, kind)
    spec = _spec(ldf, rdf, direction="nearest", tiebreak="tb")
    layout = Layout(buckets=9, hot_keys=(("k0",),),
                    span=(ordinal(span[0], kind), ordinal(span[1], kind)))
    out = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
    expected = _oracle(left, right, kind, direction="nearest", tiebreak=["tb"])
    _check(out, left, expected, "left")


@pytest.mark.parametrize(("kind", "far"), [("bigint", 2**63 - 1), ("bigint", -(2**63)),
                                           ("double", float("inf")),
                                           ("double", float("-inf"))])
def test_right_times_far_outside_the_span(spark, kind, far):
    """A "valid forever" right time (``Long.MAX``, an infinity) falls into the last
    bucket: the bucket is clamped before it becomes a long."""
    cast = float if kind == "double" else int
    left = spark.createDataFrame([(i, "h", cast(i)) for i in range(10)],
                                 f"lid int, k string, t {kind}")
    right = spark.createDataFrame([(100 + i, "h", cast(i)) for i in range(10)] + [(200, "h", far)],
                                  f"rid int, k string, t {kind}")
    # Buckets narrower than one: Long.MAX is more buckets away than a long counts.
    layout = Layout(buckets=4, hot_keys=(("h",),), span=(0.0, 1.0))
    for direction in ("backward", "forward", "nearest"):
        spec = _spec(left, right, direction=direction)
        out = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
        assert _sorted(out, ["lid", "rid"]) == _sorted(
            cj.asof_join(left, right, on="t", by="k", direction=direction, strategy="union"),
            ["lid", "rid"]), direction


def test_several_hot_keys_one_missing_from_the_left(spark):
    left, right = random_rows(seed=67, n_left=160, n_right=320, t_max=50, hot_key=False,
                              n_keys=4)
    left = [r for r in left if r["k"] != "k3"]
    ldf, rdf = _frames(spark, left, right, "int")
    spec = _spec(ldf, rdf, direction="forward", tiebreak="tb", tolerance=10)
    layout = Layout(buckets=11, hot_keys=(("k0",), ("k1",), ("k3",)), span=(0.0, 49.0))
    out = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
    expected = _oracle(left, right, "int", direction="forward", tiebreak=["tb"], tolerance=10)
    _check(out, left, expected, "left")


def test_colliding_cold_keys_are_told_apart(spark):
    """Every other key under one join value: the keys checked on each pair keep it exact."""
    from pyspark.sql import functions as F

    left, right = random_rows(seed=79, n_left=200, n_right=400, n_keys=9, t_max=50)
    ldf, rdf = _frames(spark, left, right, "int")
    spec = _spec(ldf, rdf, direction="nearest", tiebreak="tb", tolerance=8)
    layout = Layout(buckets=7, hot_keys=(("k0",),), span=(0.0, 49.0))
    out = hot_broadcast.plan_many(spec.left, list(spec.rights), spec, layout,
                                  cold=lambda keys: F.lit(-7).cast("long"))
    expected = _oracle(left, right, "int", direction="nearest", tiebreak=["tb"], tolerance=8)
    _check(out, left, expected, "left")


@pytest.mark.parametrize(("left_type", "right_type", "hashed"), [
    ("string", "string", True), ("int", "bigint", False), ("double", "double", False),
    ("string collate UTF8_LCASE", "string collate UTF8_LCASE", False)])
def test_one_broadcast_for_every_key(spark, left_type, right_type, hashed):
    """One hash join on one long per right table, the keys checked on each pair; keys
    whose equal values may hash apart (other types, floating point) join as well."""
    from pyspark.sql import functions as F

    left, right = random_rows(seed=83, n_left=160, n_right=320, n_keys=6, t_max=40)
    ldf, rdf = _frames(spark, left, right, "int")
    number = F.regexp_extract("k", r"(\d+)", 1)
    ldf = ldf.withColumn("k", F.when(F.col("k").isNotNull(), number).cast(left_type))
    rdf = rdf.withColumn("k", F.when(F.col("k").isNotNull(), number).cast(right_type))
    renamed = [dict(r, k=None if r["k"] is None else r["k"][1:]) for r in left]
    spec = _spec(ldf, rdf, direction="backward", tiebreak="tb")
    hot = "0" if left_type.startswith("string") else 0
    layout = Layout(buckets=5, hot_keys=((hot,),), span=(0.0, 39.0))
    out = hot_broadcast.plan(spec.left, spec.rights[0], spec, layout)
    expected = _oracle(left, right, "int", direction="backward", tiebreak=["tb"])
    _check(out, renamed, expected, "left")
    text = _plan_text(out)
    assert text.count("BroadcastHashJoin") == 1
    joins = [line for line in text.splitlines() if "BroadcastHashJoin" in line]
    assert ("coalesce((__k0" in joins[0]) == hashed


@pytest.mark.parametrize("how", ["left", "inner"])
def test_hot_buckets_of_several_right_tables_match_chained_joins(spark, how):
    left, right = random_rows(seed=71, n_left=200, n_right=400, t_max=40, null_share=0.04)
    ldf, rdf = _frames(spark, left, right, "int")
    specs = [
        cj.Right(rdf, prefix="a_", tiebreak="tb"),
        cj.Right(rdf, prefix="b_", direction="forward", allow_exact_matches=False,
                 tiebreak="tb"),
        cj.Right(rdf, prefix="c_", direction="nearest", tolerance=3, tiebreak="tb"),
    ]
    spec = _spec(ldf, specs, how=how)
    layout = Layout(buckets=6, hot_keys=(("k0",),), span=(0.0, 39.0))
    out = hot_broadcast.plan_many(spec.left, list(spec.rights), spec, layout)
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", how=how, strategy="union")
    assert out.columns == chained.columns
    assert _sorted(out, out.columns) == _sorted(chained, chained.columns)


def _hot_inputs(spark, *, clustered: bool):
    """A hot key with many left rows and one left row for every other key."""
    left, right = random_rows(seed=73, n_left=300, n_right=600, n_keys=150, t_max=400,
                              null_share=0.03)
    left = one_left_row_per_key(left, keep=("k0",))
    if clustered:
        # Every hot left row at one time: one bucket would pair each right row with all.
        left = [dict(r, t=200) if r["k"] == "k0" else r for r in left]
    return left, right, *_frames(spark, left, right, "int")


@pytest.fixture
def sampled_everything(monkeypatch, full_auto):
    from chronojoin._plan import stats
    from chronojoin.asof import choose

    monkeypatch.setattr(choose, "MIN_SAMPLED", 0)
    monkeypatch.setattr(choose, "sampled_hot_spans",
                        functools.partial(stats.sampled_hot_spans, fraction=1.0))


@pytest.mark.usefixtures("sampled_everything")
@pytest.mark.parametrize(("clustered", "chosen"), [(False, "hot_broadcast"),
                                                   (True, "hot_split")])
def test_auto_broadcasts_hot_keys_whose_left_times_spread(spark, caplog, clustered, chosen):
    left, right, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb")
        _check(out, left, _oracle(left, right, "int", tiebreak=["tb"]), "left")
    assert f"strategy '{chosen}'" in caplog.text
    if not clustered:
        assert "time buckets" in caplog.text
        text = _plan_text(out)
        assert "BroadcastHashJoin" in text and "Window" in text


@pytest.mark.usefixtures("sampled_everything")
def test_auto_one_broadcast_plan_for_several_tables_with_a_hot_key(spark, caplog):
    *_, ldf, rdf = _hot_inputs(spark, clustered=False)
    specs = [cj.Right(rdf, prefix="a_", tiebreak="tb"),
             cj.Right(rdf, prefix="b_", direction="forward", tiebreak="tb")]
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, specs, on="t", by="k")
    assert "one 'hot_broadcast' plan" in caplog.text
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", strategy="union")
    assert _sorted(out, out.columns) == _sorted(chained, chained.columns)


@pytest.mark.parametrize("over", [0, 2])
@pytest.mark.parametrize("clustered", [False, True])
def test_split_counts_equal_a_full_count(spark, clustered, over):
    """The statistics behind ``hot_broadcast``, against a count of every left row
    (the cold keys' largest from the listed keys, or from the small keys' most)."""
    import math

    from chronojoin._plan.stats import key_profile
    from chronojoin.asof.choose import _left_time, bucketed_hot_layout, heavy_layout
    from chronojoin.asof.strategies.hot_broadcast import hot_buckets

    left, _, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    spec = _spec(ldf, rdf, strategy="auto", tiebreak="tb")
    profile = key_profile(spec.left, ("k",), _left_time(spec), over=over)
    heavy = heavy_layout(spec, profile)
    assert heavy is not None and heavy.hot_keys == (("k0",),)
    with pytest.MonkeyPatch.context() as mp:   # keep the counts whether the layout fits or not
        from chronojoin.asof import choose

        mp.setattr(choose, "MAX_LEFT_PER_BUCKET", 10**9)
        mp.setattr(choose, "MEAN_LEFT_PER_BUCKET", float("inf"))
        grid, split = bucketed_hot_layout(spec, list(spec.rights), heavy, profile)
    keyed = [r for r in left if r["k"] is not None]
    cold = {}
    for r in keyed:
        if r["k"] != "k0":
            cold[r["k"]] = cold.get(r["k"], 0) + 1
    buckets = hot_buckets(grid).grid   # one bucket when every hot time is the same
    sizes: dict[int, int] = {}
    for r in keyed:
        if r["k"] == "k0":   # a NULL time falls in bucket 0, as in the job
            raw = 0 if r["t"] is None else math.floor((r["t"] - buckets.low) / buckets.width)
            b = min(max(raw, 0), buckets.count - 1)
            sizes[b] = sizes.get(b, 0) + 1
    hot_rows = sum(sizes.values())
    assert split.cold_most == max(cold.values())
    assert split.cold_rows == sum(cold.values())
    assert (split.hot_most, split.hot_rows) == (max(sizes.values()), hot_rows)
    assert split.hot_mean == pytest.approx(sum(n * n for n in sizes.values()) / hot_rows)


@pytest.mark.usefixtures("sampled_everything")
@pytest.mark.parametrize(("clustered", "chosen"), [(False, "hot_broadcast"),
                                                   (True, "hot_split")])
def test_auto_with_a_hot_struct_key(spark, caplog, clustered, chosen):
    """A hot key that is a struct (one field NULL) is named in the plan as a literal."""
    left, right, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    key = ("if(k is null, null, struct(k as name, cast(null as int) as n, "
           "array(struct(k as s)) as tags)) as k")
    ldf, rdf = ldf.selectExpr("lid", key, "t", "label"), rdf.selectExpr("rid", key, "t", "v", "tb")
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", tiebreak="tb")
        _check(out, left, _oracle(left, right, "int", direction="nearest", tiebreak=["tb"]),
               "left")
    assert f"strategy '{chosen}'" in caplog.text


@pytest.mark.usefixtures("sampled_everything")
@pytest.mark.parametrize("clustered", [False, True])
def test_auto_with_a_hot_struct_key_holding_decimals(spark, clustered):
    """Nested decimals of the key's own type, which a literal of the value would not have."""
    left, right, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    key = ("if(k is null, null, struct(cast(substr(k, 2) as decimal(20,10)) as d, "
           "array(cast(substr(k, 2) as decimal(30,5)), null) as ds)) as k")
    ldf, rdf = ldf.selectExpr("lid", key, "t", "label"), rdf.selectExpr("rid", key, "t", "v", "tb")
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", tiebreak="tb")
    _check(out, left, _oracle(left, right, "int", direction="nearest", tiebreak=["tb"]), "left")
