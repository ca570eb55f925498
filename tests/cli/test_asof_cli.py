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
    ([], "right table 2: output column 't_right'"),
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


def test_damaged_input_is_one_line_error(inputs, capsys):
    (inputs / "damaged").mkdir()
    (inputs / "damaged" / "part-0.parquet").write_text("not parquet")
    code = main(["asof", str(inputs / "damaged"), str(inputs / "left"), "--out",
                 str(inputs / "o"), "--on", "t", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: cannot read ")
    assert "[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER]" in err and len(err.splitlines()) == 1


def test_unwritable_output_fails_before_spark(inputs, capsys):
    (inputs / "file").write_text("a file, not a directory")
    code = main(["asof", str(inputs / "left"), str(inputs / "left"), "--out",
                 str(inputs / "file" / "o"), "--on", "t", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"chronojoin asof: error: cannot write {inputs / 'file' / 'o'}: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(("option", "message"), [
    (["--conf", "spark.sql.shuffle.partitions"], "argument --conf: expected KEY=VALUE"),
    (["--conf", "=4"], "argument --conf: expected KEY=VALUE"),
    (["--master", "locl[2]"], "argument --master: expected local, local[N]"),
])
def test_bad_session_options_are_usage_errors(inputs, capsys, option, message):
    with pytest.raises(SystemExit) as exc:
        main(["asof", str(inputs / "left"), str(inputs / "left"), "--out", str(inputs / "o"),
              "--on", "t", *option])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("message", "said"), [
    ("`bucket_width`: must be positive", "--bucket-width: must be positive"),
    ("`right[1].on`: column 'x' not found", "--right-on (right table 2): column 'x' not found"),
    ("`on_duplicate='fail'`: 2 duplicates", "--on-duplicate fail: 2 duplicates"),
    ("right[0]: output column 'x' clashes", "right table 1: output column 'x' clashes"),
    ("`left`: not a DataFrame", "`left`: not a DataFrame"),
    ("no argument named here", "no argument named here"),
    ("`tolerance`: '1.5' has no unit but the time columns are timestamp; give a "
     "datetime.timedelta or a string such as '90 seconds' or '1 hour'",
     "--tolerance: '1.5' has no unit but the time columns are timestamp; give a duration "
     "such as '90 seconds' or '1 hour'"),
    ("`lower` must be a number, a datetime.timedelta or a string such as '1 hour'; got x",
     "--lower must be a number or a duration such as '1 hour'; got x"),
])
def test_library_messages_name_the_options(message, said):
    from chronojoin.cli.main import in_cli_terms

    flags = {"bucket_width": "--bucket-width", "right.on": "--right-on",
             "on_duplicate": "--on-duplicate", "tolerance": "--tolerance", "lower": "--lower"}
    assert in_cli_terms(message, flags) == said


@pytest.mark.parametrize(("options", "said"), [
    (["--left-on", "t"], "--left-on and --right-on must be given together"),
    (["--on", "t", "--left-on", "t"], "give either --on or --left-on/--right-on, not both"),
    (["--on", "t", "--by", "id", "--left-by", "id"],
     "give either --by or --left-by/--right-by, not both"),
    ([], "give the time columns: --on, or --left-on and --right-on"),
])
def test_every_argument_a_message_names_is_an_option(inputs, capsys, options, said):
    """Not only an argument opening the message: `right_on` further on is --right-on."""
    code = main(["asof", str(inputs / "left"), str(inputs / "left"), "--out",
                 str(inputs / "o"), *options, "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"chronojoin asof: error: {said}"


def test_several_right_tables_name_the_table_and_option(inputs, capsys):
    code = main(["asof", str(inputs / "left"), str(inputs / "left"), str(inputs / "right.csv"),
                 "--out", str(inputs / "o"), "--left-on", "t", "--right-on", "t,nope",
                 "--prefix", "a_,b_", "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "chronojoin asof: error: --right-on (right table 2): column 'nope' not found in right "
        "table 2; available: ['id', 't', 'v']")


def test_master_urls_spark_accepts():
    from chronojoin.cli.options import master_url

    for url in ("local", "local[2]", "local[*]", "local[2, 3]", "local-cluster[2,1,1024]",
                "yarn", "spark://127.0.0.1:7077", "k8s://https://10.0.0.1:6443"):
        assert master_url(url) == url


@pytest.mark.parametrize(("master", "loopback"), [
    ("local", True), ("local[2]", True), ("local[*]", True), ("local-cluster[2,1,1024]", True),
    ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True),
    ("spark://10.0.0.5:7077", False), ("spark://spark-master:7077", False), ("yarn", False),
    ("k8s://https://127.0.0.1:6443", False),
])
def test_driver_binds_to_loopback_only_for_masters_on_this_machine(master, loopback):
    """SPARK_LOCAL_IP=127.0.0.1 would make a cluster's driver advertise localhost."""
    from chronojoin.cli.session import binds_loopback

    assert binds_loopback(master) is loopback


def test_bad_column_is_one_line_error(inputs, capsys):
    code = main(["asof", str(inputs / "left"), str(inputs / "left"), "--out",
                 str(inputs / "o"), "--on", "time", "--master", "local[2]"])
    assert code == 2
    assert "--on: column 'time' not found in left" in capsys.readouterr().err


def test_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["asof", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--on", "--by", "--direction", "--tolerance", "--strategy", "--master",
                   "--tiebreak", "--how", "--strict", "--prefix"):
        assert option in text


@pytest.mark.parametrize(("option", "message"), [
    (["--ids", "0"], "--ids must be >= 1"),
    (["--strategies", "union,bogus"], "--strategies: unknown ['bogus']"),
])
def test_demo_options_are_checked_before_spark(capsys, option, message):
    assert main(["demo", *option, "--master", "local[2]"]) == 2
    assert message in capsys.readouterr().err


def test_demo_runs(capsys):
    assert main(["demo", "--ids", "300", "--strategies", "union", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert "union" in out and "generated" in out


@pytest.mark.parametrize(("out", "said"), [
    ("left", "is the input"),
    ("left/part", "is inside the input"),
    (".", "contains the input"),
    ("file://{tmp}/left/", "is the input"),
])
def test_output_over_an_input_is_refused_before_spark(spark, inputs, capsys, no_spark, out,
                                                       said):
    """--out equal to, holding or inside an input path would destroy it with overwrite."""
    before = sorted(map(tuple, spark.read.parquet(str(inputs / "left")).collect()))
    target = out.format(tmp=inputs) if out.startswith("file:") else str(inputs / out)
    left = str(inputs / "left")
    code = main(["asof", left, str(inputs / "right.csv"), "--out", target, "--on", "t",
                 "--mode", "overwrite", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"chronojoin asof: error: --out {target} {said} {left}: writing there "
                   "would destroy or corrupt that input; choose another --out")
    assert sorted(map(tuple, spark.read.parquet(left).collect())) == before


@pytest.mark.parametrize(("command", "options"), [
    ("band", ["--left-on", "t", "--right-on", "t", "--lower", "-1", "--upper", "0"]),
    ("interval", []),
    ("interval-join", ["--left-start", "t", "--right-start", "t", "--right-end", "t"]),
])
def test_every_join_command_keeps_its_inputs(inputs, capsys, no_spark, command, options):
    right = str(inputs / "right.csv")
    assert main([command, str(inputs / "left"), right, "--out", right, *options]) == 2
    assert f"error: --out {right} is the input {right}: " in capsys.readouterr().err


def test_output_and_input_locations_compare_normalised():
    from chronojoin.cli.errors import CliError
    from chronojoin.cli.session import check_not_input

    check_not_input("hdfs://nn/data/out", ["hdfs://nn/data/left", "s3a://nn/data/out"])
    check_not_input("joined", ["joined_left", "left"])
    for out in ("hdfs://NN:8020/data/./left/", "HDFS://nn:8020/data", "hdfs://nn:8020/data/left/x"):
        with pytest.raises(CliError, match=r"^--out "):
            check_not_input(out, ["hdfs://nn:8020/data/left"])


def test_existing_url_output_is_one_line_error(inputs, capsys):
    """A ``file:`` URL out that exists (Spark finds it when it writes) ends in one line."""
    (inputs / "exists").mkdir()
    code = main(["asof", str(inputs / "left"), str(inputs / "right.csv"), "--out",
                 f"file://{inputs / 'exists'}", "--on", "t", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: ") and "\n" not in err
    assert "--mode overwrite" in err


def test_write_errors_are_one_line(spark, tmp_path):
    from chronojoin.cli.errors import CliError
    from chronojoin.cli.session import write

    (tmp_path / "exists").mkdir()
    (tmp_path / "file").write_text("not a directory")
    df = spark.range(2)
    url = f"file://{tmp_path / 'exists'}"
    with pytest.raises(CliError, match=rf"^writing {url} failed: \[PATH_ALREADY_EXISTS\] .*"
                                       r" \(use --mode overwrite\)$") as exc:
        write(df, url)
    assert "\n" not in str(exc.value)
    bad = f"file://{tmp_path / 'file' / 'out'}"
    with pytest.raises(CliError, match=rf"^writing {bad} failed: \S*ParentNotDirectoryException: "
                                       r"[^\n]*$") as exc:
        write(df, bad, "overwrite")
    assert "--mode" not in str(exc.value)
    # an error raised while the job runs (here: a row Spark refuses to compute)
    failing = spark.range(2).selectExpr("if(id > 0, raise_error('no such row'), id) AS x")
    out = f"{tmp_path / 'job'}"
    with pytest.raises(CliError, match=rf"^writing {out} failed: .*no such row[^\n]*$"):
        write(failing, out)


def test_errors_about_the_time_columns_name_the_option_given(spark, inputs, capsys):
    """With --on, a right table's time column is the one --on names: say --on."""
    spark.createDataFrame([(1, "x")], "id int, t string").write.parquet(str(inputs / "words"))
    base = ["asof", str(inputs / "left"), "--out", str(inputs / "o"), "--by", "id",
            "--master", "local[2]"]
    assert main([*base, str(inputs / "words"), "--on", "t"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: --on: column 't' of right "), err
    assert main([*base, str(inputs / "left"), str(inputs / "words"), "--on", "t",
                 "--prefix", "a_,b_"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: --on (right table 2): column 't' "), err
    assert main([*base, str(inputs / "words"), "--left-on", "t", "--right-on", "t"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chronojoin asof: error: --right-on: column 't' of right "), err


def test_a_tolerance_without_unit_on_timestamps_asks_for_a_duration(spark, tmp_path, capsys):
    """The message speaks of the command line's durations, not of Python's timedelta."""
    spark.sql("SELECT 1 AS id, TIMESTAMP'2024-01-01 00:00:00' AS t").write.parquet(
        str(tmp_path / "l"))
    code = main(["asof", str(tmp_path / "l"), str(tmp_path / "l"), "--out", str(tmp_path / "o"),
                 "--on", "t", "--by", "id", "--tolerance", "1.5", "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == ("chronojoin asof: error: --tolerance: '1.5' has no unit but the time "
                   "columns are timestamp; give a duration such as '90 seconds' or '1 hour'")


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_before_or_after_the_command(inputs, capsys, where):
    command = ["asof", str(inputs / "left"), str(inputs / "right.csv"), "--out",
               str(inputs / "o"), "--on", "t", "--by", "id", "--master", "local[2]"]
    argv = ["-v", *command] if where == "before" else [*command, "--verbose"]
    assert main(argv) == 0
    assert "chronojoin: asof_join right: strategy " in capsys.readouterr().err


@pytest.mark.parametrize(("command", "option", "value"), [
    (["asof", "l", "r", "--on", "t"], "--by", ""),
    (["asof", "l", "r", "--on", "t"], "--right-by", " "),
    (["asof", "l", "r", "--on", "t"], "--tiebreak", "a,,b"),
    (["band", "l", "r", "--left-on", "t", "--right-on", "t", "--lower", "0", "--upper", "1"],
     "--left-by", "id,"),
    (["interval", "l", "r"], "--by", ""),
    (["interval-join", "l", "r", "--left-start", "t", "--right-start", "s",
      "--right-end", "e"], "--by", ""),
    (["load", "b", "--table", "t/"], "--keys", ""),
    (["load", "b", "--table", "t/", "--keys", "id"], "--order-by", ","),
])
def test_an_empty_column_list_is_a_usage_error(tmp_path, capsys, no_spark, command, option,
                                               value):
    """``--by ""`` is not a join without keys (that is the option left out)."""
    with pytest.raises(SystemExit) as exc:
        main([*command, "--out", str(tmp_path / "o"), option, value]
             if command[0] != "load" else [*command, option, value])
    assert exc.value.code == 2
    assert (f"argument {option}: expected column names, comma separated; got {value!r}"
            in capsys.readouterr().err)
