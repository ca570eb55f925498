"""Worked examples of the incremental loader: reports, winners, policies, formats."""

from __future__ import annotations

import datetime as dt
import os

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import LoaderError
from tests.oracles.loader import read_table

D1, D2, D3 = dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)
SCHEMA = "user_id long, click_id string, event_date date, seq long"


def loader(spark, path, **kw):
    kw.setdefault("keys", ["user_id", "click_id"])
    kw.setdefault("partition_by", "event_date")
    return cj.IncrementalLoader(spark, path=str(path), **kw)


def rows(spark, path, order=("event_date", "user_id", "click_id")):
    return [tuple(r) for r in spark.read.parquet(str(path)).orderBy(*order)
            .select("user_id", "click_id", "event_date", "seq").collect()]


def test_seed_scenario_first_load_then_incremental(spark, tmp_path):
    # hourly click stream, delivered at least once: duplicates inside a batch and later
    first = spark.createDataFrame(
        [(1, "a", D1, 1), (1, "a", D1, 2), (2, "b", D1, 3), (1, "a", D2, 4)], SCHEMA)
    ld = loader(spark, tmp_path / "t", order_by="seq")
    r = ld.append(first)
    counts = (r.rows_in, r.rows_appended, r.duplicates_in_batch, r.duplicates_existing)
    assert counts == (4, 3, 1, 0)
    assert r.partitions_touched == 2 and r.files_written == 2 and not r.skipped
    second = spark.createDataFrame([(2, "b", D1, 5), (3, "c", D1, 6), (3, "c", D1, 7),
                                    (9, "z", D3, 8)], SCHEMA)
    r = ld.append(second)
    counts = (r.rows_in, r.rows_appended, r.duplicates_in_batch, r.duplicates_existing)
    assert counts == (4, 2, 1, 1)
    # the same key in another partition value is another row (duplicates never cross)
    assert rows(spark, tmp_path / "t") == [
        (1, "a", D1, 1), (2, "b", D1, 3), (3, "c", D1, 6), (1, "a", D2, 4), (9, "z", D3, 8)]
    assert ld.check().ok
    assert r.seconds > 0


def test_same_batch_again_is_skipped_and_reported(spark, tmp_path):
    b = spark.createDataFrame([(1, "a", D1, 1), (1, "a", D1, 2)], SCHEMA)
    ld = loader(spark, tmp_path / "t")
    first = ld.append(b)
    again = ld.append(b)
    assert again.skipped and again.batch_id == first.batch_id
    assert (again.rows_in, again.rows_appended, again.duplicates_in_batch,
            again.duplicates_existing) == (2, 0, 1, 1)
    assert len(rows(spark, tmp_path / "t")) == 1


def test_batch_id_reused_with_other_content_is_refused(spark, tmp_path):
    ld = loader(spark, tmp_path / "t")
    ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA), batch_id="hour_01")
    with pytest.raises(LoaderError, match=r"hour_01.*different content"):
        ld.append(spark.createDataFrame([(2, "a", D1, 1)], SCHEMA), batch_id="hour_01")
    r = ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA), batch_id="hour_01")
    assert r.skipped


def test_winner_without_order_by_is_deterministic(spark, tmp_path):
    data = [(k % 7, "x", D1 if k % 2 else D2, k) for k in range(60)]
    a = spark.createDataFrame(data, SCHEMA)
    b = spark.createDataFrame(list(reversed(data)), SCHEMA).repartition(5)
    loader(spark, tmp_path / "a").append(a)
    loader(spark, tmp_path / "b").append(b)
    assert rows(spark, tmp_path / "a") == rows(spark, tmp_path / "b")
    assert len(rows(spark, tmp_path / "a")) == 14


def test_order_by_column_expression_desc(spark, tmp_path):
    b = spark.createDataFrame([(1, "a", D1, 1), (1, "a", D1, 3), (1, "a", D1, 2)], SCHEMA)
    loader(spark, tmp_path / "t", order_by=[F.col("seq").desc()]).append(b)
    assert rows(spark, tmp_path / "t") == [(1, "a", D1, 3)]


def test_on_duplicate_fail_writes_nothing(spark, tmp_path):
    ld = loader(spark, tmp_path / "t", on_duplicate="fail")
    ld.append(spark.createDataFrame([(1, "a", D1, 1)], SCHEMA))
    before = sorted(os.listdir(tmp_path / "t" / "event_date=2024-01-01"))
    with pytest.raises(LoaderError, match="1 key\\(s\\) already stored"):
        ld.append(spark.createDataFrame([(1, "a", D1, 2), (5, "e", D1, 2)], SCHEMA))
    assert sorted(os.listdir(tmp_path / "t" / "event_date=2024-01-01")) == before
    assert not os.listdir(tmp_path / "t" / "_chronojoin" / "staging")


def test_on_duplicate_allow_appends_everything(spark, tmp_path):
    ld = loader(spark, tmp_path / "t", on_duplicate="allow")
    r = ld.append(spark.createDataFrame([(1, "a", D1, 1), (1, "a", D1, 2)], SCHEMA))
    assert (r.rows_appended, r.duplicates_in_batch) == (2, 0)
    assert ld.check().duplicate_keys == 1


