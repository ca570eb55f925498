"""Crash safety with real kills: SIGKILL an ``append`` at random moments, re-run it, check.

Two chains run side by side, each on its own table: a worker process appends batch
``i`` and is killed (the whole process group, JVM included) at a random moment after it
reported ready (each worker starts Spark while the round before it is checked, and gets
its batch only then); then the test checks that readers see only complete files and no key
twice, re-runs the same append in its own session (which recovers the table) and checks
that every key is stored exactly once, as the pandas reference says. The kill schedule
comes from a fixed seed and is printed. One worker per chain kills itself after its
first published file: between the commit point and the end of publishing (roll-forward).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

import chronojoin as cj
from tests.oracles.loader import all_files_readable, read_table, reference
from tests.servers import child_env

SEED = 6_20240601
KILLS_PER_CHAIN = 10
MAX_ROUNDS = 18
#: the round whose worker kills itself between the commit point and the end of publishing
ROLL_FORWARD_ROUND = 3
WORKER = os.path.join(os.path.dirname(__file__), "crash_worker.py")
KEYS = ["user_id", "click_id"]
DATES = [dt.date(2024, 1, d) for d in range(1, 6)]


def make_batch(rng: random.Random, i: int, n: int = 150) -> pd.DataFrame:
    dates = rng.sample(DATES, 3)
    rows = [(rng.randrange(40), f"c{rng.randrange(4)}", dates[rng.randrange(3)], i * 1000 + j,
             rng.random()) for j in range(n)]
    return pd.DataFrame(rows, columns=["user_id", "click_id", "event_date", "seq", "value"])


def spawn(table: str, die_after: int | None = None) -> subprocess.Popen:
    """A worker for ``table`` that starts Spark and then waits for its batch (``go``)."""
    args = [sys.executable, WORKER, table]
    if die_after is not None:
        args.append(str(die_after))
    env = child_env()
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
                            env=env)


def wait_for(proc: subprocess.Popen, word: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == word:
            return
        if not line and proc.poll() is not None:
            raise AssertionError(f"worker exited with {proc.returncode} before {word}")
    raise AssertionError(f"worker not {word} in time")


def go(proc: subprocess.Popen, batch: str) -> None:
    """Hand a started worker its batch; return once it opened the batch."""
    wait_for(proc, "UP")
    assert proc.stdin is not None
    proc.stdin.write(batch + "\n")
    proc.stdin.flush()
    wait_for(proc, "READY")


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def stored_keys(table: str) -> pd.DataFrame:
    t = read_table(table, "event_date")
    return t if t.empty else t[["event_date", *KEYS, "seq"]]


class Chain:
    """One table, its batches, its reference and its kill schedule."""

    def __init__(self, spark, root: str, name: str, seed: int) -> None:
        self.spark, self.rng = spark, random.Random(seed)
        self.table = os.path.join(root, name)
        self.batch_dir = os.path.join(root, name + "_batches")
        self.expected: pd.DataFrame | None = None
        self.log: list[str] = []
        self.loader = cj.IncrementalLoader(spark, path=self.table, keys=KEYS,
                                           partition_by="event_date", order_by="seq")

    def batch(self, i: int) -> str:
        pdf = make_batch(self.rng, i)
        path = os.path.join(self.batch_dir, str(i))
        # written by pyarrow, not by a job of the session the other chain shares
        os.makedirs(path)
        pdf.to_parquet(os.path.join(path, "part-0.parquet"), index=False)
        ref = pdf.assign(event_date=pdf["event_date"].astype(str))[["event_date", *KEYS, "seq"]]
        new, _, _ = reference(self.expected, ref, keys=KEYS, partition_by="event_date",
                              order_by=["seq"])
        self.expected = new if self.expected is None else pd.concat([self.expected, new])
        return path

    def check_visible(self) -> None:
        assert all_files_readable(self.table), "a partial file is visible"
        seen = stored_keys(self.table)
        if not seen.empty:
            assert not seen.duplicated(["event_date", *KEYS]).any(), "a key is visible twice"

    def check_exact(self) -> None:
        got = stored_keys(self.table).sort_values(["event_date", *KEYS]).reset_index(drop=True)
        want = self.expected.sort_values(["event_date", *KEYS]).reset_index(drop=True)
        assert len(got) == len(want)
        pd.testing.assert_frame_equal(got, want, check_dtype=False)

    def run(self, spark_lock: threading.Lock) -> list[str]:
        proc = spawn(self.table)
        go(proc, self.batch(0))
        t0 = time.monotonic()
        proc.wait()
        window = time.monotonic() - t0
        kill_group(proc)
        self.check_exact()
        self.log.append(f"{os.path.basename(self.table)}: append window {window:.2f}s")
        kills, i = 0, 0
        # The next round's worker starts Spark while this round is checked and re-run;
        # it touches the table only once it gets its batch.
        upcoming: subprocess.Popen | None = spawn(self.table)
        try:
            while upcoming is not None:
                i += 1
                path = self.batch(i)
                roll_forward = i == ROLL_FORWARD_ROUND
                proc = upcoming  # killed by the finally below until replaced
                go(proc, path)
                if roll_forward:
                    delay = 0.0
                    proc.wait(timeout=240)  # it kills itself after its first move
                    assert proc.returncode == -signal.SIGKILL, proc.returncode
                    assert glob.glob(os.path.join(self.table, "_chronojoin", "staging", "*",
                                                  "_commit.json")), "no committed batch staged"
                    alive = True
                else:
                    delay = self.rng.uniform(0.0, window * 1.1)
                    time.sleep(delay)
                    alive = proc.poll() is None
                kill_group(proc)
                kills += alive
                upcoming = None
                if kills < KILLS_PER_CHAIN and i < MAX_ROUNDS:  # another round follows
                    upcoming = spawn(self.table,
                                     die_after=1 if i + 1 == ROLL_FORWARD_ROUND else None)
                self.log.append(f"  batch {i} (t={time.monotonic() - t0:.0f}s): "
                                f"kill at {delay:.2f}s -> "
                                f"{'killed' if alive else 'finished first'}"
                                f"{' (inside publish)' if roll_forward else ''}")
                self.check_visible()
                with spark_lock:
                    self.loader.append(self.spark.read.parquet(path))
                self.check_exact()
        finally:
            if upcoming is not None:
                kill_group(upcoming)
        self.log.append(f"  kills: {kills}")
        return self.log


@pytest.mark.slow
@pytest.mark.processes
def test_sigkill_at_random_moments_then_rerun(spark, tmp_path, record_property, class_archive):
    chains = [Chain(spark, str(tmp_path), f"t{c}", SEED + c) for c in range(2)]
    spark_lock = threading.Lock()
    with ThreadPoolExecutor(2) as pool:
        logs = list(pool.map(lambda ch: ch.run(spark_lock), chains))
    schedule = "\n".join([f"kill schedule (seed {SEED}):", *("\n".join(log) for log in logs)])
    print(schedule)
    record_property("kill_schedule", schedule)
    total = sum(int(log[-1].split(":")[1]) for log in logs)
    assert total >= 20
    for ch in chains:
        assert ch.loader.check().ok


def test_new_directories_are_flushed_before_the_batch_is_recorded(spark, tmp_path,
                                                                   monkeypatch):
    """A power loss right after a batch's record is written keeps its files: the entries
    of the partition directories publishing created (in the table's directory, and in
    the index's) are flushed before the record, as the files' own entries are; and
    those of the directories Spark created in the staging directory before the commit
    point (so that a surviving manifest finds its files)."""
    root = str(tmp_path / "t")
    loader = cj.IncrementalLoader(spark, path=root, keys=KEYS, partition_by="event_date")
    batch = spark.createDataFrame(
        [(1, "a", DATES[0], 1, 0.5), (2, "b", DATES[1], 2, 0.5)],
        "user_id long, click_id string, event_date date, seq long, value double")
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    loader.append(batch)
    monkeypatch.undo()
    meta = os.path.join(root, "_chronojoin")
    committed = max(i for i, p in enumerate(synced) if "_commit.json.tmp-" in p)
    recorded = min(i for i, p in enumerate(synced)
                   if p.startswith(os.path.join(meta, "commits", "")))
    publishing = synced[committed + 1 : recorded]
    for directory in (root, os.path.join(meta, "index")):
        assert directory in publishing, (directory, publishing)
    stage = os.path.dirname(synced[committed])
    for directory in ("data", "index"):
        assert os.path.join(stage, directory) in synced[:committed], directory


class _Kill(BaseException):
    """A kill: not an Exception, so no cleanup code catches it."""


def test_a_kill_while_removing_a_published_batchs_staging_is_not_published_again(
        spark, tmp_path, monkeypatch):
    """The batch was recorded, then the kill stopped the removal of its staging
    directory halfway (its data files gone, its manifest left). Retention deletes the
    partition before the next append: that append neither fails on the batch's missing
    files nor brings part of the batch back."""
    from chronojoin.loader import commit

    root = tmp_path / "t"
    schema = "user_id long, click_id string, event_date date, seq long, value double"
    loader = cj.IncrementalLoader(spark, path=str(root), keys=KEYS, partition_by="event_date")
    real_rmtree = commit.shutil.rmtree

    def killed_halfway(path, *args, **kwargs):
        real_rmtree(os.path.join(path, "data"))
        raise _Kill

    with monkeypatch.context() as m:
        m.setattr(commit.shutil, "rmtree", killed_halfway)
        with pytest.raises(_Kill):
            loader.append(spark.createDataFrame([(1, "a", DATES[0], 1, 0.5)], schema))
    assert glob.glob(str(root / "_chronojoin" / "staging" / "*" / "_commit.json"))
    shutil.rmtree(root / "event_date=2024-01-01")  # retention
    r = loader.append(spark.createDataFrame([(2, "b", DATES[1], 2, 0.5)], schema))
    assert r.rows_appended == 1
    assert not (root / "event_date=2024-01-01").exists()
    assert not os.listdir(root / "_chronojoin" / "staging")
