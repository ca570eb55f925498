"""``LoadReport`` (placeholder until implemented)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoadReport:
    """What one ``append`` did."""

    rows_in: int
    rows_appended: int
    duplicates_in_batch: int
    duplicates_existing: int
    partitions_touched: int
    seconds: float
