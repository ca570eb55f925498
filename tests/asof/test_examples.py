"""Worked examples: output columns, duplicates, empty sides, NULLs, several right tables."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin._session import is_connect

STRATEGIES = ["exploding", "union", "sort_merge", "broadcast"]


@pytest.fixture(scope="module")
def trades(spark):
    return spark.createDataFrame(
        [("A", 4, 100), ("A", 4, 100), ("A", 9, 150), ("B", 1, 300), (None, 5, 1), ("A", None, 2)],
        "sym string, t int, qty int",
    )


@pytest.fixture(scope="module")
def quotes(spark):
    return spark.createDataFrame(
        [("A", 1, 10.0, None), ("A", 5, 11.0, "x"), ("B", 2, 20.0, "y"), (None, 1, 0.0, "z")],
        "sym string, t int, px double, note string",
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_backward_left_keeps_every_row_once(trades, quotes, strategy):
    out = cj.asof_join(trades, quotes, on="t", by="sym", strategy=strategy)
    assert out.columns == ["sym", "t", "qty", "t_right", "px", "note"]
    rows = sorted(out.collect(), key=lambda r: (str(r.sym), r.t or -1, r.qty))
    assert [tuple(r) for r in rows] == [
        ("A", None, 2, None, None, None),
        ("A", 4, 100, 1, 10.0, None),
        ("A", 4, 100, 1, 10.0, None),
        ("A", 9, 150, 5, 11.0, "x"),
        ("B", 1, 300, None, None, None),
        (None, 5, 1, None, None, None),
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_inner_drops_unmatched(trades, quotes, strategy):
    out = cj.asof_join(trades, quotes, on="t", by="sym", how="inner", strategy=strategy)
    assert sorted(r.qty for r in out.collect()) == [100, 100, 150]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matched_row_is_exact_even_with_null_values(spark, strategy):
    left = spark.createDataFrame([(1, 10)], "id int, t int")
    right = spark.createDataFrame([(1, 5, "a", 1.0), (1, 8, None, None)],
                                  "id int, t int, s string, x double")
    out = cj.asof_join(left, right, on="t", by="id", strategy=strategy).collect()
    assert [tuple(r) for r in out] == [(1, 10, 8, None, None)]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_sides(spark, strategy):
    left = spark.createDataFrame([(1, 10)], "id int, t int")
    empty_r = spark.createDataFrame([], "id int, t int, v double")
    empty_l = spark.createDataFrame([], "id int, t int")
    right = spark.createDataFrame([(1, 5, 1.0)], "id int, t int, v double")
    assert [tuple(r) for r in cj.asof_join(left, empty_r, on="t", by="id",
                                           strategy=strategy).collect()] == [(1, 10, None, None)]
    assert cj.asof_join(empty_l, right, on="t", by="id", strategy=strategy).count() == 0


def test_different_names_and_several_keys(spark):
    left = spark.createDataFrame([(1, "x", 10, 7)], "a int, b string, lt int, v int")
    right = spark.createDataFrame([(1, "x", 3, 1), (1, "y", 9, 2)],
                                  "ra long, rb string, rt int, v int")
    out = cj.asof_join(left, right, left_on="lt", right_on="rt", left_by=["a", "b"],
                       right_by=["ra", "rb"])
    assert out.columns == ["a", "b", "lt", "v", "ra", "rb", "rt", "v_right"]
    assert [tuple(r) for r in out.collect()] == [(1, "x", 10, 7, 1, "x", 3, 1)]


def test_timestamp_with_string_tolerance(spark):
    t0 = dt.datetime(2024, 5, 1, 12, 0, 0)
    left = spark.createDataFrame([(1, t0)], "id int, ts timestamp")
    right = spark.createDataFrame([(1, t0 - dt.timedelta(minutes=30), 1.5)],
                                  "id int, ts timestamp, f double")
    hit = cj.asof_join(left, right, on="ts", by="id", tolerance="30 minutes").collect()[0]
    miss = cj.asof_join(left, right, on="ts", by="id", tolerance="29 minutes").collect()[0]
    assert hit.f == 1.5 and miss.f is None
    assert hit.ts_right == t0 - dt.timedelta(minutes=30)


def test_date_left_timestamp_right(spark):
    left = spark.createDataFrame([(1, dt.date(2024, 1, 2))], "id int, d date")
    right = spark.createDataFrame([(1, dt.datetime(2024, 1, 1, 23, 0), 1),
                                   (1, dt.datetime(2024, 1, 2, 0, 0, 1), 2)],
                                  "id int, ts timestamp, v int")
    out = cj.asof_join(left, right, left_on="d", right_on="ts", by="id").collect()[0]
    assert out.v == 1


def test_several_right_tables_with_prefixes(spark):
    labels = spark.createDataFrame([(1, 10, "y"), (2, 10, "n")], "user int, t int, label string")
    clicks = spark.createDataFrame([(1, 3, 5), (1, 9, 6), (2, 12, 7)],
                                   "user int, t int, n int")
    spend = spark.createDataFrame([(1, 1, 9.5), (2, 2, 1.0)], "uid int, at int, total double")
    out = cj.asof_join(labels, [
        cj.Right(clicks, prefix="clicks_"),
        cj.Right(spend, on="at", by="uid", prefix="spend_", tolerance=8),
    ], on="t", by="user")
    assert out.columns == ["user", "t", "label", "clicks_t", "clicks_n", "spend_uid",
                           "spend_at", "spend_total"]
    rows = {r.user: tuple(r) for r in out.collect()}
    assert rows[1] == (1, 10, "y", 9, 6, None, None, None)
    assert rows[2] == (2, 10, "n", None, None, 2, 2, 1.0)


@pytest.mark.parametrize("strategy", ["union", "auto", "broadcast", "exploding"])
def test_several_right_tables_of_other_time_and_key_types(spark, strategy):
    """A table with bigint times and keys compares them as bigints (exactly past 2**53),
    also beside a table whose times and keys are doubles; its tolerance stays whole."""
    b = 2**53
    left = spark.createDataFrame([(1, b + 1, b + 1)], "lid int, id bigint, t bigint")
    whole = spark.createDataFrame([(b + 1, b, "before"), (b + 1, b + 2, "after"),
                                   (b, b + 1, "other key")], "id bigint, t bigint, v string")
    real = spark.createDataFrame([(float(b), 0.0, 9.5)], "id double, t double, w double")
    got = {}
    for direction, tolerance in (("backward", None), ("forward", None), ("backward", 0)):
        out = cj.asof_join(left, [cj.Right(whole, prefix="a_", tolerance=tolerance),
                                  cj.Right(real, prefix="b_", tolerance=10**17)],
                           on="t", by="id", direction=direction, strategy=strategy)
        got[direction, tolerance] = [(r.a_v, r.b_w) for r in out.collect()]
    assert got == {("backward", None): [("before", 9.5)], ("forward", None): [("after", None)],
                   ("backward", 0): [(None, 9.5)]}


def test_several_right_tables_name_their_own_columns(spark):
    """With a list of cj.Right, `left_on`/`left_by` may come alone: each table names its
    columns, and a table that does not uses the left side's names."""
    labels = spark.createDataFrame([(1, 10), (2, 10)], "user int, t int")
    clicks = spark.createDataFrame([(1, 3, 5), (2, 12, 7)], "user int, t int, n int")
    spend = spark.createDataFrame([(1, 1, 9.5), (2, 2, 1.0)], "uid int, at int, total double")
    out = cj.asof_join(labels, [
        cj.Right(clicks, prefix="c_"),
        cj.Right(spend, on="at", by="uid", prefix="s_"),
    ], left_on="t", left_by="user")
    assert out.columns == ["user", "t", "c_t", "c_n", "s_uid", "s_at", "s_total"]
    assert sorted(map(tuple, out.collect())) == [(1, 10, 3, 5, 1, 1, 9.5),
                                                 (2, 10, None, None, 2, 2, 1.0)]


