"""``chronojoin generate`` in process: options checked before Spark, what it writes."""

from __future__ import annotations

import argparse
import json
import shlex

import pytest

from chronojoin.cli.main import main


def test_hive_conf_hint_survives_a_shell(tmp_path, capsys, monkeypatch):
    """The metastore URL holds ';': the printed options are quoted for a shell."""
    from chronojoin.cli.commands import generate

    monkeypatch.setattr("chronojoin.datagen.write_bucketed",
                        lambda tables, *, buckets, **kw: {t: f"db.{t}_b{buckets}" for t in tables})
    out = str(tmp_path / "a dir")
    args = argparse.Namespace(kind="thesis", ids=5, seed=0, database="db", out=out)
    generate._bucketed({"left": None, "right": None}, args, (2,))
    printed = capsys.readouterr().out
    words = shlex.split(printed.split("these confs: ", 1)[1])
    assert words == [w for k, v in generate._hive_conf(out).items()
                     for w in ("--conf", f"{k}={v}")]
    assert words[-1].endswith(";create=true")


def test_file_url_output_is_the_local_directory(spark, tmp_path, monkeypatch, capsys):
    """Parquet and _dataset.json both go to the URL's path (not to ./file:/...)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "data"
    url = f"file://{out}"
    args = ["generate", "--ids", "2", "--time-type", "integer", "--out", url,
            "--master", "local[2]"]
    assert main(args) == 0, capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
    assert json.loads((out / "_dataset.json").read_text())["n_ids"] == 2
    assert spark.read.parquet(str(out / "left")).count() == 2
    capsys.readouterr()
    assert main(args) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin generate: error: output path exists: {url} (use --mode overwrite)")


def test_other_url_outputs_are_refused_before_spark(tmp_path, capsys, no_spark):
    assert main(["generate", "--ids", "2", "--out", "hdfs://nn:8020/data"]) == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin generate: error: --out hdfs://nn:8020/data: generate writes the "
        "description of the data (_dataset.json) on the local file system; give a local "
        "path or a file:// URL")


@pytest.mark.parametrize("kind", ["thesis", "intervals"])
@pytest.mark.parametrize("skew", ["1.5", "1", "-0.1", "nan"])
def test_skew_is_checked_before_spark(tmp_path, capsys, no_spark, kind, skew):
    """1.5 put every row on the hot key; the share must be in [0, 1)."""
    assert main(["generate", "--kind", kind, "--ids", "3", "--skew", skew,
                 "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin generate: error: --skew must be a number with 0 <= skew < 1; "
        f"got {float(skew)}")


def test_dataset_description_records_the_value_type(tmp_path, capsys):
    out = tmp_path / "doubles"
    assert main(["generate", "--ids", "3", "--time-type", "integer", "--value-type", "double",
                 "--out", str(out), "--master", "local[2]"]) == 0, capsys.readouterr().err
    params = json.loads((out / "_dataset.json").read_text())
    assert (params["kind"], params["value_type"], params["n_ids"]) == ("thesis", "double", 3)


def test_overwriting_a_file_is_refused_before_spark(tmp_path, capsys, no_spark):
    """The tables go into a directory: a file at --out ended in a FileExistsError traceback."""
    out = tmp_path / "file"
    out.write_text("x")
    assert main(["generate", "--ids", "2", "--out", str(out), "--mode", "overwrite"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"chronojoin generate: error: --out {out}: not a directory (generate writes a "
        "directory of tables)")
    assert out.read_text() == "x"


@pytest.mark.parametrize("kind", ["thesis", "band"])
def test_a_database_without_buckets_is_an_error(tmp_path, capsys, no_spark, kind):
    """--database names where --buckets saves its tables; alone it was silently ignored."""
    assert main(["generate", "--kind", kind, "--ids", "2", "--database", "other",
                 "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin generate: error: --database: only with --buckets (the metastore database "
        "of bucketed tables)")


def test_overwrite_replaces_an_earlier_dataset(tmp_path, capsys):
    """Overwriting left the earlier run's order directories (and tables) beside the new ones."""
    out = tmp_path / "d"
    common = ["--ids", "5", "--out", str(out), "--master", "local[1]"]
    assert main(["generate", "--order", "asc,desc", "--time-type", "integer", *common]) == 0, (
        capsys.readouterr().err)
    (out / "notes.txt").write_text("mine")
    (out / "asc" / "mine").mkdir()
    assert main(["generate", "--kind", "band", *common, "--mode", "overwrite"]) == 0, (
        capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == [
        "_dataset.json", "asc", "events", "measurements", "notes.txt"]
    assert [p.name for p in (out / "asc").iterdir()] == ["mine"]
    assert json.loads((out / "_dataset.json").read_text())["kind"] == "band"
    assert main(["generate", "--order", "desc", "--time-type", "integer", *common,
                 "--mode", "overwrite"]) == 0, (
        capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == [
        "_dataset.json", "asc", "left", "notes.txt", "right"]


def test_overwrite_removes_only_what_generate_wrote(tmp_path, no_spark):
    """The tables of the recorded kind, its description, order directories and the metastore."""
    from chronojoin.cli.commands import generate

    out = tmp_path / "d"
    for dataset, kind in ((out, "band"), (out / "asc", "thesis"), (out / "random", "loader")):
        for table in generate.TABLES[kind]:
            (dataset / table).mkdir(parents=True)
            (dataset / table / "part-0.parquet").write_text("x")
        (dataset / "_dataset.json").write_text(json.dumps({"kind": kind}))
    (out / "left").mkdir()  # not a table of band
    (out / "random" / "_COMPLETE").write_text("ok")
    (out / "desc").mkdir()  # no description: not written by generate
    (out / "desc" / "left").mkdir()
    (out / "metastore_db").mkdir()
    (out / "metastore_db" / "service.properties").write_text("derby")
    (out / "warehouse" / "chronojoin.db").mkdir(parents=True)
    generate._remove_earlier(str(out))
    assert sorted(p.name for p in out.iterdir()) == ["desc", "left", "random"]
    assert [p.name for p in (out / "random").iterdir()] == ["_COMPLETE"]
    assert [p.name for p in (out / "desc").iterdir()] == ["left"]


def test_overwrite_keeps_a_directory_generate_did_not_write(tmp_path, no_spark):
    """A description of other data (no generate kind) and a warehouse without Derby stay."""
    from chronojoin.cli.commands import generate

    out = tmp_path / "d"
    (out / "events").mkdir(parents=True)
    (out / "_dataset.json").write_text(json.dumps({"rows": 5, "seed": 0}))
    (out / "warehouse").mkdir()
    (out / "metastore_db").mkdir()
    generate._remove_earlier(str(out))
    assert sorted(p.name for p in out.iterdir()) == [
        "_dataset.json", "events", "metastore_db", "warehouse"]


def test_tables_are_those_each_kind_writes(spark):
    """What overwrite removes of an earlier run is what each kind's generator returns."""
    from chronojoin.cli.commands import generate

    parser = argparse.ArgumentParser()
    generate.add_arguments(parser)
    args = parser.parse_args(["--ids", "5", "--out", "unused"])
    assert set(generate.TABLES) == set(generate.KINDS)
    for kind, tables in generate.TABLES.items():
        make, _ = generate._generator(kind)
        assert tuple(make(spark, args, "asc")) == tables
