"""The as-of conformance suite again, on a Spark Connect session.

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


def test_asof_suite_on_spark_connect(tmp_path):
    with connect_server(tmp_path / "connect-server.log") as url:
        env = dict(os.environ, CHRONOJOIN_TEST_REMOTE=url)
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               "tests/asof/test_examples.py", "tests/asof/test_errors.py",
               "tests/asof/test_conformance.py", "tests/asof/test_hot_broadcast.py", "-k",
               "not test_options_against_brute_force or union"]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=1200, check=False)
    tail = "\n".join(done.stdout.splitlines()[-30:])
    detail = f"{tail}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"as-of suite failed on Spark Connect:\n{detail}"
    assert " passed" in tail
