"""Deduplicating incremental loads with a persisted key index."""

from chronojoin.loader.loader import IncrementalLoader
from chronojoin.loader.report import LoadReport

__all__ = ["IncrementalLoader", "LoadReport"]
