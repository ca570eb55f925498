"""A fixed grid of time bins: bin numbers, replication, levels and the automatic bin size.

Range joins (band joins, interval joins) are planned as equi-joins on ``(keys, bin)``:
a row that covers the range ``[lo, hi]`` of ordinals is copied into every bin of the
grid that the range touches (``explode(sequence(bin(lo), bin(hi)))``), a point goes to
its one bin. Two rows can only match if their ranges intersect, and then the bin holding
the *canonical point* ``greatest(lo_left, lo_right)`` holds a copy of both, so keeping a
pair only in that bin emits it exactly once, without ``distinct``.

Very long ranges would multiply rows, so rows are split into *levels*: a row whose
span is at most ``HEAVY_SPANS * bin_size`` is on level 0; longer rows go to the
first level ``L`` whose coarser grid (``bin_size * LEVEL_FACTOR**L``) holds it in at
most ``HEAVY_SPANS + 1`` bins. A pair is planned on the level of its longer row only,
so the levels never emit a pair twice.

The bin number is a monotone function of the ordinal (``floor(x / size)``), so for
``a <= c <= b`` always ``bin(a) <= bin(c) <= bin(b)``, whatever the rounding of the
division: correctness never depends on the grid, only the cost does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._validate.durations import parse_duration
from chronojoin._validate.timetypes import TimeKind
from chronojoin.errors import DurationError

#: a row spanning more than this many bins of level 0 is a heavy-tail row
HEAVY_SPANS = 64
#: each level's bins are this many times wider than the previous level's
LEVEL_FACTOR = 16
#: relative accuracy of ``approx_percentile`` (fixed: the same data gives the same size)
PERCENTILE_ACCURACY = 10_000
#: assumed cost of one replicated row relative to one candidate pair checked in a bin
COPY_COST = 16.0
#: the automatic bin size never makes an ordinary row span more bins than this
MAX_COPIES = 64


@dataclass(frozen=True)
class SideStats:
    """Cheap statistics of one side's ranges (points have zero span).

    ``count`` counts the rows that can match (non-NULL, non-inverted ranges).
    """

    count: int
    lo_min: float | None
    hi_max: float | None
    span_p50: float
    span_p90: float
    span_max: float


def check_bin_size(value: Any, kind: TimeKind) -> int | float | None:
    """``None`` or a positive duration in ordinal units."""
    if value is None:
        return None
    size = parse_duration("bin_size", value, kind)
    if not size > 0:
        msg = f"`bin_size` must be positive; got {value!r}"
        raise DurationError(msg)
    return size


def size_of_level(bin_size: float, level: int) -> float:
    """Width of the bins of ``level``."""
    return bin_size * LEVEL_FACTOR**level


def bin_of(value: Column, size: float) -> Column:
    """Return the bin number (``long``) of an ordinal on a grid of width ``size``."""
    return F.floor(value / F.lit(float(size))).cast("long")


def level_of(lo: Column, hi: Column, bin_size: float, max_level: int) -> Column:
    """Return the level of a range row: 0 for ordinary rows, higher for heavy-tail rows.

    Clamped to ``max_level`` (the highest level the plan has), so that every row
    belongs to a planned level even if floating-point logarithms disagree at a boundary.
    """
    if max_level == 0:
        return F.lit(0)
    limit = float(HEAVY_SPANS) * bin_size
    span = (hi - lo).cast("double")
    raised = F.ceil(F.log(float(LEVEL_FACTOR), span / F.lit(limit))).cast("int")
    level = F.when(span <= F.lit(limit), F.lit(0)).otherwise(raised)
    return F.least(F.greatest(level, F.lit(0)), F.lit(max_level))


def max_level_for(span_max: float, bin_size: float) -> int:
    """Return the highest level needed so that a row of span ``span_max`` is not a heavy row."""
    limit = HEAVY_SPANS * bin_size
    if not span_max > limit:
        return 0
    return max(1, math.ceil(math.log(span_max / limit, LEVEL_FACTOR)) + 1)


def replicate(df: DataFrame, lo: Column, hi: Column | None, size: float, name: str) -> DataFrame:
    """Add column ``name``: one row per bin that ``[lo, hi]`` touches (``hi`` None: a point).

    Rows with a NULL bound or ``lo > hi`` get no bin: a replicated row disappears (it
    never matches), a point keeps a NULL bin (so that an outer join still returns it).
    """
    if hi is None:
        return df.withColumn(name, bin_of(lo, size))
    bins = F.sequence(bin_of(lo, size), bin_of(hi, size))
    return df.where(lo <= hi).withColumn(name, F.explode(bins))


def side_stats(df: DataFrame, lo: Column, hi: Column) -> SideStats:
    """One small aggregate job: count, extent and span percentiles of valid ranges."""
    valid = df.select(lo.cast("double").alias("lo"), hi.cast("double").alias("hi")).where(
        F.col("lo").isNotNull() & F.col("hi").isNotNull() & (F.col("lo") <= F.col("hi"))
    )
    span = F.col("hi") - F.col("lo")
    row = valid.agg(
        F.count(F.lit(1)).alias("n"),
        F.min("lo").alias("lo_min"),
        F.max("hi").alias("hi_max"),
        F.percentile_approx(span, [0.5, 0.9], PERCENTILE_ACCURACY).alias("p"),
        F.max(span).alias("span_max"),
    ).first()
    assert row is not None
    count = int(row["n"])
    if count == 0:
        return SideStats(0, None, None, 0.0, 0.0, 0.0)
    p50, p90 = (float(v) for v in row["p"])
    return SideStats(
        count, float(row["lo_min"]), float(row["hi_max"]), p50, p90, float(row["span_max"])
    )


def choose_bin_size(
    replicated: SideStats, probe: SideStats, *, integral: bool, window: float | None = None
) -> float:
    """Return the automatic bin size, a pure function of the statistics (same inputs, same size).

    With ``W`` the median span of the replicated side (``window`` when all windows have
    the same length) and ``d`` the density of the other side (rows per ordinal unit),
    a replicated row costs about ``W / B + 1`` copies and ``d * (W + B)`` candidate pairs;
    the sum is smallest at ``B = sqrt(COPY_COST * W / d)``. The size is kept large enough
    that the 90th percentile span fits into ``MAX_COPIES`` bins, and rounded to a power of
    two (at least 1 for integer and temporal ordinals).

    Examples
    --------
    >>> from chronojoin._plan.binning import SideStats, choose_bin_size
    >>> s = SideStats(360, 0.0, 3600.0, 0.0, 0.0, 0.0)
    >>> choose_bin_size(s, s, integral=True, window=3600.0)
    1024.0
    """
    width = replicated.span_p50 if window is None else abs(window)
    wide = replicated.span_p90 if window is None else abs(window)
    lows = [s.lo_min for s in (replicated, probe) if s.lo_min is not None]
    highs = [s.hi_max for s in (replicated, probe) if s.hi_max is not None]
    extent = (max(highs) - min(lows)) if lows and highs else 0.0
    if not extent > 0:
        extent = max(width, 1.0)
    density = max(probe.count, 1) / extent
    size = math.sqrt(COPY_COST * width / density) if width > 0 else COPY_COST / density
    size = max(size, wide / MAX_COPIES, extent * 1e-12)
    if not (math.isfinite(size) and size > 0):
        size = 1.0
    rounded = 2.0 ** round(math.log2(size))
    return max(rounded, 1.0) if integral else rounded


def emitted_here(bin_column: Column, lo_left: Column, lo_right: Column, size: float) -> Column:
    """Keep a pair only in the bin of ``greatest(lo_left, lo_right)`` (emitted once).

    When both sides are replicated, a pair of intersecting ranges meets in every bin of
    their intersection; the bin of the intersection's start is one of them, and only one.
    """
    return bin_of(F.greatest(lo_left, lo_right), size) == bin_column
