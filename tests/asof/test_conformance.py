"""Every strategy against the brute-force oracle, DuckDB and pandas on seeded random data."""

from __future__ import annotations

import io
import itertools
import re
from collections import Counter
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from tests.asof.data import SPARK_TYPE, as_kind, numeric, random_rows, tolerance_for
from tests.oracles.asof import brute_force, duckdb_asof
from tests.oracles.band import spark_batch

STRATEGIES = ["exploding", "union", "sort_merge", "broadcast", "auto"]
NAMED = ["exploding", "union", "sort_merge", "broadcast"]


def _frames(spark, left, right, kind):
    t = SPARK_TYPE[kind]
    ldf = spark.createDataFrame(
        [(r["lid"], r["k"], as_kind(r["t"], kind), r["label"]) for r in left],
        f"lid int, k string, t {t}, label int",
    )
    rdf = spark.createDataFrame(
        [(r["rid"], r["k"], as_kind(r["t"], kind), r["v"], r["tb"]) for r in right],
        f"rid int, k string, t {t}, v double, tb int",
    )
    return ldf, rdf


def _check(result, left, expected, how):
    _check_rows([(r["lid"], r["rid"]) for r in result.select("lid", "rid").collect()],
                left, expected, how)


def _check_rows(rows, left, expected, how, case=None):
    """``rows`` (lid, rid) against the oracle's allowed right ids per left row."""
    got: dict[int, list] = {}
    for lid, rid in rows:
        got.setdefault(lid, []).append(rid)
    for lrow, allowed in zip(left, expected):
        lid = lrow["lid"]
        if not allowed and how == "inner":
            assert lid not in got, f"{case}: left row {lid} has no match but was returned"
            continue
        assert lid in got, f"{case}: left row {lid} missing"
        assert len(got[lid]) == 1, f"{case}: left row {lid} returned {len(got[lid])} times"
        rid = got[lid][0]
        if allowed:
            assert rid in allowed, f"{case}: left row {lid}: got right {rid}, expected {allowed}"
        else:
            assert rid is None, f"{case}: left row {lid}: got right {rid}, expected no match"
    assert len(rows) == len(got)


def _plan_text(df) -> str:
    """The physical plan as ``explain()`` prints it (alike on classic and Connect)."""
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain()
    return buffer.getvalue()


def _spec(ldf, right, **kw):
    """The internal spec of a keyed join on ``t`` (``broadcast`` unless ``kw`` says)."""
    from chronojoin.asof.spec import build_spec

    args = {"on": "t", "left_on": None, "right_on": None, "by": "k", "left_by": None,
            "right_by": None, "direction": "backward", "allow_exact_matches": True,
            "tolerance": None, "how": "left", "suffix": "_right", "strategy": "broadcast",
            "tiebreak": None}
    return build_spec(ldf, right, **{**args, **kw})


def _oracle(left, right, kind, **kw):
    lnum = [dict(r, t=numeric(r["t"], kind)) for r in left]
    rnum = [dict(r, t=numeric(r["t"], kind)) for r in right]
    return brute_force(lnum, rnum, left_on="t", right_on="t", left_by=["k"], right_by=["k"], **kw)


@pytest.mark.parametrize("strategy", NAMED)
def test_options_against_brute_force(spark, strategy):
    """Every direction, exactness and tolerance; each on its own random data."""
    cases, outs = [], []
    options = itertools.product(["backward", "forward", "nearest"], [True, False], [None, 3])
    for n, (direction, exact, tol) in enumerate(options):
        left, right = random_rows(seed=100 + n)
        ldf, rdf = _frames(spark, left, right, "int")
        how = "inner" if tol == 3 and exact else "left"
        outs.append(cj.asof_join(ldf, rdf, on="t", by="k", direction=direction,
                                 allow_exact_matches=exact, tolerance=tol, how=how,
                                 strategy=strategy))
        expected = _oracle(left, right, "int", direction=direction,
                           allow_exact_matches=exact, tolerance=tol)
        cases.append(((direction, exact, tol), left, expected, how))
    got = spark_batch(dict(enumerate(outs)), left_id="lid", right_id="rid")  # one job
    for n, (name, left, expected, how) in enumerate(cases):
        _check_rows(list(got[n].elements()), left, expected, how, name)


