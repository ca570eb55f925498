"""Point-in-interval and interval-overlap joins."""

from chronojoin.interval_join.api import interval_join

__all__ = ["interval_join"]
