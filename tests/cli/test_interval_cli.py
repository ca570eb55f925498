"""``chronojoin interval`` runs in-process against small Parquet files."""

from __future__ import annotations

import pytest

from chronojoin.cli.main import main


@pytest.fixture
def inputs(spark, tmp_path):
    points = spark.createDataFrame([(1, 10, "a"), (1, 15, "b"), (2, 1, "c")],
                                   "id int, time int, label string")
    intervals = spark.createDataFrame(
        [(1, 0, 30, 10), (1, 1, 5, 20), (1, 8, 20, 30), (1, 30, 45, 40), (2, 0, 30, 50)],
        "id int, start_time int, end_time int, points int",
    )
    points.write.parquet(str(tmp_path / "points"))
    intervals.write.parquet(str(tmp_path / "intervals"))
    return tmp_path


def test_interval_command(spark, inputs, capsys):
    out = inputs / "out"
    code = main(["interval", str(inputs / "points"), str(inputs / "intervals"), "--out", str(out),
                 "--by", "id", "--start", "start_time", "--end", "end_time",
                 "--agg", "total=sum:points", "--agg", "n=count", "--closed", "both",
                 "--strategy", "bucketed_sweep", "--bucket-width", "7", "--master", "local[2]"])
    assert code == 0
    result = spark.read.parquet(str(out))
    assert result.columns == ["id", "time", "label", "total", "n"]
    rows = sorted((r.time, r.total, r.n) for r in result.collect())
    assert rows == [(1, 50, 1), (10, 40, 2), (15, 40, 2)]
    assert "wrote" in capsys.readouterr().out


def test_bad_agg_and_column_are_one_line_errors(inputs, capsys):
    base = ["interval", str(inputs / "points"), str(inputs / "intervals"), "--out",
            str(inputs / "o"), "--by", "id", "--master", "local[2]"]
    assert main([*base, "--agg", "total=median:points"]) == 2
    assert "expected NAME=FUNCTION[:COLUMN]" in capsys.readouterr().err
    assert main([*base, "--start", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--start: column 'nope' not found in intervals" in err
    assert len(err.splitlines()) == 1


def test_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["interval", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--by", "--time", "--start", "--end", "--agg", "--closed", "--how",
                   "--strategy", "--buckets", "--bucket-width", "--master", "--out"):
        assert option in text


def test_an_agg_name_given_twice_is_an_error(tmp_path, capsys, no_spark):
    """The second --agg n= would silently replace the first (one output column lost)."""
    code = main(["interval", str(tmp_path / "p"), str(tmp_path / "i"), "--out",
                 str(tmp_path / "o"), "--agg", "n=count", "--agg", "n=sum:points"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin interval: error: --agg 'n=sum:points': output name 'n' is given twice; "
        "choose another name")


def test_errors_of_one_agg_name_its_option(inputs, capsys):
    """The library names the aggregate ``aggs['n']``; the command line says --agg n."""
    code = main(["interval", str(inputs / "points"), str(inputs / "intervals"), "--out",
                 str(inputs / "o"), "--by", "id", "--start", "start_time", "--end", "end_time",
                 "--agg", "n=count:nope", "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin interval: error: --agg n: column 'nope' not found in intervals; "
        "available: ['id', 'start_time', 'end_time', 'points']")
