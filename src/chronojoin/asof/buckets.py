"""Time buckets with exact carry-over, for timelines that must be split.

A global timeline (``by=None``) or a hot key would put all its rows on one task. We
cut time into buckets, run the strategy inside each ``(keys, bucket)``, and give every
left row that found no candidate in its own bucket the last right row of all earlier
buckets of its key (backward) and the first right row of all later buckets (forward).
Bucket numbers grow with time, so a carried row is always strictly earlier (later)
than every row of the bucket: the result is identical for any bucket count.

Where a bucket's last (first) right row comes from:

* with keys (:func:`carry_ends`), from the running window itself: the last row of a
  bucket in the window's order holds the bucket's last right row, so only the left
  rows and those end rows go through one more window over the key, ordered by bucket.
  Nothing is aggregated or sorted a second time (a hot key's 25M right rows were
  once sorted twice, for the window and for an aggregate of bucket ends);
* without keys (:func:`carry`, also used by ``sort_merge``), the few buckets of the
  global timeline (or of the hot keys) get their greatest (smallest) right time from
  a hash aggregate, and only the rows at those times are compared, through a
  broadcast of the buckets; ``sort_merge`` with ``buckets=`` per key (many buckets)
  aggregates every row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame, Row, Window, WindowSpec
from pyspark.sql import functions as F

from chronojoin._plan.windows import per_key
from chronojoin.asof.frames import (
    BACK,
    BUCKET,
    FORWARD,
    RIGHT_STRUCT,
    TIME,
    reversed_time,
    slot_name,
)

log = logging.getLogger("chronojoin.asof")

#: The most ``(keys, bucket)`` pairs listed from the grid (:func:`_every_bucket`);
#: past it (a large ``buckets=``) the pairs come from the rows themselves.
LISTED_BUCKETS = 1 << 16


@dataclass(frozen=True)
class Layout:
    """How a strategy splits timelines: ``buckets`` per key, for ``hot_keys`` or all.

    ``buckets=None`` with keys: no split. Without keys the timeline is always split
    (into :func:`default_count` buckets unless ``buckets`` is given).
    """

    buckets: int | None = None
    hot_keys: tuple[tuple[object, ...], ...] | None = None
    #: The time range the hot keys' buckets cover (``None``: measured by one job).
    span: tuple[float, float] | None = None


@dataclass(frozen=True)
class TimeBuckets:
    """An equal-width grid of ``count`` buckets starting at ``low``."""

    low: float
    width: float
    count: int

    def column(self, t: Column) -> Column:
        """The bucket number of time ordinal ``t``.

        A NULL time falls in bucket 0 (``greatest`` skips NULLs); such a row never
        matches, so its bucket only decides where it is carried. The position is
        clamped while a double: a time far outside the grid (a ``Long.MAX`` "valid
        forever", an infinity) would overflow the long of ``floor`` (NaN goes last).
        """
        raw = (t - F.lit(self.low)) / F.lit(self.width)
        inside = F.least(F.greatest(raw, F.lit(0.0)), F.lit(float(self.count - 1)))
        return F.floor(inside).cast("int")


def grid(tagged: DataFrame, count: int) -> TimeBuckets:
    """Equal-width buckets over the range of ``__t`` in ``tagged`` (one small job)."""
    row = tagged.agg(F.min(TIME).alias("lo"), F.max(TIME).alias("hi")).first()
    lo, hi = (row["lo"], row["hi"]) if row is not None else (None, None)
    if lo is None or hi is None:
        return TimeBuckets(0.0, 1.0, 1)
    return span_grid(float(lo), float(hi), count)


def span_grid(lo: float, hi: float, count: int) -> TimeBuckets:
    """Equal-width buckets over ``[lo, hi]`` (one bucket for an empty range)."""
    if hi <= lo:
        return TimeBuckets(0.0, 1.0, 1)
    log.info("as-of: %d time buckets of width %s over [%s, %s]", count, (hi - lo) / count,
             lo, hi)
    return TimeBuckets(lo, (hi - lo) / count, count)


def default_count(df: DataFrame) -> int:
    """Buckets for a global timeline: the session's shuffle partition count."""
    value = df.sparkSession.conf.get("spark.sql.shuffle.partitions") or "200"
    return max(1, int(value))


def is_hot(keys: list[Column], hot_keys: tuple[tuple[object, ...], ...]) -> Column:
    """True where the ``keys`` columns hold one of ``hot_keys``, else False or NULL.

    Plain equalities (NULL for a NULL key, which ``where`` drops like False), so that
    a Parquet scan can skip row groups by their statistics.
    """
    same = [reduce(lambda a, b: a & b,
                   [same_key(k, v) for k, v in zip(keys, values, strict=True)])
            for values in hot_keys]
    return reduce(lambda a, b: a | b, same) if same else F.lit(False)


def same_key(column: Column, value: object, *, nested: bool = False) -> Column:
    """Whether ``column`` holds the key ``value`` collected from a statistics job.

    A scalar is a plain equality with a literal. A struct key (a ``Row``) or an array
    is compared field by field and element by element: a literal struct or array
    would need the column's exact type (a nested decimal is not widened), and
    ``F.lit`` takes no ``Row``. Nested values compare NULL-safely, as Spark's own
    equality of structs and arrays does; a NULL key is never the value.
    """
    if isinstance(value, Row):
        parts = [same_key(column.getField(n), v, nested=True)
                 for n, v in zip(value.__fields__, value, strict=True)]
    elif isinstance(value, list):
        parts = [F.size(column) == F.lit(len(value))]
        parts += [same_key(F.try_element_at(column, F.lit(i + 1)), v, nested=True)
                  for i, v in enumerate(value)]
    else:
        return column.eqNullSafe(F.lit(value)) if nested else column == F.lit(value)
    return reduce(lambda a, b: a & b, parts, column.isNotNull())


def is_cold(keys: list[Column], hot_keys: tuple[tuple[object, ...], ...]) -> Column:
    """True exactly where :func:`is_hot` is not: every other key, NULL keys included."""
    cold = ~is_hot(keys, hot_keys)
    for k in keys:
        cold = cold | k.isNull()
    return cold


def bucketize(
    union: DataFrame, keys: list[str], layout: Layout
) -> tuple[DataFrame, list[str], bool]:
    """Add the bucket column when the layout asks for it; return the partition columns."""
    if keys and layout.buckets is None:
        return union, list(keys), False
    count = layout.buckets or default_count(union)
    rows = union
    hot = None
    if keys and layout.hot_keys:
        hot = is_hot([F.col(k) for k in keys], layout.hot_keys)
        rows = union.where(hot)
    if hot is not None and layout.span is not None:
        buckets = span_grid(*layout.span, count)
    else:
        buckets = grid(rows, count)
    bucket = buckets.column(F.col(TIME))
    if hot is not None:
        bucket = F.when(hot, bucket).otherwise(F.lit(0))
    return union.withColumn(BUCKET, bucket), [*keys, BUCKET], True


@dataclass(frozen=True)
class Carried:
    """One right table whose candidates are carried between buckets."""

    slot: int
    tiebreaks: tuple[str, ...]
    backward: bool
    forward: bool


def end_name(forward: bool) -> str:
    """The flag column marking the last row of a bucket in one pass's order."""
    return "__endf" if forward else "__endb"


def carry_ends(out: DataFrame, is_left: Column, keys: list[str],
               tables: list[Carried]) -> DataFrame:
    """Carry between the buckets of each key, from the window's own bucket-end rows.

    ``out`` holds every row after the running windows, with :func:`end_name` flags. The
    left rows and the end rows (a few per bucket) go through one more window over the
    key, ordered by bucket: the last end value of the earlier buckets (the first of the
    later ones) fills a left row that found nothing in its own bucket. No row is read
    or sorted twice; a hot key's left rows meet in one task of that window.
    """
    flags = {f: F.col(end_name(f)) for f in (False, True)
             if any(t.forward if f else t.backward for t in tables)}
    kept = out.where(reduce(lambda a, b: a | b, flags.values(), is_left))
    by_key = Window.partitionBy(*keys)
    before = by_key.orderBy(BUCKET).rangeBetween(Window.unboundedPreceding, -1)
    after = later_buckets(by_key)
    # One select: every table's windows share the window operators (one per
    # direction), and a candidate found in the row's own bucket wins over the carried one.
    filled: dict[str, Column] = {}
    for t in tables:
        if t.backward:
            back = slot_name(BACK, t.slot)
            prev = F.last(F.when(flags[False], F.col(back)), ignorenulls=True).over(before)
            filled[back] = F.coalesce(F.col(back), prev)
        if t.forward:
            fwd = slot_name(FORWARD, t.slot)
            # Nearest later bucket first in ascending order: last in the descending frame.
            nxt = F.last(F.when(flags[True], F.col(fwd)), ignorenulls=True).over(after)
            filled[fwd] = F.coalesce(F.col(fwd), nxt)
    return kept.withColumns(filled).where(is_left)


def carry(
    union: DataFrame,
    matched: DataFrame,
    keys: list[str],
    tables: list[Carried],
    layout: Layout,
    floating: bool,
) -> DataFrame:
    """Fill candidates from earlier (later) buckets of the same key into ``matched``.

    Per ``(keys, bucket)`` the last right row of each table (greatest time, then
    greatest tie-break) and its first one (smallest time, greatest tie-break) are
    found; a running window over buckets carries them forward (backward).
    ``floating``: whether ``__t`` is a double (:func:`floating_time`).
    """
    part = [*keys, BUCKET]
    if keys and not layout.hot_keys:
        per_bucket = _ends_by_aggregate(union, part, tables, floating)
    else:
        rows = union if not keys else union.where(is_hot([F.col(k) for k in keys],
                                                         layout.hot_keys or ()))
        per_bucket = _ends_by_time(rows, part, tables, _every_bucket(union, keys, layout))
    carried = []
    # One row per bucket here: the range of later buckets is the rows after this one.
    per_bucket, by_key = per_key(per_bucket, keys, BUCKET)
    prev = by_key.orderBy(BUCKET).rowsBetween(Window.unboundedPreceding, -1)
    nxt = later_buckets(by_key)
    for t in tables:
        if t.backward:
            last_before = F.last(f"__cb{t.slot}", ignorenulls=True).over(prev)
            carried.append(last_before.alias(f"__pb{t.slot}"))
        if t.forward:
            # Nearest later bucket first in ascending order: last in the descending frame.
            first_after = F.last(f"__cf{t.slot}", ignorenulls=True).over(nxt)
            carried.append(first_after.alias(f"__nf{t.slot}"))
    out = matched.join(per_bucket.select(*part, *carried), on=part, how="left")
    for t in tables:
        fills = [(BACK, f"__pb{t.slot}")] if t.backward else []
        fills += [(FORWARD, f"__nf{t.slot}")] if t.forward else []
        for base, name in fills:
            target = slot_name(base, t.slot)
            out = out.withColumn(target, F.coalesce(F.col(target), F.col(name)))
    return out


def later_buckets(window: WindowSpec) -> WindowSpec:
    """The rows of later buckets (``__b``), as a running frame over descending buckets.

    ``BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING`` would say the same, but Spark
    recomputes such a frame for every row (quadratic in a partition's rows: a hot key's
    left rows, or many buckets), while a frame from UNBOUNDED PRECEDING is updated
    row by row. The nearest later bucket comes last in this frame.
    """
    return window.orderBy(F.col(BUCKET).desc()).rangeBetween(Window.unboundedPreceding, -1)


def _ends_by_aggregate(union: DataFrame, part: list[str], tables: list[Carried],
                       floating: bool) -> DataFrame:
    """Each bucket's last (``__cb<slot>``) and first (``__cf<slot>``) right rows.

    One aggregate over every row; its struct-valued ``max_by`` sorts them. The first
    row is the greatest under the reversed time: ``~t`` for long ordinals (``-t``
    overflows at the smallest long), ``-t`` for floating point ones.
    """
    reversed_t = reversed_time(F.col(TIME), floating)
    aggs = []
    for t in tables:
        r = slot_name(RIGHT_STRUCT, t.slot)
        is_right = F.col(r).isNotNull()
        tb = [F.col(c) for c in t.tiebreaks]
        if t.backward:
            last = F.when(is_right, F.struct(F.col(TIME), *tb))
            aggs.append(F.max_by(r, last).alias(f"__cb{t.slot}"))
        if t.forward:
            first = F.when(is_right, F.struct(reversed_t.alias("nt"), *tb))
            aggs.append(F.max_by(r, first).alias(f"__cf{t.slot}"))
    return union.groupBy(*part).agg(*aggs)


def _every_bucket(union: DataFrame, keys: list[str], layout: Layout) -> DataFrame | None:
    """Every ``(keys, bucket)`` a row of ``union`` can fall in, without reading it.

    The buckets are ``0 .. count - 1`` of the grid :func:`bucketize` laid (for the hot
    keys only, with keys); a bucket without rows is harmless. ``None`` when there are
    more than :data:`LISTED_BUCKETS` of them.
    """
    spark = union.sparkSession
    count = layout.buckets or default_count(union)
    if count * max(1, len(layout.hot_keys or ())) > LISTED_BUCKETS:
        return None
    buckets = spark.range(count).select(F.col("id").cast("int").alias(BUCKET))
    if not keys:
        return buckets
    types = {f.name: f.dataType for f in union.schema.fields}
    hot = [spark.range(1).select(*[F.lit(v).cast(types[k]).alias(k)
                                   for k, v in zip(keys, values, strict=True)])
           for values in layout.hot_keys or ()]
    return reduce(lambda a, b: a.unionByName(b), hot).crossJoin(buckets)


def _ends_by_time(rows: DataFrame, part: list[str], tables: list[Carried],
                  every: DataFrame | None) -> DataFrame:
    """:func:`_ends_by_aggregate` for few buckets, without sorting the rows.

    A hash aggregate finds each bucket's greatest (smallest) right time; the rows at
    that time, found through a broadcast of those few buckets, are the only ones whose
    struct is compared (the tie-breaks decide among them). ``every`` lists every
    bucket (:func:`_every_bucket`), so that a bucket with left rows only still gets
    a row to receive the carried values, without a second pass over ``rows``. Without
    that list (too many buckets to list), the pass that finds the rows at the ends'
    times aggregates every row instead of those rows only, so that every bucket
    holding rows gets its row from it; the ends are then joined, not broadcast.
    """
    times = []
    for t in tables:
        rt = F.when(F.col(slot_name(RIGHT_STRUCT, t.slot)).isNotNull(), F.col(TIME))
        if t.backward:
            times.append(F.max(rt).alias(f"__xb{t.slot}"))
        if t.forward:
            times.append(F.min(rt).alias(f"__xf{t.slot}"))
    ends = rows.groupBy(*part).agg(*times)
    hits, picks = [], []
    for t in tables:
        r = slot_name(RIGHT_STRUCT, t.slot)
        order = F.struct(F.lit(0).alias("z"), *[F.col(c) for c in t.tiebreaks])
        for on, name, at in ((t.backward, f"__cb{t.slot}", f"__xb{t.slot}"),
                             (t.forward, f"__cf{t.slot}", f"__xf{t.slot}")):
            if on:
                hit = F.col(r).isNotNull() & (F.col(TIME) == F.col(at))
                hits.append(hit)
                picks.append(F.max_by(r, F.when(hit, order)).alias(name))
    if every is None:
        return rows.join(ends, on=part).groupBy(*part).agg(*picks)
    any_hit = reduce(lambda a, b: a | b, hits)
    found = rows.join(F.broadcast(ends), on=part).where(any_hit).groupBy(*part).agg(*picks)
    return every.join(found, on=part, how="left")
