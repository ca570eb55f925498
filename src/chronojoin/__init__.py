"""chronojoin: joins by time on Apache Spark, as ordinary Spark plans.

>>> import chronojoin as cj
>>> sorted(cj.__all__)[:3]
['ChronojoinError', 'ColumnNotFoundError', 'ConcurrentWriterError']
"""

from __future__ import annotations

from chronojoin.asof import Right, asof_join
from chronojoin.band import band_join
from chronojoin.errors import (
    ChronojoinError,
    ChronojoinWarning,
    ColumnNotFoundError,
    ConcurrentWriterError,
    DurationError,
    IndexRebuiltWarning,
    InvalidArgumentError,
    LoaderError,
    PerformanceWarning,
    SchemaMismatchError,
    TimeTypeError,
)
from chronojoin.interval_join import interval_join
from chronojoin.intervals import interval_aggregate
from chronojoin.loader import IncrementalLoader, LoadReport

__version__ = "0.1.0"

__all__ = [
    "ChronojoinError",
    "ChronojoinWarning",
    "ColumnNotFoundError",
    "ConcurrentWriterError",
    "DurationError",
    "IncrementalLoader",
    "IndexRebuiltWarning",
    "InvalidArgumentError",
    "LoadReport",
    "LoaderError",
    "PerformanceWarning",
    "Right",
    "SchemaMismatchError",
    "TimeTypeError",
    "asof_join",
    "band_join",
    "interval_aggregate",
    "interval_join",
]
