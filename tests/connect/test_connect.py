"""On Spark Connect: the as-of conformance suite, odd column names, streaming inputs, a
few random cases of every family, the worked examples, refusals and plan choices of the
band and interval aggregation functions, the self joins, keys and time zones of every
function, the loader's worked examples and refusals, and the command line.

A process holds either a classic or a Connect session, so the suite runs in a child
pytest whose ``spark`` fixture connects to a Connect server started here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import connect_server

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.connect, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One Connect server for the module's tests, stopped by its process id."""
    with connect_server(tmp_path_factory.mktemp("connect") / "connect-server.log") as url:
        yield url


def _suite(server: str, what: str, *args: str) -> None:
    """The tests ``args`` in a child pytest whose session is the Connect server's."""
    env = dict(os.environ, CHRONOJOIN_TEST_REMOTE=server)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1200, check=False)
    lines = done.stdout.splitlines()
    tail = "\n".join(lines[-30:])
    # the failing test and the first lines of its error, before Spark's stack trace
    failed = [line for line in lines if line.startswith("FAILED ")][:3]
    error = [line for line in lines if line.startswith("E ")][:12]
    detail = "\n".join([*failed, *error, tail, done.stderr[-3000:]])
    assert done.returncode == 0, f"{what} failed on Spark Connect:\n{detail}"
    assert " passed" in tail


def test_asof_suite_on_spark_connect(server):
    _suite(server, "as-of suite",
           "tests/asof/test_examples.py", "tests/asof/test_errors.py",
           "tests/asof/test_conformance.py", "tests/test_column_names.py",
           "tests/test_streaming.py", "tests/test_time_of_day.py",
           "tests/test_fuzz.py::test_random_cases_match_the_references", "-k",
           "not test_options_against_brute_force or union")


def test_band_interval_and_aggregation_suites_on_spark_connect(server):
    """The other families' examples, refusals and plan choices, self joins, and the key
    and time zone rules of every function (the choices' tests for inputs Spark cannot
    size skip: a Connect client's local rows are always sized).

    The plans are the classic session's, built through the same DataFrame calls: the
    random conformance cases, edge values, column types and properties of these families
    run on the classic session only (the as-of conformance cases run on both), which
    keeps the suite's run time in bounds."""
    _suite(server, "band, interval join and interval aggregation suites",
           *[f"tests/band/test_{name}.py" for name in ("examples", "errors", "auto")],
           *[f"tests/intervals/test_{name}.py" for name in ("examples", "errors", "auto",
                                                           "choose")],
           "tests/test_self_joins.py", "tests/test_keys.py", "tests/test_time_zones.py")


def test_loader_suite_on_spark_connect(server):
    """The loader's worked examples and refusals (its files are written by the server,
    on this machine)."""
    _suite(server, "loader suite", "tests/loader/test_examples.py", "tests/loader/test_errors.py")


def _cli(*args: str) -> subprocess.CompletedProcess:
    """``chronojoin ...`` in a child process (a process holds one kind of session)."""
    return subprocess.run([sys.executable, "-m", "chronojoin", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def test_cli_joins_on_spark_connect(server, tmp_path):
    """`--remote`: the join commands run on the Connect server, which reads and writes."""
    import pandas as pd

    labels, clicks, spend = tmp_path / "labels.csv", tmp_path / "clicks.csv", tmp_path / "s.csv"
    pd.DataFrame({"user": [1, 2], "t": [10, 10]}).to_csv(labels, index=False)
    pd.DataFrame({"user": [1, 1, 2], "t": [3, 9, 12], "n": [5, 6, 7]}).to_csv(clicks, index=False)
    pd.DataFrame({"user": [1, 2], "at": [1, 2], "total": [9.5, 1.0]}).to_csv(spend, index=False)
    out = tmp_path / "training"
    done = _cli("asof", str(labels), str(clicks), str(spend), "--out", str(out),
                "--left-on", "t", "--right-on", "t,at", "--by", "user",
                "--prefix", "c_,s_", "--remote", server)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.read_parquet(out).sort_values("user")
    assert list(rows.columns) == ["user", "t", "c_t", "c_n", "s_at", "s_total"]
    assert rows["c_n"].tolist()[0] == 6 and pd.isna(rows["c_n"].tolist()[1])
    assert rows["s_total"].tolist() == [9.5, 1.0]
    # The server refuses to overwrite: one line on standard error, exit code 2.
    again = _cli("asof", str(labels), str(clicks), "--out", str(out), "--on", "t",
                 "--by", "user", "--remote", server)
    assert again.returncode == 2
    assert again.stderr.strip().startswith(f"chronojoin asof: error: writing {out} failed")
    missing = _cli("band", str(tmp_path / "nope"), str(clicks), "--out", str(tmp_path / "b"),
                   "--left-on", "t", "--right-on", "t", "--lower", "-5", "--upper", "0",
                   "--remote", server)
    assert missing.returncode == 2
    assert "chronojoin band: error: cannot read" in missing.stderr
    band = _cli("band", str(labels), str(clicks), "--out", str(tmp_path / "b"),
                "--left-on", "t", "--right-on", "t", "--lower", "-5", "--upper", "0",
                "--by", "user", "--remote", server)
    assert band.returncode == 0, band.stderr[-3000:]
    assert len(pd.read_parquet(tmp_path / "b")) == 1  # user 1: the click at 9
    # --format table: names of the server's tables, saved by a client of their own (this
    # process may hold a classic session)
    script = ("import sys\nfrom pyspark.sql import SparkSession\n"
              "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
              "for name, path, where in zip(*[iter(sys.argv[2:])] * 3):\n"
              "    spark.read.csv(path, header=True, inferSchema=True).write.option(\n"
              "        'path', where).mode('overwrite').saveAsTable(name)\n")
    saved = subprocess.run([sys.executable, "-c", script, server,
                            "cj_labels", str(labels), str(tmp_path / "cj_labels"),
                            "cj_clicks", str(clicks), str(tmp_path / "cj_clicks")],
                           capture_output=True, text=True, timeout=300, check=False)
    assert saved.returncode == 0, saved.stderr[-3000:]
    tables = _cli("asof", "cj_labels", "cj_clicks", "--format", "table", "--on", "t",
                  "--by", "user", "--out", str(tmp_path / "t"), "--remote", server)
    assert tables.returncode == 0, tables.stderr[-3000:]
    assert pd.read_parquet(tmp_path / "t").sort_values("user")["n"].tolist()[0] == 6


def test_cli_remote_without_server_fails_at_once(tmp_path):
    done = _cli("asof", "a", "b", "--out", str(tmp_path / "o"), "--on", "t",
                "--remote", "sc://127.0.0.1:1")
    assert done.returncode == 2
    assert "no Spark Connect server reachable" in done.stderr
