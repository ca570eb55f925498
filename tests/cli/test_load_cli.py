"""``chronojoin load`` runs in-process: append, skip, check, rebuild, one-line errors."""

from __future__ import annotations

import datetime as dt

import pytest

from chronojoin.cli.main import main

SCHEMA = "user_id long, click_id string, event_date date, seq long"


@pytest.fixture
def batch(spark, tmp_path):
    rows = [(1, "a", dt.date(2024, 1, 1), 2), (1, "a", dt.date(2024, 1, 1), 1),
            (2, "b", dt.date(2024, 1, 2), 3)]
    spark.createDataFrame(rows, SCHEMA).write.parquet(str(tmp_path / "batch"))
    return str(tmp_path / "batch")


def test_load_check_and_rebuild(spark, batch, tmp_path, capsys):
    table = str(tmp_path / "table")
    base = ["--table", table, "--keys", "user_id,click_id", "--master", "local[2]"]
    assert main(["load", batch, *base, "--partition-by", "event_date", "--order-by", "seq"]) == 0
    out = capsys.readouterr().out
    assert "rows_in: 3" in out and "rows_appended: 2" in out and "duplicates_in_batch: 1" in out
    assert main(["load", batch, *base, "--order-by", "seq"]) == 0
    assert "skipped: True" in capsys.readouterr().out
    assert main(["load", "--check", *base]) == 0
    assert "ok: True" in capsys.readouterr().out
    assert main(["load", "--rebuild-index", *base]) == 0
    assert "2 partition(s)" in capsys.readouterr().out
    assert sorted(r.seq for r in spark.read.parquet(table).collect()) == [1, 3]


def test_load_errors_are_one_line(batch, tmp_path, capsys):
    table = str(tmp_path / "table")
    code = main(["load", batch, "--table", table, "--keys", "user_id,nope",
                 "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin load: error: --keys: column 'nope' not found in batch")
    assert main(["load", "--table", table, "--keys", "k", "--master", "local[2]"]) == 2
    assert "BATCH is required" in capsys.readouterr().err
    assert main(["load", batch, "--check", "--table", table, "--keys", "k"]) == 2
    assert "not used with --check" in capsys.readouterr().err


def test_duplicates_with_on_duplicate_fail_end_in_one_line(batch, tmp_path, capsys):
    code = main(["load", batch, "--table", str(tmp_path / "table"), "--keys", "user_id,click_id",
                 "--on-duplicate", "fail", "--master", "local[2]"])
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin load: error: --on-duplicate fail: the batch has 1 "
                          "duplicate row(s)")
    assert "\n" not in err
    assert not list((tmp_path / "table").glob("event_date=*"))  # nothing written


def test_a_partition_value_spark_reads_as_null_ends_in_one_line(spark, tmp_path, capsys):
    batch = str(tmp_path / "batch")
    spark.createDataFrame([(1, "__HIVE_DEFAULT_PARTITION__")],
                          "k long, region string").write.parquet(batch)
    table = tmp_path / "table"
    code = main(["load", batch, "--table", str(table), "--keys", "k", "--partition-by",
                 "region", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin load: error: --partition-by: column 'region' of the "
                          "batch has 1 '__HIVE_DEFAULT_PARTITION__' value(s), which Spark "
                          "reads back")
    assert "\n" not in err
    assert not table.exists()  # nothing written


def test_check_names_an_unreadable_data_file_in_one_line(batch, tmp_path, capsys):
    table = tmp_path / "table"
    base = ["--table", str(table), "--keys", "user_id,click_id", "--master", "local[2]"]
    assert main(["load", batch, *base]) == 0
    capsys.readouterr()
    damaged = sorted(table.glob("event_date=2024-01-02/*.parquet"))[0]
    damaged.write_bytes(b"not a parquet file")
    assert main(["load", "--check", *base]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"chronojoin load: error: cannot read the data file {damaged} of ")
    assert "\n" not in err


@pytest.mark.slow
@pytest.mark.processes
def test_a_table_name_says_where_the_new_metastore_table_goes(batch, tmp_path, class_archive):
    """A name (no '/') is a metastore table: its first load says where it will live."""
    import os
    import subprocess
    import sys

    from tests.servers import short_lived_conf

    # a short-lived session's settings: it starts its work sooner
    confs = [arg for k, v in short_lived_conf().items() for arg in ("--conf", f"{k}={v}")]
    cmd = [sys.executable, "-c", "from chronojoin.cli.main import run; run()", "load", batch,
           "--table", "clicks", "--keys", "user_id,click_id", "--master", "local[2]", *confs]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    first, again = (subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env,
                                   timeout=300, check=False) for _ in range(2))
    assert first.returncode == 0, first.stderr[-2000:]
    assert "creating metastore table clicks (metastore: metastore_db/" in first.stderr
    assert "rows_appended: 2" in first.stdout
    assert again.returncode == 0, again.stderr[-2000:]
    assert "creating metastore table" not in again.stderr and "skipped: True" in again.stdout


