"""Public ``interval_aggregate`` (placeholder until implemented)."""

from __future__ import annotations

from typing import Any


def interval_aggregate(points: Any, intervals: Any, **kwargs: Any) -> Any:
    """Aggregate the intervals covering each point (not implemented yet)."""
    raise NotImplementedError("interval_aggregate")
