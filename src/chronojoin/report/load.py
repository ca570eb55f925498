"""Stored results -> pandas tables: one row per timed run, medians per method."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pandas as pd

from chronojoin.bench.metrics import NAMES as METRICS
from chronojoin.bench.results import read_records, session_label

#: Keys identifying one measured configuration within a run: ``session`` is the master's
#: place in ``--masters`` (``local[2],local[2]`` runs two sessions of one master).
GROUP = ["run_id", "master", "session", "family", "case", "method"]


def load(paths: Iterable[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return ``(results, environments)``: flat result rows and environment rows."""
    results: list[dict[str, Any]] = []
    envs: list[dict[str, Any]] = []
    for rec in read_records(paths):
        if rec.get("kind") == "environment":
            envs.append(rec)
        elif rec.get("kind") == "result":
            results.append(_flatten(rec))
    return pd.DataFrame(results), pd.DataFrame(envs)


def _flatten(rec: dict[str, Any]) -> dict[str, Any]:
    row = {k: v for k, v in rec.items() if k not in ("metrics", "params")}
    params = rec.get("params") or {}
    for key, value in params.items():
        row[f"p_{key}"] = value
    row["size"] = next(
        (params[k] for k in ("n_ids", "size", "rows", "points") if params.get(k) is not None),
        None,
    )
    metrics = rec.get("metrics") or {}
    for name in METRICS:
        row[name] = metrics.get(name)
    return row


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Medians over repetitions per (run, master, session, family, case, method), and ratios.

    ``relative`` is the method's median time divided by the median time of the case's
    baseline method in the same run and session. ``label`` names the master as tables
    show it: ``local[2]``, or ``local[2] (session 2)`` when the run started more than one
    session of that master (the number is the master's place in ``--masters``).
    ``status`` is ``ok`` when every timed run succeeded, ``ok (1 timeout)`` (and the
    like) when some did and others failed (the median is then of the runs that
    finished, which the slow ones are not), else the failure (``wrong``, ``disagree``,
    ``timeout``, ``error``). ``check`` is what the answer check found (``None`` in
    results of releases that did not record it).
    """
    if results.empty:
        return pd.DataFrame()
    df = results.copy()
    for col in ("master", "family"):
        df[col] = df[col].fillna("") if col in df else ""
    df["session"] = df["session"].fillna(-1) if "session" in df else -1  # older results
    rows = []
    for key, group in df.groupby(GROUP, sort=False, dropna=False):
        ok = group[group["status"] == "ok"]
        first = group.iloc[0]
        row = dict(zip(GROUP, key, strict=True))
        row.update({
            "baseline": bool(first.get("baseline", False)),
            "runs": len(ok),
            "status": _status(group, len(ok)),
            "checked": first.get("checked"),
            "check": _first(group, "check"),
            "error": None if len(ok) else group["error"].dropna().astype(str).head(1).squeeze()
            if group["error"].notna().any() else None,
            "elapsed_s": _median(ok["elapsed_s"]),
            "elapsed_min_s": _min(ok["elapsed_s"]),
            "executors": first.get("executors"),
            "size": first.get("size"),
        })
        for col in df.columns:
            if col.startswith("p_"):
                row[col] = first[col]
        for name in METRICS:
            row[name] = _median(ok[name]) if name in ok else None
        rows.append(row)
    out = pd.DataFrame(rows)
    out["label"] = session_labels(out)
    return _relative(out)


def session_labels(rows: pd.DataFrame) -> pd.Series:
    """``master``, or ``master (session k)`` for a master started in several sessions of a run.

    ``rows`` holds ``run_id``, ``master`` and ``session`` (summary or environment rows);
    ``k`` counts from 1, the master's place in the run's ``--masters``.
    """
    if rows.empty:
        return pd.Series(dtype=object)
    master = rows["master"].fillna("").astype(str)
    if "session" not in rows:
        return master
    session = pd.to_numeric(rows["session"], errors="coerce")
    keys = [rows["run_id"], master] if "run_id" in rows else [master]
    several = session.groupby(keys).transform("nunique") > 1
    labels = [session_label(m, None if pd.isna(s) else s, bool(v))
              for m, s, v in zip(master, session, several)]
    return pd.Series(labels, index=rows.index, dtype=object)


def _status(group: pd.DataFrame, n_ok: int) -> str:
    """``ok``, ``ok (1 timeout)`` when some timed runs failed, else the first failure."""
    if not n_ok:
        return str(group["status"].iloc[0])
    failed = Counter(str(s) for s in group["status"] if s != "ok")
    if not failed:
        return "ok"
    return "ok (" + ", ".join(f"{n} {s}" for s, n in sorted(failed.items())) + ")"


def _first(group: pd.DataFrame, column: str) -> Any:
    if column not in group:
        return None
    values = group[column].dropna()
    return values.iloc[0] if len(values) else None


def _relative(summary: pd.DataFrame) -> pd.DataFrame:
    keys = ["run_id", "master", "session", "family", "case"]
    base = summary[summary["baseline"] & summary["elapsed_s"].notna()]
    base = base.groupby(keys, dropna=False)["elapsed_s"].first().rename("baseline_s")
    merged = summary.merge(base.reset_index(), on=keys, how="left")
    merged["relative"] = merged["elapsed_s"] / merged["baseline_s"]
    return merged


def _median(values: pd.Series) -> float | None:
    clean = pd.to_numeric(values, errors="coerce").dropna()
    return float(clean.median()) if len(clean) else None


def _min(values: pd.Series) -> float | None:
    clean = pd.to_numeric(values, errors="coerce").dropna()
    return float(clean.min()) if len(clean) else None
