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
picks one. Without tie-breaks and with fixed-width right columns the order is the time
alone and each column gets its own ``max_by``: all buffers are fixed-width, so Spark
aggregates in a hash map instead of sorting every candidate pair (:func:`_flat`).
Several right tables share the broadcast; each gets its own aggregate (a candidate
pair updates its own table's buffers only), and the winners, hash partitioned on
``(keys, time)`` alike, join the left rows one table after the other.

Cost: one scan of each right table (no shuffle, no sort on time), about half the
right rows as candidate pairs with one left row per key (quadratic with many), and
one shuffle of left-sized data plus one per right table. A hot right key costs
nothing extra: right rows stay in their own tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.columns import not_null, quoted
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
    reversed_time,
    right_frame,
    slot_name,
    tiebreak_names,
    time_condition,
)
from chronojoin.asof.spec import AsofSpec, RightSpec

#: How :func:`pairs` keeps the keys' equality when a bucket is the join key:
#: ``"checked"``, a bucket may hold several keys, which each found pair is checked
#: for; ``"equal"``, the keys join with it.
KeyMatch = Literal["checked", "equal"]


def _rt(slot: int) -> str:
    return f"__rt{slot}"


def _time_order(rt: Column, right: RightSpec, forward: bool) -> Column:
    """The time as ``max_by`` orders it: reversed for ``forward`` (the earliest wins).

    ``~x`` for longs never overflows, and the map is its own inverse.
    """
    return reversed_time(rt, right.time_kind is TimeKind.FLOAT) if forward else rt


def _order(rt: Column, right: RightSpec, forward: bool, slot: int) -> Column:
    """The ``max_by`` ordering of one candidate: time first, then the tie-breaks."""
    tbs = [F.col(c) for c in tiebreak_names(len(right.tiebreak), slot)]
    return F.struct(_time_order(rt, right, forward).alias("t"), *tbs)


def pairs(queries: DataFrame, right: RightSpec, spec: AsofSpec, slot: int,
          bucket: Callable[[list[Column], Column], Column] | None = None,
          keys: KeyMatch = "checked") -> DataFrame:
    """Each right row of table ``slot`` paired with the broadcast left times it may match.

    ``bucket(keys, time)``, when given, is the join key: the bucket a right row falls
    in must be the query's ``__b`` (for :mod:`hot_broadcast`'s time buckets). One long
    is the join key Spark's broadcast hash join looks up fastest. ``keys`` says how
    the keys' equality is then kept (see :data:`KeyMatch`).
    """
    names = key_names(len(right.keys.left))
    rf = right_frame(spec, right, slot).select(
        *[F.col(k).alias(f"__r{k}") for k in names],
        F.col(TIME).alias(_rt(slot)),
        *tiebreak_names(len(right.tiebreak), slot),
        F.col(slot_name(RIGHT_STRUCT, slot)),
    )
    equal = names
    if bucket is not None:
        rf = rf.withColumn(f"__r{BUCKET}",
                           bucket([F.col(f"__r{k}") for k in names], F.col(_rt(slot))))
        equal = [*names, BUCKET] if keys == "equal" else [BUCKET]
    cond = keys_equal(queries, rf, equal)
    if bucket is not None and keys == "checked":
        # Not an equality at the top of the condition, so Spark keeps it out of the
        # hash key and tests it on each row the lookup finds (NULL keys never meet).
        for k in names:
            check = F.coalesce(queries[k] == rf[f"__r{k}"], F.lit(False))
            cond = check if cond is None else cond & check
    time_cond = time_condition(right, F.col(TIME), F.col(_rt(slot)))
    if time_cond is not None:
        cond = time_cond if cond is None else cond & time_cond
    found = rf.join(F.broadcast(queries), on=cond if cond is not None else F.lit(True))
    return found.select(
        *names,
        TIME,
        _rt(slot),
        *tiebreak_names(len(right.tiebreak), slot),
        slot_name(RIGHT_STRUCT, slot),
    )


#: Types an aggregation buffer holds in place (Spark's hash aggregate needs them).
_FLAT_TYPES = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType,
               T.FloatType, T.DoubleType, T.DecimalType, T.DateType, T.TimestampType,
               T.TimestampNTZType, T.DayTimeIntervalType, T.YearMonthIntervalType)


