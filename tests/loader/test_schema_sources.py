"""Where the loader takes a table's schema and partition names from: a first load that
fails records nothing, two first loads at once agree, directories another tool named
are refused, and a catalog table's own columns count."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid

import pytest
from pyspark.sql import types as T

import chronojoin as cj
from chronojoin.errors import LoaderError, SchemaMismatchError
from chronojoin.loader.layout import canonical_dir

D1 = dt.date(2024, 1, 1)
KEYED = "id long, v {v}, day date"


def rows(spark, path):
    return sorted(tuple(r) for r in spark.read.parquet(str(path)).collect())


def test_a_failed_first_load_records_no_schema(spark, tmp_path):
    path = str(tmp_path / "t")
    strict = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="day",
                                  on_duplicate="fail")
    with pytest.raises(LoaderError, match="nothing was written"):
        strict.append(spark.createDataFrame([(1, 1, D1), (1, 2, D1)], KEYED.format(v="int")))
    assert not os.path.exists(os.path.join(path, "_chronojoin", "_meta.json"))
    # the table has no schema yet: a batch of other types, or another format, is its first
    ld = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="day", format="orc")
    r = ld.append(spark.createDataFrame([(1, "a", D1)], KEYED.format(v="string")))
    assert r.rows_appended == 1
    assert [tuple(x) for x in spark.read.orc(path).collect()] == [(1, "a", D1)]


def test_two_first_loads_at_once_agree_on_the_schema(spark, tmp_path, monkeypatch):
    """A second writer's first load lands between this one's reading the (missing) schema
    and taking the lock: the batch is checked against that writer's schema."""
    path = str(tmp_path / "t")
    mine = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="day")
    other = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="day")
    writing = mine._writing

    def after_the_other(tgt):
        if not os.path.exists(os.path.join(path, "_chronojoin", "_meta.json")):
            other.append(spark.createDataFrame([(1, 7, D1)], KEYED.format(v="long")))
        return writing(tgt)

    monkeypatch.setattr(mine, "_writing", after_the_other)
    with pytest.raises(SchemaMismatchError, match="'v' has type string in the batch but bigint"):
        mine.append(spark.createDataFrame([(2, "x", D1)], KEYED.format(v="string")))
    # an int batch widens to the other writer's bigint instead
    os.unlink(os.path.join(path, "_chronojoin", "_meta.json"))
    r = mine.append(spark.createDataFrame([(1, 8, D1), (2, 9, D1)], KEYED.format(v="int")))
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    assert rows(spark, path) == [(1, 7, D1), (2, 9, D1)]
    assert spark.read.parquet(path).schema["v"].dataType == T.LongType()


@pytest.mark.parametrize(("dtype", "name", "spark_name"), [
    (T.IntegerType(), "m=01", "m=1"), (T.LongType(), "m=+7", "m=7"),
    (T.IntegerType(), "m=7", "m=7"), (T.IntegerType(), "m=x", "m=x"),
    (T.DateType(), "m=2024-1-5", "m=2024-01-05"), (T.DateType(), "m=2024-02-30", "m=2024-02-30"),
    (T.BooleanType(), "m=TRUE", "m=true"), (T.StringType(), "m=a%3ab", "m=a%3Ab"),
    (T.StringType(), "m=01", "m=01"),
])
def test_the_names_spark_gives_partition_values(dtype, name, spark_name):
    assert canonical_dir(name, "m", dtype) == spark_name


def test_partitions_another_tool_named_otherwise_are_refused(spark, tmp_path):
    """``month=01`` read as the integer 1: the loader would look for, and write, 1's keys
    under ``month=1`` and store them twice."""
    path = str(tmp_path / "t")
    (spark.createDataFrame([(1, "x", "01"), (2, "y", "01")], "id long, v string, month string")
     .write.partitionBy("month").parquet(path))
    ld = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="month")
    batch = spark.createDataFrame([(1, "x", 1), (3, "z", 1)], "id long, v string, month int")
    with pytest.raises(LoaderError, match=r"'month=01' of .* holds the value that Spark names "
                                          r"'month=1'; move its files into 'month=1'"):
        ld.append(batch)
    assert sorted(n for n in os.listdir(path) if not n.startswith(("_", "."))) == ["month=01"]
    with pytest.raises(LoaderError, match="'month=01'"):
        ld.rebuild_index()
    # another value's partition loads; renamed as Spark names it, month 1 loads too
    assert ld.append(batch.where("id = 3").selectExpr("id", "v", "2 AS month")).rows_appended == 1
    os.rename(os.path.join(path, "month=01"), os.path.join(path, "month=1"))
    r = ld.append(batch)
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    assert rows(spark, path) == [(1, "x", 1), (2, "y", 1), (3, "z", 1), (3, "z", 2)]
    assert ld.check().ok


