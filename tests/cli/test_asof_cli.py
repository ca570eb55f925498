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


def test_asof_several_right_tables(spark, inputs, capsys):
    """Two feature tables in one call: each under its prefix and with its time column."""
    clicks = spark.createDataFrame([(1, 9, 7), (1, 12, 8), (2, 1, 9)], "id int, at int, n int")
    clicks.write.parquet(str(inputs / "clicks"))
    out = inputs / "out"
    code = main(["asof", str(inputs / "left"), str(inputs / "right.csv"), str(inputs / "clicks"),
                 "--out", str(out), "--left-on", "t", "--right-on", "t,at", "--by", "id",
                 "--prefix", "f_,c_", "--master", "local[2]"])
    assert code == 0, capsys.readouterr().err
    result = spark.read.parquet(str(out))
    assert result.columns == ["id", "t", "label", "f_t", "f_v", "c_at", "c_n"]
    rows = {r.id: (r.f_v, r.c_at, r.c_n) for r in result.collect()}
    assert rows == {1: (1.5, 9, 7), 2: (None, 1, 9)}


def test_asof_prefix_of_one_table(spark, inputs):
    out = inputs / "out"
    assert main(["asof", str(inputs / "left"), str(inputs / "right.csv"), "--out", str(out),
                 "--on", "t", "--by", "id", "--prefix", "f_", "--master", "local[2]"]) == 0
    assert spark.read.parquet(str(out)).columns == ["id", "t", "label", "f_t", "f_v"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--prefix", "a_"], "--prefix: expected 2 non-empty prefix(es), one per right table"),
    (["--prefix", "a_,"], "--prefix: expected 2 non-empty prefix(es)"),
    (["--right-on", "t,u,v"], "--right-on: expected one time column or 2 (one per right table)"),
    ([], "right[1]: output column 't_right'"),
])
def test_asof_several_right_tables_errors(inputs, capsys, extra, message):
    code = main(["asof", str(inputs / "left"), str(inputs / "right.csv"),
                 str(inputs / "right.csv"), "--out", str(inputs / "o"), "--on", "t",
                 "--by", "id", "--master", "local[2]", *extra])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1


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
                   "--tiebreak", "--how", "--strict", "--prefix"):
        assert option in text


def test_demo_runs(capsys):
    assert main(["demo", "--ids", "300", "--strategies", "union", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert "union" in out and "generated" in out
