"""Column names with dots, spaces and backticks, through every plan and its statistics.

Spark reads ``F.col("a.b")`` as the field ``b`` of a struct column ``a``, so every name
a user passes must reach Spark quoted. Each case runs twice, on plain names and on odd
ones, and both runs must return the same rows with the columns in the same order.
"""

from __future__ import annotations

import datetime as dt
import logging

import pytest

import chronojoin as cj
from chronojoin._validate.columns import col
from tests.asof.data import one_left_row_per_key, random_rows
from tests.asof.test_auto_layout import _sorted
from tests.asof.test_conformance import STRATEGIES, _frames
from tests.asof.test_hot_broadcast import _hot_inputs, sampled_everything  # noqa: F401

#: Plain test column -> an odd name that Spark would misread unquoted.
ODD = {"lid": "l.id", "rid": "r id", "k": "user.id", "t": "event time", "label": "la`bel",
       "v": "v.a l`ue", "tb": "t.b", "s": "st.art", "e": "e nd"}


def _odd(df):
    return df.select(*[col(c).alias(ODD.get(c, c)) for c in df.columns])


def _same(plain, odd):
    assert len(odd.columns) == len(plain.columns), (plain.columns, odd.columns)
    assert _sorted(odd, odd.columns) == _sorted(plain, plain.columns)


def _both(call, *frames, **names):
    """``call(*frames, **names)`` on plain frames and on renamed ones (names mapped)."""
    plain = call(*frames, **names)

    def rename(value):
        if isinstance(value, str):
            return ODD.get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):  # interval_aggregate's aggs: {out: (function, column)}
            return {out: (fn, rename(c)) for out, (fn, c) in value.items()}
        return value

    odd = call(*[_odd(f) for f in frames], **{k: rename(v) for k, v in names.items()})
    _same(plain, odd)
    return odd


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize(("strategy", "one_per_key"), [
    *[(s, False) for s in STRATEGIES],
    ("auto", True),  # the left side decides the plan for auto only
])
def test_asof_strategies(spark, strategy, one_per_key):
    left, right = random_rows(seed=11, n_left=80, n_right=140, n_keys=30)
    if one_per_key:  # auto's statistics then choose the broadcast plan
        left = one_left_row_per_key(left)
    ldf, rdf = _frames(spark, left, right, "int")
    out = _both(cj.asof_join, ldf, rdf, on="t", by="k", tiebreak="tb", strategy=strategy,
                direction="nearest", tolerance=9)
    assert "user.id" in out.columns and "event time_right" in out.columns


@pytest.mark.parametrize("options", [{"by": None}, {"by": "k", "buckets": 3}])
def test_asof_time_buckets(spark, options):
    left, right = random_rows(seed=12, n_left=60, n_right=90)
    ldf, rdf = _frames(spark, left, right, "int")
    _both(cj.asof_join, ldf, rdf, on="t", tiebreak="tb", **options)


@pytest.mark.usefixtures("full_auto")
@pytest.mark.parametrize("one_per_key", [False, True])
def test_asof_several_right_tables(spark, one_per_key):
    left, right = random_rows(seed=13, n_left=80, n_right=140, n_keys=30)
    if one_per_key:
        left = one_left_row_per_key(left)
    ldf, rdf = _frames(spark, left, right, "int")

    def call(ldf, rdf, **names):
        specs = [cj.Right(rdf, prefix="a.", tiebreak=names["tb"]),
                 cj.Right(rdf, prefix="b ", direction="forward", tolerance=5)]
        return cj.asof_join(ldf, specs, on=names["t"], by=names["k"])

    out = _both(call, ldf, rdf, t="t", k="k", tb="tb")
    assert "a.event time" in out.columns and "b v.a l`ue" in out.columns


@pytest.mark.usefixtures("sampled_everything")
@pytest.mark.parametrize(("clustered", "chosen"), [(False, "hot_broadcast"),
                                                   (True, "hot_split")])
def test_asof_hot_keys(spark, caplog, clustered, chosen):
    *_, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    with caplog.at_level(logging.INFO, logger="chronojoin.asof"):
        _both(cj.asof_join, ldf, rdf, on="t", by="k", tiebreak="tb")
    assert caplog.text.count(f"strategy '{chosen}'") == 2


