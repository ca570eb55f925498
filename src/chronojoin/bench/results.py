"""Raw benchmark results: JSON lines, appended as they are produced.

Two kinds of lines: ``{"kind": "environment", "run_id": ..., ...}`` once per session
(master) of a run, and ``{"kind": "result", "run_id": ..., ...}`` per timed run or
failure. Reports are drawn from these files only.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any


def new_run_id() -> str:
    """Return a sortable unique id: UTC time and a random suffix."""
    now = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{uuid.uuid4().hex[:6]}"


def session_label(master: str, session: Any, several: bool) -> str:
    """How results name a session: ``master``, or ``master (session k)``.

    The longer name is for a master that ran in ``several`` sessions of one run (two
    sessions are never pooled); ``k`` counts from 1, the session's place in
    ``--masters``.
    """
    if not several or session is None:
        return master
    return f"{master} (session {int(session) + 1})"


class ResultsFile:
    """Appends records to ``<directory>/<run_id>.jsonl``, one flushed line each."""

    def __init__(self, directory: str, run_id: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"{run_id}.jsonl")
        self.run_id = run_id

    def append(self, record: dict[str, Any]) -> None:
        """Write one record (``run_id`` added) as a JSON line."""
        line = json.dumps({"run_id": self.run_id, **record}, sort_keys=True, default=str)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def result_files(paths: Iterable[str]) -> list[str]:
    """Every ``*.jsonl`` file among ``paths`` (files or directories), sorted."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            out.extend(
                os.path.join(path, name) for name in os.listdir(path) if name.endswith(".jsonl")
            )
        elif os.path.exists(path):
            out.append(path)
        else:
            msg = f"results path does not exist: {path}"
            raise FileNotFoundError(msg)
    return sorted(out)


def read_records(paths: Iterable[str]) -> Iterator[dict[str, Any]]:
    """All records of the given files or directories; blank lines are skipped."""
    for path in result_files(paths):
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    msg = f"{os.path.basename(path)} line {number}: not JSON ({exc.msg})"
                    raise ValueError(msg) from exc
