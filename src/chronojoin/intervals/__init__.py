"""Interval aggregation without a join."""

from chronojoin.intervals.api import interval_aggregate

__all__ = ["interval_aggregate"]
