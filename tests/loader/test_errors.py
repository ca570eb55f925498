"""Rejected arguments and batches: a ValueError naming the column, and nothing written."""

from __future__ import annotations

import datetime as dt
import os

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import (
    ColumnNotFoundError,
    InvalidArgumentError,
    SchemaMismatchError,
)

D1 = dt.date(2024, 1, 1)
SCHEMA = "user_id long, click_id string, event_date date, seq long"


def snapshot(root):
    out = []
    for dirpath, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(dirpath, f), root) for f in files
                if not f.startswith("lock")]
    return sorted(out)


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("errors") / "t")
    ld = cj.IncrementalLoader(spark, path=path, keys=["user_id", "click_id"])
    ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA))
    return path


@pytest.mark.parametrize(("kwargs", "match"), [
    ({}, "exactly one of `path` and `table`"),
    ({"path": "x", "table": "t"}, "exactly one of `path` and `table`"),
    ({"path": "x", "keys": []}, "`keys` must name at least one column"),
    ({"path": "x", "keys": ["a", "a"]}, "names a column twice"),
    ({"path": "x", "keys": ["a"], "partition_by": "a"}, "`partition_by`.*also in `keys`"),
    ({"path": "x", "keys": ["a"], "format": "csv"}, "`format` must be one of"),
    ({"path": "x", "keys": ["a"], "on_duplicate": "keep"}, "`on_duplicate` must be one of"),
    ({"path": "x", "keys": ["a"], "order_by": [1]}, "`order_by` must be column names"),
    ({"path": "s3://bucket/t", "keys": ["a"]}, "`path`: only local file system paths"),
    ({"path": "file://elsewhere/t", "keys": ["a"]}, "`path`: only local file system paths"),
])
def test_constructor_arguments(spark, kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        cj.IncrementalLoader(spark, **kwargs)


def test_spark_must_be_a_session():
    with pytest.raises(TypeError, match="`spark` must be a SparkSession"):
        cj.IncrementalLoader("spark", path="x", keys=["a"])


@pytest.mark.parametrize(("rows", "schema", "error", "match"), [
    ([(None, "a", D1, 1)], SCHEMA, InvalidArgumentError,
     "`keys`: column 'user_id' of the batch has 1 NULL"),
    ([(1, None, D1, 1)], SCHEMA, InvalidArgumentError, "`keys`: column 'click_id'"),
    ([(1, "a", None, 1)], SCHEMA, InvalidArgumentError,
     "`partition_by`: column 'event_date' of the batch has 1 NULL"),
    ([(1, D1, 1)], "user_id long, event_date date, seq long", ColumnNotFoundError,
     "`keys`: column 'click_id' not found in batch"),
    ([(1, "a", 1)], "user_id long, click_id string, seq long", ColumnNotFoundError,
     "`partition_by`: column 'event_date' not found in batch"),
    ([(1, "a", D1, "1")], "user_id long, click_id string, event_date date, seq string",
     SchemaMismatchError, "column 'seq' has type string in the batch but bigint"),
    ([(1, "a", D1, 1, 2)], SCHEMA + ", extra int", SchemaMismatchError,
     "column 'extra' is not a column of"),
    ([(1, "a", D1)], "user_id long, click_id string, event_date date", SchemaMismatchError,
     "column 'seq' of .* is missing from the batch"),
])
def test_bad_batches_write_nothing(spark, table, rows, schema, error, match):
    before = snapshot(table)
    ld = cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"])
    with pytest.raises(error, match=match):
        ld.append(spark.createDataFrame(rows, schema))
    assert snapshot(table) == before
    assert issubclass(error, ValueError)


def test_batch_must_be_a_dataframe(spark, table):
    with pytest.raises(TypeError, match=r"`batch` must be a pyspark\.sql\.DataFrame"):
        cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"]).append([1])


def test_bad_batch_id_and_unsupported_partition_type(spark, tmp_path, table):
    ld = cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"])
    with pytest.raises(InvalidArgumentError, match="`batch_id` must be"):
        ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA), batch_id="../x")
    ts = cj.IncrementalLoader(spark, path=str(tmp_path / "u"), keys=["k"], partition_by="t")
    with pytest.raises(InvalidArgumentError, match=r"column 't' has type timestamp"):
        ts.append(spark.createDataFrame([(1, dt.datetime(2024, 1, 1))], "k int, t timestamp"))