@pytest.mark.parametrize("strategy", NAMED)
@pytest.mark.parametrize("exact", [True, False])
def test_zero_tolerance_is_exact_only(spark, strategy, exact):
    left, right = random_rows(seed=13, t_max=20)
    ldf, rdf = _frames(spark, left, right, "int")
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", tolerance=0,
                       allow_exact_matches=exact, tiebreak="tb", strategy=strategy)
    expected = _oracle(left, right, "int", direction="nearest", tolerance=0,
                       allow_exact_matches=exact, tiebreak=["tb"])
    assert any(expected) == exact
    _check(out, left, expected, "left")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", ["double", "decimal", "timestamp", "timestamp_ntz", "date"])
def test_time_types(spark, strategy, kind):
    left, right = random_rows(seed=7)
    ldf, rdf = _frames(spark, left, right, kind)
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest",
                       tolerance=tolerance_for(5, kind), strategy=strategy)
    tol = numeric(5, kind)
    expected = _oracle(left, right, kind, direction="nearest", tolerance=tol)
    _check(out, left, expected, "left")


@pytest.mark.parametrize("strategy", NAMED)
@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_tiebreak_is_deterministic(spark, strategy, direction):
    left, right = random_rows(seed=11, t_max=15)
    ldf, rdf = _frames(spark, left, right, "int")
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction, tiebreak="tb",
                       strategy=strategy)
    expected = _oracle(left, right, "int", direction=direction, tiebreak=["tb"])
    assert all(len(s) <= 1 for s in expected)
    _check(out, left, expected, "left")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_ties_without_tiebreak_return_one_whole_row(spark, strategy, direction):
    # Many ties (12 times), the right side over 7 partitions: every output row's right
    # columns (including a NULL-able one) must come from a single right row.
    left, right = random_rows(seed=17, t_max=12)
    ldf, rdf = _frames(spark, left, right, "int")
    rdf = rdf.withColumn("w", F.when(F.col("tb") % 3 != 0, F.col("tb") * 7)).repartition(7)
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction, strategy=strategy)
    expected = _oracle(left, right, "int", direction=direction)
    rows = out.select("lid", "rid", "v", "tb", "w", "t_right").collect()  # one job
    _check_rows([(r["lid"], r["rid"]) for r in rows], left, expected, "left")
    truth = {r["rid"]: (r["v"], r["tb"], r["tb"] * 7 if r["tb"] % 3 else None, r["t"])
             for r in right}
    matched = [r for r in rows if r["rid"] is not None]
    assert matched
    for r in matched:
        assert (r["v"], r["tb"], r["w"], r["t_right"]) == truth[r["rid"]], r


@pytest.mark.parametrize("strategy", NAMED)
@pytest.mark.parametrize("direction", ["backward", "nearest"])
def test_no_key_global_timeline(spark, strategy, direction):
    left, right = random_rows(seed=3, n_keys=1, null_share=0.0, t_max=400)
    ldf, rdf = _frames(spark, left, right, "int")
    out = cj.asof_join(ldf, rdf.drop("k"), on="t", direction=direction, tiebreak="tb",
                       strategy=strategy)
    lnum = [dict(r, k=1) for r in left]
    rnum = [dict(r, k=1) for r in right]
    expected = brute_force(lnum, rnum, left_on="t", right_on="t", left_by=["k"],
                           right_by=["k"], direction=direction, tiebreak=["tb"])
    _check(out, left, expected, "left")


@pytest.mark.parametrize("strategy", ["union", "sort_merge"])
@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_no_key_timeline_in_more_buckets_than_can_be_listed(spark, strategy, direction):
    # A billion buckets over a few hundred rows: only the buckets holding rows cost
    # anything (listing every bucket of the grid would take hours).
    left, right = random_rows(seed=6, n_keys=1, null_share=0.0, t_max=400)
    ldf, rdf = _frames(spark, left, right, "int")
    out = cj.asof_join(ldf, rdf.drop("k"), on="t", direction=direction, tiebreak="tb",
                       strategy=strategy, buckets=10**9)
    lnum = [dict(r, k=1) for r in left]
    rnum = [dict(r, k=1) for r in right]
    expected = brute_force(lnum, rnum, left_on="t", right_on="t", left_by=["k"],
                           right_by=["k"], direction=direction, tiebreak=["tb"])
    _check(out, left, expected, "left")


