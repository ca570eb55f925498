"""Point-in-time (as-of) joins."""

from chronojoin.asof.api import asof_join
from chronojoin.asof.spec import Right

__all__ = ["Right", "asof_join"]
