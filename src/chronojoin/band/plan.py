"""The band join as a binned range join (see :mod:`chronojoin._plan.binned_join`).

Two ways to bin a band join with a constant window ``[lower, upper]``:

* *replicate left*: each left row covers ``[t + lower, t + upper]``, a right row is a
  point; used for per-row windows, float time columns, and when left is smaller;
* *replicate right*: each right row covers ``[r - upper, r - lower]`` (exact in integer
  arithmetic), a left row is a point; used when right is smaller, and for ``how="left"``
  (a left row then has one copy, so a plain left outer join returns it exactly once).

The exact predicate ``t + lower <= r <= t + upper`` (``<`` on open bounds) is the same
in both.
"""

from __future__ import annotations

import warnings

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._plan import binned_join as J
from chronojoin._plan.binning import choose_bin_size, side_stats
from chronojoin._typing import Closed
from chronojoin._validate.columns import col
from chronojoin._validate.timetypes import TimeKind, ordinal
from chronojoin.band.spec import BandSpec, Bound, BoundMode
from chronojoin.errors import PerformanceWarning

_T, _LO, _HI = "_cj_t", "_cj_wlo", "_cj_whi"
_R, _RLO, _RHI = "_cj_r", "_cj_rlo", "_cj_rhi"
#: warn when an explicit bin size copies every row into more bins than this
_MANY_COPIES = 100_000


def plan_band(spec: BandSpec) -> DataFrame:
    """Build the lazy plan of a validated band join."""
    left, lmap = J.internal(spec.left, "l")
    right, rmap = J.internal(spec.right, "r")
    t = ordinal(col(lmap[spec.left_on]), spec.left_kind)
    left = left.withColumn(_T, t)
    left = left.withColumn(_LO, _window_end(spec.lower, F.col(_T), lmap))
    left = left.withColumn(_HI, _window_end(spec.upper, F.col(_T), lmap))
    right = right.withColumn(_R, ordinal(col(rmap[spec.right_on]), spec.right_kind))
    columns_l = tuple(lmap[c] for c in spec.left.columns)
    columns_r = tuple(rmap[c] for c in spec.right.columns)
    keys_l = tuple(lmap[k] for k in spec.keys.left)
    keys_r = tuple(rmap[k] for k in spec.keys.right)
    condition = _condition(spec.closed, F.col(_LO), F.col(_R), F.col(_HI))
    integral = spec.kind is not TimeKind.FLOAT
    bin_size = spec.bin_size
    if spec.constant:
        width = float(spec.upper.value) - float(spec.lower.value)  # type: ignore[arg-type]
        replicate_right, bin_size = _choose_side(spec, left, right, width)
        if bin_size is not None and abs(width) / bin_size > _MANY_COPIES:
            warnings.warn(
                f"`bin_size` {spec.bin_size!r} copies every row into about "
                f"{abs(width) / bin_size:.0f} bins; a larger bin size (or None) is faster",
                PerformanceWarning, stacklevel=3,
            )
    else:
        replicate_right, width = False, None
    if replicate_right:
        right = right.withColumn(_RLO, F.col(_R) - F.lit(spec.upper.value))
        right = right.withColumn(_RHI, F.col(_R) - F.lit(spec.lower.value))
        lside = J.RangeSide(left, columns_l, keys_l, F.col(_T))
        rside = J.RangeSide(right, columns_r, keys_r, F.col(_RLO), F.col(_RHI), width)
    else:
        lside = J.RangeSide(left, columns_l, keys_l, F.col(_LO), F.col(_HI), width)
        rside = J.RangeSide(right, columns_r, keys_r, F.col(_R))
    join = J.RangeJoin(lside, rside, condition, spec.how, bin_size, integral)
    result = J.plan_range_join(join)
    return J.finish(result, list(spec.left.columns), lmap, spec.outputs, rmap)


def _choose_side(
    spec: BandSpec, left: DataFrame, right: DataFrame, width: float
) -> tuple[bool, float | None]:
    """Which side to replicate (True: right) and the bin size, for a constant window."""
    integral = spec.kind is not TimeKind.FLOAT
    exact = integral and all(isinstance(b.value, int) for b in (spec.lower, spec.upper))
    if spec.bin_size is not None:
        return exact, float(spec.bin_size)
    ls = side_stats(left, F.col(_T), F.col(_T))
    rs = side_stats(right, F.col(_R), F.col(_R))
    replicate_right = exact and (spec.how == "left" or rs.count <= ls.count)
    rep, probe = (rs, ls) if replicate_right else (ls, rs)
    return replicate_right, choose_bin_size(rep, probe, integral=integral, window=width)


def _window_end(bound: Bound, t: Column, lmap: dict[str, str]) -> Column:
    """One end of a left row's window, in ordinal units."""
    if bound.column is None:
        return t + F.lit(bound.value)
    c = col(lmap[bound.column])
    if bound.mode is BoundMode.ABSOLUTE:
        assert bound.kind is not None
        return ordinal(c, bound.kind)
    if bound.mode is BoundMode.OFFSET:
        assert bound.kind is not None
        return t + ordinal(c, bound.kind)
    if bound.mode is BoundMode.INTERVAL:
        return t + F.unix_micros(F.timestamp_micros(F.lit(0)) + c)
    seconds = ordinal(c, TimeKind.FLOAT)
    return t + F.round(seconds * F.lit(1_000_000.0)).cast("long")


def _condition(closed: Closed, lo: Column, r: Column, hi: Column) -> Column:
    """``lo <= r <= hi`` with ``<`` on the open bounds."""
    low = lo <= r if closed in ("both", "left") else lo < r
    high = r <= hi if closed in ("both", "right") else r < hi
    return low & high