@pytest.mark.parametrize("strategy", ["union", "sort_merge"])
@pytest.mark.parametrize("buckets", [1, np.int64(3), 50])  # numpy: a pandas user's count
def test_bucketed_keys_equal_unbucketed(spark, strategy, buckets):
    left, right = random_rows(seed=5, t_max=200)
    ldf, rdf = _frames(spark, left, right, "int")
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", tiebreak="tb",
                       strategy=strategy, buckets=buckets)
    expected = _oracle(left, right, "int", direction="nearest", tiebreak=["tb"])
    _check(out, left, expected, "left")


@pytest.mark.parametrize("direction", ["backward", "forward"])
@pytest.mark.parametrize("exact", [True, False])
def test_against_duckdb_asof(spark, direction, exact):
    left, right = random_rows(seed=21, null_share=0.0, t_max=10_000)
    ldf, rdf = _frames(spark, left, right, "int")
    ref = duckdb_asof(pd.DataFrame(left), pd.DataFrame(right), on="t", by=["k"],
                      direction=direction, allow_exact_matches=exact)
    expected = Counter((int(a), None if pd.isna(b) else int(b)) for a, b in zip(ref.lid, ref.rid))
    frames = {strategy: cj.asof_join(ldf, rdf, on="t", by="k", direction=direction,
                                     allow_exact_matches=exact, strategy=strategy)
              for strategy in STRATEGIES}
    for strategy, pairs in spark_batch(frames, "lid", "rid").items():  # one job
        assert pairs == expected, strategy


def test_against_pandas_merge_asof(spark):
    left, right = random_rows(seed=31, null_share=0.0, t_max=10_000, hot_key=False)
    ldf, rdf = _frames(spark, left, right, "int")
    lp = pd.DataFrame(left).sort_values("t")
    rp = pd.DataFrame(right).sort_values("t")
    frames, expected = {}, {}
    for direction in ("backward", "forward", "nearest"):
        ref = pd.merge_asof(lp, rp[["rid", "k", "t"]], on="t", by="k",
                            direction=direction, tolerance=50)
        expected[direction] = Counter(
            (int(a), None if pd.isna(b) else int(b)) for a, b in zip(ref.lid, ref.rid)
        )
        for strategy in STRATEGIES:
            frames[(direction, strategy)] = cj.asof_join(
                ldf, rdf, on="t", by="k", direction=direction, tolerance=50, strategy=strategy
            )
    got = spark_batch(frames, "lid", "rid")  # one job
    for (direction, strategy), pairs in got.items():
        assert pairs == expected[direction], (direction, strategy)


@pytest.mark.usefixtures("full_auto")
def test_auto_splits_hot_key_and_stays_exact(spark, caplog, monkeypatch):
    import functools
    import logging

    from chronojoin._plan import stats
    from chronojoin.asof import choose

    monkeypatch.setattr(choose, "MIN_SAMPLED", 0)
    monkeypatch.setattr(choose, "sampled_hot_spans",
                        functools.partial(stats.sampled_hot_spans, fraction=1.0))
    left, right = random_rows(seed=41, t_max=300, null_share=0.02)
    ldf, rdf = _frames(spark, left, right, "int")
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", tiebreak="tb")
        expected = _oracle(left, right, "int", direction="nearest", tiebreak=["tb"])
        _check(out, left, expected, "left")
    # Every key holds over 5% of the left rows here: all get time buckets.
    assert "'hot_broadcast'" in caplog.text


def test_sampled_hot_spans_find_the_hot_key_and_its_times(spark):
    from pyspark.sql import functions as F

    from chronojoin._plan.stats import sampled_hot_spans

    _, right = random_rows(seed=41)
    _, rdf = _frames(spark, [], right, "int")
    spans = sampled_hot_spans(rdf, ("k",), F.col("t"), 0.3, fraction=1.0, min_sampled=1)
    times = [r["t"] for r in right if r["k"] == "k0" and r["t"] is not None]
    assert spans == [(("k0",), min(times), max(times))]
    assert sampled_hot_spans(rdf, ("k",), None, 0.3, fraction=1.0, min_sampled=1) == [
        (("k0",), None, None)]
    assert sampled_hot_spans(rdf, ("k",), None, 0.3, fraction=1.0, min_sampled=10_000) == []


