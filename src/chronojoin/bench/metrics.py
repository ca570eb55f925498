"""Run metrics from Spark's monitoring REST API (the driver's UI, ``/api/v1``).

The runner tags every timed run (``SparkSession.addTag``); Spark copies the tag into the
``jobTags`` of each job it starts, so the jobs and stages of one run are found by tag.
Per run: peak execution memory, shuffle bytes written and read, memory and disk spill
(sums over the run's stages, as sparkMeasure reports them), executor run time, and the
task-time skew of the heaviest stage that reads a shuffle (longest task / median task:
the join, window or aggregate that a hot key would load onto one task; a stage that
only scans input is skewed by the input's files, not by the plan), and the same ratio
for the busiest stage of all, whatever it reads (``busiest_stage_skew``: where a join
pairs rows where they are read, as a broadcast join does, the join stage is a scan).
Each skew comes with the task count of the stage it is read from (``task_skew_tasks``,
``busiest_stage_tasks``); a stage of fewer than :data:`MIN_SKEW_TASKS` tasks has no
skew (``None``): Spark's median of two tasks is the longer one, so the ratio would
read 1.0 whatever the imbalance.

Only the stage attempts that completed count: a failed attempt (a fetch failure, a lost
executor) is retried, and its partial work is neither summed nor measured for skew.

A metric that cannot be read (no UI, Spark Connect, an HTTP error, a stage the UI no
longer retains) is recorded as ``None``, never as 0.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Stage fields summed over the run's stages -> name in the results.
SUMMED = {
    "peakExecutionMemory": "peak_execution_memory_bytes",
    "shuffleWriteBytes": "shuffle_write_bytes",
    "shuffleReadBytes": "shuffle_read_bytes",
    "memoryBytesSpilled": "memory_spill_bytes",
    "diskBytesSpilled": "disk_spill_bytes",
    "executorRunTime": "executor_run_time_ms",
    "inputBytes": "input_bytes",
    "numTasks": "tasks",
}
#: Every metric a result carries (all ``None`` when unreadable).
NAMES = (*SUMMED.values(), "stages", "jobs", "task_skew", "busiest_stage_skew",
         "task_skew_tasks", "busiest_stage_tasks")
#: Fewest tasks a stage needs for its task skew to be reported.
MIN_SKEW_TASKS = 3

_TERMINAL_JOB = {"SUCCEEDED", "FAILED"}
_TERMINAL_STAGE = {"COMPLETE", "FAILED", "SKIPPED"}


def empty() -> dict[str, Any]:
    """All metrics unavailable."""
    return dict.fromkeys(NAMES)


@dataclass(frozen=True)
class UiClient:
    """Reads ``<url>/api/v1/applications/<app_id>/...`` as JSON."""

    url: str
    app_id: str
    timeout_s: float = 20.0

    def get(self, path: str) -> Any:
        """GET one endpoint below the application and parse its JSON."""
        full = f"{self.url.rstrip('/')}/api/v1/applications/{self.app_id}/{path}"
        with urllib.request.urlopen(full, timeout=self.timeout_s) as response:
            return json.load(response)


def ui_client(spark: SparkSession) -> UiClient | None:
    """Return the REST client of a classic session's UI; ``None`` on Connect or without a UI."""
    try:
        sc = spark.sparkContext
        url, app_id = sc.uiWebUrl, sc.applicationId
    except Exception:
        return None
    if not url or not app_id:
        return None
    url = url.replace("://localhost:", "://127.0.0.1:")
    # The first request initialises the REST layer, which can take seconds on a busy
    # machine: probe with a generous timeout, then use the regular one.
    try:
        UiClient(url, app_id, timeout_s=60.0).get("jobs")
    except (OSError, ValueError):
        return None
    return UiClient(url, app_id)


