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
