"""``union``: one union of both sides, one window, the whole right row as one struct.

The thesis's union/window algorithm done right: right rows sort before left rows at
equal times for inclusive matches (after them for strict ones), so the backward
candidate of a left row is simply the last right struct seen so far in its key
(``last(__r, ignorenulls)`` over a running frame). Forward uses the same frame over
descending time. Cost: one shuffle of both sides by key and one sort (two for
``nearest``); memory per task is bounded by the sort, not by the key's size.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from chronojoin.asof import buckets as B
from chronojoin.asof.frames import (
    BACK,
    FORWARD,
    RIGHT_STRUCT,
    SIDE,
    TIME,
    finish,
    key_names,
    left_frame,
    right_frame,
    side_codes,
    tiebreak_names,
)
from chronojoin.asof.spec import AsofSpec, RightSpec


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
    right_code, left_code = side_codes(right)
    keys = key_names(len(right.keys.left))
    tbs = tiebreak_names(len(right.tiebreak))
    union = tagged_union(left, right, spec)
    union, part, bucketed = B.bucketize(union, keys, layout or B.Layout(spec.buckets))
    backward = right.direction in ("backward", "nearest")
    forward = right.direction in ("forward", "nearest")
    ties = [F.col(c).asc_nulls_first() for c in tbs]
    window = Window.partitionBy(*part) if part else Window.partitionBy()
    running = (Window.unboundedPreceding, Window.currentRow)
    out = union
    if backward:
        w = window.orderBy(F.col(TIME).asc(), F.col(SIDE).asc(), *ties).rowsBetween(*running)
        out = out.withColumn(BACK, F.last(RIGHT_STRUCT, ignorenulls=True).over(w))
    if forward:
        w = window.orderBy(F.col(TIME).desc(), F.col(SIDE).asc(), *ties).rowsBetween(*running)
        out = out.withColumn(FORWARD, F.last(RIGHT_STRUCT, ignorenulls=True).over(w))
    matched = out.where(F.col(SIDE) == F.lit(left_code))
    if bucketed:
        matched = B.carry(union, matched, keys, right_code, tbs, backward=backward, forward=forward)
    return finish(matched, left.columns, right, spec.how)