def test_rebuilding_an_adopted_path_keeps_the_first_batchs_types(spark, tmp_path):
    """Spark reads ``dt=2024-01-01`` as a date; the loader's batches say it is a string."""
    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "2024-01-01")], "id long, dt string").write.partitionBy(
        "dt").parquet(path)
    ld = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="dt")
    assert ld.rebuild_index() == 1
    meta = os.path.join(path, "_chronojoin", "_meta.json")
    # recorded (so appends need not read the table's schema from its files), as a guess
    with open(meta) as fh:
        assert json.load(fh)["partition_type_guessed"] is True
    r = ld.append(spark.createDataFrame([(1, "2024-01-01"), (2, "2024-01-01")],
                                        "id long, dt string"))
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    with open(meta) as fh:
        recorded = json.load(fh)
    assert recorded["partition_type_guessed"] is False
    assert T.StructType.fromJson(json.loads(recorded["schema"]))["dt"].dataType == T.StringType()
    assert ld.check().ok


@pytest.fixture
def table(spark, tmp_path):
    name = f"loads_{uuid.uuid4().hex[:8]}"
    yield name, str(tmp_path / "location")
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_catalog_tables_columns_before_its_location_exists(spark, table):
    name, location = table
    spark.sql(f"CREATE TABLE {name} (id long, v int, day date) USING parquet "
              f"PARTITIONED BY (day) LOCATION '{location}'")
    ld = cj.IncrementalLoader(spark, table=name, keys="id", partition_by="day")
    with pytest.raises(SchemaMismatchError, match="'v' has type string in the batch but int"):
        ld.append(spark.createDataFrame([(1, "a", D1)], KEYED.format(v="string")))
    assert ld.append(spark.createDataFrame([(1, 5, D1)], KEYED.format(v="int"))).rows_appended == 1
    assert [tuple(r) for r in spark.table(name).collect()] == [(1, 5, D1)]


def test_a_catalog_tables_added_columns(spark, table):
    name, location = table
    spark.sql(f"CREATE TABLE {name} (id long, v int, day date) USING parquet "
              f"PARTITIONED BY (day) LOCATION '{location}'")
    ld = cj.IncrementalLoader(spark, table=name, keys="id", partition_by="day")
    ld.append(spark.createDataFrame([(1, 5, D1)], KEYED.format(v="int")))
    spark.sql(f"ALTER TABLE {name} ADD COLUMNS (extra string)")
    with pytest.raises(SchemaMismatchError, match=r"column 'extra' of .* is missing"):
        ld.append(spark.createDataFrame([(2, 6, D1)], KEYED.format(v="int")))
    more = spark.createDataFrame([(1, 7, D1, "b"), (2, 6, D1, "c")],
                                 "id long, v int, day date, extra string")
    r = ld.append(more)
    assert (r.rows_appended, r.duplicates_existing) == (1, 1)
    assert sorted(tuple(r) for r in spark.table(name).collect()) == [
        (1, 5, None, D1), (2, 6, "c", D1)]
    assert ld.check().ok


