"""``auto`` by layout (``exploding`` with about one left row per key), and the edge cases that
choice meets: NULL tie-break values, extreme times, map-typed right columns."""

from __future__ import annotations

import logging

import pytest

import chronojoin as cj
from chronojoin._plan.stats import key_counts, key_profile, sampled_hot_spans
from chronojoin._validate.columns import col
from tests.asof.data import one_left_row_per_key, random_rows
from tests.asof.test_conformance import _check, _frames, _oracle, _plan_text, _spec
from tests.helpers import parquet_copies


def _sorted(df, cols):
    return sorted(map(tuple, df.select(*[col(c) for c in cols]).collect()), key=repr)


@pytest.mark.parametrize("strategy", ["exploding", "broadcast"])
@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_null_tiebreak_values_lose_like_union(spark, strategy, direction):
    left, right = random_rows(seed=17, t_max=12)
    ldf, rdf = _frames(spark, left, right, "int")
    rdf = rdf.selectExpr("rid", "k", "t", "v", "IF(rid % 3 = 0, NULL, tb % 4) AS tb",
                         "IF(rid % 2 = 0, NULL, rid % 5) AS tb2")
    kw = {"on": "t", "by": "k", "direction": direction, "tiebreak": ["tb", "tb2", "rid"]}
    got = cj.asof_join(ldf, rdf, strategy=strategy, **kw)
    want = cj.asof_join(ldf, rdf, strategy="union", **kw)
    assert _sorted(got, ["lid", "rid"]) == _sorted(want, ["lid", "rid"])


@pytest.mark.parametrize("strategy", ["exploding", "broadcast"])
def test_extreme_long_times_and_map_columns(spark, strategy):
    lo, hi = -(2**63), 2**63 - 1
    left = spark.createDataFrame([(1, lo), (1, 0), (1, hi), (2, 5)], "k int, t long")
    right = spark.createDataFrame(
        [(1, lo, {"a": 1}), (1, 3, {"b": 2}), (1, hi, None), (2, 4, {"c": 3})],
        "k int, t long, m map<string,int>",
    )
    for direction in ("backward", "forward"):
        got = cj.asof_join(left, right, on="t", by="k", direction=direction,
                           strategy=strategy)
        want = cj.asof_join(left, right, on="t", by="k", direction=direction,
                            strategy="union")
        assert _sorted(got, got.columns) == _sorted(want, want.columns), direction


def _one_left_row_per_key(spark):
    left, right = random_rows(seed=23, n_left=60, n_keys=200, hot_key=False, t_max=100)
    left = one_left_row_per_key(left)
    return left, right, *_frames(spark, left, right, "int")


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize(("direction", "exact", "tol"), [
    ("backward", True, None), ("forward", False, 10), ("nearest", True, 5),
])
def test_auto_broadcasts_a_small_left_side_with_one_row_per_key(spark, caplog, direction,
                                                                 exact, tol):
    left, right, ldf, rdf = _one_left_row_per_key(spark)
    assert key_counts(ldf, ("k",)).most == 1
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction,
                           allow_exact_matches=exact, tolerance=tol, tiebreak="tb")
        expected = _oracle(left, right, "int", direction=direction, allow_exact_matches=exact,
                           tolerance=tol, tiebreak=["tb"])
        _check(out, left, expected, "left")
    assert "'broadcast'" in caplog.text
    plan = _plan_text(out)
    # The right rows meet the broadcast left times where they are read, and only the
    # partial winners are shuffled.
    assert "BroadcastHashJoin" in plan
    assert "partial_max_by" in plan


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize(("direction", "exact", "tol"), [
    ("backward", True, None), ("nearest", False, 5),
])
def test_auto_hashes_exploding_when_broadcasts_are_off(spark, caplog, direction, exact, tol):
    left, right, ldf, rdf = _one_left_row_per_key(spark)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
            out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction,
                               allow_exact_matches=exact, tolerance=tol, tiebreak="tb")
            expected = _oracle(left, right, "int", direction=direction,
                               allow_exact_matches=exact, tolerance=tol, tiebreak=["tb"])
            _check(out, left, expected, "left")
        assert "'exploding_hash'" in caplog.text
        assert "ShuffledHashJoin" in _plan_text(out)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize("how", ["left", "inner"])
def test_auto_broadcasts_several_right_tables_in_one_plan(spark, caplog, how):
    _, _, ldf, rdf = _one_left_row_per_key(spark)
    specs = [
        cj.Right(rdf, prefix="a_", tiebreak="tb"),
        cj.Right(rdf.withColumnRenamed("k", "key"), by="key", prefix="b_", direction="forward",
                 allow_exact_matches=False, tiebreak="tb"),
        cj.Right(rdf, prefix="c_", direction="nearest", tolerance=4, tiebreak="tb"),
    ]
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        one = cj.asof_join(ldf, specs, on="t", by="k", how=how)
    assert "3 right tables in one 'broadcast' plan" in caplog.text
    assert _plan_text(one).count("BroadcastHashJoin") == 3
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", how=how, strategy="union")
    assert one.columns == chained.columns
    assert _sorted(one, one.columns) == _sorted(chained, chained.columns)