def test_other_keys_or_partitioning_than_the_table(spark, table):
    batch = spark.createDataFrame([(2, "a", D1, 1)], SCHEMA)
    with pytest.raises(InvalidArgumentError, match=r"`keys`: the index of .* is keyed by"):
        cj.IncrementalLoader(spark, path=table, keys=["user_id"]).append(batch)
    with pytest.raises(InvalidArgumentError, match=r"`format`: .* was loaded with 'parquet'"):
        cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"],
                             format="orc").append(batch)


def test_empty_string_partition_value_writes_nothing(spark, tmp_path):
    loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["k"],
                                  partition_by="region")
    batch = spark.createDataFrame([(1, "eu"), (2, "")], "k long, region string")
    with pytest.raises(InvalidArgumentError, match="`partition_by`: column 'region' of the "
                                                   "batch has 1 empty string"):
        loader.append(batch)
    assert not os.path.exists(tmp_path / "t" / "region=eu")


def test_hive_default_partition_value_writes_nothing(spark, tmp_path):
    """Spark reads a ``region=__HIVE_DEFAULT_PARTITION__`` directory back as NULL, so its
    stored keys would never match a batch's again: a second load would duplicate them."""
    path = tmp_path / "t"
    loader = cj.IncrementalLoader(spark, path=str(path), keys=["k"], partition_by="region")
    loader.append(spark.createDataFrame([(1, "eu")], "k long, region string"))
    before = snapshot(path)
    default = "__HIVE_DEFAULT_PARTITION__"
    batch = spark.createDataFrame([(1, default), (2, "eu"), (3, default)],
                                  "k long, region string")
    with pytest.raises(InvalidArgumentError, match=(
            r"`partition_by`: column 'region' of the batch has 2 '__HIVE_DEFAULT_PARTITION__'"
            r" value\(s\), which Spark reads back from the partition directory name as NULL; "
            r"nothing written")):
        loader.append(batch)
    assert snapshot(path) == before
    fresh = cj.IncrementalLoader(spark, path=str(tmp_path / "u"), keys=["k"],
                                 partition_by="region")
    with pytest.raises(InvalidArgumentError, match="__HIVE_DEFAULT_PARTITION__"):
        fresh.append(batch)
    assert not os.path.exists(tmp_path / "u")
    # only the exact name is Spark's: another case is an ordinary value, deduplicated
    other = default.lower()
    loader.append(spark.createDataFrame([(1, other)], "k long, region string"))
    r = loader.append(spark.createDataFrame([(1, other), (4, other)], "k long, region string"))
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    assert loader.check().ok


@pytest.mark.parametrize(("batch_type", "table_type", "widens"), [
    ("int", "bigint", True), ("tinyint", "int", True), ("smallint", "bigint", True),
    ("float", "double", True), ("bigint", "int", False), ("double", "float", False),
    ("bigint", "double", False), ("int", "double", False), ("date", "timestamp", False),
    ("string", "bigint", False),
])
def test_which_batch_types_widen(batch_type, table_type, widens):
    from pyspark.sql.types import _parse_datatype_string

    from chronojoin.loader.target import widens as widening

    parse = _parse_datatype_string
    assert widening(parse(batch_type), parse(table_type)) is widens


