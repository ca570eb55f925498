"""The key index: rebuilt with a warning when missing or damaged; check(); only touched
partitions are read, and never the data files for deduplication."""

from __future__ import annotations

import datetime as dt
import glob
import os
import re
import shutil
import warnings

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import IndexRebuiltWarning, LoaderError
from chronojoin.loader.plan import exact_buckets, murmur3_int

D1, D2, D3 = dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)
SCHEMA = "user_id long, click_id string, event_date date, seq long"
KEYS = ["user_id", "click_id"]


def batch(spark, day, ids, seq=0):
    return spark.createDataFrame([(i, "c", day, seq + i) for i in ids], SCHEMA)


def load(spark, path):
    ld = cj.IncrementalLoader(spark, path=str(path), keys=KEYS)
    ld.append(batch(spark, D1, range(10)).unionByName(batch(spark, D2, range(10))))
    return ld


def garbage(path):
    with open(path, "wb") as fh:
        fh.write(b"not a parquet file")


def test_missing_index_is_rebuilt_with_a_warning(spark, tmp_path):
    ld = load(spark, tmp_path / "t")
    shutil.rmtree(tmp_path / "t" / "_chronojoin" / "index")
    with pytest.warns(IndexRebuiltWarning, match="1 partition"):
        r = ld.append(batch(spark, D1, range(5, 15)))
    assert (r.rows_appended, r.duplicates_existing, r.partitions_rebuilt) == (5, 5, 1)
    report = ld.check()
    # D2 was not touched: its index is still missing, and check() says so
    assert report.incomplete_partitions == 1 and report.duplicate_keys == 0
    assert ld.rebuild_index() == 2
    assert ld.check().ok


def test_damaged_index_file_is_rebuilt_with_a_warning(spark, tmp_path):
    ld = load(spark, tmp_path / "t")
    (f,) = glob.glob(str(tmp_path / "t" / "_chronojoin" / "index" / "event_date=2024-01-02" / "*"))
    garbage(f)
    with pytest.warns(IndexRebuiltWarning, match="event_date=2024-01-02"):
        r = ld.append(batch(spark, D2, range(8, 12)))
    assert (r.rows_appended, r.duplicates_existing) == (2, 2)
    assert ld.check().ok


def test_check_reports_damaged_index_files_and_append_rebuilds_them(spark, tmp_path):
    """check() is an audit: it names the partition and leaves its index as it is."""
    ld = load(spark, tmp_path / "t")
    index_dir = tmp_path / "t" / "_chronojoin" / "index" / "event_date=2024-01-02"
    for f in glob.glob(str(index_dir / "*.parquet")):
        garbage(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexRebuiltWarning)
        report = ld.check()
    assert report.damaged_index_partitions == ("event_date=2024-01-02",)
    assert (report.rows, report.duplicate_keys, report.incomplete_partitions,
            report.missing_from_index, report.extra_in_index) == (20, 0, 1, 10, 0)
    assert not report.ok
    assert "damaged_index_partitions: event_date=2024-01-02" in str(report)
    assert ld.check().damaged_index_partitions == ("event_date=2024-01-02",)  # not repaired
    with pytest.warns(IndexRebuiltWarning, match="1 partition.*event_date=2024-01-02"):
        r = ld.append(batch(spark, D2, range(8, 12)).unionByName(batch(spark, D1, [9, 10])))
    assert (r.rows_appended, r.duplicates_existing, r.partitions_rebuilt) == (3, 3, 1)
    report = ld.check()
    assert report.ok and report.damaged_index_partitions == () and report.rows == 23
    assert "damaged_index_partitions: none" in str(report)


def test_check_names_an_unreadable_data_file(spark, tmp_path):
    ld = load(spark, tmp_path / "t")
    f = sorted(glob.glob(str(tmp_path / "t" / "event_date=2024-01-02" / "*.parquet")))[0]
    with open(f, "rb") as fh:
        content = fh.read()
    garbage(f)
    with pytest.raises(LoaderError, match="cannot read the data file") as info:
        ld.check()
    message = str(info.value)
    assert f in message and "not a Parquet file" in message and "\n" not in message
    assert "rebuild_index()" in message and "Py4J" not in message
    with open(f, "wb") as fh:  # the lock was released
        fh.write(content)
    assert ld.check().ok


