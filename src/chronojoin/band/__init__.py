"""Band (time-range) joins."""

from chronojoin.band.api import band_join

__all__ = ["band_join"]
