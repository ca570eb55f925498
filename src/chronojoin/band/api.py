"""Public ``band_join`` (placeholder until implemented)."""

from __future__ import annotations

from typing import Any


def band_join(left: Any, right: Any, **kwargs: Any) -> Any:
    """Band join (not implemented yet)."""
    raise NotImplementedError("band_join")
