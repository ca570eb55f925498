"""Public ``asof_join``."""

from __future__ import annotations

from typing import Any


def asof_join(left: Any, right: Any, **kwargs: Any) -> Any:
    """As-of join (being written)."""
    raise NotImplementedError