def test_empty_batch_writes_nothing(spark, tmp_path):
    r = loader(spark, tmp_path / "t").append(spark.createDataFrame([], SCHEMA))
    assert (r.rows_in, r.rows_appended, r.partitions_touched) == (0, 0, 0)
    assert not (tmp_path / "t").exists()


def test_string_partition_values_with_special_characters_and_orc(spark, tmp_path):
    schema = "k int, region string, v double"
    values = ["eu/west", "a:b=c", "plain", "100%"]
    data = [(i % 3, values[i % 4], float(i)) for i in range(24)]
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys="k", partition_by="region",
                              format="orc", order_by="v")
    r = ld.append(spark.createDataFrame(data, schema))
    assert r.partitions_touched == 4 and r.rows_appended == 12
    r = ld.append(spark.createDataFrame([(0, "eu/west", 99.0), (7, "a:b=c", 1.0)], schema))
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    out = spark.read.orc(str(tmp_path / "t"))
    assert out.count() == 13
    assert sorted(r.region for r in out.select("region").distinct().collect()) == sorted(values)
    assert ld.check().ok


def test_integer_partition_and_keys_in_any_column_order(spark, tmp_path):
    schema = "day int, id long, payload string"
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["id"], partition_by="day")
    ld.append(spark.createDataFrame([(1, 1, "x"), (2, 1, "y")], schema))
    # same columns, another order: conformed to the table's order
    other_order = "payload string, day int, id long"
    r = ld.append(spark.createDataFrame([("z", 1, 1), ("w", 3, 2)], other_order))
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    t = read_table(str(tmp_path / "t"), "day")
    assert sorted(zip(t["day"], t["id"], strict=True)) == [("1", 1), ("2", 1), ("3", 2)]


def test_batches_differing_only_in_where_their_nulls_are_get_their_own_ids(spark, tmp_path):
    # Spark's row hashes skip NULLs: ('a', 'b', NULL) and (NULL, 'a', 'b') hashed alike,
    # so the second batch took the first one's id and was skipped as already loaded.
    schema = "note1 string, id string, note2 string, event_date date"
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["id"])
    first = ld.append(spark.createDataFrame([("b", "a", None, D1)], schema))
    second = ld.append(spark.createDataFrame([(None, "b", "a", D1)], schema))
    assert first.batch_id != second.batch_id
    assert (second.skipped, second.rows_appended) == (False, 1)
    nested = "id string, tags array<string>, s struct<x:string,y:string>, event_date date"
    ld_nested = cj.IncrementalLoader(spark, path=str(tmp_path / "n"), keys=["id"])
    third = ld_nested.append(spark.createDataFrame([("a", [None, "x"], (None, "y"), D1)],
                                                   nested))
    fourth = ld_nested.append(spark.createDataFrame([("b", ["x", None], ("y", None), D1)],
                                                    nested))
    assert third.batch_id != fourth.batch_id and fourth.rows_appended == 1
    assert sorted(r.id for r in spark.read.parquet(str(tmp_path / "t")).collect()) == ["a", "b"]


def test_keys_of_a_case_insensitive_collation_are_stored_once(spark, tmp_path):
    # Two cores split a partition value's keys over two tasks by a hash of the bytes:
    # 'b' and 'B' are one key under UTF8_LCASE, but their bytes differ.
    schema = "id string collate UTF8_LCASE, event_date date, v long"
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["id"])
    ld.append(spark.createDataFrame([("b", D1, 1)], schema))
    again = ld.append(spark.createDataFrame([("B", D1, 2), ("c", D1, 3), ("C", D1, 4)], schema))
    assert (again.rows_appended, again.duplicates_existing, again.duplicates_in_batch) == (1, 1, 1)
    assert ld.check().ok


def test_float_keys_are_stored_as_given(spark, tmp_path):
    # Grouping by a key turns -0.0 into 0.0: the stored row must still be the batch's.
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["k", "s"])
    ld.append(spark.createDataFrame([(-0.0, (-0.0,), D1)], "k double, s struct<x:float>, "
                                                            "event_date date"))
    row = spark.read.parquet(str(tmp_path / "t")).first()
    assert str(row.k) == "-0.0" and str(row.s.x) == "-0.0"


@pytest.mark.parametrize("scheme", ["file:", "file://", "file://localhost"])
def test_file_urls_name_the_local_directory(spark, tmp_path, scheme):
    ld = cj.IncrementalLoader(spark, path=f"{scheme}{tmp_path}/t", keys=["k"],
                              partition_by="p")
    ld.append(spark.createDataFrame([(1, "a")], "k long, p string"))
    assert spark.read.parquet(str(tmp_path / "t")).collect() == [(1, "a")]


def test_columns_named_like_the_check_counts(spark, tmp_path):
    ld = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["__n", "__i"],
                              partition_by="p")
    ld.append(spark.createDataFrame([(1, 0, "a"), (2, 0, "a"), (2, 0, "b")],
                                    "`__n` long, `__i` int, p string"))
    report = ld.check()
    assert report.ok and (report.rows, report.keys, report.duplicate_keys) == (3, 3, 0)
