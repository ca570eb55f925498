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
so the levels never emit a pair twice. There are at most ``MAX_LEVELS`` levels above
level 0; when the longest range would need more, the top level's bins are widened so
that it holds that range in ``HEAVY_SPANS + 1`` bins too (no row is ever copied into
more, whatever the bin size and the data).

The bin number is a monotone function of the ordinal (``floor(x / size)``, computed in
double and clamped to the grid's :class:`Extent`), so for ``a <= c <= b`` always
``bin(a) <= bin(c) <= bin(b)``, whatever the rounding of the division: correctness never
depends on the grid, only the cost does. The order is Spark's order of doubles: ``-inf``
and ``+inf`` go to the first and last bin of the extent, NaN (above ``+inf``) to the
last, so a range reaching infinity is copied only into the bins that hold data; no
long arithmetic on the ordinals can overflow.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._plan.longs import within_beyond
from chronojoin._validate.durations import parse_duration
from chronojoin._validate.timetypes import TimeKind
from chronojoin.errors import DurationError, InvalidArgumentError, PerformanceWarning

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
#: an explicit bin size that copies a row into more bins than this gets a PerformanceWarning
WARN_BINS_PER_ROW = 100_000
#: an explicit bin size that copies a row into more bins than this is an error
MAX_BINS_PER_ROW = 1_000_000
#: the plain join on the keys is used while it checks at most this many same-key pairs
#: per row of both sides (see :func:`plain_join_pays`)
PLAIN_PAIRS_PER_ROW = 256
#: the same limit when Spark broadcasts the side a grid copies (no shuffle of copies)
BROADCAST_PAIRS_PER_ROW = 12
#: a grid has at most this many coarser levels above level 0: with bins of width 1,
#: the geometric levels hold ranges up to ``HEAVY_SPANS * LEVEL_FACTOR**16 = 2**70``
#: long (every range of longs); the top level is widened for longer ones
MAX_LEVELS = 16
#: bin numbers are clamped to ``[-BIN_LIMIT, BIN_LIMIT]`` (exact doubles, safe longs)
BIN_LIMIT = 2.0**62
_LARGEST = sys.float_info.max


@dataclass(frozen=True)
class Extent:
    """The range of ordinals a grid covers; a value beyond it is binned at its edge.

    Statistics give the smallest and largest finite values of the data; without them
    the grid covers every finite double. ``-inf``, ``+inf`` and NaN (which Spark orders
    above ``+inf``) are binned like the nearest edge.
    """

    lo: float = -_LARGEST
    hi: float = _LARGEST


#: the extent of a grid planned without statistics
EVERYTHING = Extent()


@dataclass(frozen=True)
class SideStats:
    """Cheap statistics of one side's ranges (points have zero span).

    ``count`` counts the rows that can match (non-NULL, non-inverted ranges).
    ``lo_min``/``hi_max`` are the smallest and largest *finite* bounds (None: there is
    none), the spans are the finite ones, and ``unbounded`` counts the ranges whose
    span is not (an infinite or NaN bound, or finite bounds too far apart for a double)
    but that are not a single point (``[inf, inf]``).
    """

    count: int
    lo_min: float | None
    hi_max: float | None
    span_p50: float
    span_p90: float
    span_max: float
    unbounded: int = 0
    #: ``floor(log2(span))`` of the finite spans (zero spans as the smallest double's),
    #: or None when unknown (or a span lay beyond ``2**+-64``): which grid levels hold
    #: rows (see :func:`planned_levels`)
    octaves: frozenset[int] | None = None


def check_bin_size(value: Any, kind: TimeKind) -> int | float | None:
    """``None`` or a positive duration in ordinal units."""
    if value is None:
        return None
    size = parse_duration("bin_size", value, kind)
    if not size > 0:
        msg = f"`bin_size` must be positive; got {value!r}"
        raise DurationError(msg)
    # a bin of BEYOND already holds every long time in at most two bins
    return within_beyond(size)


def size_of_level(bin_size: float, level: int) -> float:
    """Width of the bins of ``level``."""
    return bin_size * LEVEL_FACTOR**level


@dataclass(frozen=True)
class Levels:
    """Several grids in one plan: the bin width of each level joined, and each row's level.

    ``at`` holds a row's level as a position in ``sizes`` (0 for the first). A join
    over several levels is one equi-join on ``(keys, level, bin)``: each row is binned
    on the grid of its own level, so one plan replaces a join per level.
    """

    sizes: tuple[float, ...]
    at: Column

    def pick(self, values: list[float]) -> Column:
        """The value of each row's level among ``values`` (one per level)."""
        table = F.array(*[F.lit(float(v)) for v in values])
        return F.element_at(table, self.at + F.lit(1))


def bin_of(value: Column, size: float | Levels, extent: Extent = EVERYTHING) -> Column:
    """Return the bin number (``long``) of an ordinal on a grid of width ``size``.

    ``floor(value / size)`` in double, clamped to the bins of ``extent`` (and to
    ``+-BIN_LIMIT``) before it becomes a long: monotone in Spark's order of doubles,
    NULL for NULL, never an overflow. With :class:`Levels`, each row's grid is that of
    its level, computed with the same doubles as a grid of that width alone.
    """
    sizes = size.sizes if isinstance(size, Levels) else (size,)
    firsts = [_bin_number(extent.lo / s) for s in sizes]
    lasts = [_bin_number(extent.hi / s) for s in sizes]
    if isinstance(size, Levels):
        width, first, last = size.pick(list(sizes)), size.pick(firsts), size.pick(lasts)
    else:
        width, first, last = F.lit(float(size)), F.lit(firsts[0]), F.lit(lasts[0])
    quotient = value.cast("double") / width
    inside = F.least(F.greatest(quotient, first), last)
    return F.when(value.isNotNull(), F.floor(inside))


def _bin_number(quotient: float) -> float:
    """``floor(quotient)`` clamped to ``+-BIN_LIMIT`` (``quotient`` may be infinite)."""
    return float(math.floor(min(max(quotient, -BIN_LIMIT), BIN_LIMIT)))


def _inside(value: Column, extent: Extent) -> Column:
    """``value`` as a double clamped to ``extent`` (NaN to its top)."""
    return F.least(F.greatest(value.cast("double"), F.lit(extent.lo)), F.lit(extent.hi))


def level_of(
    lo: Column, hi: Column, bin_size: float, max_level: int, extent: Extent = EVERYTHING
) -> Column:
    """Return the level of a range row: 0 for ordinary rows, higher for heavy-tail rows.

    The span is measured within ``extent`` (in double, so it neither overflows nor is
    infinite). Clamped to ``max_level`` (the highest level the plan has), so that every
    row belongs to a planned level even if floating-point logarithms disagree at a
    boundary.
    """
    if max_level == 0:
        return F.lit(0)
    limit = float(HEAVY_SPANS) * bin_size
    span = F.least(_inside(hi, extent) - _inside(lo, extent), F.lit(_LARGEST))
    octaves = (F.log(span) - F.lit(math.log(limit))) / F.lit(math.log(LEVEL_FACTOR))
    raised = F.ceil(octaves).cast("int")  # finite: span and limit are positive doubles
    level = F.when(span <= F.lit(limit), F.lit(0)).otherwise(raised)
    return F.least(F.greatest(level, F.lit(0)), F.lit(max_level))


def max_level_for(span_max: float, bin_size: float) -> int:
    """Return the highest level needed so that a row of span ``span_max`` is not a heavy row."""
    level = level_for(span_max, bin_size)
    return max(1, level + 1) if level else 0


def level_for(span: float, bin_size: float) -> int:
    """:func:`level_of` of one span, in Python, before the clamp to the planned levels."""
    limit = HEAVY_SPANS * bin_size
    if not span > limit:
        return 0
    span = min(span, _LARGEST)
    return math.ceil((math.log(span) - math.log(limit)) / math.log(LEVEL_FACTOR))


def level_sizes(bin_size: float, span_max: float) -> tuple[float, ...]:
    """Return the bin width of every level, for ranges up to ``span_max`` long.

    ``bin_size * LEVEL_FACTOR**L`` for ``L`` up to the level that
    :func:`max_level_for` asks for, at most :data:`MAX_LEVELS`; if that is too few,
    the top level's bins are widened to hold a range of ``span_max`` in
    ``HEAVY_SPANS + 1`` bins.

    Examples
    --------
    >>> level_sizes(1.0, 10.0)
    (1.0,)
    >>> level_sizes(1.0, 2000.0)
    (1.0, 16.0, 256.0, 4096.0)
    >>> level_sizes(1.0, 1e30)[-1] == 1e30 / HEAVY_SPANS
    True
    """
    top = min(max_level_for(span_max, bin_size), MAX_LEVELS)
    sizes = [size_of_level(bin_size, level) for level in range(top + 1)]
    if span_max > HEAVY_SPANS * sizes[-1]:
        sizes[-1] = span_max / HEAVY_SPANS
    return tuple(sizes)


def check_copies(
    argument: Any, size: float, width: float, window: str, *, stacklevel: int
) -> None:
    """Refuse (or warn about) an explicit bin size that copies every row into many bins.

    ``width`` is the window's width in ordinal units (known without a job), ``window``
    describes it for the messages. Above :data:`MAX_BINS_PER_ROW` bins per row this
    raises :class:`InvalidArgumentError`; above :data:`WARN_BINS_PER_ROW` it warns
    (``stacklevel`` counted from the caller, so that the warning points at user code).
    """
    copies = width / size + 1
    if copies > MAX_BINS_PER_ROW:
        msg = (
            f"`bin_size` {argument!r} would copy every row into about {copies:,.0f} bins "
            f"({window}); at most {MAX_BINS_PER_ROW:,} bins per row are allowed: give a "
            "larger bin_size, or None to choose it automatically"
        )
        raise InvalidArgumentError(msg)
    if copies > WARN_BINS_PER_ROW:
        warnings.warn(
            f"`bin_size` {argument!r} copies every row into about {copies:,.0f} bins "
            f"({window}); a larger bin size (or None) is faster",
            PerformanceWarning, stacklevel=stacklevel + 1,
        )


def replicate(
    df: DataFrame,
    lo: Column,
    hi: Column | None,
    size: float | Levels,
    name: str,
    extent: Extent = EVERYTHING,
) -> DataFrame:
    """Add column ``name``: one row per bin that ``[lo, hi]`` touches (``hi`` None: a point).

    Rows with a NULL bound or ``lo > hi`` get no bin: a replicated row disappears (it
    never matches), a point keeps a NULL bin (so that an outer join still returns it).
    A range reaching beyond ``extent`` (to an infinity, or NaN) stops at its edge bin.
    """
    if hi is None:
        return df.withColumn(name, bin_of(lo, size, extent))
    bins = F.sequence(bin_of(lo, size, extent), bin_of(hi, size, extent))
    return df.where(lo <= hi).withColumn(name, F.explode(bins))


def _finite(value: Column) -> Column:
    """``-inf < value < inf`` (false for NaN, which Spark orders above ``+inf``)."""
    return (value > F.lit(-math.inf)) & (value < F.lit(math.inf))


def side_stats(df: DataFrame, lo: Column, hi: Column | None = None) -> SideStats:
    """One small aggregate job: count, finite extent and span percentiles of valid ranges.

    ``hi`` None: the rows are points (``lo``), of span 0; only count and extent are read.
    """
    return sides_stats([(df, lo, hi)])[0]


#: one side of :func:`sides_stats`: its rows and their range (``hi`` None: points)
Side = tuple[DataFrame, Column, Column | None]


def sides_stats(sides: list[Side]) -> list[SideStats]:
    """:func:`side_stats` of every side in one job: their one-row aggregates, unioned.

    Each side keeps its own scan and aggregate; Spark runs them as the stages of one
    job (a band join's two sides cost one statistics job instead of two).
    """
    if not sides:
        return []
    rows = [_stats_row(df, lo, hi).withColumn("side", F.lit(i))
            for i, (df, lo, hi) in enumerate(sides)]
    found = {row["side"]: row for row in functools.reduce(DataFrame.unionByName, rows).collect()}
    return [_decoded(found[i], hi is None) for i, (_, _, hi) in enumerate(sides)]


#: the columns of :func:`_stats_row` a side of points leaves NULL, with their types
_RANGE_ONLY = {"p": "array<double>", "span_max": "double", "unbounded": "bigint",
               "oct_low": "bigint", "oct_high": "bigint", "oct_zero": "bigint",
               "oct_outside": "bigint"}


def _stats_row(df: DataFrame, lo: Column, hi: Column | None) -> DataFrame:
    """The one-row aggregate of :func:`side_stats` (the same columns for points)."""
    if hi is None:
        valid = df.select(lo.cast("double").alias("lo")).where(F.col("lo").isNotNull())
        finite = F.when(_finite(F.col("lo")), F.col("lo"))
        return valid.agg(
            F.count(F.lit(1)).alias("n"), F.min(finite).alias("lo_min"),
            F.max(finite).alias("hi_max"),
            *[F.lit(None).cast(kind).alias(name) for name, kind in _RANGE_ONLY.items()],
        )
    valid = df.select(lo.cast("double").alias("lo"), hi.cast("double").alias("hi")).where(
        F.col("lo").isNotNull() & F.col("hi").isNotNull() & (F.col("lo") <= F.col("hi"))
    )
    lo, hi = F.col("lo"), F.col("hi")
    # the smallest (largest) finite bound of a range: lo (hi), or else hi (lo)
    first = F.when(_finite(lo), lo).when(_finite(hi), hi)
    last = F.when(_finite(hi), hi).when(_finite(lo), lo)
    # a span is NaN or infinite for a non-finite bound (or two far apart): unbounded
    span = hi - lo
    bounded = span < F.lit(math.inf)
    return valid.agg(
        F.count(F.lit(1)).alias("n"),
        F.min(first).alias("lo_min"),
        F.max(last).alias("hi_max"),
        F.percentile_approx(F.when(bounded, span), [0.5, 0.9], PERCENTILE_ACCURACY).alias("p"),
        F.max(F.when(bounded, span)).alias("span_max"),
        F.count(F.when(~bounded & (lo != hi), 1)).alias("unbounded"),
        *_octave_aggregates(span, bounded),
    )


def _decoded(row: Any, points: bool) -> SideStats:
    """A :class:`SideStats` from a row of :func:`_stats_row`."""
    count = int(row["n"])
    if points:
        return SideStats(count, _float_or_none(row["lo_min"]), _float_or_none(row["hi_max"]),
                         0.0, 0.0, 0.0)
    if count == 0:
        return SideStats(0, None, None, 0.0, 0.0, 0.0)
    p50, p90 = (0.0, 0.0) if row["p"] is None else (float(v) for v in row["p"])
    return SideStats(
        count, _float_or_none(row["lo_min"]), _float_or_none(row["hi_max"]), p50, p90,
        float(row["span_max"] or 0.0), int(row["unbounded"]), _octaves_of(row),
    )


#: the octaves :func:`side_stats` records bit by bit: ``[-OCTAVE_BITS, OCTAVE_BITS)``
#: (every span of integers or microseconds, and doubles from ``2**-64`` to ``2**64``)
OCTAVE_BITS = 64
#: the octave :attr:`SideStats.octaves` gives a zero span (the smallest double's)
ZERO_OCTAVE = -1074


def _octave(span: Column) -> Column:
    """``floor(log2(span))`` of a positive finite span."""
    return F.floor(F.log2(span)).cast("int")


def _octave_aggregates(span: Column, bounded: Column) -> list[Column]:
    """The finite spans' octaves as bits of two longs, in one pass of plain aggregates.

    Plain aggregates (two ``bit_or``s, a count of zero spans and a count of spans
    outside the bits' octaves) instead of a ``collect_set`` of the octaves: the
    intervals' statistics job took 0.71 s against 0.83 s (medians, 500,000 intervals).
    """
    positive = bounded & (span > F.lit(0.0))
    # the octave of the positive finite spans only: Spark's generated code computes an
    # expression used in several places once for every row, ahead of the conditions
    # that guard it, and ``floor`` of an infinite span is an overflow error
    octave = _octave(F.when(positive, span))
    one = F.lit(1).cast("long")
    shifted = functools.partial(F.call_function, "shiftleft", one)
    low = positive & (octave >= F.lit(-OCTAVE_BITS)) & (octave < F.lit(0))
    high = positive & (octave >= F.lit(0)) & (octave < F.lit(OCTAVE_BITS))
    return [
        F.bit_or(F.when(low, shifted(octave + F.lit(OCTAVE_BITS)))).alias("oct_low"),
        F.bit_or(F.when(high, shifted(octave))).alias("oct_high"),
        F.count(F.when(bounded & (span == F.lit(0.0)), 1)).alias("oct_zero"),
        F.count(F.when(positive & ~(low | high), 1)).alias("oct_outside"),
    ]


def _octaves_of(row: Any) -> frozenset[int] | None:
    """Decode :func:`_octave_aggregates` (None when a span lay outside the bits)."""
    if int(row["oct_outside"]):
        return None
    found = {ZERO_OCTAVE} if int(row["oct_zero"]) else set()
    for base, mask in ((-OCTAVE_BITS, row["oct_low"]), (0, row["oct_high"])):
        bits = int(mask or 0) & ((1 << OCTAVE_BITS) - 1)  # the sign bit is octave base+63
        found.update(base + i for i in range(OCTAVE_BITS) if bits >> i & 1)
    return frozenset(found)


def planned_levels(sizes: tuple[float, ...], stats: list[SideStats]) -> tuple[int, ...]:
    """The grid levels worth a join: those the ranges' spans fall on.

    From each side's :attr:`SideStats.octaves` (a span in ``[2**k, 2**(k+1))`` lies on
    a level between those of the two ends); a side without them, or with unbounded
    ranges, may use every level. The choice only saves work: :func:`planned_level`
    moves a row to the nearest planned level (the next higher one, or else the highest),
    and a row is matched exactly on any level, only copied into more or fewer bins.

    Examples
    --------
    >>> s = SideStats(3, 0.0, 1e6, 10.0, 10.0, 1e6, octaves=frozenset({3, 19}))
    >>> level_sizes(1.0, 1e6)
    (1.0, 16.0, 256.0, 4096.0, 65536.0, 1048576.0)
    >>> planned_levels(level_sizes(1.0, 1e6), [s])
    (0, 4)
    """
    top = len(sizes) - 1
    used: set[int] = set()
    for side in stats:
        if side.octaves is None or side.unbounded:
            return tuple(range(top + 1))
        for k in side.octaves:
            low = min(level_for(math.ldexp(1.0, k), sizes[0]), top)
            high = min(level_for(math.ldexp(1.0, k + 1), sizes[0]), top)
            used.update(range(low, high + 1))
    return tuple(sorted(used)) or (0,)


def planned_level(level: Column, planned: tuple[int, ...], top: int) -> Column:
    """A row's level (at most ``top``) moved to the nearest planned one, as a position.

    The position is the planned level's in ``planned`` (0 for the first). The level
    is the next higher planned level, or the highest planned one for a row above them
    all (which the statistics rule out but floating-point rounding at a level's edge might
    not).
    """
    if planned == tuple(range(top + 1)):
        return level
    out = F.lit(len(planned) - 1)
    for position in reversed(range(len(planned) - 1)):
        out = F.when(level <= F.lit(planned[position]), F.lit(position)).otherwise(out)
    return out


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def extent_of(stats: list[SideStats]) -> Extent:
    """The finite extent of the statistics (a single point when there is no finite value)."""
    lows = [s.lo_min for s in stats if s.lo_min is not None]
    highs = [s.hi_max for s in stats if s.hi_max is not None]
    if not lows or not highs:
        return Extent(0.0, 0.0)
    return Extent(min(lows), max(highs))


def longest_span(stats: SideStats, extent: Extent) -> float:
    """The longest span of a side as binned: unbounded ranges reach the extent's edges."""
    if stats.unbounded == 0:
        return stats.span_max
    return max(stats.span_max, min(extent.hi - extent.lo, _LARGEST))


def choose_bin_size(
    replicated: SideStats,
    probe: SideStats,
    *,
    integral: bool,
    window: float | None = None,
    key_share: float = 1.0,
) -> float:
    """Return the automatic bin size, a pure function of the statistics (same inputs, same size).

    With ``W`` the median span of the replicated side (``window`` when all windows have
    the same length) and ``d`` the density of the other side's rows of the same key
    (rows per ordinal unit of that side's own extent, times ``key_share``: the share of
    row pairs with equal keys, 1 without keys), a replicated row costs about ``W / B +
    1`` copies and ``d * (W + B)`` candidate pairs; the sum is smallest at ``B =
    sqrt(COPY_COST * W / d)``. Selective keys thus give wide bins, down to one bin for
    the data's whole range (a plain join on the keys). The size is kept large enough
    that the 90th percentile span fits into ``MAX_COPIES`` bins, and rounded to a power
    of two (at least 1 for integer and temporal ordinals).

    Examples
    --------
    >>> from chronojoin._plan.binning import SideStats, choose_bin_size
    >>> s = SideStats(360, 0.0, 3600.0, 0.0, 0.0, 0.0)
    >>> choose_bin_size(s, s, integral=True, window=3600.0)
    1024.0
    """
    width = min(replicated.span_p50 if window is None else abs(window), _LARGEST)
    wide = min(replicated.span_p90 if window is None else abs(window), _LARGEST)
    # the other side's rows per unit of *its own* extent: a few ranges reaching far
    # (intervals that never end) do not thin out the rows they are compared with
    own = probe.lo_min is not None and probe.hi_max is not None
    extent = extent_of([probe] if own else [replicated, probe])
    length = min(extent.hi - extent.lo, _LARGEST)  # finite bounds, finite length
    if not length > 0:
        length = max(width, 1.0)
    # rows of the other side a replicated row can pair with, per ordinal unit: with
    # equality keys only those of its own key (``key_share`` of all pairs)
    density = max(probe.count * key_share, 1.0) / length  # > 0: length is finite
    size = math.sqrt(COPY_COST * width / density) if width > 0 else COPY_COST / density
    # no wider than the data (one bin holds it all), no narrower than the spans allow
    size = min(max(min(size, length), wide / MAX_COPIES, length * 1e-12), _LARGEST)
    if not size > 0:
        size = 1.0
    rounded = 2.0 ** min(round(math.log2(size)), sys.float_info.max_exp - 1)
    return max(rounded, 1.0) if integral else rounded


def plain_join_pays(
    left_rows: int,
    right_rows: int,
    key_share: float,
    copies_broadcast: Callable[[], bool] = lambda: False,
) -> bool:
    """Whether the plain join on the keys beats any grid: few row pairs share a key.

    The plain join checks every same-key pair (``key_share * left_rows * right_rows``);
    a grid adds a bin column, copies and a wider join key to every row. Measured on
    5,000,000 points in 500,000 intervals (BENCHMARKS.md): at 91 same-key pairs per
    row the plain join took 0.5x the best grid's time, at 909 pairs 3-4x. When Spark
    broadcasts the side a grid copies (``copies_broadcast()``, asked only when the
    answer matters), the copies cross no shuffle and the grid wins from far fewer
    pairs (:data:`BROADCAST_PAIRS_PER_ROW`): on 1,000,000 points in 100,000 broadcast
    intervals, at 91 pairs per row the best grid took 0.3-0.7x the plain join's time.
    """
    rows = left_rows + right_rows
    pairs = key_share * left_rows * right_rows
    if rows <= 0 or pairs > PLAIN_PAIRS_PER_ROW * rows:
        return False
    return pairs <= BROADCAST_PAIRS_PER_ROW * rows or not copies_broadcast()


def emitted_here(
    bin_column: Column, lo_left: Column, lo_right: Column, size: float | Levels,
    extent: Extent,
) -> Column:
    """Keep a pair only in the bin of ``greatest(lo_left, lo_right)`` (emitted once).

    When both sides are replicated, a pair of intersecting ranges meets in every bin of
    their intersection; the bin of the intersection's start is one of them, and only one.
    """
    return bin_of(F.greatest(lo_left, lo_right), size, extent) == bin_column
