"""``chronojoin band`` and ``chronojoin interval-join`` run in-process."""

from __future__ import annotations

from chronojoin.cli.main import main


def test_band_hour_before(spark, tmp_path, capsys):
    events = spark.sql(
        "SELECT 1 AS eid, TIMESTAMP'2024-01-01 10:00:00' AS eventTime UNION ALL "
        "SELECT 2, TIMESTAMP'2024-01-01 12:00:00'"
    )
    measurements = spark.sql(
        "SELECT 10 AS mid, TIMESTAMP'2024-01-01 09:00:00' AS measurementTime UNION ALL "
        "SELECT 11, TIMESTAMP'2024-01-01 09:30:00' UNION ALL "
        "SELECT 12, TIMESTAMP'2024-01-01 10:00:00'"
    )
    events.write.parquet(str(tmp_path / "e"))
    measurements.write.parquet(str(tmp_path / "m"))
    out = str(tmp_path / "out")
    code = main(["band", str(tmp_path / "e"), str(tmp_path / "m"), "--out", out,
                 "--left-on", "eventTime", "--right-on", "measurementTime",
                 "--lower", "-1 hour", "--upper", "0", "--closed", "right", "--how", "left",
                 "--bin-size", "10 minutes", "--master", "local[2]"])
    assert code == 0
    assert "wrote" in capsys.readouterr().out
    rows = spark.read.parquet(out).select("eid", "mid").collect()
    assert sorted((r.eid, r.mid or 0) for r in rows) == [(1, 11), (1, 12), (2, 0)]


def test_interval_join_and_errors(spark, tmp_path, capsys):
    spark.sql("SELECT 1 AS id, 5 AS t UNION ALL SELECT 2, 50").write.parquet(str(tmp_path / "p"))
    spark.sql("SELECT 0 AS s, 10 AS e").write.parquet(str(tmp_path / "i"))
    out = str(tmp_path / "out")
    base = ["interval-join", str(tmp_path / "p"), str(tmp_path / "i"), "--out", out,
            "--right-start", "s", "--right-end", "e", "--master", "local[2]"]
    assert main([*base, "--left-start", "t"]) == 0
    assert [r.id for r in spark.read.parquet(out).collect()] == [1]
    capsys.readouterr()
    assert main([*base, "--left-start", "nope", "--mode", "overwrite"]) == 2
    err = capsys.readouterr().err
    assert "--left-start: column 'nope' not found in left" in err
    assert len(err.strip().splitlines()) == 1


def test_verbose_prints_the_automatic_choice_on_stderr(spark, tmp_path, capsys):
    import logging

    spark.sql("SELECT 1 AS id, 5 AS t UNION ALL SELECT 2, 50").write.parquet(str(tmp_path / "l"))
    spark.sql("SELECT 7 AS id, 3 AS t").write.parquet(str(tmp_path / "r"))
    base = ["band", str(tmp_path / "l"), str(tmp_path / "r"), "--left-on", "t",
            "--right-on", "t", "--lower", "-5", "--upper", "0", "--master", "local[2]"]
    handlers = list(logging.getLogger("chronojoin").handlers)
    assert main([*base, "--out", str(tmp_path / "a"), "-v"]) == 0
    err = capsys.readouterr().err
    assert "chronojoin: band_join: bin size 5.0 (small inputs (about 0.0 MiB" in err, err
    assert logging.getLogger("chronojoin").handlers == handlers  # removed after the run
    assert main([*base, "--out", str(tmp_path / "b")]) == 0
    assert "chronojoin: " not in capsys.readouterr().err
    spark.sql("SELECT 0 AS s, 10 AS e").write.parquet(str(tmp_path / "i"))
    assert main(["interval-join", str(tmp_path / "l"), str(tmp_path / "i"), "--left-start",
                 "t", "--right-start", "s", "--right-end", "e", "--out", str(tmp_path / "c"),
                 "--master", "local[2]", "-v"]) == 0
    err = capsys.readouterr().err
    assert ("chronojoin: interval_join: the plain join, few pairs (statistics: 2 and 1 "
            "rows)") in err, err