def test_table_written_without_the_loader_gets_an_index(spark, tmp_path):
    path = str(tmp_path / "t")
    batch(spark, D1, range(6)).write.partitionBy("event_date").parquet(path)
    ld = cj.IncrementalLoader(spark, path=path, keys=KEYS)
    with pytest.warns(IndexRebuiltWarning):
        r = ld.append(batch(spark, D1, range(4, 8)))
    assert (r.rows_appended, r.duplicates_existing) == (2, 2)
    assert spark.read.parquet(path).count() == 8
    assert ld.check().ok


def test_untouched_partitions_and_data_files_are_never_read(spark, tmp_path):
    ld = load(spark, tmp_path / "t")
    root = tmp_path / "t"
    # an untouched partition whose data and index are unreadable does not matter
    for f in glob.glob(str(root / "event_date=2024-01-02" / "*")):
        garbage(f)
    # the touched partition's data files are unreadable too: only its index is read
    saved = {}
    for f in glob.glob(str(root / "event_date=2024-01-01" / "*")):
        with open(f, "rb") as fh:
            saved[f] = fh.read()
        garbage(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexRebuiltWarning)
        r = ld.append(batch(spark, D1, range(8, 13), seq=100).unionByName(
            batch(spark, D3, [1], seq=100)))
    assert (r.rows_appended, r.duplicates_existing, r.partitions_touched) == (4, 2, 2)
    for f, content in saved.items():
        with open(f, "wb") as fh:
            fh.write(content)
    d1 = spark.read.parquet(str(root / "event_date=2024-01-01"))
    assert sorted(r.user_id for r in d1.collect()) == [*range(13)]


def test_check_finds_duplicates_and_index_mismatch(spark, tmp_path):
    ld = load(spark, tmp_path / "t")
    root = str(tmp_path / "t")
    # a file written around the loader duplicates keys 0..2 of D1
    batch(spark, D1, range(3)).write.mode("append").partitionBy("event_date").parquet(root)
    report = ld.check()
    assert (report.duplicate_keys, report.incomplete_partitions) == (3, 1)
    assert report.rows == 23 and not report.ok
    ld.rebuild_index()
    assert ld.check().duplicate_keys == 3
    assert ld.check().missing_from_index == 0


def test_exact_value_partitioner_puts_one_value_per_spark_partition(spark):
    for n in (1, 2, 5, 13):
        assert sorted(murmur3_int(k) % n for k in exact_buckets(n)) == list(range(n))
    df = spark.range(200).select(F.col("id").cast("int").alias("k"))
    got = df.select(F.hash("k").alias("h"), "k").collect()
    assert all(r.h == murmur3_int(r.k) for r in got)
    from chronojoin.loader.plan import bucket_column

    days = [dt.date(2024, 1, d) for d in range(1, 8)]
    data = spark.createDataFrame([(days[i % 7], i) for i in range(140)], "d date, i int")
    spread = data.repartition(7, bucket_column("d", data.schema["d"].dataType, days))
    per_part = spread.groupBy(F.spark_partition_id().alias("p")).agg(
        F.countDistinct("d").alias("values")).collect()
    assert len(per_part) == 7 and all(r["values"] == 1 for r in per_part)


def test_index_is_parquet_with_exact_keys(spark, tmp_path):
    load(spark, tmp_path / "t")
    files = glob.glob(str(tmp_path / "t" / "_chronojoin" / "index" / "*" / "*.parquet"))
    assert len(files) == 2
    import pyarrow.parquet as pq

    t = pq.read_table(files[0])
    assert t.column_names == KEYS and t.num_rows == 10
    assert os.path.exists(tmp_path / "t" / "_chronojoin" / "_meta.json")


def test_split_buckets_keep_one_value_per_partition_and_each_key_in_one(spark):
    from chronojoin.loader.plan import bucket_column, splits_for

    assert [splits_for(v, 2) for v in (1, 2, 5, 200)] == [2, 1, 2, 1]
    assert splits_for(5, 64) == 8 and splits_for(7, 1) == 1
    days = [dt.date(2024, 1, d) for d in range(1, 6)]
    data = spark.createDataFrame([(days[i % 5], i % 37) for i in range(400)], "d date, k int")
    spread = data.repartition(10, bucket_column("d", data.schema["d"].dataType, days,
                                                ["k"], 2))
    part = spread.withColumn("p", F.spark_partition_id())
    per_part = part.groupBy("p").agg(F.countDistinct("d").alias("values")).collect()
    assert len(per_part) == 10 and all(r["values"] == 1 for r in per_part)
    per_key = part.groupBy("d", "k").agg(F.countDistinct("p").alias("n")).collect()
    assert all(r["n"] == 1 for r in per_key)


