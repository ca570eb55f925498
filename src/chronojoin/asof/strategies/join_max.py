"""``join_max``: the exploding join, with the best pair kept by an aggregate.

The same candidate pairs as ``exploding`` (an equi-join on the keys with the time
condition), but the winner per left row is kept by ``max_by(..., rank)`` grouped by
the keys and the left row number instead of a ``row_number`` window. The join is a
shuffled hash join (the right rows of each task in a hash table: nothing is sorted on
time, and the right side is not sorted at all), and only the candidate pairs are
sorted, by key and left row, for the aggregate. With about one left row per key the
pairs are about half the right rows and this is the cheapest Spark plan (measured
against a sort-merge join of the same pairs and Spark's SortMergeAsOfJoin).

Like ``exploding``, its cost is the number of candidate pairs: quadratic when keys
hold many left rows, one task per key, and each task holds its share of the right
rows in memory. ``auto`` picks it only when a statistic shows
at most :data:`chronojoin.asof.choose.MAX_LEFT_PER_KEY` left rows per key and no hot
right key.

The rank is a struct compared field by field, greatest wins: ``backward``: the right
time, then the tie-break columns (NULL loses); ``forward``: the right time reversed;
``nearest``: the distance reversed, then "at or before the left time".
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin.asof.buckets import Layout
from chronojoin.asof.frames import (
    LEFT_STRUCT,
    TIME,
    finish,
    key_names,
    tiebreak_names,
)
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies.exploding import (
    ID,
    RT,
    VALUE,
    as_candidates,
    candidates,
    right_struct,
)


def _reversed(value: Column, integral: bool) -> Column:
    """An order-reversing map that cannot overflow (``~x`` for longs)."""
    return F.bitwise_not(value) if integral else -value


def _rank(right: RightSpec, integral: bool) -> Column:
    lt, rt = F.col(TIME), F.col(RT)
    ties = [F.col(c) for c in tiebreak_names(len(right.tiebreak))]
    if right.direction == "backward":
        first = [rt]
    elif right.direction == "forward":
        first = [_reversed(rt, integral)]
    else:
        first = [_reversed(F.abs(lt - rt), integral), rt <= lt]
    fields = [c.alias(f"__o{i}") for i, c in enumerate([*first, *ties])]
    return F.when(rt.isNotNull(), F.struct(*fields))


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build the join/aggregate plan for one right table (``layout`` does not apply)."""
    keys = key_names(len(right.keys.left))
    joined = candidates(left, right, spec, hint="shuffle_hash")
    integral = dict(joined.dtypes)[RT] == "bigint"
    # Grouping by the keys too keeps the join's partitioning (no second shuffle).
    # The rank decides the right time, so both max_by pick from the same winning row.
    rank = _rank(right, integral)
    best = joined.groupBy(*keys, ID).agg(
        F.first(TIME).alias(TIME),
        F.first(LEFT_STRUCT).alias(LEFT_STRUCT),
        F.max_by(RT, rank).alias(RT),
        F.max_by(VALUE, rank).alias(VALUE),
    )
    r = right_struct(F.col(RT), F.col(VALUE))
    return finish(as_candidates(best, right, r), left.columns, right, spec.how)