def test_narrower_integers_are_widened_to_the_table(spark, tmp_path):
    """A CSV batch's inferred ``int`` keys load into a ``bigint`` table, with their dedup."""
    path = str(tmp_path / "t")
    ld = cj.IncrementalLoader(spark, path=path, keys=["user_id", "click_id"])
    ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA))
    narrow = "user_id int, click_id string, event_date date, seq int"
    report = ld.append(spark.createDataFrame([(1, "a", D1, 5), (2, "b", D1, 6)], narrow))
    assert (report.rows_appended, report.duplicates_existing) == (1, 1)
    stored = spark.read.parquet(path)
    assert dict(stored.dtypes)["user_id"] == "bigint" and dict(stored.dtypes)["seq"] == "bigint"
    assert sorted((r.user_id, r.seq) for r in stored.collect()) == [(1, 1), (2, 6)]
    assert ld.check().ok


@pytest.mark.parametrize("name", ["_day", ".day"])
def test_partition_columns_that_would_hide_their_directories_are_refused(spark, name):
    # Spark's readers skip directories starting with '_' or '.': the rows would be lost.
    with pytest.raises(InvalidArgumentError, match=rf"`partition_by`: column '\{name}' "
                                                   rf"starts with '\{name[0]}'"):
        cj.IncrementalLoader(spark, path="x", keys=["k"], partition_by=name)


@pytest.mark.parametrize(("make", "match"), [
    (lambda b: b.withColumn("__cj_tag", F.lit(7)),
     r"`batch`: column '__cj_tag' starts with '__cj_', which the loader keeps"),
    (lambda b: b.withColumn("__CJ_bucket", F.lit(7)), r"column '__CJ_bucket' starts with"),
])
def test_batch_columns_named_like_the_loaders_own_are_refused(spark, table, make, match):
    before = snapshot(table)
    ld = cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"])
    with pytest.raises(InvalidArgumentError, match=match):
        ld.append(make(spark.createDataFrame([(2, "a", D1, 1)], SCHEMA)))
    assert snapshot(table) == before


def test_batch_ids_starting_with_an_underscore_are_refused(spark, table):
    # Their staging directories would be hidden from recovery after a crash.
    ld = cj.IncrementalLoader(spark, path=table, keys=["user_id", "click_id"])
    with pytest.raises(InvalidArgumentError, match=r"`batch_id` must be .* starting with a "
                                                   r"letter or digit; got '_b'"):
        ld.append(spark.createDataFrame([(2, "a", D1, 1)], SCHEMA), batch_id="_b")


def test_order_and_partition_columns_spark_cannot_use_are_refused_before_any_job(
        spark, tmp_path):
    batch = spark.createDataFrame([(1, "a", D1, 1)], SCHEMA).withColumn(
        "m", F.create_map(F.lit("x"), F.col("seq")))
    path = str(tmp_path / "t")
    jobs = _jobs(spark)
    cases = [
        ({"order_by": "m"}, r"`order_by`: column 'm' of batch has type map<string,bigint>; "
                            r"a map cannot be ordered"),
        ({"order_by": [F.col("nope").desc()]}, r"`order_by`: .*nope.* cannot order the batch"),
        ({"order_by": [F.col("m").asc()]}, r"`order_by`: .*m.* cannot order the batch"),
    ]
    for kwargs, match in cases:
        ld = cj.IncrementalLoader(spark, path=path, keys=["user_id", "click_id"], **kwargs)
        with pytest.raises(InvalidArgumentError, match=match):
            ld.append(batch)
    collated = spark.createDataFrame([(1, "eu")], "k long, region string collate UTF8_LCASE")
    ld = cj.IncrementalLoader(spark, path=path, keys=["k"], partition_by="region")
    with pytest.raises(InvalidArgumentError, match=r"`partition_by`: column 'region' has type "
                                                   r"string collate UTF8_LCASE; expected date, "
                                                   r"string \(without a collation\)"):
        ld.append(collated)
    assert _jobs(spark) == jobs
    assert not os.path.exists(path)


def _jobs(spark):
    """The session's job ids so far (``None`` on Spark Connect, which shows none)."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return None
    return spark.sparkContext.statusTracker().getJobIdsForGroup(None)
