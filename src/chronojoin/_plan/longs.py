"""Long time ordinals shifted by offsets of any size: exact, saturated, never an overflow."""

from __future__ import annotations

from decimal import Decimal

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.timetypes import LONG_MAX, LONG_MIN

#: an offset beyond this moves every long out of the long range (exact as a double too)
BEYOND = 2**65


def within_beyond(value: int | float) -> int | float:
    """A whole offset or width clamped to ``[-BEYOND, BEYOND]``; floats as they are.

    Past :data:`BEYOND` every whole duration acts on long times as ``BEYOND`` does,
    and one such as ``10**400`` would not even convert to a float.
    """
    return max(-BEYOND, min(value, BEYOND)) if isinstance(value, int) else value
WIDE = T.DecimalType(38, 0)


def shifted(t: Column, offset: Column | int, *, low: bool, adjust: int = 0) -> Column:
    """``t + offset + adjust`` as a long window end, exact, never an overflow error.

    Long arithmetic (``try_add``) on the hot path; only a row whose sum leaves the long
    range is recomputed in decimal and saturated: a low end below ``Long.MIN`` is
    ``Long.MIN`` (every time is above it), above ``Long.MAX`` NULL (no time is); a high
    end above ``Long.MAX`` is ``Long.MAX``, below ``Long.MIN`` NULL.
    """
    if isinstance(offset, int):
        total = offset + adjust
        if total == 0:
            return t
        wide = t.cast(WIDE) + F.lit(Decimal(max(-BEYOND, min(total, BEYOND))))
        if not LONG_MIN <= total <= LONG_MAX:
            return _saturated(wide, low=low)
        fast = F.try_add(t, F.lit(total))
    else:
        wide = t.cast(WIDE) + offset.cast(WIDE) + F.lit(adjust)
        step = offset.try_cast("long")
        fast = F.try_add(t, F.try_add(step, F.lit(adjust)) if adjust else step)
    return F.coalesce(fast, _saturated(wide, low=low))


def _saturated(wide: Column, *, low: bool) -> Column:
    """A decimal window end as a long: open-ended (a long bound) or empty (NULL) beyond."""
    lmin, lmax = F.lit(LONG_MIN), F.lit(LONG_MAX)
    if low:
        return F.when(wide < lmin, lmin).when(wide <= lmax, wide.cast("long"))
    return F.when(wide > lmax, lmax).when(wide >= lmin, wide.cast("long"))