@pytest.mark.usefixtures("full_auto")
def test_auto_keeps_union_with_many_left_rows_per_key(spark, caplog):
    # About 10 left rows for each of 60 keys: none holds 5% of them (not heavy).
    left, right = random_rows(seed=29, n_left=600, n_right=600, n_keys=60, hot_key=False)
    ldf, rdf = _frames(spark, left, right, "int")
    assert key_counts(ldf, ("k",)).most > 2
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        cj.asof_join(ldf, rdf, on="t", by="k")
    assert "'union'" in caplog.text


def test_key_counts_ignore_null_keys(spark):
    df = spark.createDataFrame([(None, 1), (None, 2), (None, 3), ("a", 1), ("a", 2)],
                               "k string, x int")
    assert key_counts(df, ("k",)) == (2, 2)
    assert key_counts(df.where("x > 10"), ("k",)) == (0, 0)


def test_key_profile_counts_and_largest_keys_in_one_job(spark):
    """The counts of ``key_counts`` and the largest keys, largest first, with their
    rows and time ranges; NULL keys neither counted nor listed; 64 keys at most."""
    rows = [("a", 1, t) for t in (5, 9, 2)] + [("b", 2, 7), ("b", 2, 1)] + [("c", 1, 4)]
    rows += [(None, 1, 0)] * 5 + [(f"z{i}", i, i) for i in range(80)]
    df = spark.createDataFrame(rows, "k string, j int, t int")
    counts, top, small = key_profile(df, ("k", "j"), df["t"].cast("double"))
    assert counts == key_counts(df, ("k", "j")) == (3, 86)
    assert len(top) == 64 and small == 0
    assert top[:2] == [(3, (("a", 1), 2.0, 9.0)), (2, (("b", 2), 1.0, 7.0))]
    assert all(n == 1 and s.key[0] is not None for n, s in top[2:])
    # ``over``: only keys holding more rows are listed; the most of the others apart
    assert key_profile(df, ("k", "j"), df["t"], over=1) == ((3, 86), top[:2], 1)
    assert key_profile(df, ("k", "j"), df["t"], over=2) == ((3, 86), top[:1], 2)
    assert key_profile(df, ("k", "j"), df["t"], over=3) == ((3, 86), [], 3)
    assert key_profile(df.where("t > 100"), ("k",), df["t"]) == ((0, 0), [], 0)


def test_sampled_hot_spans_largest_first_without_null_keys(spark):
    """Keys over the share of the sample, largest first, with their time ranges; a
    NULL key never listed however many rows it holds; both thresholds apply."""
    rows = [(None, t) for t in range(50)] + [("a", t) for t in range(30)]
    rows += [("b", t) for t in range(100, 140)] + [(f"z{i}", i) for i in range(30)]
    df = spark.createDataFrame(rows, "k string, t int")
    t = df["t"].cast("double")
    assert sampled_hot_spans(df, ("k",), t, 0.1, fraction=1.0, min_sampled=1) == [
        (("b",), 100.0, 139.0), (("a",), 0.0, 29.0)]
    assert sampled_hot_spans(df, ("k",), None, 0.2, fraction=1.0, min_sampled=1) == [
        (("b",), None, None)]
    assert sampled_hot_spans(df, ("k",), t, 0.1, fraction=1.0, min_sampled=35) == [
        (("b",), 100.0, 139.0)]
    assert sampled_hot_spans(df.where("t > 1000"), ("k",), t, 0.1, fraction=1.0) == []


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize(("direction", "exact", "tol", "how"), [
    ("backward", True, None, "left"), ("forward", False, 40, "inner"),
    ("nearest", True, 25, "left"),
])
def test_auto_splits_hot_keys_from_a_broadcast_rest(spark, caplog, monkeypatch, direction,
                                                    exact, tol, how):
    import functools

    from chronojoin._plan import stats
    from chronojoin.asof import choose

    monkeypatch.setattr(choose, "MIN_SAMPLED", 0)
    monkeypatch.setattr(choose, "sampled_hot_spans",
                        functools.partial(stats.sampled_hot_spans, fraction=1.0))
    left, right = random_rows(seed=43, n_left=200, n_right=400, n_keys=100, t_max=300,
                              null_share=0.03)
    # The hot key keeps all its left rows, every other key one (NULL keys all of theirs).
    left = one_left_row_per_key(left, keep=("k0",))
    # The hot key's left rows at three times: its time buckets would not spread them.
    left = [dict(r, t=r["t"] % 3 * 100) if r["k"] == "k0" and r["t"] is not None else r
            for r in left]
    ldf, rdf = _frames(spark, left, right, "int")
    assert key_counts(ldf, ("k",)).most > 2
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction,
                           allow_exact_matches=exact, tolerance=tol, tiebreak="tb", how=how)
        expected = _oracle(left, right, "int", direction=direction, allow_exact_matches=exact,
                           tolerance=tol, tiebreak=["tb"])
        _check(out, left, expected, how)
    assert "'hot_split'" in caplog.text