def test_a_catalog_partition_stored_elsewhere_is_refused(spark, table, tmp_path):
    """The rows of ``day=2024-01-05`` live where the catalog says: loading below the
    table's location would hide the new rows and miss the stored keys."""
    name, location = table
    elsewhere = str(tmp_path / "elsewhere")
    spark.sql(f"CREATE TABLE {name} (id long, v int, day date) USING parquet "
              f"PARTITIONED BY (day) LOCATION '{location}'")
    spark.sql(f"ALTER TABLE {name} ADD PARTITION (day = '2024-01-05') LOCATION '{elsewhere}'")
    spark.sql(f"ALTER TABLE {name} ADD PARTITION (day = '2024-01-06')")
    spark.sql(f"INSERT INTO {name} PARTITION (day = '2024-01-05') VALUES (10, 1)")
    ld = cj.IncrementalLoader(spark, table=name, keys="id", partition_by="day")
    there = spark.createDataFrame([(10, 2, dt.date(2024, 1, 5)), (11, 3, dt.date(2024, 1, 5))],
                                  KEYED.format(v="int"))
    with pytest.raises(LoaderError, match=rf"partition 'day=2024-01-05' of .* is stored at "
                                          rf"\S*{elsewhere}, outside the table's location"):
        ld.append(there)
    assert [tuple(r) for r in spark.table(name).collect()] == [(10, 1, dt.date(2024, 1, 5))]
    # a partition at its usual place, listed in the catalog or not, loads
    here = there.selectExpr("id", "v", "day + 1 AS day").unionByName(
        there.selectExpr("id", "v", "day + 2 AS day"))
    assert ld.append(here).rows_appended == 4



def test_a_loaded_partition_the_catalog_moved_elsewhere_is_refused(spark, table, tmp_path):
    """Another tool points a partition the loader wrote at a copy elsewhere (``SET
    LOCATION``): its directory below the table's location is still there, but readers
    read the copy, so rows loaded below the location would be lost to them and the
    copy's keys stored again."""
    name, location = table
    elsewhere = str(tmp_path / "elsewhere")
    d5 = dt.date(2024, 1, 5)
    spark.sql(f"CREATE TABLE {name} (id long, v int, day date) USING parquet "
              f"PARTITIONED BY (day) LOCATION '{location}'")
    ld = cj.IncrementalLoader(spark, table=name, keys="id", partition_by="day")
    ld.append(spark.createDataFrame([(10, 1, d5)], KEYED.format(v="int")))
    spark.createDataFrame([(10, 1), (11, 2)], "id long, v int").write.parquet(elsewhere)
    spark.sql(f"ALTER TABLE {name} PARTITION (day = '2024-01-05') SET LOCATION '{elsewhere}'")
    with pytest.raises(LoaderError, match=rf"partition 'day=2024-01-05' of .* is stored at "
                                          rf"\S*{elsewhere}, outside the table's location"):
        ld.append(spark.createDataFrame([(11, 3, d5), (12, 4, d5)], KEYED.format(v="int")))
    spark.catalog.refreshTable(name)
    assert sorted(tuple(r) for r in spark.table(name).collect()) == [(10, 1, d5), (11, 2, d5)]

def test_files_a_killed_attempt_writes_late_are_never_published(spark, tmp_path,
                                                                monkeypatch):
    """A killed attempt's Spark job may go on writing (a Spark Connect server outlives its
    client): its files land in that attempt's staging directory, never in the retry's."""
    from chronojoin.loader import commit

    path = str(tmp_path / "t")
    ld = cj.IncrementalLoader(spark, path=path, keys="id", partition_by="day")
    batch = spark.createDataFrame([(i, i, D1) for i in range(6)], KEYED.format(v="long"))
    plan_moves = commit.plan_moves

    def with_late_files(root, batch_id, stage):
        staged = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(stage, "data"))
                  for f in fs if f.endswith(".parquet")]
        # where earlier attempts staged: the batch id alone, or with another attempt's tag
        for late in (commit.staging_dir(root, batch_id), f"{commit.staging_dir(root, batch_id)}-0"):
            target = os.path.join(late, "data", "day=2024-01-01")
            os.makedirs(target, exist_ok=True)
            shutil.copy(staged[0], os.path.join(target, "part-99999-late.parquet"))
        return plan_moves(root, batch_id, stage)

    monkeypatch.setattr(commit, "plan_moves", with_late_files)
    assert ld.append(batch, batch_id="b").rows_appended == 6
    monkeypatch.undo()
    assert rows(spark, path) == [(i, i, D1) for i in range(6)]
    assert ld.check().ok
    # the next writer rolls the late files back
    assert ld.append(batch.limit(1), batch_id="again").duplicates_existing == 1
    assert os.listdir(os.path.join(path, "_chronojoin", "staging")) == []