def _flat(right: RightSpec) -> bool:
    """Whether ``right``'s winner can be found by a hash aggregate, column by column.

    Without tie-breaks the order is the time ordinal alone (a number), and when every
    output column is fixed-width, ``max_by`` of each column under that one order keeps
    fixed-width buffers: Spark aggregates them in a hash map instead of sorting every
    candidate pair. All of a table's ``max_by`` see the same rows in the same order
    and compare the same order values, so on a tie they all keep the same row.
    """
    if right.tiebreak:
        return False
    types = {f.name: f.dataType for f in right.df.schema.fields}
    return all(isinstance(types.get(src), _FLAT_TYPES) for src, _ in right.outputs)


def _candidates(right: RightSpec, rt: Column) -> list[tuple[str, Column | None]]:
    """``(output slot, condition)`` per direction kept: backward ``__mb``, forward ``__mf``.

    Only ``nearest`` keeps both, each with a condition on the candidate's side (the
    other direction's candidates get a NULL order, which ``max_by`` ignores); a single
    direction's pairs are all candidates (``None``).
    """
    if right.direction == "backward":
        return [(BACK, None)]
    if right.direction == "forward":
        return [(FORWARD, None)]
    return [(BACK, rt <= F.col(TIME)), (FORWARD, rt > F.col(TIME))]


def _only(when: Column | None, order: Column) -> Column:
    """``order`` where ``when`` holds (NULL elsewhere); ``order`` itself without it."""
    return order if when is None else F.when(when, order)


class _Winners(NamedTuple):
    """How one right table's winners are found from its candidate pairs.

    ``orders`` are added to the pairs (the flat ``max_by`` orders, by name), ``aggs`` go
    into the ``groupBy(...).agg``, ``structs`` select each winner as the ``{t, v}``
    struct :func:`~chronojoin.asof.frames.finish` expects and ``names`` name those
    columns (no schema is read: on Spark Connect that is a round trip to the server,
    which analyses the plan).
    """

    orders: dict[str, Column]
    aggs: list[Column]
    structs: list[Column]
    names: list[str]


def _winners(right: RightSpec, slot: int) -> _Winners:
    """The aggregates of one right table and the columns ``__mb<slot>``/``__mf<slot>``."""
    rt, r = F.col(_rt(slot)), F.col(slot_name(RIGHT_STRUCT, slot))
    found = _Winners({}, [], [], [])
    flat = _flat(right)
    for base, when in _candidates(right, rt):
        name, forward = slot_name(base, slot), base == FORWARD
        found.names.append(name)
        if not flat:
            order = _order(rt, right, forward, slot)
            found.aggs.append(F.max_by(r, _only(when, order)).alias(name))
            found.structs.append(F.col(name))
            continue
        key = f"{name}_k"
        found.orders[key] = _only(when, _time_order(rt, right, forward))
        found.aggs.append(F.max(key).alias(f"{name}_o"))
        # One expression for every column's max_by (the struct is built from their
        # results), not a few column functions per column.
        values = quoted(slot_name(RIGHT_STRUCT, slot)) + ".v."
        found.aggs.append(F.expr("struct(" + ", ".join(
            f"max_by({values}{quoted(out)}, {quoted(key)}) AS {quoted(out)}"
            for _, out in right.outputs) + ")").alias(f"{name}_v"))
        o = F.col(f"{name}_o")
        t = _time_order(o, right, forward)  # the order map is its own inverse
        found.structs.append(
            F.when(o.isNotNull(), F.struct(t.alias("t"), F.col(f"{name}_v").alias("v")))
            .alias(name))
    return found


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
    matched, found = tagged, []
    for slot, right in enumerate(rights):
        won = _winners(right, slot)
        # One aggregate per table: each candidate pair updates its own table's
        # buffers only. The winners are hash partitioned on (keys, time) alike, so
        # the joins after the first move no more rows.
        candidates = pairs_of(queries, right, slot)
        if won.orders:  # (a Connect client refuses withColumns of nothing)
            candidates = candidates.withColumns(won.orders)
        winners = candidates.groupBy(*keys, TIME).agg(*won.aggs)
        winners = winners.select(*keys, TIME, *won.structs)
        matched = matched.join(winners, on=[*keys, TIME], how="left")
        found.extend(won.names)
    return finish(
        matched.select(LEFT_STRUCT, TIME, *found),
        rights,
        spec.how,
    )
