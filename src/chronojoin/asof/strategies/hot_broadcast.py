"""``hot_broadcast``: hot keys' timelines cut into time buckets, joined in a broadcast.

A key with many left rows would pair each of its right rows with all of them in
:mod:`~chronojoin.asof.strategies.broadcast`. Here the hot keys' timelines (the
``hot_keys`` of a :class:`~chronojoin.asof.buckets.Layout`, which ``auto`` gives when
their left times spread over the buckets) are cut into ``layout.buckets`` equal-width
time buckets, and the bucket joins the keys (every other key is bucket 0). Each
bucket also gets one *end* query that every right row of the bucket is a candidate
of: its winners are the bucket's last (backward) and first (forward) right rows. A
window over the winners, partitioned by key and ordered by bucket, gives a left time
that found nothing in its own bucket the last end of the earlier buckets (the first
of the later ones). Bucket numbers grow with time, so the result is exact for any
bucket count, as in :mod:`~chronojoin.asof.buckets`.

A hot key's right rows meet one or two queries each, so the candidates are many; they
are reduced in two steps that never sort them:

1. the right keys and times only, paired with the broadcast queries; a hash aggregate
   keeps each query's best time per table and direction (fixed-width values);
2. those best times broadcast, one more scan of the right side finds the rows at them;
   the struct of the right columns is built only for those rows, and ``max_by`` over
   the tie-breaks picks one per query.

Cost: two scans of each right table (the first of its keys and times only), no
shuffle of the right side, no sort of the candidates; the shuffles are of left-sized
data. ``auto`` runs it for the hot keys' rows only
(:mod:`~chronojoin.asof.strategies.hot_split`), the other keys through ``broadcast``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._validate.columns import col, not_null
from chronojoin._validate.timetypes import ordinal
from chronojoin.asof.buckets import (
    Carried,
    Layout,
    TimeBuckets,
    carry_ends,
    end_name,
    is_hot,
    span_grid,
)
from chronojoin.asof.frames import (
    BACK,
    BUCKET,
    FORWARD,
    LEFT_STRUCT,
    RIGHT_STRUCT,
    TIME,
    finish,
    key_names,
    keys_equal,
    left_frame,
    right_frame,
    slot_name,
    tiebreak_names,
    time_condition,
)
from chronojoin.asof.spec import AsofSpec, RightSpec

#: ``True`` on the end query of a hot key's time bucket, ``False`` on the left times.
END = "__e"


@dataclass(frozen=True)
class HotBuckets:
    """The hot keys of a layout and the equal-width time buckets their timelines get."""

    keys: tuple[tuple[object, ...], ...]
    grid: TimeBuckets

    def column(self, keys: list[Column], t: Column) -> Column:
        """The bucket of time ordinal ``t``: its grid bucket for a hot key, else 0."""
        return F.when(is_hot(keys, self.keys), self.grid.column(t)).otherwise(F.lit(0))


def hot_buckets(layout: Layout | None) -> HotBuckets | None:
    """The buckets ``layout`` asks for (``None``: no hot key or no time span)."""
    if layout is None or not layout.hot_keys or layout.span is None:
        return None
    return HotBuckets(layout.hot_keys, span_grid(*layout.span, layout.buckets or 1))


def _rt(slot: int) -> str:
    return f"__rt{slot}"


def _best(slot: int, forward: bool) -> str:
    """The column of a left time's best right time in table ``slot``, one direction."""
    return f"__xf{slot}" if forward else f"__xb{slot}"


def _directions(right: RightSpec) -> list[bool]:
    """``forward`` flags of the candidates a table needs (both for ``nearest``)."""
    return {"backward": [False], "forward": [True], "nearest": [False, True]}[right.direction]


def _times(queries: DataFrame, right: RightSpec, spec: AsofSpec, slot: int,
           hot: HotBuckets, group: list[str]) -> DataFrame:
    """Each right time of table ``slot`` paired with the broadcast left times it may match.

    Only the key and time columns of the right side are read.
    """
    keys = key_names(len(right.keys.left))
    rf = right_frame(spec, right, slot).select(
        *[F.col(k).alias(f"__r{k}") for k in keys], F.col(TIME).alias(_rt(slot)))
    bucket = hot.column([F.col(f"__r{k}") for k in keys], F.col(_rt(slot)))
    rf = rf.withColumn(f"__r{BUCKET}", bucket)
    cond = keys_equal(queries, rf, [*keys, BUCKET])
    time_cond = time_condition(right, F.col(TIME), F.col(_rt(slot)))
    if time_cond is not None:
        # Every right row of a bucket is a candidate of the bucket's end query.
        assert cond is not None
        cond = cond & (F.col(END) | time_cond)
    pairs = rf.join(F.broadcast(queries), on=cond)
    return pairs.select(*group, _rt(slot))


def _best_times(right: RightSpec, slot: int) -> list[Column]:
    """The aggregates of a left time's latest (``__xb``) and earliest (``__xf``) candidate.

    Rows of the other tables (NULL time here) and, for ``nearest``, the other
    direction's candidates are NULL, which ``max``/``min`` ignore; an end query takes
    both directions' candidates, whatever its time.
    """
    rt = F.col(_rt(slot))
    out = []
    for forward in _directions(right):
        if right.direction == "nearest":
            side = rt > F.col(TIME) if forward else rt <= F.col(TIME)
            rt_side = F.when(F.col(END) | side, rt)
        else:
            rt_side = rt
        best = F.min(rt_side) if forward else F.max(rt_side)
        out.append(best.alias(_best(slot, forward)))
    return out


