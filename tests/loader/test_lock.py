"""One writer at a time: a live holder makes a second writer fail fast; stale locks break."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import time

import pytest

import chronojoin as cj
from chronojoin.errors import ConcurrentWriterError
from chronojoin.loader.lock import TableLock, process_start

SCHEMA = "user_id long, click_id string, event_date date, seq long"


def write_lock(path, pid, host=None, **more):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump({"pid": pid, "host": host or socket.gethostname(), "time": time.time(),
                   "token": "t0", **more}, fh)


def test_second_writer_fails_fast_naming_the_holder(spark, tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        root = tmp_path / "t"
        write_lock(str(root / "_chronojoin" / "lock"), holder.pid)
        ld = cj.IncrementalLoader(spark, path=str(root), keys=["user_id", "click_id"])
        batch = spark.createDataFrame([(1, "a", dt.date(2024, 1, 1), 1)], SCHEMA)
        start = time.monotonic()
        with pytest.raises(ConcurrentWriterError,
                           match=f"being written by pid {holder.pid} on host"):
            ld.append(batch)
        assert time.monotonic() - start < 60
        assert not (root / "event_date=2024-01-01").exists()
    finally:
        holder.kill()
        holder.wait()


def test_stale_lock_of_a_dead_process_is_broken(spark, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    root = tmp_path / "t"
    write_lock(str(root / "_chronojoin" / "lock"), dead.pid)
    ld = cj.IncrementalLoader(spark, path=str(root), keys=["user_id", "click_id"])
    r = ld.append(spark.createDataFrame([(1, "a", dt.date(2024, 1, 1), 1)], SCHEMA))
    assert r.rows_appended == 1
    assert not (root / "_chronojoin" / "lock").exists()


def test_lock_of_another_host_is_never_presumed_dead(tmp_path):
    path = str(tmp_path / "lock")
    write_lock(path, 1, host="some-other-host")
    with pytest.raises(ConcurrentWriterError, match="some-other-host"):
        TableLock(path, table="t").acquire()


def test_a_reused_pid_is_not_the_holder(tmp_path):
    """The holder's pid now names a later process (this one, after a container restart
    kept the host name): its start time differs, so the lock is stale."""
    path = str(tmp_path / "lock")
    write_lock(path, os.getpid(), start=process_start(os.getpid()) - 1)
    with TableLock(path, table="t") as lock, open(path) as fh:
        assert json.load(fh)["token"] == lock.token
    write_lock(path, os.getpid(), start=process_start(os.getpid()))  # this very process
    with pytest.raises(ConcurrentWriterError, match=f"pid {os.getpid()}"):
        TableLock(path, table="t").acquire()


def test_a_holder_in_another_pid_namespace_is_never_presumed_dead(tmp_path):
    """Another container with this host name (host networking) but pids of its own."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = str(tmp_path / "lock")
    write_lock(path, dead.pid, pidns="pid:[1]")
    with pytest.raises(ConcurrentWriterError, match=f"pid {dead.pid}"):
        TableLock(path, table="t").acquire()


def test_lock_in_this_process_is_exclusive_and_released(tmp_path):
    path = str(tmp_path / "m" / "lock")
    first = TableLock(path, table="t")
    with first:
        with pytest.raises(ConcurrentWriterError, match=f"pid {os.getpid()}"):
            TableLock(path, table="t").acquire()
        with open(path) as fh:
            holder = json.load(fh)
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
    assert not os.path.exists(path)
    with TableLock(path, table="t"):
        assert os.path.exists(path)
    assert sorted(os.listdir(os.path.dirname(path))) == []