def test_several_right_tables_own_direction(spark):
    left = spark.createDataFrame([(1, 10)], "id int, t int")
    r = spark.createDataFrame([(1, 8, "b"), (1, 12, "f")], "id int, t int, v string")
    out = cj.asof_join(left, [cj.Right(r, prefix="back_"),
                              cj.Right(r, prefix="fwd_", direction="forward")], on="t", by="id")
    assert [tuple(x) for x in out.collect()] == [(1, 10, 8, "b", 12, "f")]


@pytest.mark.parametrize("strategy", ["auto", "union", "exploding", "sort_merge", "broadcast"])
def test_one_pass_equals_chained(spark, strategy):
    from tests.asof.data import random_rows

    left, right = random_rows(seed=17, t_max=80, null_share=0.05)
    ldf = spark.createDataFrame([tuple(r.values()) for r in left],
                                "lid int, k string, t int, label int")
    rdf = spark.createDataFrame([tuple(r.values()) for r in right],
                                "rid int, k string, t int, v double, tb int")
    specs = [
        cj.Right(rdf, prefix="a_", tiebreak="tb"),
        cj.Right(rdf.withColumnRenamed("k", "key"), by="key", prefix="b_", direction="forward",
                 allow_exact_matches=False, tiebreak="tb"),
        cj.Right(rdf, prefix="c_", direction="nearest", tolerance=4, tiebreak="tb"),
    ]
    one = cj.asof_join(ldf, specs, on="t", by="k", strategy=strategy)
    chained = ldf
    for s in specs:
        chained = cj.asof_join(chained, [s], on="t", by="k", strategy="exploding")
    assert one.columns == chained.columns
    assert sorted(map(tuple, one.collect()), key=str) == sorted(map(tuple, chained.collect()),
                                                                 key=str)


