"""``union``: one union of all sides, one window, each right row carried as one struct.

The thesis's union/window algorithm done right. Left and right rows go into one
frame; a window partitioned by key and ordered by time gives every left row the last
right struct seen so far (``last(__r, ignorenulls)`` over a running frame): that is
its backward candidate. Right rows of inclusive tables sort before left rows at equal
times, right rows of strict tables after them, so one ordering serves both. Forward
candidates use the same frame over descending time (a second sort).

Several right tables share the same union, shuffle and sort: each has its own struct
column (``__r``, ``__r1``, ...) and ``last`` ignores the others' NULLs. That is the
one-pass training-set join of :func:`chronojoin.asof_join` with a list of
:class:`chronojoin.Right`.

Cost: one shuffle of all inputs by key and one sort (two when some table looks
forward); memory per task is bounded by the sort, not by the key's size.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from chronojoin._validate.timetypes import TimeKind
from chronojoin.asof import buckets as B
from chronojoin.asof.frames import (
    BACK,
    FORWARD,
    RIGHT_STRUCT,
    SIDE,
    TIME,
    finish,
    floating_time,
    key_names,
    left_frame,
    right_frame,
    side_codes,
    slot_name,
    tiebreak_names,
)
from chronojoin.asof.spec import AsofSpec, RightSpec

#: Side codes: inclusive right rows sort before left rows, strict right rows after.
_INCLUSIVE, _LEFT, _STRICT = 0, 1, 2


def tagged_union(left: DataFrame, right: RightSpec, spec: AsofSpec) -> DataFrame:
    """Both tagged sides in one frame, with ``__s`` telling which side a row is from."""
    right_code, left_code = side_codes(right)
    lf = left_frame(left, spec, right).withColumn(SIDE, F.lit(left_code))
    rf = right_frame(spec, right).withColumn(SIDE, F.lit(right_code))
    return lf.unionByName(rf, allowMissingColumns=True)


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: B.Layout | None = None
) -> DataFrame:
    """Build the union/window plan for one right table."""
    return plan_many(left, [right], spec, layout)


def plan_many(
    left: DataFrame, rights: list[RightSpec], spec: AsofSpec, layout: B.Layout | None = None
) -> DataFrame:
    """Build one union/window plan that matches every right table at once.

    Tables share the union's time and key columns only where those have one type:
    a union would widen them to a common type (a ``bigint`` time or key to ``double``,
    which tells apart no two values past 2**53). So consecutive tables whose time
    ordinal and key types agree share one plan, and such plans are chained.
    """
    runs: list[list[RightSpec]] = []
    for r in rights:
        if runs and _union_types(runs[-1][0]) == _union_types(r):
            runs[-1].append(r)
        else:
            runs.append([r])
    return reduce(lambda out, run: _plan_run(out, run, spec, layout), runs, left)


def _union_types(right: RightSpec) -> tuple[str, ...]:
    """The types a right table brings to the union's time and key columns."""
    fields = {f.name: f.dataType for f in right.df.schema.fields}
    time = "double" if right.time_kind is TimeKind.FLOAT else "bigint"
    return (time, *[fields[k].simpleString() for k in right.keys.right])


def _plan_run(
    left: DataFrame, rights: list[RightSpec], spec: AsofSpec, layout: B.Layout | None
) -> DataFrame:
    """One union/window plan for tables of one time and key types."""
    keys = key_names(len(rights[0].keys.left))
    frames = [left_frame(left, spec, rights[0]).withColumn(SIDE, F.lit(_LEFT))]
    for slot, r in enumerate(rights):
        code = _INCLUSIVE if r.allow_exact_matches else _STRICT
        frames.append(right_frame(spec, r, slot).withColumn(SIDE, F.lit(code)))
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    layout = layout or B.Layout(spec.buckets)
    union, part, bucketed = B.bucketize(union, keys, layout)
    if bucketed and keys:
        # Spark takes tables bucketed by the keys as clustered by (keys, bucket) already,
        # which would leave all time buckets of a hot key in that key's one task.
        union = union.repartition(*[F.col(c) for c in part])
    ties = [
        F.col(c).asc_nulls_first()
        for slot, r in enumerate(rights)
        for c in tiebreak_names(len(r.tiebreak), slot)
    ]
    window = Window.partitionBy(*part)
    running = (Window.unboundedPreceding, Window.currentRow)
    tables = [
        B.Carried(
            slot,
            tuple(tiebreak_names(len(r.tiebreak), slot)),
            r.direction in ("backward", "nearest"),
            r.direction in ("forward", "nearest"),
        )
        for slot, r in enumerate(rights)
    ]
    out = union
    for forward in (False, True):
        slots = [t.slot for t in tables if (t.forward if forward else t.backward)]
        if not slots:
            continue
        time_order = F.col(TIME).desc() if forward else F.col(TIME).asc()
        w = window.orderBy(time_order, F.col(SIDE).asc(), *ties).rowsBetween(*running)
        target = FORWARD if forward else BACK
        for slot in slots:
            last = F.last(slot_name(RIGHT_STRUCT, slot), ignorenulls=True).over(w)
            out = out.withColumn(slot_name(target, slot), last)
        if bucketed and keys:
            # The last row of each bucket in this order: its running value is the
            # bucket's last (first) right row, what later (earlier) buckets carry.
            ends = window.orderBy(time_order, F.col(SIDE).asc(), *ties)
            out = out.withColumn(B.end_name(forward), F.lead(F.lit(1)).over(ends).isNull())
    is_left = F.col(SIDE) == F.lit(_LEFT)
    if bucketed and keys:
        return finish(B.carry_ends(out, is_left, keys, tables), rights, spec.how)
    matched = out.where(is_left)
    if bucketed:
        matched = B.carry(union, matched, keys, tables, layout, floating_time(spec, rights))
    return finish(matched, rights, spec.how)
