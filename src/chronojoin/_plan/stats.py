"""Cheap statistics for strategy choice: row counts and approximate distinct keys.

One aggregate job per input, reading only the key columns (Parquet prunes the rest).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from chronojoin._validate.columns import col


@dataclass(frozen=True)
class SideStats:
    """Rows and approximate distinct key combinations of one input."""

    rows: int
    keys: int

    @property
    def rows_per_key(self) -> float:
        """Average rows per key (0 for an empty input)."""
        return self.rows / self.keys if self.keys else 0.0


def side_stats(df: DataFrame, keys: tuple[str, ...]) -> SideStats:
    """Count rows and approximately count distinct keys in one job."""
    if keys:
        distinct = F.approx_count_distinct(F.struct(*[col(k) for k in keys]), 0.05)
    else:
        distinct = F.lit(1)
    row = df.select(*[col(k) for k in keys]).agg(
        F.count(F.lit(1)).alias("rows"), distinct.alias("keys")
    ).first()
    if row is None:
        return SideStats(0, 0)
    return SideStats(int(row["rows"]), int(row["keys"] or 0))


def frequent_keys(df: DataFrame, keys: tuple[str, ...], share: float) -> list[tuple[object, ...]]:
    """Key combinations that may hold more than ``share`` of the rows (one job).

    Uses ``DataFrame.stat.freqItems``: every key above the share is returned; a few
    below it may be too (false positives cost a little speed, never correctness).
    """
    if not keys:
        return []
    packed = df.select(F.struct(*[col(k) for k in keys]).alias("__key"))
    row = packed.stat.freqItems(["__key"], support=share).first()
    if row is None:
        return []
    found = [tuple(item) for item in (row[0] or []) if item is not None]
    return [values for values in found if all(v is not None for v in values)]