def tagged_jobs(jobs: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """Select the jobs whose tags carry the user tag ``tag`` (Spark prefixes its own ids)."""
    suffix = "-" + tag
    return [j for j in jobs if any(t == tag or t.endswith(suffix) for t in j.get("jobTags", []))]


def collect(client: UiClient | None, tag: str, *, wait_s: float = 10.0) -> dict[str, Any]:
    """Metrics of the jobs tagged ``tag``; every unreadable value is ``None``."""
    if client is None:
        return empty()
    try:
        jobs = _settled_jobs(client, tag, wait_s)
        if not jobs:
            return empty()
        stage_ids = sorted({s for j in jobs for s in j.get("stageIds", [])})
        attempts = [a for sid in stage_ids for a in _stage_attempts(client, sid)]
        return summarise(attempts, len(jobs), lambda a: _task_quantiles(client, a))
    except (OSError, ValueError, KeyError):
        return empty()


def summarise(
    attempts: list[dict[str, Any]], n_jobs: int, quantiles: Any = None
) -> dict[str, Any]:
    """Fold stage attempts (REST ``StageData``) into one run's metrics.

    Only completed attempts count (a failed attempt's work was redone by a later one).
    """
    ran = [a for a in attempts if a.get("status") == "COMPLETE"]
    out = empty()
    if not ran:
        return out
    for field, name in SUMMED.items():
        values: list[Any] = [a.get(field) for a in ran]
        total = 0
        for v in values:
            if v is None:
                break
            total += int(v)
        else:
            out[name] = total
    out["stages"] = len(ran)
    out["jobs"] = n_jobs
    if quantiles is not None:
        reading = [a for a in ran if (a.get("shuffleReadBytes") or 0) > 0]
        heaviest, busiest = max(reading or ran, key=_run_time), max(ran, key=_run_time)
        out["task_skew"] = _skew(heaviest, quantiles)
        out["busiest_stage_skew"] = (out["task_skew"] if busiest is heaviest
                                     else _skew(busiest, quantiles))
        out["task_skew_tasks"] = _tasks(heaviest)
        out["busiest_stage_tasks"] = _tasks(busiest)
    return out


def _run_time(attempt: dict[str, Any]) -> int:
    return int(attempt.get("executorRunTime") or 0)


def _tasks(attempt: dict[str, Any]) -> int | None:
    n = attempt.get("numTasks")
    return None if n is None else int(n)


def _skew(attempt: dict[str, Any], quantiles: Any) -> float | None:
    """Longest task / median task of one stage attempt.

    ``None`` when unreadable, and for a stage of fewer than :data:`MIN_SKEW_TASKS` tasks.
    """
    if (attempt.get("numTasks") or 0) < MIN_SKEW_TASKS:
        return None
    median, longest = quantiles(attempt)
    if median is None or longest is None or median <= 0:
        return None
    return round(longest / median, 3)


def _settled_jobs(client: UiClient, tag: str, wait_s: float) -> list[dict[str, Any]]:
    """Poll until the tagged jobs and their stages are finished in the UI's store."""
    deadline = time.monotonic() + wait_s
    while True:
        jobs = tagged_jobs(client.get("jobs"), tag)
        done = bool(jobs) and all(j.get("status") in _TERMINAL_JOB for j in jobs)
        if done or time.monotonic() > deadline:
            return jobs if done else []
        time.sleep(0.2)


def _stage_attempts(client: UiClient, stage_id: int) -> list[dict[str, Any]]:
    try:
        data = client.get(f"stages/{stage_id}?details=false")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:  # a skipped stage that never ran, or one no longer retained
            return []
        raise
    return [a for a in data if a.get("status") in _TERMINAL_STAGE]


def _task_quantiles(client: UiClient, attempt: dict[str, Any]) -> tuple[float | None, ...]:
    path = f"stages/{attempt['stageId']}/{attempt['attemptId']}/taskSummary?quantiles=0.5,1.0"
    try:
        summary = client.get(path)
        median, longest = summary["executorRunTime"]
    except (OSError, ValueError, KeyError, TypeError):
        return (None, None)
    return (float(median), float(longest))