@pytest.mark.usefixtures("sampled_everything")
@pytest.mark.parametrize("clustered", [False, True])
def test_asof_hot_keys_named_like_the_statistics_columns(spark, clustered):
    *_, ldf, rdf = _hot_inputs(spark, clustered=clustered)
    names = {"k": "__n", "t": "__high", "tb": "__low", "label": "__bucket"}

    def rename(df):
        return df.select(*[col(c).alias(names.get(c, c)) for c in df.columns])

    plain = cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb")
    odd = cj.asof_join(rename(ldf), rename(rdf), on="__high", by="__n", tiebreak="__low")
    _same(plain, odd)


def _events(spark):
    left, right = random_rows(seed=14, n_left=70, n_right=120, t_max=200)
    return _frames(spark, left, right, "int")


@pytest.mark.parametrize("bin_size", [None, 7])
def test_band_join(spark, bin_size):
    ldf, rdf = _events(spark)
    _both(cj.band_join, ldf, rdf, left_on="t", right_on="t", lower=-15, upper=0, by="k",
          how="left", bin_size=bin_size)


@pytest.mark.parametrize("bin_size", [None, 7])
def test_interval_join(spark, bin_size):
    ldf, rdf = _events(spark)
    intervals = rdf.withColumnRenamed("t", "s").withColumn("e", col("s") + col("tb") % 40)
    _both(cj.interval_join, ldf, intervals, left_start="t", right_start="s", right_end="e",
          by="k", how="left", bin_size=bin_size)


@pytest.mark.parametrize("strategy", ["auto", "sweep", "bucketed_sweep", "join"])
def test_interval_aggregate(spark, strategy):
    ldf, rdf = _events(spark)
    intervals = rdf.withColumnRenamed("t", "s").withColumn("e", col("s") + col("tb") % 40)
    aggs = {"n": ("count", None), "total": ("sum", "v"), "mean": ("mean", "tb")}
    if strategy in ("auto", "join"):  # the sweeps keep running sums only
        aggs.update({"low": ("min", "tb"), "all": ("collect_set", "rid")})
    _both(cj.interval_aggregate, ldf, intervals, time="t", start="s", end="e", by="k",
          aggs=aggs, strategy=strategy)


def test_incremental_loader(spark, tmp_path):
    """Keys, partition column and ``order_by`` with odd names: each key is stored once,
    its first row by value wins, and a second load of the same rows adds nothing."""
    day = dt.date(2024, 1, 1)
    rows = [(i % 10, f"c{i % 2}", day + dt.timedelta(days=i % 2), i) for i in range(40)]
    batch = spark.createDataFrame(rows, "`user.id` long, `click id` string, "
                                        "`event date` date, `va``lue` long")
    loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["user.id", "click id"],
                                  partition_by="event date", order_by="va`lue")
    first = loader.append(batch.where(col("va`lue") < 25))
    second = loader.append(batch)
    assert (first.rows_appended, first.duplicates_in_batch) == (10, 15)
    assert (second.rows_appended, second.duplicates_existing) == (0, 10)
    assert loader.check().ok
    stored = spark.read.parquet(str(tmp_path / "t"))
    assert sorted(r[0] for r in stored.select(col("va`lue")).collect()) == list(range(10))


def test_only_names_that_differ_in_case_alone_read_the_case_setting(spark, monkeypatch):
    """``spark.sql.caseSensitive`` decides only whether ``Price`` and ``price`` are one
    name; while no two names of a call differ in case alone, no call reads it (each read
    is a round trip to the server on Spark Connect)."""
    ldf, rdf = _events(spark)
    intervals = rdf.withColumnRenamed("t", "s").withColumn("e", col("s") + 5)
    conf = type(spark.conf)
    get, reads = conf.get, []

    def counted(self, key, *args, **kwargs):
        if key == "spark.sql.caseSensitive":
            reads.append(key)
        return get(self, key, *args, **kwargs)

    monkeypatch.setattr(conf, "get", counted)
    cj.asof_join(ldf, [cj.Right(rdf, prefix=p) for p in ("a_", "b_", "c_")], on="t", by="k",
                 strategy="union")
    cj.band_join(ldf, rdf, left_on="t", right_on="t", lower=-5, upper=0, by="k")
    cj.interval_join(ldf, intervals, left_start="t", right_start="s", right_end="e", by="k")
    cj.interval_aggregate(ldf, intervals, time="t", start="s", end="e", by="k",
                          aggs={"n": ("count", None)}, strategy="sweep")
    assert reads == []
    # a right column named like a left one but for its case: the setting decides
    out = cj.asof_join(ldf, rdf.withColumnRenamed("v", "LABEL"), on="t", by="k",
                       strategy="union")
    assert reads
    assert out.columns == ["lid", "k", "t", "label", "rid", "t_right", "LABEL_right", "tb"]