def _rows(spark, path):
    return sorted((r.user_id, r.event_date) for r in spark.read.parquet(str(path)).collect())


@pytest.mark.parametrize("rebuilt", [False, True])
def test_keys_of_a_deleted_partition_load_again(spark, tmp_path, rebuilt):
    """A partition dropped by hand (retention): its keys are not stored any more, so
    loading them again appends them, whether its index came from batches or a rebuild."""
    ld = load(spark, tmp_path / "t")
    if rebuilt:
        assert ld.rebuild_index() == 2
    shutil.rmtree(tmp_path / "t" / "event_date=2024-01-01")
    with pytest.warns(IndexRebuiltWarning):
        r = ld.append(batch(spark, D1, range(10)), batch_id="reload")
    assert (r.rows_appended, r.duplicates_existing) == (10, 0)
    assert _rows(spark, tmp_path / "t") == sorted([(i, D1) for i in range(10)]
                                                   + [(i, D2) for i in range(10)])
    assert ld.check().ok


@pytest.mark.parametrize("rebuilt", [False, True])
def test_keys_of_a_deleted_data_file_load_again(spark, tmp_path, rebuilt):
    """One data file of a partition deleted by hand, another of the same batch kept: the
    index no longer matches the data and is rebuilt, so the deleted keys load again."""
    path = tmp_path / "t"
    ld = cj.IncrementalLoader(spark, path=str(path), keys=KEYS)
    ld.append(batch(spark, D1, range(40)))
    if rebuilt:
        ld.rebuild_index()
    files = sorted(glob.glob(str(path / "event_date=2024-01-01" / "part-*")))
    assert len(files) >= 2, files  # two cores: the batch writes the partition in two files
    gone = {r.user_id for r in spark.read.parquet(files[0]).collect()}
    os.unlink(files[0])
    assert not ld.check().ok  # the index still holds the deleted keys
    with pytest.warns(IndexRebuiltWarning):
        r = ld.append(batch(spark, D1, range(40)), batch_id="reload")
    assert (r.rows_appended, r.duplicates_existing) == (len(gone), 40 - len(gone))
    assert _rows(spark, path) == [(i, D1) for i in range(40)]
    assert ld.check().ok


class _Crash(BaseException):
    """A kill: not an Exception, so no cleanup code catches it."""


@pytest.mark.parametrize("rebuild_all", [False, True])
@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_kill_while_replacing_an_index_never_leaves_it_looking_complete(
        spark, tmp_path, monkeypatch, step, rebuild_all):
    """A kill at any file step of an index rebuild (in an append, or rebuild_index):
    the next append finds the partition incomplete again, so no key is stored twice."""
    from chronojoin.loader import index

    path = tmp_path / "t"
    ld = cj.IncrementalLoader(spark, path=str(path), keys=KEYS)
    ld.append(batch(spark, D1, range(20)), batch_id="b1")
    ld.append(batch(spark, D1, range(100, 120)), batch_id="b2")
    pdir = path / "event_date=2024-01-01"
    for f in glob.glob(str(pdir / "part-cj-b2-*")):  # retention drops batch b2's files
        os.unlink(f)
    calls = {"n": 0}

    def crashing(real):
        def step_then_maybe_crash(*args, **kwargs):
            out = real(*args, **kwargs)
            if re.search(r"_chronojoin/(index|staging)", str(args[0])):
                calls["n"] += 1
                if calls["n"] == step:
                    raise _Crash
            return out
        return step_then_maybe_crash

    with monkeypatch.context() as m:
        for name in ("unlink", "rename", "replace"):
            m.setattr(index.os, name, crashing(getattr(os, name)))
        m.setattr(index, "atomic_write_json", crashing(index.atomic_write_json))
        m.setattr(index.shutil, "rmtree", crashing(shutil.rmtree))
        with warnings.catch_warnings(), pytest.raises(_Crash):
            warnings.simplefilter("ignore", IndexRebuiltWarning)
            if rebuild_all:
                ld.rebuild_index()
            else:
                ld.append(batch(spark, D1, range(20)))
    # The kill left the lock behind: a new writer breaks it as a dead writer's.
    for lock in glob.glob(str(path / "_chronojoin" / "lock*")):
        os.unlink(lock)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndexRebuiltWarning)
        r = cj.IncrementalLoader(spark, path=str(path), keys=KEYS).append(
            batch(spark, D1, range(20)))
    assert (r.rows_appended, r.duplicates_existing) == (0, 20)
    report = ld.check()
    assert report.ok, report
