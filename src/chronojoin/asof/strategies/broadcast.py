"""``broadcast``: the left side's keys and times broadcast, the right side never shuffled.

With few left rows per key and a small left side (``auto`` checks both), the left
side's ``(keys, time)`` pairs fit in one broadcast hash table. Every task streams its
own right rows through it and pairs each with the left times it may match (the
exploding join's candidate pairs, without moving a right row), and a partial
aggregate keeps only the best right row per ``(keys, time)`` seen by the task. One
small shuffle of those partial winners finds each ``(keys, time)``'s winner, and an
equi-join on ``(keys, time)`` hands it to every left row, once.

The winner is ``max_by(value, order)`` with ``order = (time ordinal, tie-breaks)``
(backward) or ``(reversed time ordinal, tie-breaks)`` (forward): the latest or the
earliest time, then the greatest tie-break values, NULL tie-breaks losing, as in the
other strategies; ``nearest`` keeps both and :func:`~chronojoin.asof.frames.finish`
picks one. Several right tables are paired in turn with the same broadcast and share
the aggregate and the final join.

Cost: one scan of each right table (no shuffle, no sort on time), about half the
right rows as candidate pairs with one left row per key (quadratic with many), and
two shuffles of left-sized data. A hot right key costs nothing extra: right rows stay
in their own tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._validate.columns import not_null
from chronojoin._validate.timetypes import TimeKind
from chronojoin.asof.buckets import Layout
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


def _rt(slot: int) -> str:
    return f"__rt{slot}"


def _order(rt: Column, right: RightSpec, forward: bool, slot: int) -> Column:
    """The ``max_by`` ordering of one candidate: time first, then the tie-breaks."""
    if forward:
        # The earliest time wins: reverse it (``~x`` for longs never overflows).
        rt = -rt if right.time_kind is TimeKind.FLOAT else F.bitwise_not(rt)
    tbs = [F.col(c) for c in tiebreak_names(len(right.tiebreak), slot)]
    return F.struct(rt.alias("t"), *tbs)


def pairs(queries: DataFrame, right: RightSpec, spec: AsofSpec, slot: int,
          bucket: Callable[[list[Column], Column], Column] | None = None) -> DataFrame:
    """Each right row of table ``slot`` paired with the broadcast left times it may match.

    ``bucket(keys, time)``, when given, is one more equality: the bucket a right row
    falls in must be the query's ``__b`` (for :mod:`hot_broadcast`'s time buckets).
    """
    keys = key_names(len(right.keys.left))
    rf = right_frame(spec, right, slot).select(
        *[F.col(k).alias(f"__r{k}") for k in keys],
        F.col(TIME).alias(_rt(slot)),
        *tiebreak_names(len(right.tiebreak), slot),
        F.col(slot_name(RIGHT_STRUCT, slot)),
    )
    equal = keys
    if bucket is not None:
        rf = rf.withColumn(f"__r{BUCKET}",
                           bucket([F.col(f"__r{k}") for k in keys], F.col(_rt(slot))))
        equal = [*keys, BUCKET]
    cond = keys_equal(queries, rf, equal)
    time_cond = time_condition(right, F.col(TIME), F.col(_rt(slot)))
    if time_cond is not None:
        cond = time_cond if cond is None else cond & time_cond
    found = rf.join(F.broadcast(queries), on=cond if cond is not None else F.lit(True))
    return found.select(
        *keys,
        TIME,
        _rt(slot),
        *tiebreak_names(len(right.tiebreak), slot),
        slot_name(RIGHT_STRUCT, slot),
    )


def _winners(right: RightSpec, slot: int) -> list[Column]:
    """The aggregate columns ``__mb<slot>``/``__mf<slot>`` of one right table."""
    rt, r = F.col(_rt(slot)), F.col(slot_name(RIGHT_STRUCT, slot))
    # Rows of the other tables (NULL time here) and, for ``nearest``, the other
    # direction's candidates get a NULL order, which ``max_by`` ignores.
    before = rt.isNotNull() if right.direction != "nearest" else rt <= F.col(TIME)
    after = rt.isNotNull() if right.direction != "nearest" else rt > F.col(TIME)
    out = []
    if right.direction != "forward":
        order = F.when(before, _order(rt, right, False, slot))
        out.append(F.max_by(r, order).alias(slot_name(BACK, slot)))
    if right.direction != "backward":
        order = F.when(after, _order(rt, right, True, slot))
        out.append(F.max_by(r, order).alias(slot_name(FORWARD, slot)))
    return out


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build the broadcast plan for one right table (``layout`` does not apply)."""
    return plan_many(left, [right], spec)


def plan_many(left: DataFrame, rights: list[RightSpec], spec: AsofSpec) -> DataFrame:
    """Build one broadcast plan for every right table (all share the left keys)."""
    return plan_with(left, rights, spec, lambda q, r, slot: pairs(q, r, spec, slot))


#: ``(queries, right, slot)`` -> that table's candidate pairs (see :func:`pairs`).
PairsOf = Callable[[DataFrame, RightSpec, int], DataFrame]


def plan_with(left: DataFrame, rights: list[RightSpec], spec: AsofSpec,
              pairs_of: PairsOf) -> DataFrame:
    """The broadcast plan, each table's candidate pairs from ``pairs_of``.

    ``pairs_of`` receives the left ``(keys, time)`` queries (NULLs dropped); every pair
    it returns is a candidate, and the best one per ``(keys, time)`` wins.
    """
    keys = key_names(len(rights[0].keys.left))
    tagged = left_frame(left, spec, rights[0])
    queries = tagged.select(*keys, TIME).where(not_null(*[F.col(c) for c in [*keys, TIME]]))
    slots = list(enumerate(rights))
    per_table = [pairs_of(queries, r, slot) for slot, r in slots]
    found = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), per_table)
    winners = found.groupBy(*keys, TIME).agg(*[c for slot, r in slots for c in _winners(r, slot)])
    matched = tagged.join(winners, on=[*keys, TIME], how="left")
    return finish(
        matched.select(LEFT_STRUCT, TIME, *winners.columns[len(keys) + 1 :]),
        left.columns,
        rights,
        spec.how,
    )
