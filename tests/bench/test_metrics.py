"""Folding the REST API's stage data into run metrics; progress line; results files."""

from __future__ import annotations

import io
import json

from chronojoin.bench import metrics as M
from chronojoin.bench.progress import Progress
from chronojoin.bench.results import ResultsFile, read_records


def _stage(sid, status="COMPLETE", run=100, **fields):
    base = {
        "stageId": sid, "attemptId": 0, "status": status, "numTasks": 4,
        "peakExecutionMemory": 1000, "shuffleWriteBytes": 10, "shuffleReadBytes": 20,
        "memoryBytesSpilled": 0, "diskBytesSpilled": 0, "executorRunTime": run,
        "inputBytes": 5,
    }
    base.update(fields)
    return base


def test_summarise_sums_stages_and_measures_skew_of_heaviest():
    asked = []

    def quantiles(attempt):
        asked.append(attempt["stageId"])
        return (10.0, 45.0)

    out = M.summarise(
        [_stage(1), _stage(2, run=900), _stage(3, status="SKIPPED", peakExecutionMemory=None)],
        2, quantiles,
    )
    assert out["peak_execution_memory_bytes"] == 2000
    assert out["shuffle_write_bytes"] == 20 and out["shuffle_read_bytes"] == 40
    assert out["memory_spill_bytes"] == 0 and out["disk_spill_bytes"] == 0
    assert out["stages"] == 2 and out["jobs"] == 2 and out["tasks"] == 8
    assert asked == [2] and out["task_skew"] == 4.5 == out["busiest_stage_skew"]


def test_skew_is_read_from_the_heaviest_stage_that_reads_a_shuffle():
    asked = []

    def quantiles(attempt):
        asked.append(attempt["stageId"])
        return (10.0, 20.0)

    scan, join = _stage(1, run=900, shuffleReadBytes=0), _stage(2, run=300)
    out = M.summarise([scan, join], 1, quantiles)
    assert out["task_skew"] == 2.0 and out["busiest_stage_skew"] == 2.0
    assert asked == [2, 1]   # the busiest stage of all, a scan, is measured as well
    # Without any shuffle the heaviest stage is measured, once for both.
    out = M.summarise([scan, _stage(3, run=100, shuffleReadBytes=0)], 1, quantiles)
    assert asked == [2, 1, 1] and out["busiest_stage_skew"] == out["task_skew"]


def test_no_skew_from_a_stage_of_fewer_than_three_tasks():
    """Spark's median of two tasks is the longer one: the ratio would read 1.0."""
    asked = []

    def quantiles(attempt):
        asked.append(attempt["stageId"])
        return (10.0, 10.0 * attempt["numTasks"])

    scan = _stage(1, run=900, shuffleReadBytes=0, numTasks=4)
    join = _stage(2, run=300, numTasks=2)   # still the stage the skew is read from
    small = _stage(3, run=100, numTasks=3)
    out = M.summarise([scan, join, small], 1, quantiles)
    assert out["task_skew"] is None and out["task_skew_tasks"] == 2
    assert out["busiest_stage_skew"] == 4.0 and out["busiest_stage_tasks"] == 4
    assert asked == [1]
    out = M.summarise([_stage(4, numTasks=3)], 1, quantiles)
    assert out["task_skew"] == 3.0 and out["task_skew_tasks"] == 3


def test_failed_stage_attempts_are_neither_summed_nor_measured():
    def quantiles(attempt):
        return {0: (1.0, 20.0), 1: (1.0, 1.5)}[attempt["attemptId"]]

    failed = _stage(3, status="FAILED", run=90_000, shuffleReadBytes=100)
    retried = _stage(3, run=60_000, shuffleReadBytes=100, attemptId=1)
    out = M.summarise([failed, retried], 1, quantiles)
    assert out["shuffle_read_bytes"] == 100 and out["executor_run_time_ms"] == 60_000
    assert out["stages"] == 1 and out["tasks"] == 4
    assert out["task_skew"] == 1.5 == out["busiest_stage_skew"]


def test_unreadable_values_are_none_never_zero():
    out = M.summarise([_stage(1), _stage(2, diskBytesSpilled=None)], 1, lambda a: (0.0, 5.0))
    assert out["disk_spill_bytes"] is None and out["memory_spill_bytes"] == 0
    assert out["task_skew"] is None  # median 0: no ratio
    assert M.summarise([], 0) == M.empty()
    assert all(v is None for v in M.summarise([_stage(1, status="SKIPPED")], 1).values())


def test_tagged_jobs_match_spark_prefixed_tags():
    jobs = [
        {"jobId": 1, "jobTags": ["spark-session-x", "spark-session-x-thread-y-cjbench-1-5"]},
        {"jobId": 2, "jobTags": ["spark-session-x", "spark-session-x-thread-y-cjbench-11-5"]},
        {"jobId": 3, "jobTags": ["cjbench-1-5"]},
        {"jobId": 4},
    ]
    assert [j["jobId"] for j in M.tagged_jobs(jobs, "cjbench-1-5")] == [1, 3]


def test_progress_line_and_results_file(tmp_path):
    stream = io.StringIO()
    bar = Progress(4, stream=stream, width=8)
    bar.step("case a", advance=0)
    bar.step("case b")
    bar.step("case c", advance=2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[........] 0/4") and lines[0].endswith("case a")
    assert lines[2].startswith("[######..] 3/4")
    quiet = io.StringIO()
    Progress(1, stream=quiet, enabled=False).step("x")
    assert quiet.getvalue() == ""

    results = ResultsFile(str(tmp_path / "r"), "run1")
    results.append({"kind": "result", "elapsed_s": 1.5})
    results.append({"kind": "environment"})
    assert results.path.endswith("run1.jsonl")
    records = list(read_records([str(tmp_path / "r")]))
    assert records == [
        {"kind": "result", "elapsed_s": 1.5, "run_id": "run1"},
        {"kind": "environment", "run_id": "run1"},
    ]
    with open(results.path, encoding="utf-8") as fh:
        assert json.loads(fh.readline())["run_id"] == "run1"
