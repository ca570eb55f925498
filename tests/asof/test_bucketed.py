"""Inputs bucketed by key and sorted by time are joined without an Exchange."""

from __future__ import annotations

import io
import logging
from contextlib import redirect_stdout

import pytest

import chronojoin as cj
from chronojoin.datagen import thesis


def _physical_plan(df) -> str:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain(mode="formatted")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def bucketed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("bucketed")
    left, right = thesis(spark, 500, seed=3, time_type="integer", order="none")
    for name, df in (("cj_bucketed_left", left), ("cj_bucketed_right", right)):
        df.write.bucketBy(4, "id").sortBy("time").option("path", str(root / name)) \
            .mode("overwrite").saveAsTable(name)
    yield spark.table("cj_bucketed_left"), spark.table("cj_bucketed_right"), left, right
    for name in ("cj_bucketed_left", "cj_bucketed_right"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("strategy", ["exploding", "union", "sort_merge"])
def test_no_exchange_on_bucketed_inputs(spark, bucketed, strategy):
    """``sort_merge`` shuffles on purpose (see its module); the others must not."""
    bl, br, left, right = bucketed
    joined = cj.asof_join(bl, br, on="time", by="id", strategy=strategy)
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        plan = _physical_plan(joined)
        assert ("Exchange" in plan) == (strategy == "sort_merge"), plan
        expected = cj.asof_join(left, right, on="time", by="id", strategy="union")
        assert sorted(map(tuple, joined.collect())) == sorted(map(tuple, expected.collect()))
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def test_time_buckets_of_bucketed_inputs_are_spread_over_tasks(spark, bucketed):
    """Split into time buckets (a hot key's layout, or ``buckets=``), a key's rows move to
    one task per time bucket: the tables' bucketing by the key alone would keep them in
    the key's one task."""
    bl, br, left, right = bucketed
    for direction in ("backward", "nearest"):
        joined = cj.asof_join(bl, br, on="time", by="id", strategy="union", buckets=8,
                              direction=direction)
        split = [ln for ln in _physical_plan(joined).splitlines()
                 if "hashpartitioning(__k0" in ln and "__b" in ln]
        assert split, _physical_plan(joined)
        expected = cj.asof_join(left, right, on="time", by="id", direction=direction)
        assert sorted(map(tuple, joined.collect())) == sorted(map(tuple, expected.collect()))


def test_small_bucketed_tables_are_still_joined_within_buckets(spark, bucketed, caplog):
    """Tables read bucket by bucket never take the small inputs' ``union``."""
    bl, br, _, _ = bucketed
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        cj.asof_join(bl, br, on="time", by="id")
    assert "strategy 'exploding'" in caplog.text, caplog.text


@pytest.mark.usefixtures("full_auto")
def test_auto_joins_within_buckets_instead_of_broadcasting(spark, bucketed, caplog):
    """One left row per id would mean ``broadcast``; on tables bucketed by the key Spark
    would read the right side one bucket per task, so ``auto`` joins within the buckets."""
    bl, br, left, right = bucketed
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        joined = cj.asof_join(bl, br, on="time", by="id")
        assert "strategy 'exploding'" in caplog.text
        assert "bucket by bucket" in caplog.text
    expected = cj.asof_join(left, right, on="time", by="id", strategy="union")
    assert sorted(map(tuple, joined.collect())) == sorted(map(tuple, expected.collect()))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        cj.asof_join(bl, right, on="time", by="id")  # only the left side is bucketed
        assert "strategy 'broadcast'" in caplog.text
