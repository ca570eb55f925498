"""Regenerate fixtures/results.jsonl: synthetic results shaped like `chronojoin bench`'s.

Run: python tests/bench/make_fixture.py (deterministic; the report tests read the file).
"""

from __future__ import annotations

import json
import math
import os

RUN = "20260101T000000Z-fixture"
METHODS = {"floor": 1.0, "union": 1.6, "exploding": 1.2, "duckdb": 0.2}


def metrics(size, factor, local):
    if local:
        return dict.fromkeys(
            ["peak_execution_memory_bytes", "shuffle_write_bytes", "shuffle_read_bytes",
             "memory_spill_bytes", "disk_spill_bytes", "executor_run_time_ms", "input_bytes",
             "tasks", "stages", "jobs", "task_skew"])
    return {
        "peak_execution_memory_bytes": int(size * 900 * factor),
        "shuffle_write_bytes": int(size * 520 * factor),
        "shuffle_read_bytes": int(size * 520 * factor),
        "memory_spill_bytes": 0, "disk_spill_bytes": 0,
        "executor_run_time_ms": int(size * factor / 10), "input_bytes": size * 100,
        "tasks": 12, "stages": 3, "jobs": 2, "task_skew": 1.3,
    }


def result(master, executors, case, params, method, rep, elapsed, **extra):
    local = method == "duckdb"
    rec = {
        "kind": "result", "run_id": RUN, "family": "asof", "case": case, "params": params,
        "method": method, "baseline": method == "floor", "checked": method != "floor",
        "local": local, "repetition": rep, "status": "ok", "elapsed_s": elapsed,
        "error": None, "rows": params["n_ids"], "master": master, "executors": executors,
        "session": 0, "metrics": metrics(params["n_ids"], METHODS.get(method, 1.0), local),
    }
    rec.update(extra)
    return rec


def main():
    lines = []
    for session, (master, executors) in enumerate((("local[1]", 1), ("local[2]", 2))):
        lines.append({
            "kind": "environment", "run_id": RUN, "master": master, "executors": executors,
            "session": session,
            "environment": {
                "command": "chronojoin bench --cases asof --masters local[1],local[2]",
                "spark_version": "4.3.0", "python": "3.11.7", "java": "openjdk 17",
                "cpu_count": 2, "memory_bytes": 25 * 2**30, "git_commit": "0123456789abcdef",
                "packages": {"chronojoin": "0.1.0"},
                "spark_confs": {"spark.sql.shuffle.partitions": "200", "spark.master": master},
            },
        })
        orders = ("asc", "desc", "random") if executors == 2 else ("asc",)
        for n in (1_000, 10_000, 100_000):
            for order in orders:
                params = {"variant": "size" if order == "asc" else "order", "n_ids": n,
                          "order": order, "buckets": None, "skew": 0.0, "left_rows_per_id": 1}
                case = f"asof {params['variant']} n={n} {order}"
                for rep in range(2):
                    for method, factor in METHODS.items():
                        slow = 1.4 if order == "random" else 1.0
                        t = (0.5 + n * 2e-5 * factor * slow * math.log10(n)) * (2.2 / executors)
                        lines.append(result(master, executors, case, params, method, rep,
                                            round(t * (1 + rep / 50), 4)))
                if executors == 2 and n == 1_000 and order == "asc":
                    lines.append(result(master, executors, case, params, "wrong_fast", None,
                                        None, status="wrong", rows=999, phase="check"))
                    lines.append(result(master, executors, case, params, "spark_default",
                                        None, None, status="timeout", error="over 600 s",
                                        phase="check"))
        if executors == 2:
            for b in (20, 40):
                params = {"variant": "buckets", "n_ids": 100_000, "order": "asc",
                          "buckets": b, "skew": 0.0, "left_rows_per_id": 1}
                for method, factor in METHODS.items():
                    t = 1.0 + factor * (1 + b / 100)
                    rec = result(master, executors, f"asof buckets n=100000 asc b={b}", params,
                                 method, 0, round(t, 4))
                    rec["metrics"]["disk_spill_bytes"] = None if method == "duckdb" else 1000 * b
                    lines.append(rec)
    path = os.path.join(os.path.dirname(__file__), "fixtures", "results.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for rec in lines:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
