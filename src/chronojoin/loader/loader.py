"""``IncrementalLoader`` (placeholder until implemented)."""

from __future__ import annotations

from typing import Any


class IncrementalLoader:
    """Deduplicating incremental loader (not implemented yet)."""

    def __init__(self, spark: Any, **kwargs: Any) -> None:
        raise NotImplementedError("IncrementalLoader")
