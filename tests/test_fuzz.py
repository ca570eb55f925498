"""The random differential run of :mod:`tests.fuzz`, a few cases of each family.

The suite keeps the harness working; longer runs are ``python -m tests.fuzz``.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tests.fuzz import CASES, SETTINGS, main, run, session_settings
from tests.servers import child_env


@pytest.mark.parametrize("family", list(CASES))
def test_random_cases_match_the_references(spark, family):
    out = io.StringIO()
    assert run(spark, family, seed=20_261_125, cases=4, out=out) == 0, out.getvalue()


@pytest.mark.parametrize("family", list(CASES))
@pytest.mark.parametrize("settings", list(SETTINGS))
def test_random_cases_match_under_other_session_settings(spark, family, settings):
    out = io.StringIO()
    with session_settings(spark, SETTINGS[settings]):
        failed = run(spark, family, seed=20_261_128, cases=1, out=out)
    assert failed == 0, out.getvalue()


@pytest.mark.parametrize("conf", ["spark.sql.ansi.enabled", "=true"])
def test_a_setting_without_key_or_value_is_refused_before_any_session(conf, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["asof", "--cases", "1", "--conf", conf])
    assert stop.value.code == 2
    assert "--conf takes KEY=VALUE" in capsys.readouterr().err


def test_connect_and_metastore_together_are_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["load", "--cases", "1", "--connect", "--metastore"])
    assert stop.value.code == 2
    assert "cannot be combined" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.processes
def test_loads_into_metastore_tables_in_a_session_of_their_own(tmp_path):
    # One SparkSession per process: the Hive-enabled one runs in a child.
    env = child_env()
    proc = subprocess.run(
        [sys.executable, "-m", "tests.fuzz", "load", "--metastore", "--seed", "20261128",
         "--cases", "3"], capture_output=True, text=True, check=False, timeout=600,
        cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "load: 3 cases, 0 failed" in proc.stdout
