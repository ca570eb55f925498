"""Seeded benchmark data generators (thesis section 3.3.1) and their storage."""

from __future__ import annotations

from chronojoin.datagen.store import (
    THESIS_BUCKETS,
    dataset_name,
    parse_buckets,
    write_bucketed,
    write_tables,
)
from chronojoin.datagen.thesis import HOT_ID, YEAR, thesis

__all__ = [
    "HOT_ID",
    "THESIS_BUCKETS",
    "YEAR",
    "dataset_name",
    "parse_buckets",
    "thesis",
    "write_bucketed",
    "write_tables",
]
