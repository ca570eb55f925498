"""Public ``interval_join`` (placeholder until implemented)."""

from __future__ import annotations

from typing import Any


def interval_join(left: Any, right: Any, **kwargs: Any) -> Any:
    """Interval join (not implemented yet)."""
    raise NotImplementedError("interval_join")