def test_no_key_bucket_ends_read_no_extra_pass(spark, tmp_path):
    """Without keys the plan reads the left side twice (the running window, the bucket
    ends' aggregate) and the right side three times (those two, then the rows at the
    ends' times); the list of buckets comes from the grid, not from a pass over rows."""
    left, right = random_rows(seed=4, n_keys=1, null_share=0.0, t_max=300)
    ldf, rdf = _frames(spark, left, right, "int")
    # Distinct time names tell each scan's side by the columns it reads.
    ldf.withColumnRenamed("t", "lt").write.parquet(str(tmp_path / "lefts"))
    rdf.drop("k").withColumnRenamed("t", "rt").write.parquet(str(tmp_path / "rights"))
    out = cj.asof_join(spark.read.parquet(str(tmp_path / "lefts")),
                       spark.read.parquet(str(tmp_path / "rights")), left_on="lt",
                       right_on="rt", tiebreak="tb", strategy="union")
    previous = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        plan = _plan_text(out)
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", previous)
    scans = re.findall(r"FileScan parquet \[([^\]]*)\]", plan)
    assert sum(bool(re.search(r"\blt#", c)) for c in scans) == 2, plan
    assert sum(bool(re.search(r"\brt#", c)) for c in scans) == 3, plan


@pytest.mark.parametrize("direction", ["backward", "nearest"])
def test_sort_merge_hot_key_buckets_match_the_oracle(spark, direction):
    """Only the hot key cut into buckets: its bucket ends carried, the list of its
    buckets from the grid (the other keys are bucket 0)."""
    from chronojoin.asof.buckets import Layout
    from chronojoin.asof.strategies import sort_merge

    left, right = random_rows(seed=9, t_max=120)
    ldf, rdf = _frames(spark, left, right, "int")
    spec = _spec(ldf, rdf, direction=direction, strategy="sort_merge", tiebreak="tb")
    out = sort_merge.plan(spec.left, spec.rights[0], spec, Layout(buckets=6, hot_keys=(("k0",),)))
    expected = _oracle(left, right, "int", direction=direction, tiebreak=["tb"])
    _check(out, left, expected, "left")


def _carrying_plans(spark):
    """Every plan that carries rows between time buckets, looking both ways."""
    from chronojoin.asof.buckets import Layout
    from chronojoin.asof.strategies import hot_broadcast, sort_merge

    left, right = random_rows(seed=13, t_max=60)
    ldf, rdf = _frames(spark, left, right, "int")
    spec = _spec(ldf, rdf, direction="nearest", strategy="sort_merge", tiebreak="tb")
    hot = Layout(buckets=6, hot_keys=(("k0",),), span=(0.0, 59.0))
    yield "hot_broadcast", hot_broadcast.plan(spec.left, spec.rights[0], spec, hot)
    yield "sort_merge hot key", sort_merge.plan(spec.left, spec.rights[0], spec, hot)
    for strategy in ("union", "sort_merge"):
        yield strategy, cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest",
                                     strategy=strategy, buckets=5)
        yield f"{strategy} no key", cj.asof_join(ldf, rdf.drop("k"), on="t",
                                                 direction="nearest", strategy=strategy)


def test_carry_windows_never_end_at_unbounded_following(spark):
    """Spark recomputes a window frame that ends at UNBOUNDED FOLLOWING for every row
    (quadratic in a partition: a hot key's left rows took minutes); the later buckets
    come from running frames over descending buckets or, in ``hot_broadcast``, from
    the next bucket end (``lead`` skipping NULLs) instead."""
    for name, out in _carrying_plans(spark):
        plan = _plan_text(out).lower()
        assert "unboundedfollowing" not in plan, (name, plan)


@pytest.mark.parametrize(("payload", "hashed"),
                         [("double", True), ("decimal(38,2)", True), ("string", False)])
def test_broadcast_winners_hash_aggregate_fixed_width_columns(spark, payload, hashed):
    """Without tie-breaks and with fixed-width right columns the winners are found by a
    hash aggregate (no sort of the candidate pairs); other columns keep the sort."""
    left = spark.createDataFrame([(1, 5, 0)], "k int, t long, label int")
    right = spark.createDataFrame([(1, 3, "1")], "k int, t long, v string")
    right = right.withColumn("v", F.col("v").cast(payload))
    out = cj.asof_join(left, right, on="t", by="k", direction="nearest", strategy="broadcast")
    plan = _plan_text(out)
    assert ("SortAggregate" not in plan) == hashed, plan
    assert [tuple(r) for r in out.collect()] == [(1, 5, 0, 3, right.first()["v"])]
