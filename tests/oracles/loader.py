"""pandas reference of the incremental loader, and a Spark-free reader of a table.

Reference semantics: among batch rows sharing (partition value, key), the first by
``order_by`` wins; keys already stored in that partition are dropped.
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow.parquet as pq


def reference(stored: pd.DataFrame | None, batch: pd.DataFrame, *, keys: list[str],
              partition_by: str, order_by: list[str]) -> tuple[pd.DataFrame, int, int]:
    """``(rows to append, duplicates_in_batch, duplicates_existing)``."""
    ident = [partition_by, *keys]
    first = (batch.sort_values(order_by, kind="stable") if order_by else batch)
    first = first.drop_duplicates(subset=ident, keep="first")
    in_batch = len(batch) - len(first)
    if stored is None or stored.empty:
        return first.reset_index(drop=True), in_batch, 0
    seen = stored[ident].drop_duplicates()
    m = first.merge(seen, on=ident, how="left", indicator=True)
    new = m[m["_merge"] == "left_only"].drop(columns="_merge")
    return new.reset_index(drop=True), in_batch, len(first) - len(new)


def visible_files(root: str) -> list[str]:
    """Data files a reader of the table sees (hidden names skipped)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(("_", "."))]
        out += [os.path.join(dirpath, f) for f in filenames if not f.startswith(("_", "."))]
    return sorted(out)


def read_table(root: str, partition_by: str) -> pd.DataFrame:
    """The table's rows via pyarrow (no Spark), partition column as a string."""
    files = visible_files(root)
    if not files:
        return pd.DataFrame()
    frames = []
    for f in files:
        t = pq.read_table(f).to_pandas()
        value = os.path.basename(os.path.dirname(f)).split("=", 1)[1]
        t[partition_by] = value
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


def all_files_readable(root: str) -> bool:
    """Every visible data file is a complete Parquet file."""
    for f in visible_files(root):
        try:
            pq.read_metadata(f)
        except Exception:
            return False
    return True


__all__ = ["all_files_readable", "read_table", "reference", "visible_files"]
