"""The band join as a binned range join (see :mod:`chronojoin._plan.binned_join`).

Two ways to bin a band join with a constant window ``[lower, upper]``:

* *replicate left*: each left row covers ``[t + lower, t + upper]``, a right row is a
  point; used for per-row windows, float time columns, and when left is smaller;
* *replicate right*: each right row covers ``[r - upper, r - lower]`` (exact in integer
  arithmetic), a left row is a point; used when right is smaller, and for ``how="left"``
  (a left row then has one copy, so a plain left outer join returns it exactly once).

The exact predicate ``t + lower <= r <= t + upper`` (``<`` on open bounds) is the same
in both. With integer (and temporal) time columns and integer offsets every window end
is an exact long: an open end becomes a closed one (``t + lower < r`` is
``t + lower + 1 <= r``), and an end beyond the long range makes the window open-ended
(below ``Long.MIN``: every time is above it) or empty (a low end above ``Long.MAX``).
Float ends are doubles compared as Spark compares them (``+-inf``, NaN above ``+inf``).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from decimal import Decimal

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._plan import binned_join as J
from chronojoin._plan import stats as plan_stats
from chronojoin._plan.binning import choose_bin_size, sides_stats
from chronojoin._plan.longs import BEYOND, shifted
from chronojoin._plan.stats import small_inputs
from chronojoin._validate.columns import col
from chronojoin._validate.timetypes import TimeKind, interval_micros, ordinal
from chronojoin.band.spec import BandSpec, Bound, BoundMode

_T, _LO, _HI = "_cj_t", "_cj_wlo", "_cj_whi"
_R, _RLO, _RHI = "_cj_r", "_cj_rlo", "_cj_rhi"
#: Inputs whose estimated sizes add up to at most this many bytes get bins as wide as
#: a constant window without statistics (0 turns that off; BENCHMARKS.md).
SMALL_INPUT_BYTES = plan_stats.SMALL_INPUT_BYTES
#: Frames Spark cannot size count as small with at most this many rows in all.
SMALL_INPUT_ROWS = plan_stats.SMALL_INPUT_ROWS

log = logging.getLogger("chronojoin.band")


@dataclass(frozen=True)
class _End:
    """One end of the window: its column, whether it is inclusive, its constant offset."""

    column: Column
    closed: bool
    offset: int | float | None = None


def plan_band(spec: BandSpec) -> DataFrame:
    """Build the lazy plan of a validated band join."""
    left, lmap = J.internal(spec.left, "l")
    right, rmap = J.internal(spec.right, "r")
    left = left.withColumn(_T, J.join_ordinal(col(lmap[spec.left_on]), spec.left_kind))
    low = _window_end(spec, spec.lower, F.col(_T), lmap, low=True)
    high = _window_end(spec, spec.upper, F.col(_T), lmap, low=False)
    left = left.withColumn(_LO, low.column).withColumn(_HI, high.column)
    right = right.withColumn(_R, J.join_ordinal(col(rmap[spec.right_on]), spec.right_kind))
    columns_l = tuple(lmap[c] for c in spec.left.columns)
    columns_r = tuple(rmap[c] for c in spec.right.columns)
    keys_l = tuple(lmap[k] for k in spec.keys.left)
    keys_r = tuple(rmap[k] for k in spec.keys.right)
    condition = _condition(F.col(_LO), low.closed, F.col(_R), F.col(_HI), high.closed)
    integral = spec.kind is not TimeKind.FLOAT
    bin_size = spec.bin_size
    if spec.constant:
        assert low.offset is not None and high.offset is not None
        width = float(high.offset) - float(low.offset)
        replicate_right, bin_size = _choose_side(spec, (left, keys_l), (right, keys_r), width)
    else:
        replicate_right, width = False, None
    if replicate_right:
        assert isinstance(low.offset, int) and isinstance(high.offset, int)
        right = right.withColumn(_RLO, shifted(F.col(_R), -high.offset, low=True))
        right = right.withColumn(_RHI, shifted(F.col(_R), -low.offset, low=False))
        lside = J.RangeSide(left, columns_l, keys_l, F.col(_T))
        rside = J.RangeSide(right, columns_r, keys_r, F.col(_RLO), F.col(_RHI), width)
    else:
        lside = J.RangeSide(left, columns_l, keys_l, F.col(_LO), F.col(_HI), width)
        rside = J.RangeSide(right, columns_r, keys_r, F.col(_R))
    join = J.RangeJoin(lside, rside, condition, spec.how, bin_size, integral)
    grid = J.choose_grid(join)
    if not spec.constant:  # a constant window's choice is logged by _choose_side
        log.info("band_join: per-row windows: %s", grid.reason)
    result = J.plan_range_join(join, grid)
    return J.finish(result, list(spec.left.columns), lmap, spec.outputs, rmap)


def _choose_side(
    spec: BandSpec,
    left: tuple[DataFrame, tuple[str, ...]],
    right: tuple[DataFrame, tuple[str, ...]],
    width: float,
) -> tuple[bool, float | None]:
    """Which side to replicate (True: right) and the bin size, for a constant window.

    ``left`` and ``right`` are the internal frames with their key columns. Only integer
    offsets (every constant window on integer or temporal time columns) can be moved to
    the right side exactly.
    """
    integral = spec.kind is not TimeKind.FLOAT
    if spec.bin_size is not None:
        return integral, float(spec.bin_size)
    small = _small_inputs(spec, width, integral=integral)
    if small is not None:
        return integral, small
    ls, rs = sides_stats([(left[0], F.col(_T), None), (right[0], F.col(_R), None)])
    replicate_right = integral and (spec.how == "left" or rs.count <= ls.count)
    copied = right[0] if replicate_right else left[0]
    share = J.key_share_unless_plain(
        (*left, ls.count), (*right, rs.count),
        lambda: J.broadcasts(copied, right=replicate_right, how=spec.how))
    if share is None:
        log.info("band_join: the plain join on the keys (statistics: %s and %s rows, few "
                 "key-equal pairs)", ls.count, rs.count)
        return False, math.inf  # one bin: the plain join on the keys
    rep, probe = (rs, ls) if replicate_right else (ls, rs)
    size = choose_bin_size(rep, probe, integral=integral, window=width, key_share=share)
    log.info("band_join: bin size %s (statistics: %s and %s rows)", size, ls.count, rs.count)
    return replicate_right, size


def _small_inputs(spec: BandSpec, width: float, *, integral: bool) -> float | None:
    """Bins as wide as the window for small inputs, chosen without statistics; or None.

    Small: Spark's size estimates of both sides add up to at most
    :data:`SMALL_INPUT_BYTES` (frames it cannot size: at most :data:`SMALL_INPUT_ROWS`
    rows, counted by one job that reads no column). A window then lies in at most two
    bins, and a row is compared only with the other side's rows of its key within
    about two window widths of it. Float windows of zero width (no width to take)
    gather their statistics.
    """
    if not (math.isfinite(width) and (width > 0 or (integral and width == 0))):
        return None
    found = small_inputs([spec.left, spec.right], max_bytes=SMALL_INPUT_BYTES,
                         max_rows=SMALL_INPUT_ROWS)
    if found is None:
        return None
    size = max(width, 1.0) if integral else width
    log.info("band_join: bin size %s (small inputs (%s): bins as wide as the window, "
             "no statistics)", size, found)
    return size


def _window_end(
    spec: BandSpec, bound: Bound, t: Column, lmap: dict[str, str], *, low: bool
) -> _End:
    """One end of a left row's window, in ordinal units.

    Integer ends (integer or temporal time columns, an integer offset) are closed longs;
    float ends are doubles with the ``closed`` of the call.
    """
    closed = spec.closed in (("both", "left") if low else ("both", "right"))
    adjust = 0 if closed else (1 if low else -1)
    integral = spec.kind is not TimeKind.FLOAT
    if bound.column is None:
        assert bound.value is not None
        if not integral:
            exact = _exact_end(spec, lmap, _decimal_literal(bound.value))
            end = t.cast("double") + F.lit(float(bound.value)) if exact is None else exact
            return _End(end, closed, bound.value)
        offset = _closed_offset(bound.value, low=low, closed=closed)
        return _End(shifted(t, offset, low=low), True, offset)
    c = col(lmap[bound.column])
    if bound.mode is BoundMode.ABSOLUTE:
        assert bound.kind is not None
        return _End(shifted(ordinal(c, bound.kind), adjust, low=low), True)
    if bound.mode is BoundMode.OFFSET:
        assert bound.kind is not None
        if not integral or bound.kind is TimeKind.FLOAT:
            exact = _exact_end(spec, lmap, _as_decimal(c, spec.left.schema[bound.column]))
            end = t.cast("double") + J.join_ordinal(c, bound.kind).cast("double")
            return _End(end if exact is None else exact, closed)
        return _End(shifted(t, ordinal(c, bound.kind), low=low, adjust=adjust), True)
    if bound.mode is BoundMode.INTERVAL:
        dtype = spec.left.schema[bound.column].dataType
        assert isinstance(dtype, T.DayTimeIntervalType)
        micros = interval_micros(c, dtype)  # a fixed duration: a day is 24 hours
        return _End(shifted(t, micros, low=low, adjust=adjust), True)
    # seconds: rounded to microseconds (NaN is NULL, +-inf and huge values saturate)
    micros = F.round(ordinal(c, TimeKind.FLOAT) * F.lit(1_000_000.0))
    beyond = F.least(F.greatest(micros, F.lit(float(-BEYOND))), F.lit(float(BEYOND)))
    return _End(shifted(t, F.when(micros.isNotNull(), beyond), low=low, adjust=adjust), True)


def _exact_end(spec: BandSpec, lmap: dict[str, str], offset: Column | None) -> Column | None:
    """``left_on + offset`` added exactly, then rounded once to a double.

    For float-kind windows whose left time and offset are integers or decimals (a
    ``decimal(10, 2)`` time, say): ``0.20 + 0.10`` is ``0.30`` here, while in doubles
    it is past the double of ``0.30`` and would miss a right time there. ``None``
    where either is floating point.
    """
    base = _as_decimal(col(lmap[spec.left_on]), spec.left.schema[spec.left_on])
    if base is None or offset is None:
        return None
    return (base + offset).cast("double")


def _as_decimal(c: Column, f: T.StructField) -> Column | None:
    """An integer or decimal column as an exact decimal, ``None`` for other types."""
    if isinstance(f.dataType, T.DecimalType):
        return c
    if isinstance(f.dataType, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        # 19 digits hold every long; one more would leave a sum with an offset of 18
        # decimals (``1e-18``) 39 digits, which Spark rounds to 17 decimals
        return c.cast("decimal(19,0)")
    return None


def _decimal_literal(value: float) -> Column | None:
    """A constant offset as the decimal it was written as (``0.1``, not its double).

    ``None`` where no decimal column type holds it.
    """
    if not math.isfinite(value):
        return None
    exact = Decimal(repr(value))
    digits, exponent = len(exact.as_tuple().digits), int(exact.as_tuple().exponent)
    if not -18 <= exponent <= 0 or digits > 18:
        return None
    return F.lit(exact)


def _closed_offset(value: float, *, low: bool, closed: bool) -> int:
    """The integer offset of a closed window end equivalent on integer times.

    ``t + v <= r`` is ``t + ceil(v) <= r``, ``t + v < r`` is ``t + floor(v) + 1 <= r``;
    mirrored for the high end.
    """
    if low:
        return math.ceil(value) if closed else math.floor(value) + 1
    return math.floor(value) if closed else math.ceil(value) - 1


def _condition(lo: Column, lo_closed: bool, r: Column, hi: Column, hi_closed: bool) -> Column:
    """``lo <= r <= hi`` with ``<`` on the open ends."""
    low = lo <= r if lo_closed else lo < r
    high = r <= hi if hi_closed else r < hi
    return low & high