def _rows_at(best: DataFrame, right: RightSpec, slot: int, forward: bool, group: list[str],
             code: int) -> DataFrame:
    """The right rows of table ``slot`` at each left time's best time, one direction.

    A broadcast of the best times (``(keys, time)`` pairs, a few per left time) finds
    them in one more scan of the right side; ``__sd`` = ``code`` tells the table and
    direction apart in the union of all of them.
    """
    keys = key_names(len(right.keys.left))
    targets = best.select(*group, F.col(_best(slot, forward)).alias("__x")).where(
        F.col("__x").isNotNull())
    # The right columns under internal names; the struct is built after the join, only
    # for the rows found (most right rows are at no best time).
    df = right.df
    tbs = tiebreak_names(len(right.tiebreak), slot)
    rf = df.select(
        *[col(src).alias(f"__r{k}") for src, k in zip(right.keys.right, keys, strict=True)],
        ordinal(col(right.on), right.time_kind).alias("__rx"),
        *[col(c).alias(n) for c, n in zip(right.tiebreak, tbs, strict=True)],
        *[col(src).alias(f"__o{i}") for i, (src, _) in enumerate(right.outputs)],
    )
    cond = targets["__x"] == rf["__rx"]
    same = keys_equal(targets, rf, keys)
    rows = rf.join(F.broadcast(targets), on=cond if same is None else same & cond)
    value = F.struct(*[F.col(f"__o{i}").alias(out) for i, (_, out) in enumerate(right.outputs)])
    found = F.struct(F.col("__rx").alias("t"), value.alias("v"))
    return rows.select(*group, F.lit(code).alias("__sd"), *tbs,
                       found.alias(slot_name(RIGHT_STRUCT, slot)))


def _winner(right: RightSpec, slot: int, forward: bool, code: int) -> Column:
    """``max_by`` of the rows at the best time: the greatest tie-breaks, NULLs losing."""
    tbs = [F.col(c) for c in tiebreak_names(len(right.tiebreak), slot)]
    order = F.when(F.col("__sd") == F.lit(code), F.struct(F.lit(0).alias("z"), *tbs))
    name = slot_name(FORWARD if forward else BACK, slot)
    return F.max_by(F.col(slot_name(RIGHT_STRUCT, slot)), order).alias(name)


def _end_queries(queries: DataFrame, keys: list[str], hot: HotBuckets) -> DataFrame:
    """One end query per bucket of every hot key, typed like ``queries``."""
    types = {f.name: f.dataType for f in queries.schema.fields}
    buckets = queries.sparkSession.range(hot.grid.count).select(
        F.col("id").cast("int").alias(BUCKET))
    per_key = [
        buckets.select(
            *[F.lit(v).cast(types[k]).alias(k) for k, v in zip(keys, values, strict=True)],
            # A time of its own for each end query (its bucket number): the aggregate
            # sorts on time first, and a shared NULL would make its prefix useless.
            F.col(BUCKET).cast(types[TIME]).alias(TIME),
            BUCKET,
            F.lit(True).alias(END),
        )
        for values in hot.keys
    ]
    return reduce(lambda a, b: a.unionByName(b), per_key)


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build the plan for one right table; ``layout`` names the hot keys and buckets."""
    return plan_many(left, [right], spec, layout)


def plan_many(
    left: DataFrame, rights: list[RightSpec], spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build one plan for every right table (all share the left keys)."""
    hot = hot_buckets(layout)
    if hot is None or not rights[0].keys:
        msg = "hot_broadcast needs keys and a layout with hot keys and their time span"
        raise ValueError(msg)
    keys = key_names(len(rights[0].keys.left))
    tagged = left_frame(left, spec, rights[0])
    queries = tagged.select(*keys, TIME).where(not_null(*[F.col(c) for c in [*keys, TIME]]))
    queries = (queries.withColumn(BUCKET, hot.column([F.col(k) for k in keys], F.col(TIME)))
               .withColumn(END, F.lit(False)))
    queries = queries.unionByName(_end_queries(queries, keys, hot))
    # Time first: the aggregates' sorts compare it before the keys a hot key shares.
    group = [TIME, *keys, BUCKET, END]
    slots = list(enumerate(rights))
    # 1. Each query's best right time per table and direction: a hash aggregate.
    times = [_times(queries, r, spec, slot, hot, group) for slot, r in slots]
    paired = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), times)
    best = paired.groupBy(*group).agg(*[c for slot, r in slots for c in _best_times(r, slot)])
    # 2. The right rows at those times, and the tie-breaks among them.
    found: list[DataFrame] = []
    aggs: list[Column] = []
    for slot, r in slots:
        for forward in _directions(r):
            code = len(aggs)
            found.append(_rows_at(best, r, slot, forward, group, code))
            aggs.append(_winner(r, slot, forward, code))
    # A hot key's left time with no candidate in its bucket still needs a row to
    # receive the carried one: its own, without a right row.
    found.append(queries.where(is_hot([F.col(k) for k in keys], hot.keys) & ~F.col(END)))
    rows = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), found)
    winners = rows.groupBy(*group).agg(*aggs)
    names = [c for c in winners.columns if c not in group]
    # The end queries are the bucket ends that the left times carry, in both orders.
    ends = winners.withColumn(end_name(False), F.col(END)).withColumn(end_name(True), F.col(END))
    tables = [Carried(slot, (), r.direction != "forward", r.direction != "backward")
              for slot, r in slots]
    carried = carry_ends(ends, ~F.col(END), keys, tables).select(*keys, TIME, *names)
    matched = tagged.join(carried, on=[*keys, TIME], how="left")
    return finish(matched.select(LEFT_STRUCT, TIME, *names), left.columns, rights, spec.how)
