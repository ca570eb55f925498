"""Markdown tables from summaries: results with ratios, growth, memory, speedup."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from chronojoin.bench.metrics import MIN_SKEW_TASKS
from chronojoin.report.load import session_labels
from chronojoin.report.plots import has_studies, is_standalone, size_rows, size_unit


def fmt_bytes(value: Any) -> str:
    """``1536`` -> ``1.5 KiB``; unavailable -> ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover


def fmt_num(value: Any, digits: int = 2, suffix: str = "") -> str:
    """Format a number with ``digits`` decimals; unavailable -> ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.{digits}f}{suffix}"


def fmt_skew(value: Any, tasks: Any) -> str:
    """A task skew; none read from a stage of too few tasks -> ``n/a (2 tasks)``."""
    if _missing(value) and not _missing(tasks) and float(tasks) < MIN_SKEW_TASKS:
        n = round(float(tasks))
        return f"n/a ({n} task{'' if n == 1 else 's'})"
    return fmt_num(value, 2)


def fmt_check(row: Any) -> str:
    """What the answer check found; ``-`` for a method outside it, ``n/a`` if unrecorded."""
    checked = row.get("checked")
    if not _missing(checked) and not bool(checked):
        return "-"
    check = row.get("check")
    return "n/a" if _missing(check) else str(check)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def markdown(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Format a GitHub-flavoured Markdown table."""
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def results_table(summary: pd.DataFrame) -> str:
    """Per case and method: median time, ratio to the baseline, and the metrics."""
    header = [
        "master", "case", "method", "median s", "relative", "runs", "peak exec mem",
        "shuffle write", "shuffle read", "mem spill", "disk spill", "task skew",
        "busiest-stage skew", "check", "status",
    ]
    rows = []
    for _, r in summary.iterrows():
        status = r["status"] if r["status"] == "ok" else f"**{r['status']}**"
        if r["status"] != "ok" and isinstance(r.get("error"), str):
            status += f" ({r['error'][:80]})"
        method = f"{r['method']} (baseline)" if r["baseline"] else r["method"]
        rows.append([
            r.get("label", r["master"]), r["case"], method, fmt_num(r["elapsed_s"], 3),
            fmt_num(r.get("relative"), 2, "x"), r["runs"],
            fmt_bytes(r.get("peak_execution_memory_bytes")),
            fmt_bytes(r.get("shuffle_write_bytes")), fmt_bytes(r.get("shuffle_read_bytes")),
            fmt_bytes(r.get("memory_spill_bytes")), fmt_bytes(r.get("disk_spill_bytes")),
            fmt_skew(r.get("task_skew"), r.get("task_skew_tasks")),
            fmt_skew(r.get("busiest_stage_skew"), r.get("busiest_stage_tasks")),
            fmt_check(r), status,
        ])
    return markdown(header, rows)


def growth_table(summary: pd.DataFrame) -> str:
    """Table 5.1 analogue: least-squares line of elapsed seconds on ids, per order/method.

    Also the growth exponent (slope of log time on log ids): ~1 is linear, and
    ``n log n`` shows as slightly above 1 over these sizes. Each size study other than
    the as-of size/order one (a variant such as ``few_pairs``) has lines of its own.
    """
    df = size_rows(summary)
    rows = []
    keys, header = _study_keys(df)
    keys, header = [*keys, "method"], [*header, "method"]
    for key, raw in _with_variant(df).groupby(keys, sort=True):
        g = raw.dropna(subset=["elapsed_s", "size"])
        if g["size"].nunique() < 2:
            continue
        x = g["size"].astype(float).to_numpy()
        y = g["elapsed_s"].astype(float).to_numpy()
        slope, intercept = np.polyfit(x, y, 1)
        exponent = np.polyfit(np.log(x), np.log(np.maximum(y, 1e-9)), 1)[0]
        names = key if isinstance(key, tuple) else (key,)
        rows.append([*names, f"{slope:.3e}", f"{intercept:.3f}", f"{exponent:.2f}", len(g)])
    if not rows:
        return ""
    per = {"ids": "id", "points": "point", "table rows": "row", "rows per side": "row"}
    slope = f"slope (s/{per.get(size_unit(summary), 'unit')})"
    return markdown([*header, slope, "intercept (s)", "exponent", "sizes"], rows)


