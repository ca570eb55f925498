"""The single-writer lock of a table: a lock file naming its holder.

Acquisition writes the holder (pid, host, time, a random token) to a private file
created with ``O_CREAT | O_EXCL`` and fsynced, then publishes it with ``os.link`` to
``_chronojoin/lock``: the link either creates the lock with its full content or fails
because the lock exists, so no reader ever sees an empty or half-written lock file.

A second writer fails fast with :class:`~chronojoin.errors.ConcurrentWriterError`
naming the holder. A lock whose holder is a dead process on this host is stale and is
broken under an exclusive ``flock`` of a second file, ``lock.break``: the breaker
re-reads the lock and removes it only if it still names the same dead holder, so two
writers breaking the same stale lock cannot remove each other's fresh lock. The kernel
releases the ``flock`` when its holder exits, so neither a killed breaker nor a clock
step can hand the guard to a second breaker while the first one still works. The
holder is known by its pid, its start time (a pid reused by a later process is not the
holder) and its pid namespace: a holder on another host, or in another container that
shares the host name but not the pids, is never presumed dead (the message tells how to
remove the lock by hand).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import socket
import time
from typing import Any

from chronojoin.errors import ConcurrentWriterError
from chronojoin.loader.layout import fsync_dir, read_json


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host (zombies count as dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = _stat(pid)
    return not stat or stat[0] not in ("Z", "X")


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), None if unknown."""
    stat = _stat(pid)
    return int(stat[19]) if len(stat) > 19 and stat[19].isdigit() else None


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (empty if unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def pid_namespace() -> str | None:
    """The pid namespace of this process (``pid:[4026531836]``), None if unknown."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def describe(holder: dict[str, Any] | None) -> str:
    """Return a human description of a lock holder."""
    if not holder:
        return "an unknown holder (unreadable lock file)"
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(holder.get("time", 0))))
    return f"pid {holder.get('pid')} on host {holder.get('host')!r} since {since}"


def is_stale(holder: dict[str, Any] | None) -> bool:
    """Return a holder is stale when it is a dead process on this host."""
    if not holder:
        return False
    if holder.get("host") != socket.gethostname():
        return False
    if holder.get("pidns") not in (None, pid_namespace()):
        return False  # pids of another namespace mean nothing here
    try:
        pid = int(holder.get("pid", -1))
    except (TypeError, ValueError):
        return False
    if not pid_alive(pid):
        return True
    start = holder.get("start")
    return start is not None and process_start(pid) not in (None, start)


class TableLock:
    """Exclusive writer lock stored at ``path`` (use as a context manager)."""

    def __init__(self, path: str, *, table: str) -> None:
        self.path = path
        self.table = table
        self.token: str | None = None

    def acquire(self) -> None:
        """Take the lock or raise ConcurrentWriterError naming the holder."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._clean_private_files()
        for _ in range(3):
            if self._try_create():
                return
            holder = read_json(self.path)
            if holder is None and not os.path.exists(self.path):
                continue  # released meanwhile
            if not is_stale(holder):
                msg = (
                    f"table {self.table} is being written by {describe(holder)} "
                    f"(lock file {self.path}); retry later, or delete the lock file if "
                    "that writer is known to be gone"
                )
                raise ConcurrentWriterError(msg)
            self._break(holder)
        msg = f"could not take the lock {self.path} of table {self.table} (contended)"
        raise ConcurrentWriterError(msg)

    def release(self) -> None:
        """Remove the lock if this object still holds it."""
        if self.token is None:
            return
        holder = read_json(self.path)
        if holder is not None and holder.get("token") == self.token:
            os.unlink(self.path)
            fsync_dir(os.path.dirname(self.path))
        self.token = None

    def __enter__(self) -> TableLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _try_create(self) -> bool:
        token = secrets.token_hex(8)
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "time": time.time(),
                  "token": token, "start": process_start(os.getpid()),
                  "pidns": pid_namespace()}
        private = f"{self.path}.{os.getpid()}-{token}"
        fd = os.open(private, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        try:
            os.write(fd, json.dumps(holder).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(private, self.path)
        except FileExistsError:
            return False
        finally:
            os.unlink(private)
        fsync_dir(os.path.dirname(self.path))
        self.token = token
        return True

    def _break(self, stale: dict[str, Any] | None) -> None:
        # The guard file is never removed: a breaker that removed it could leave a second
        # one holding a lock on the removed file while a third locks a new file.
        fd = os.open(self.path + ".break", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # someone else is breaking it; the caller retries
            current = read_json(self.path)
            if current is not None and stale and current.get("token") == stale.get("token"):
                os.unlink(self.path)
                fsync_dir(os.path.dirname(self.path))
        finally:
            os.close(fd)  # releases the flock

    def _clean_private_files(self) -> None:
        directory, base = os.path.split(self.path)
        for name in os.listdir(directory):
            if not name.startswith(base + ".") or name.endswith(".break"):
                continue
            pid = name[len(base) + 1 :].split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(directory, name))
