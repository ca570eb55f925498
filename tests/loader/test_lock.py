"""One writer at a time: a live holder makes a second writer fail fast; stale locks break."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import threading
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


def test_two_writers_breaking_one_stale_lock_never_both_hold_it(tmp_path, monkeypatch):
    """Writer A breaks a dead writer's lock; before A removes it, the clock steps forward
    an hour and writer B comes to break it too. Whatever B does, at most one writer
    holds the lock afterwards (B taking it and A then removing B's lock would let a
    third writer in beside B: two appends at once, keys stored twice)."""
    from chronojoin.loader import lock as lockmod

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = str(tmp_path / "lock")
    write_lock(path, dead.pid)
    real_read, real_time = lockmod.read_json, time.time
    a_breaking, resume = threading.Event(), threading.Event()
    reads: dict[str, int] = {}

    def read_json(p):
        out = real_read(p)
        if threading.current_thread().name == "A":
            reads["A"] = reads.get("A", 0) + 1
            if reads["A"] == 2:  # A read the stale holder inside its break
                a_breaking.set()
                resume.wait(30)
        return out

    monkeypatch.setattr(lockmod, "read_json", read_json)
    holders, errors = [], []

    def take(name):
        lk = TableLock(path, table="t")
        try:
            lk.acquire()
        except Exception as exc:  # a refusal, or a failure of the break
            errors.append((name, exc))
        else:
            holders.append((name, lk))

    a = threading.Thread(target=take, args=("A",), name="A")
    a.start()
    assert a_breaking.wait(30)
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: real_time() + 3600)
        take("B")
    resume.set()
    a.join(30)
    take("C")
    assert len(holders) <= 1, (holders, errors)
    assert len(holders) == 1
