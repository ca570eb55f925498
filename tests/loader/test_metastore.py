"""A metastore table target (Hive metastore on embedded Derby, all under tmp_path).

Only one SparkSession can exist per process, so the loads run in one subprocess with its
own Hive-enabled session (``metastore_worker.py``); this test reads its results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.servers import child_env

WORKER = os.path.join(os.path.dirname(__file__), "metastore_worker.py")


pytestmark = [pytest.mark.slow, pytest.mark.processes]


@pytest.fixture(scope="module")
def results(tmp_path_factory, class_archive):
    tmp = str(tmp_path_factory.mktemp("metastore"))
    env = child_env()
    proc = subprocess.run([sys.executable, WORKER, tmp], capture_output=True, text=True,
                          check=False, timeout=900, cwd=tmp, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_table_created_and_loaded_incrementally(results):
    first, second = results["first"], results["second"]
    assert (first["rows_in"], first["rows_appended"], first["duplicates_in_batch"]) == (3, 2, 1)
    assert (second["rows_appended"], second["duplicates_existing"]) == (1, 1)
    assert results["rows"] == [["1", "a", "1", "2024-01-01"], ["2", "b", "3", "2024-01-02"],
                               ["3", "c", "5", "2024-01-02"]]
    assert results["partitions"] == ["event_date=2024-01-01", "event_date=2024-01-02"]
    assert results["check_ok"]


def test_existing_table_is_adopted_with_an_index_rebuild(results):
    assert results["adopt_warned"]
    assert (results["adopt"]["rows_appended"], results["adopt"]["duplicates_existing"]) == (1, 1)
    assert results["adopt_count"] == 3