def _study_keys(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Grouping columns (of :func:`_with_variant`) and headers for the variant and order."""
    keys, header = [], []
    if has_studies(df):
        keys.append("_variant")
        header.append("variant")
    if _has_order(df):
        keys.append("p_order")
        header.append("order")
    return keys, header


def _with_variant(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a column ``_variant``: the variant, ``-`` for rows without one."""
    variant = df["p_variant"] if "p_variant" in df else pd.Series(None, index=df.index)
    return df.assign(_variant=variant.fillna("-").astype(str))


def _has_order(df: pd.DataFrame) -> bool:
    """Whether rows carry a row order (a family without one has ``p_order`` all empty)."""
    return "p_order" in df and bool(df["p_order"].notna().any())


def memory_table(summary: pd.DataFrame) -> str:
    """Table 5.2 analogue: peak execution memory and shuffle bytes written, ascending data."""
    df = _with_variant(size_rows(summary))
    if "p_order" in df:
        df = df[df["p_order"].isin(["asc"]) | df["p_order"].isna()]
    studies = has_studies(df)
    rows = [
        [*([r["_variant"]] if studies else []), int(r["size"]), r["method"],
         fmt_bytes(r.get("peak_execution_memory_bytes")),
         fmt_bytes(r.get("shuffle_write_bytes"))]
        for _, r in df.sort_values(["_variant", "size", "method"]).iterrows()
    ]
    if not rows:
        return ""
    return markdown([*(["variant"] if studies else []), size_unit(summary), "method",
                     "peak execution memory", "shuffle bytes written"], rows)


def speedup_table(summary: pd.DataFrame) -> str:
    """Table 5.3 analogue: S = elapsed(fewest executors) / elapsed(master), eq. (5.2).

    One column per master after the baseline (the first master with the fewest
    executors), named by :func:`master_label`: ``local[2]`` and a standalone cluster
    of two workers stay apart, as their times differ. A master started in several
    sessions of the run (``--masters local[2],local[2]``) counts with the median of its
    sessions' times.
    """
    df = _with_variant(size_rows(summary))
    df = df[df["executors"].notna() & df["master"].notna()]
    if df["executors"].nunique() < 2:
        return ""
    masters = df.drop_duplicates("master").sort_values("executors", kind="stable")
    order = [(m, int(n)) for m, n in zip(masters["master"], masters["executors"], strict=True)]
    (first, _), rest = order[0], order[1:]
    rows = []
    studies = has_studies(df)
    ordered = _has_order(df)
    group_keys = (["_variant"] if studies else []) + ["method", "size"] + (
        ["p_order"] if ordered else [])
    at = group_keys.index("size")
    for key, g in df.groupby(group_keys, sort=True):
        by_master = g.groupby("master")["elapsed_s"].median()
        if first not in by_master or not by_master[first]:
            continue
        base = by_master[first]
        names = list(key) if isinstance(key, tuple) else [key]
        names[at] = int(names[at])
        rows.append([*names, *(fmt_num(base / by_master[m], 2) if m in by_master else "n/a"
                               for m, _ in rest)])
    header = (["variant"] if studies else []) + ["method", size_unit(summary)] + (
        ["order"] if ordered else [])
    return markdown([*header, *(f"S({master_label(m, n)})" for m, n in rest)], rows)


def master_label(master: str, executors: int) -> str:
    """A master as reports name it: ``local[2]``, or ``standalone x2`` for a cluster.

    A standalone master's URL carries a port drawn for the run, which says nothing.
    """
    return f"standalone x{executors}" if is_standalone(master) else master


def environment_table(envs: pd.DataFrame) -> str:
    """Versions, master, executors, cores, memory and the main Spark confs per session."""
    keys = (
        "spark.sql.shuffle.partitions", "spark.driver.memory", "spark.executor.memory",
        "spark.sql.adaptive.enabled", "spark.executor.cores", "spark.cores.max",
    )
    rows = []
    labels = session_labels(envs)
    for i, e in envs.iterrows():
        env = e.get("environment") or {}
        pk = env.get("packages") or {}
        confs = env.get("spark_confs") or {}
        conf_text = ", ".join(f"{k}={confs[k]}" for k in keys if k in confs) or "defaults"
        rows.append([
            labels[i], e.get("executors"), env.get("spark_version"),
            pk.get("chronojoin"), env.get("python"), env.get("java"), env.get("cpu_count"),
            fmt_bytes(env.get("memory_bytes")), _commit(env), conf_text,
        ])
    header = [
        "master", "executors", "Spark", "chronojoin", "Python", "Java", "CPUs", "memory",
        "commit", "Spark confs",
    ]
    return markdown(header, rows)


def _commit(env: dict[str, Any]) -> str:
    """The run's commit, shortened, marked when tracked files had uncommitted changes."""
    commit = (env.get("git_commit") or "n/a")[:10]
    return f"{commit} (modified)" if env.get("git_modified") else commit