def _schema_reads_of_other_frames(monkeypatch, inputs):
    """The frames other than ``inputs`` whose schema is read from now on (a list that
    grows). On Spark Connect each read is a round trip to the server, which analyses
    the frame's plan (about 0.1 s for a ``broadcast`` plan's winners)."""
    for df in inputs:
        assert df.columns  # read before, as a caller would have
    cls = type(inputs[0])
    name = "_schema" if is_connect(inputs[0]) else "schema"  # what `columns` reads too
    read, others = getattr(cls, name), []

    def counted(self):
        if not any(self is df for df in inputs):
            others.append(self)
        return read.__get__(self, type(self))

    monkeypatch.setattr(cls, name, property(counted))
    return others


@pytest.mark.parametrize("strategy", ["union", "exploding", "broadcast"])
def test_building_a_plan_reads_the_schemas_of_the_inputs_only(trades, quotes, monkeypatch,
                                                              strategy):
    others = _schema_reads_of_other_frames(monkeypatch, (trades, quotes))
    for direction in ("backward", "forward", "nearest"):
        cj.asof_join(trades, quotes, on="t", by="sym", strategy=strategy, direction=direction)
    if strategy != "exploding":  # one plan for all tables (exploding chains its joins)
        cj.asof_join(trades, [cj.Right(quotes, prefix=p) for p in ("a_", "b_", "c_")],
                     on="t", by="sym", strategy=strategy)
    assert others == []


@pytest.mark.parametrize("by", ["sym", None])
def test_time_buckets_read_the_schemas_of_the_inputs_only(trades, quotes, monkeypatch, by):
    """The carry between buckets names its columns and knows its time type (its grid's
    statistics are a job of their own)."""
    others = _schema_reads_of_other_frames(monkeypatch, (trades, quotes))
    for direction in ("backward", "forward", "nearest"):
        cj.asof_join(trades, quotes, on="t", by=by, strategy="union", direction=direction,
                     buckets=3)
    assert others == []


@pytest.mark.parametrize("strategy", ["union", "sort_merge", "exploding", "broadcast"])
def test_building_a_join_of_wide_tables_makes_few_column_calls(spark, monkeypatch, strategy):
    """Wide feature tables: the column functions a join's build calls do not grow with
    the columns (on a classic session each is a few calls to the JVM; three right
    tables of 300 columns once took 20 s to build)."""
    left = spark.createDataFrame([(1, 5, *range(60))],
                                 ["k", "t", *[f"l{i}" for i in range(60)]])
    right = spark.createDataFrame([(1, 3, *[float(i) for i in range(200)])],
                                  ["k", "t", *[f"f.{i}" for i in range(200)]])
    assert left.columns and right.columns  # read before, as a caller would have
    column = type(F.lit(1))
    calls = []
    for owner, name in [(F, "col"), (column, "alias"), (column, "getField"),
                        (column, "__getitem__")]:
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name,
                            lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    out = cj.asof_join(left, right, on="t", by="k", strategy=strategy, direction="nearest")
    monkeypatch.undo()
    assert len(calls) < 100, len(calls)
    row = out.first()
    assert out.columns == [*left.columns, "t_right", *[f"f.{i}" for i in range(200)]]
    assert (row["l59"], row["t_right"], row["f.199"]) == (59, 3, 199.0)
