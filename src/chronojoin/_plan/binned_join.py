"""A range join planned as equi-joins on ``(keys, bin)``: the engine of band and interval joins.

The families describe their join as a :class:`RangeJoin`: two :class:`RangeSide` objects
(a DataFrame whose columns have internal names, its equality keys, and the range
``[lo, hi]`` of ordinals that can meet the other side: a point when ``hi`` is None) and
the exact match predicate. :func:`plan_range_join` bins both sides on one grid
(:mod:`chronojoin._plan.binning`), joins all its levels in one equi-join, filters
exactly, keeps each pair in one bin only, and adds the unmatched left rows for
``how="left"``. When the keys alone leave few candidate pairs
(:func:`~chronojoin._plan.binning.plain_join_pays`), the automatic grid is a single
bin and the plan is the plain join on the keys.

Ordinals are compared as Spark compares them (:func:`join_ordinal`): a float time keeps
``+-inf`` and NaN, so the result is the plain SQL join's; the grid bins them at its edges.

The result has the internal columns ``left.columns + right.columns``; the caller renames.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._plan import binning as B
from chronojoin._plan.stats import broadcast_threshold, estimated_bytes, same_key_share
from chronojoin._typing import How
from chronojoin._validate.columns import col, comparable, renamed, selected
from chronojoin._validate.timetypes import TimeKind, ordinal

_BIN_L, _BIN_R = "_cj_bin_l", "_cj_bin_r"
_LVL_L, _LVL_R = "_cj_lvl_l", "_cj_lvl_r"
_AT_L, _AT_R = "_cj_at_l", "_cj_at_r"
_LO_L, _LO_R = "_cj_lo_l", "_cj_lo_r"
_HI_L, _HI_R = "_cj_hi_l", "_cj_hi_r"


@dataclass(frozen=True)
class RangeSide:
    """One side of a range join.

    Parameters
    ----------
    df
        The side's rows; user columns renamed to internal names, helper columns added.
    columns
        The internal names of the user's columns, in output order.
    keys
        Internal names of the equality keys (matched in order with the other side's).
    lo, hi
        The range of ordinals this row can meet (``hi`` None: a point ``lo``). Every
        matching pair must have intersecting ranges.
    constant_span
        ``hi - lo`` when it is the same for every row (then no statistics are needed
        for the grid when the bin size is given).
    """

    df: DataFrame
    columns: tuple[str, ...]
    keys: tuple[str, ...]
    lo: Column
    hi: Column | None = None
    constant_span: float | None = None

    @property
    def is_point(self) -> bool:
        """Whether every row is a single point (one bin, never replicated)."""
        return self.hi is None


@dataclass(frozen=True)
class RangeJoin:
    """A range join: both sides, the exact predicate, the join type and the grid."""

    left: RangeSide
    right: RangeSide
    condition: Column
    how: How
    bin_size: float | None
    integral: bool


@dataclass(frozen=True)
class Grid:
    """The chosen grid: the bin width of each level (level 0 first), the extent binned."""

    sizes: tuple[float, ...]
    extent: B.Extent = B.EVERYTHING
    #: the levels joined (those the statistics found rows on); None: every level
    planned: tuple[int, ...] | None = None
    #: why this bin size (given, or what the statistics found), for the log
    why: str = field(default="", compare=False)

    @property
    def size(self) -> float:
        """Width of the bins of level 0."""
        return self.sizes[0]

    @property
    def max_level(self) -> int:
        """The highest level planned."""
        return len(self.sizes) - 1

    @property
    def plain(self) -> bool:
        """One bin for everything: the plain join on the keys and the exact predicate."""
        return math.isinf(self.sizes[0])

    @property
    def reason(self) -> str:
        """What was chosen and why, for the log: :attr:`why`, and the levels joined."""
        if len(self.sizes) == 1:
            return self.why
        return f"{self.why}; {len(self.levels)} of {len(self.sizes)} grid levels joined"

    @property
    def levels(self) -> tuple[int, ...]:
        """The levels joined, lowest first (a row of another level joins the next one)."""
        return self.planned if self.planned is not None else tuple(range(len(self.sizes)))


def join_ordinal(column: Column, kind: TimeKind) -> Column:
    """The ordinal a range join compares: a float keeps ``+-inf`` and NaN.

    As in Spark SQL, NaN equals NaN and is above ``+inf``, so the exact predicate gives
    what the plain SQL condition gives; other kinds are
    :func:`~chronojoin._validate.timetypes.ordinal`.
    """
    if kind is TimeKind.FLOAT:
        return column.cast("double")
    return ordinal(column, kind)


def choose_grid(join: RangeJoin) -> Grid:
    """Pick the grid: the given bin size or the automatic one, the levels and the extent.

    A grid whose ranges all have one known, finite width needs no statistics: it
    covers every finite double (such a range lies in few bins wherever it is, and at
    an infinity it is a single point). Otherwise it covers the finite values the
    statistics saw, so that a range reaching infinity is copied into their bins only.
    Without a given size, selective keys give the plain join (an infinite bin size).
    """
    ranges = [s for s in (join.left, join.right) if not s.is_point]
    if join.bin_size is not None and (
        math.isinf(join.bin_size) or all(s.constant_span is not None for s in ranges)
    ):
        return Grid((join.bin_size,), why=f"bin size {join.bin_size:g} given")
    sides = [s for s in (join.left, join.right) if not s.is_point or join.bin_size is None]
    found = B.sides_stats([(s.df, s.lo, s.hi) for s in sides])
    stats = {id(s): st for s, st in zip(sides, found, strict=True)}
    size = join.bin_size
    if size is not None:
        why = f"bin size {size:g} given"
    else:
        left, right = stats[id(join.left)], stats[id(join.right)]
        share = key_share_unless_plain((join.left.df, join.left.keys, left.count),
                                       (join.right.df, join.right.keys, right.count),
                                       lambda: copies_broadcast(join))
        rows = f"statistics: {left.count} and {right.count} rows"
        if share is None:
            plain = ("the plain join on the keys, few key-equal pairs" if join.left.keys
                     else "the plain join, few pairs")
            return Grid((math.inf,), why=f"{plain} ({rows})")
        size = _auto_size(join, stats, share)
        why = f"automatic bin size {size:g} ({rows}, key-equal share {share:.3g})"
    extent = B.extent_of(list(stats.values()))
    span_max = max((B.longest_span(stats[id(s)], extent) for s in ranges), default=0.0)
    sizes = B.level_sizes(size, span_max)
    return Grid(sizes, extent, B.planned_levels(sizes, [stats[id(s)] for s in ranges]), why)


#: one side for :func:`key_share_unless_plain`: its rows, key columns and row count
Keyed = tuple[DataFrame, tuple[str, ...], int]


def key_share_unless_plain(left: Keyed, right: Keyed,
                           copies_broadcast: Callable[[], bool]) -> float | None:
    """The share of row pairs with equal keys, or None when the plain join pays.

    :func:`~chronojoin._plan.binning.plain_join_pays` grows with the share, so when it
    holds even if every pair had equal keys, the plain join is chosen without the
    sampling job of :func:`~chronojoin._plan.stats.same_key_share` (small inputs).
    ``copies_broadcast`` (Spark's size estimate, read from ``explain``) is asked once.
    """
    copies = functools.cache(copies_broadcast)
    rows_l, rows_r = left[2], right[2]
    if B.plain_join_pays(rows_l, rows_r, 1.0, copies):
        return None
    share = same_key_share(*left, *right)
    return None if B.plain_join_pays(rows_l, rows_r, share, copies) else share


def copies_broadcast(join: RangeJoin) -> bool:
    """Whether Spark would broadcast a side that a grid copies into its bins (a range side)."""
    return any(broadcasts(side.df, right=side is join.right, how=join.how)
               for side in (join.left, join.right) if not side.is_point)


def broadcasts(df: DataFrame, *, right: bool, how: str) -> bool:
    """Whether Spark would broadcast ``df`` as the left or right side of a ``how`` join.

    Spark's own size estimate of ``df`` (no job) under the session's broadcast
    threshold, on a side that ``how`` lets Spark broadcast: either side of an inner
    join, the right side of a left join.
    """
    if how != "inner" and not right:
        return False
    threshold = broadcast_threshold(df)
    if threshold is None:
        return False
    size = estimated_bytes(df)
    return size is not None and size <= threshold


def _auto_size(join: RangeJoin, stats: dict[int, B.SideStats], share: float) -> float:
    left, right = stats[id(join.left)], stats[id(join.right)]
    if join.left.is_point != join.right.is_point:
        rep, probe = (right, left) if join.left.is_point else (left, right)
        return B.choose_bin_size(rep, probe, integral=join.integral, key_share=share)
    extent = B.extent_of([left, right])
    merged = B.SideStats(
        left.count + right.count,
        extent.lo,
        extent.hi,
        max(left.span_p50, right.span_p50),
        max(left.span_p90, right.span_p90),
        max(left.span_max, right.span_max),
    )
    return B.choose_bin_size(merged, merged, integral=join.integral, key_share=share)


def plan_range_join(join: RangeJoin, grid: Grid | None = None) -> DataFrame:
    """Build the plan of ``join``; columns ``left.columns + right.columns``."""
    grid = grid or choose_grid(join)
    left = _prepare(join.left, _LO_L, _HI_L, _LVL_L, grid)
    right = _prepare(join.right, _LO_R, _HI_R, _LVL_R, grid)
    out = [*join.left.columns, *join.right.columns]
    if join.how == "left" and (join.left.is_point or grid.plain) and len(grid.levels) == 1:
        joined = _joined(join, left, right, grid, how="left")
        return selected(joined, out)
    inner = selected(_joined(join, left, right, grid, how="inner"), out)
    if join.how == "inner":
        return inner
    matched = _joined(join, left, right, grid, how="left_semi")
    unmatched = _unmatched(join.left, selected(matched, join.left.columns))
    # The right columns are NULLs of their types, added by the union.
    return inner.unionByName(selected(unmatched, join.left.columns), allowMissingColumns=True)


def _prepare(side: RangeSide, lo: str, hi: str, lvl: str, grid: Grid) -> DataFrame:
    """The side with its bounds; on a grid of several levels, each range's level.

    The level is the row's position in ``grid.levels`` (0 for the first).
    """
    df = side.df.withColumn(lo, side.lo)
    if side.hi is None:
        return df
    df = df.withColumn(hi, side.hi)
    if len(grid.levels) == 1:
        return df
    level = B.level_of(F.col(lo), F.col(hi), grid.size, grid.max_level, grid.extent)
    return df.withColumn(lvl, B.planned_level(level, grid.levels, grid.max_level))


def _joined(
    join: RangeJoin, left: DataFrame, right: DataFrame, grid: Grid, *, how: str
) -> DataFrame:
    """Join every level at once: ``inner``/``left_semi`` on the pairs, or ``left``.

    On a grid of several levels each row is copied to the levels it is joined on
    (:func:`_on_levels`) and binned on each one's grid; the join key gains the level.
    """
    keys = [col(lk) == col(rk) for lk, rk in zip(join.left.keys, join.right.keys, strict=True)]
    if grid.plain:  # every pair meets once: no bins
        return left.join(right, on=reduce(Column.__and__, keys, join.condition), how=how)
    sizes = tuple(grid.sizes[level] for level in grid.levels)
    lsize: float | B.Levels = sizes[0]
    rsize: float | B.Levels = sizes[0]
    if len(sizes) > 1:
        left = _on_levels(join.left, join.right, left, _LVL_L, _AT_L, len(sizes))
        right = _on_levels(join.right, join.left, right, _LVL_R, _AT_R, len(sizes))
        keys.append(F.col(_AT_L) == F.col(_AT_R))
        lsize, rsize = B.Levels(sizes, F.col(_AT_L)), B.Levels(sizes, F.col(_AT_R))
    lrep = B.replicate(left, F.col(_LO_L), _hi(join.left, _HI_L), lsize, _BIN_L, grid.extent)
    rrep = B.replicate(right, F.col(_LO_R), _hi(join.right, _HI_R), rsize, _BIN_R, grid.extent)
    cond = reduce(Column.__and__, keys, F.col(_BIN_L) == F.col(_BIN_R)) & join.condition
    if how == "inner" and not join.left.is_point and not join.right.is_point:
        cond = cond & B.emitted_here(
            F.col(_BIN_L), F.col(_LO_L), F.col(_LO_R), lsize, grid.extent
        )
        if len(sizes) > 1:  # the pair's level: that of its longer row
            cond = cond & (F.greatest(F.col(_LVL_L), F.col(_LVL_R)) == F.col(_AT_L))
    return lrep.join(rrep, on=cond, how=how)


def _hi(side: RangeSide, name: str) -> Column | None:
    return None if side.is_point else F.col(name)


def _on_levels(
    side: RangeSide, other: RangeSide, df: DataFrame, lvl: str, at: str, count: int
) -> DataFrame:
    """Add column ``at``: a copy of each row for every level it is joined on.

    A pair is joined on the level of its longer row. Against a point side, a range is
    joined on its own level only and the points on every level; when both sides are
    ranges, a row is joined on its own level and every higher one.
    """
    if side.is_point:
        return df.withColumn(at, F.explode(F.sequence(F.lit(0), F.lit(count - 1))))
    if other.is_point:
        return df.withColumn(at, F.col(lvl))
    return df.withColumn(at, F.explode(F.sequence(F.col(lvl), F.lit(count - 1))))


def _unmatched(left: RangeSide, matched: DataFrame) -> DataFrame:
    """Left rows without any match: an anti join on the whole row (NULL-safe).

    Rows that are equal in every column have the same keys, times and bounds, hence the
    same matches; so a left row is unmatched exactly when no equal row is in ``matched``.
    """
    rows = left.df.select(*[col(c) for c in left.columns])
    schema = rows.schema
    renamed = matched.select(*[col(c).alias("_cj_m" + str(i)) for i, c in enumerate(left.columns)])
    cond: Column = F.lit(True)
    for i, c in enumerate(left.columns):
        dtype = schema[c].dataType
        mine = comparable(col(c), dtype)
        theirs = comparable(F.col("_cj_m" + str(i)), dtype)
        cond = cond & mine.eqNullSafe(theirs)
    return rows.join(renamed, on=cond, how="left_anti")


def internal(df: DataFrame, prefix: str) -> tuple[DataFrame, dict[str, str]]:
    """Rename every column of ``df`` to ``prefix + position`` (safe for self-joins)."""
    mapping = {name: f"{prefix}{i}" for i, name in enumerate(df.columns)}
    return renamed(df, mapping.items()), mapping


def finish(
    result: DataFrame,
    left_columns: list[str],
    left_map: dict[str, str],
    outputs: tuple[tuple[str, str], ...],
    right_map: dict[str, str],
) -> DataFrame:
    """Rename internal columns back: left columns, then right ``(column, output name)``."""
    return renamed(result, [*[(left_map[n], n) for n in left_columns],
                            *[(right_map[r], out) for r, out in outputs]])