@pytest.mark.parametrize(("how", "span"), [("left", None), ("inner", None),
                                          ("left", (10.0, 20.0))])
def test_hot_key_buckets_of_several_right_tables_match_unbucketed_joins(spark, how, span):
    """The hot key's time buckets carry each table's last and first rows exactly.

    With a ``span`` narrower than the times (a sampled range), rows outside it fall into
    the first or last bucket and the result is still exact.
    """
    from chronojoin.asof import buckets
    from chronojoin.asof.strategies import union

    left, right = random_rows(seed=47, n_left=300, n_right=500, t_max=40, null_share=0.04)
    ldf, rdf = _frames(spark, left, right, "int")
    specs = [
        cj.Right(rdf, prefix="a_"),
        cj.Right(rdf, prefix="b_", direction="forward", allow_exact_matches=False,
                 tiebreak="tb"),
        cj.Right(rdf, prefix="c_", direction="nearest", tolerance=3, tiebreak="tb"),
    ]
    spec = _spec(ldf, specs, how=how, strategy="union")
    layout = buckets.Layout(buckets=7, hot_keys=(("k0",),), span=span)
    out = union.plan_many(spec.left, list(spec.rights), spec, layout)
    text = _plan_text(out)
    # Bucket ends come from the window's own last rows: no aggregate of every row.
    assert "Aggregate" not in text
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", how=how, strategy="union")
    # Ties without a tie-break may pick another row: compare what is determined.
    cols = ["lid", "b_rid", "c_rid", "a_t"]
    assert _sorted(out, cols) == _sorted(chained, cols)


def _reasons(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "strategy" in r.getMessage()]


def test_small_inputs_get_union_without_statistics(spark, caplog, tmp_path, monkeypatch):
    """Tiny inputs skip ``auto``'s statistics: frames Spark cannot size (local data)
    have their rows counted in one job, files are sized from their plans; over either
    limit the statistics run (here they choose ``broadcast``)."""
    from chronojoin.asof import choose

    left, right, ldf, rdf = _one_left_row_per_key(spark)
    expected = _oracle(left, right, "int", tiebreak=["tb"])
    lfile, rfile = parquet_copies(tmp_path, ldf, rdf)
    rows = len(left) + len(right)
    cases = [(ldf, rdf, f"small inputs ({rows} row(s))"),
             (lfile, rfile, "small inputs (about 0.0 MiB by Spark's estimate)"),
             (ldf, rfile, f"small inputs ({len(left)} row(s) and about 0.0 MiB")]
    for lx, rx, reason in cases:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
            out = cj.asof_join(lx, rx, on="t", by="k", tiebreak="tb")
            _check(out, left, expected, "left")
        assert [f"asof_join right: strategy 'union' ({reason}" in r
                for r in _reasons(caplog)] == [True], (reason, _reasons(caplog))
    # One row over the count, one byte over the size: the statistics run.
    for name, limit, lx, rx in [("SMALL_INPUT_ROWS", rows - 1, ldf, rdf),
                                ("SMALL_INPUT_BYTES", 1, lfile, rfile)]:
        caplog.clear()
        with monkeypatch.context() as mp, caplog.at_level(logging.INFO, logger="chronojoin.asof"):
            mp.setattr(choose, name, limit)
            cj.asof_join(lx, rx, on="t", by="k", tiebreak="tb")
        assert "strategy 'broadcast'" in caplog.text, name


def test_buckets_given_get_union_with_carry_over(spark, caplog):
    """``auto`` with ``buckets``: the bucketed ``union``, with no statistics."""
    left, right, ldf, rdf = _one_left_row_per_key(spark)
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        out = cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb", buckets=3)
        _check(out, left, _oracle(left, right, "int", tiebreak=["tb"]), "left")
    assert [r.startswith("asof_join right: strategy 'union' (buckets=3 requested")
            for r in _reasons(caplog)] == [True], _reasons(caplog)


def test_small_inputs_of_several_right_tables_get_one_union(spark, caplog):
    left, right, ldf, rdf = _one_left_row_per_key(spark)
    specs = [cj.Right(rdf, prefix="a_", tiebreak="tb"),
             cj.Right(rdf, prefix="b_", direction="forward", tiebreak="tb")]
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        one = cj.asof_join(ldf, specs, on="t", by="k")
    rows = len(left) + 2 * len(right)
    assert f"one 'union' plan (small inputs ({rows} row(s))" in caplog.text, caplog.text
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", strategy="broadcast")
    assert _sorted(one, one.columns) == _sorted(chained, chained.columns)


def test_rows_up_to_counts_every_frame_and_stops_past_the_limit(spark):
    from chronojoin._plan.stats import rows_up_to

    a, b = spark.range(30), spark.range(5).where("id > 1")
    assert rows_up_to([a, b], 100) == 33
    assert rows_up_to([a, b], 33) == 33
    assert rows_up_to([a, b], 32) == 33  # "more than 32"
    assert rows_up_to([a, b], 10) == 11
    assert rows_up_to([b.where("id > 9")], 10) == 0
