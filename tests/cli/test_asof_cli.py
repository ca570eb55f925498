"""``chronojoin asof`` and ``chronojoin demo`` run in-process against small files."""

from __future__ import annotations

import pytest

from chronojoin.cli.main import main


@pytest.fixture
def inputs(spark, tmp_path):
    left = spark.createDataFrame([(1, 10, "a"), (2, 5, "b")], "id int, t int, label string")
    right = spark.createDataFrame([(1, 8, 1.5), (1, 11, 2.5), (2, 7, 3.5)],
                                  "id int, t int, v double")
    left.write.parquet(str(tmp_path / "left"))
    right.toPandas().to_csv(tmp_path / "right.csv", index=False)
    return tmp_path


def test_asof_parquet_and_csv(spark, inputs, capsys):
    out = inputs / "out"
    code = main(["asof", str(inputs / "left"), str(inputs / "right.csv"), "--out", str(out),
                 "--on", "t", "--by", "id", "--direction", "nearest", "--tolerance", "2",
                 "--master", "local[2]"])
    assert code == 0
    rows = {r.id: r.v for r in spark.read.parquet(str(out)).collect()}
    assert rows == {1: 2.5, 2: 3.5}
    assert "wrote" in capsys.readouterr().out


def test_bad_path_is_one_line_error(inputs, capsys):
    code = main(["asof", str(inputs / "nope"), str(inputs / "left"), "--out",
                 str(inputs / "o"), "--on", "t", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: input path does not exist")
    assert len(err.splitlines()) == 1


def test_bad_column_is_one_line_error(inputs, capsys):
    code = main(["asof", str(inputs / "left"), str(inputs / "left"), "--out",
                 str(inputs / "o"), "--on", "time", "--master", "local[2]"])
    assert code == 2
    assert "`on`: column 'time' not found in left" in capsys.readouterr().err


def test_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["asof", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--on", "--by", "--direction", "--tolerance", "--strategy", "--master",
                   "--tiebreak", "--how", "--strict"):
        assert option in text


def test_demo_runs(capsys):
    assert main(["demo", "--ids", "300", "--strategies", "union", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert "union" in out and "generated" in out
