"""One DataFrame on both sides (each event's previous event, overlapping intervals of a
table with itself), through every plan.

Both sides then share Spark's column ids, which a plan that joins them must keep apart.
Each result must equal the one against a copy of the same rows built on its own.
"""

from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from tests.asof.test_auto_layout import _sorted


@pytest.fixture(scope="module")
def events(spark):
    rng = random.Random(3)
    rows = [(rng.randint(0, 5), rng.randint(0, 50), float(i)) for i in range(60)]
    rows.append((None, 7, -1.0))
    rows.append((2, None, -2.0))
    schema = "k long, t long, v double"
    return spark.createDataFrame(rows, schema), spark.createDataFrame(rows, schema)


def _rows(df):
    return _sorted(df, df.columns)


@pytest.mark.parametrize("strategy", ["auto", "union", "exploding", "sort_merge", "broadcast"])
@pytest.mark.parametrize("by", ["k", None])
def test_asof_previous_event(events, strategy, by):
    df, copy = events
    out = cj.asof_join(df, df, on="t", by=by, strategy=strategy, allow_exact_matches=False)
    assert _rows(out) == _rows(cj.asof_join(df, copy, on="t", by=by, strategy=strategy,
                                            allow_exact_matches=False))


def test_asof_several_right_tables_and_a_derived_left(events):
    df, copy = events
    firsts = df.dropDuplicates(["k"])  # one left row per key: auto broadcasts

    def specs(right):
        return [cj.Right(right, prefix="prev_", allow_exact_matches=False),
                cj.Right(right, prefix="next_", direction="forward",
                         allow_exact_matches=False)]

    assert (_rows(cj.asof_join(df, specs(df), on="t", by="k"))
            == _rows(cj.asof_join(df, specs(copy), on="t", by="k")))
    assert (_rows(cj.asof_join(firsts, df, on="t", by="k"))
            == _rows(cj.asof_join(firsts, copy, on="t", by="k")))


@pytest.mark.parametrize("bin_size", [None, 4])
@pytest.mark.parametrize("by", ["k", None])
def test_band_and_interval_joins(events, bin_size, by):
    df, copy = events
    band = {"left_on": "t", "right_on": "t", "lower": -5, "upper": 0, "by": by,
            "bin_size": bin_size, "how": "left"}
    assert _rows(cj.band_join(df, df, **band)) == _rows(cj.band_join(df, copy, **band))
    spans = {"left_start": "t", "left_end": "e", "right_start": "t", "right_end": "e",
             "by": by, "bin_size": bin_size}
    iv, ivc = (d.withColumn("e", F.col("t") + 7) for d in (df, copy))
    assert _rows(cj.interval_join(iv, iv, **spans)) == _rows(cj.interval_join(iv, ivc, **spans))


@pytest.mark.parametrize("strategy", ["auto", "sweep", "bucketed_sweep", "join"])
def test_interval_aggregate(events, strategy):
    df, copy = events
    iv, ivc = (d.withColumn("e", F.col("t") + 7) for d in (df, copy))
    opts = {"time": "t", "start": "t", "end": "e", "by": "k", "strategy": strategy,
            "aggs": {"x": ("sum", "v"), "n": ("count", None)}}
    assert (_rows(cj.interval_aggregate(iv, iv, **opts))
            == _rows(cj.interval_aggregate(iv, ivc, **opts)))