@pytest.mark.parametrize("action", ["--check", "--rebuild-index"])
def test_maintenance_of_a_missing_path_table_is_refused_before_spark(tmp_path, capsys, no_spark,
                                                                      action):
    table = tmp_path / "nothere"
    assert main(["load", action, "--table", str(table), "--keys", "user_id"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin load: error: --table: table {table} does not exist "
        f"(nothing to {action.strip('-').replace('-index', '')})")
    assert not table.exists()


def test_maintenance_of_a_missing_metastore_table_is_an_error(spark, capsys):
    assert main(["load", "--check", "--table", "cj_cli_nothere", "--keys", "user_id"]) == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin load: error: --table: table cj_cli_nothere does not exist (nothing to check)")
    assert not spark.catalog.tableExists("cj_cli_nothere")


@pytest.mark.parametrize(("target", "relation"), [
    ("batch", "is"), (".", "contains"), ("batch/table", "is inside")])
def test_a_target_over_the_batch_is_refused_before_spark(tmp_path, capsys, no_spark,
                                                         target, relation):
    """Loading into the batch's own directory would mix the table's files into it."""
    (tmp_path / "batch").mkdir()
    (tmp_path / "batch" / "part-0.parquet").write_bytes(b"")
    batch, table = str(tmp_path / "batch"), str(tmp_path / target)
    assert main(["load", batch, "--table", table, "--keys", "k"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin load: error: --table {table} {relation} the input {batch}: writing "
        "there would destroy or corrupt that input; choose another --table")
    assert sorted(p.name for p in (tmp_path / "batch").iterdir()) == ["part-0.parquet"]


def test_a_target_under_a_file_is_refused_before_spark(tmp_path, capsys, no_spark):
    (tmp_path / "file").write_text("x")
    for table in (tmp_path / "file", tmp_path / "file" / "table"):
        assert main(["load", str(tmp_path), "--table", str(table), "--keys", "k",
                     "--input-format", "table"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"chronojoin load: error: --table {table}: not a directory"
                              if table.name == "file" else f"chronojoin load: error: cannot "
                              f"write {table}: ")
        assert "\n" not in err


def test_a_new_table_in_a_missing_database_is_a_one_line_error(spark, batch, capsys):
    code = main(["load", batch, "--table", "cj_cli_nodb.clicks", "--keys", "user_id,click_id",
                 "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin load: error: --table cj_cli_nodb.clicks: database cj_cli_nodb does not "
        "exist (create it, or give a path with '/' for a plain directory)")


def test_a_url_table_is_named_as_the_option(batch, capsys):
    """The loader calls a directory `path`; on the command line it is --table."""
    code = main(["load", batch, "--table", "hdfs://nn:8020/x/t", "--keys", "user_id",
                 "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin load: error: --table: only local file system paths are supported (the "
        "commit relies on atomic renames); got 'hdfs://nn:8020/x/t'")
