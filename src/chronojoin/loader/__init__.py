"""Deduplicating incremental loads with a persisted key index.

``loader.py`` orchestrates; ``spec.py`` validates; ``plan.py`` builds the Spark plans
(batch statistics, the exact-value partitioner, deduplication); ``index.py`` keeps the
per-partition key index; ``commit.py`` holds the commit protocol and recovery;
``lock.py`` the single-writer lock; ``target.py`` directory and metastore targets.
"""

from chronojoin.loader.loader import IncrementalLoader
from chronojoin.loader.report import CheckReport, LoadReport

__all__ = ["CheckReport", "IncrementalLoader", "LoadReport"]
