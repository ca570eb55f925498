"""The join commands' inputs: Parquet, CSV, ORC and JSON paths, and metastore tables."""

from __future__ import annotations

import pytest

import chronojoin as cj
from chronojoin.cli.main import main


@pytest.fixture
def sides(spark):
    left = spark.createDataFrame([(1, 10, "a"), (2, 5, "b"), (3, 1, "c")],
                                 "id long, t long, label string")
    right = spark.createDataFrame([(1, 8, 1.5), (1, 11, 2.5), (2, 7, 3.5)],
                                  "id long, t long, v double")
    return left, right


def _rows(df):
    return sorted(map(tuple, df.collect()), key=repr)


def _expected(left, right):
    return _rows(cj.asof_join(left, right, on="t", by="id"))


def test_orc_and_json_inputs_by_extension_or_format(spark, sides, tmp_path, capsys):
    left, right = sides
    left.write.orc(str(tmp_path / "left.orc"))
    left.write.orc(str(tmp_path / "left_orc"))
    right.write.json(str(tmp_path / "right.jsonl"))
    out = tmp_path / "out"
    assert main(["asof", str(tmp_path / "left.orc"), str(tmp_path / "right.jsonl"),
                 "--on", "t", "--by", "id", "--out", str(out)]) == 0
    assert _rows(spark.read.parquet(str(out))) == _expected(left, right)
    assert main(["asof", str(tmp_path / "left_orc"), str(tmp_path / "left_orc"),
                 "--format", "orc", "--on", "t", "--by", "id", "--prefix", "r_",
                 "--out", str(tmp_path / "again")]) == 0
    assert spark.read.parquet(str(tmp_path / "again")).columns == [
        "id", "t", "label", "r_t", "r_label"]
    capsys.readouterr()
    # a directory of ORC files read as Parquet, the default for a path without extension
    assert main(["asof", str(tmp_path / "left_orc"), str(tmp_path / "right.jsonl"),
                 "--on", "t", "--by", "id", "--out", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"chronojoin asof: error: cannot read {tmp_path / 'left_orc'}: "), err
    assert "\n" not in err


def test_file_urls_as_inputs(spark, sides, tmp_path, capsys):
    """``file:/x`` (Hadoop's spelling) names the local path /x, as ``file:///x`` does."""
    left, right = sides
    left.write.parquet(str(tmp_path / "left"))
    right.write.parquet(str(tmp_path / "right"))
    out = tmp_path / "out"
    assert main(["asof", f"file:{tmp_path / 'left'}", f"file://{tmp_path / 'right'}",
                 "--on", "t", "--by", "id", "--out", str(out)]) == 0, capsys.readouterr().err
    assert _rows(spark.read.parquet(str(out))) == _expected(left, right)
    assert main(["asof", f"file:{tmp_path / 'nope'}", f"file:{tmp_path / 'right'}",
                 "--on", "t", "--by", "id", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin asof: error: input path does not exist: file:{tmp_path / 'nope'}")


def test_glob_patterns_as_inputs(spark, sides, tmp_path, capsys):
    """A pattern reads every path it matches, as Spark reads it; one matching nothing, or
    an output inside what it matches, is a one-line error."""
    left, right = sides
    left.write.parquet(str(tmp_path / "left"))
    right.where("t < 9").toPandas().to_csv(tmp_path / "right_1.csv", index=False)
    right.where("t >= 9").toPandas().to_csv(tmp_path / "right_2.csv", index=False)
    out = tmp_path / "out"
    for pattern in ("right_*.csv", "right_[12].csv", "right_{1,2}.csv", "right_?.csv"):
        assert main(["asof", str(tmp_path / "left"), str(tmp_path / pattern), "--on", "t",
                     "--by", "id", "--out", str(out), "--mode", "overwrite"]) == 0, pattern
        assert _rows(spark.read.parquet(str(out))) == _expected(left, right), pattern
    capsys.readouterr()
    assert main(["asof", str(tmp_path / "left"), str(tmp_path / "nope_*.csv"), "--on", "t",
                 "--by", "id", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin asof: error: input path does not exist: {tmp_path / 'nope_*.csv'} "
        "(no path matches the pattern)")
    assert main(["asof", str(tmp_path / "lef?"), str(tmp_path / "right_*.csv"), "--on", "t",
                 "--by", "id", "--out", str(tmp_path / "left" / "o")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin asof: error: --out {tmp_path / 'left' / 'o'} is inside the input "
        f"{tmp_path / 'lef?'}: writing there would destroy or corrupt that input; choose "
        "another --out")
    assert not (tmp_path / "left" / "o").exists()


@pytest.fixture
def tables(spark, sides, tmp_path):
    """The two sides as metastore tables, bucketed by the key and sorted by time."""
    names = ("cj_cli_left", "cj_cli_right")
    for name, df in zip(names, sides):
        df.write.bucketBy(2, "id").sortBy("t").option("path", str(tmp_path / name)) \
            .mode("overwrite").saveAsTable(name)
    yield names
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_metastore_tables_as_inputs(spark, sides, tables, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["asof", *tables, "--format", "table", "--on", "t", "--by", "id",
                 "--out", str(out)]) == 0
    assert _rows(spark.read.parquet(str(out))) == _expected(*sides)
    assert main(["band", *tables, "--format", "table", "--left-on", "t", "--right-on", "t",
                 "--by", "id", "--lower", "-3", "--upper", "0",
                 "--out", str(tmp_path / "band")]) == 0
    assert [r.v for r in spark.read.parquet(str(tmp_path / "band")).collect()] == [1.5]
    capsys.readouterr()
    assert main(["asof", tables[0], "cj_cli_nowhere", "--format", "table", "--on", "t",
                 "--out", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: cannot read table 'cj_cli_nowhere': "), err
    assert "TABLE_OR_VIEW_NOT_FOUND" in err and "\n" not in err
    # a table name without --format: the missing path's error says what to add
    assert main(["asof", *tables, "--on", "t", "--out", str(tmp_path / "no")]) == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin asof: error: input path does not exist: cj_cli_left (a metastore table? "
        "add --format table)")


def test_load_takes_a_batch_from_a_metastore_table(spark, tables, tmp_path, capsys):
    target = tmp_path / "loaded"
    assert main(["load", tables[0], "--input-format", "table", "--table", str(target),
                 "--keys", "id", "--partition-by", "label"]) == 0
    assert "rows_appended: 3" in capsys.readouterr().out
    assert sorted(r.id for r in spark.read.parquet(str(target)).collect()) == [1, 2, 3]
    assert main(["load", tables[1], "--table", str(target), "--keys", "id",
                 "--partition-by", "label"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "input path does not exist: cj_cli_right (a metastore table? add --input-format table)")


def test_json_written_by_spark_keeps_its_timestamps(spark, tmp_path, capsys):
    """Parquet -> JSON (Spark's writer) -> the command: the time column is a timestamp
    again; strings that only look like dates or years stay strings."""
    import datetime as dt

    left = spark.createDataFrame([(1, dt.datetime(2024, 1, 1, 12), "2024")],
                                 "id long, ts timestamp, label string")
    right = spark.createDataFrame(
        [(1, dt.datetime(2024, 1, 1, 11, 30, 0, 250001), dt.date(2024, 1, 2), "a")],
        "id long, ts timestamp, day date, v string")
    left.write.parquet(str(tmp_path / "left"))
    right.write.parquet(str(tmp_path / "right"))
    spark.read.parquet(str(tmp_path / "right")).write.json(str(tmp_path / "right.json"))
    out = tmp_path / "out"
    assert main(["asof", str(tmp_path / "left"), str(tmp_path / "right.json"), "--on", "ts",
                 "--by", "id", "--out", str(out)]) == 0, capsys.readouterr().err
    result = spark.read.parquet(str(out))
    assert dict(result.dtypes) == {"id": "bigint", "ts": "timestamp", "label": "string",
                                   "ts_right": "timestamp", "day": "string", "v": "string"}
    # the writer keeps milliseconds
    assert result.collect()[0].ts_right == dt.datetime(2024, 1, 1, 11, 30, 0, 250000)


def test_load_takes_json_batches_with_timestamps(spark, tmp_path, capsys):
    import datetime as dt

    rows = [(1, "a", dt.datetime(2024, 1, 1, 10)), (2, "b", dt.datetime(2024, 1, 2, 10))]
    first = spark.createDataFrame(rows, "user_id long, region string, ts timestamp")
    first.write.parquet(str(tmp_path / "first"))
    first.union(spark.createDataFrame([(3, "a", dt.datetime(2024, 1, 3))], first.schema)) \
        .write.json(str(tmp_path / "second.json"))
    base = ["--table", str(tmp_path / "table"), "--keys", "user_id", "--partition-by", "region"]
    assert main(["load", str(tmp_path / "first"), *base]) == 0
    assert main(["load", str(tmp_path / "second.json"), *base]) == 0, capsys.readouterr().err
    assert "rows_appended: 1" in capsys.readouterr().out
    assert main(["load", str(tmp_path / "second.json"), "--input-format", "json",
                 "--batch-id", "again", *base]) == 0
    assert "rows_appended: 0" in capsys.readouterr().out


def test_json_batches_take_the_tables_dates(spark, tmp_path, capsys):
    # JSON has no date type: a date column reads back as text, and the table's date
    # partition column refused it.
    import datetime as dt

    day = dt.date(2024, 1, 1)
    first = spark.createDataFrame([(1, day, dt.datetime(2024, 1, 1, 10), "x")],
                                  "user_id long, event_date date, ts timestamp, note string")
    first.write.parquet(str(tmp_path / "first"))
    later = dt.date(2024, 1, 2)
    more = spark.createDataFrame([(1, day, dt.datetime(2024, 1, 1, 10), "x"),
                                  (2, later, dt.datetime(2024, 1, 2, 9), "2024-01-05")],
                                 first.schema)
    more.write.json(str(tmp_path / "more.json"))
    base = ["--table", str(tmp_path / "table"), "--keys", "user_id"]
    assert main(["load", str(tmp_path / "first"), *base]) == 0
    assert main(["load", str(tmp_path / "more.json"), *base]) == 0, capsys.readouterr().err
    assert "rows_appended: 1" in capsys.readouterr().out
    stored = spark.read.parquet(str(tmp_path / "table"))
    assert dict(stored.dtypes)["note"] == "string"
    assert sorted((r.user_id, r.event_date, r.note) for r in stored.collect()) == [
        (1, day, "x"), (2, later, "2024-01-05")]


def test_json_batches_keep_the_tables_text_and_take_its_local_times(spark, tmp_path, capsys):
    # A string partition column whose values look like dates stays a string (Spark
    # reading the table would guess dates from its directory names), and a
    # timestamp_ntz, which Spark's JSON writer gives without an offset, is one again.
    import datetime as dt

    first = spark.createDataFrame([(1, "2024-01-01", dt.datetime(2024, 1, 1, 10))],
                                  "user_id long, day string, ts timestamp_ntz")
    first.write.parquet(str(tmp_path / "first"))
    first.union(spark.createDataFrame([(2, "2024-01-02", dt.datetime(2024, 1, 2, 23, 30))],
                                      first.schema)).write.json(str(tmp_path / "more.json"))
    base = ["--table", str(tmp_path / "table"), "--keys", "user_id", "--partition-by", "day"]
    assert main(["load", str(tmp_path / "first"), *base]) == 0
    assert main(["load", str(tmp_path / "more.json"), *base]) == 0, capsys.readouterr().err
    assert "rows_appended: 1" in capsys.readouterr().out
    stored = spark.read.schema("user_id long, ts timestamp_ntz, day string").parquet(
        str(tmp_path / "table"))
    assert sorted(tuple(r) for r in stored.collect()) == [
        (1, dt.datetime(2024, 1, 1, 10), "2024-01-01"),
        (2, dt.datetime(2024, 1, 2, 23, 30), "2024-01-02")]


def test_text_batches_take_the_tables_types(spark, tmp_path, capsys):
    # JSON reads whole numbers as bigint and CSV's inference makes '00123' a number and
    # a date-like note a date: the table's int, smallint, decimal, float and string
    # columns refused them.
    from decimal import Decimal

    schema = "user_id int, click_id smallint, code string, note string, x decimal(10,2), f float"
    first = spark.createDataFrame([(1, 1, "00123", "hello", Decimal("1.50"), 0.25)], schema)
    first.write.parquet(str(tmp_path / "first"))
    more = spark.createDataFrame([(2, 7, "00456", "2024-01-05", Decimal("2.25"), 0.5)], schema)
    more.write.json(str(tmp_path / "more.json"))
    more.write.option("header", True).csv(str(tmp_path / "more.csv"))
    for name in ("json", "csv"):
        base = ["--table", str(tmp_path / f"table_{name}"), "--keys", "user_id,click_id",
                "--partition-by", "code"]
        assert main(["load", str(tmp_path / "first"), *base]) == 0
        assert main(["load", str(tmp_path / f"more.{name}"), *base]) == 0, \
            capsys.readouterr().err
        assert "rows_appended: 1" in capsys.readouterr().out
        stored = spark.read.schema(schema).parquet(str(tmp_path / f"table_{name}"))
        stored = stored.select(*first.columns)
        assert sorted(tuple(r) for r in stored.collect()) == [
            (1, 1, "00123", "hello", Decimal("1.50"), 0.25),
            (2, 7, "00456", "2024-01-05", Decimal("2.25"), 0.5)], name


@pytest.mark.parametrize(("fmt", "text", "why"), [
    ("json", '{"user_id": 3000000000, "x": 1.25, "day": "a"}', "3000000000"),
    ("json", '{"user_id": 2, "x": 1.5, "day": "a"}', None),
    ("json", '{"user_id": 2.5, "x": 1.25, "day": "a"}', "2.5"),
    ("json", '{"user_id": 2, "x": 1.257, "day": "a"}',
     "'x' of the batch: 1.257 is not a decimal(10,2)"),
    ("csv", "user_id,x,day\n2,1.257,a\n", "'x' of the batch: 1.257 is not a decimal(10,2)"),
    ("csv", "user_id,x,day\nsome,1.25,a\n", "some"),
])
def test_a_text_value_not_of_the_tables_type_stops_the_load(spark, tmp_path, capsys,
                                                            fmt, text, why):
    from decimal import Decimal

    schema = "user_id int, x decimal(10,2), day string"
    spark.createDataFrame([(1, Decimal("1.00"), "a")], schema).write.parquet(
        str(tmp_path / "first"))
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / f"part.{fmt}").write_text(text + "\n")
    base = ["--table", str(tmp_path / "table"), "--keys", "user_id", "--partition-by", "day"]
    assert main(["load", str(tmp_path / "first"), *base]) == 0
    capsys.readouterr()
    code = main(["load", str(batch), "--input-format", fmt, *base])
    err = capsys.readouterr().err
    stored = spark.read.schema(schema).parquet(str(tmp_path / "table"))
    if why is None:
        assert code == 0, err
        assert stored.count() == 2
        return
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and why in err, err
    assert [tuple(r) for r in stored.collect()] == [(1, Decimal("1.00"), "a")]
