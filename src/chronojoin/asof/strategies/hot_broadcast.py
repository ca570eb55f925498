"""``hot_broadcast``: hot keys' timelines cut into time buckets, every key in one broadcast.

A key with many left rows would pair each of its right rows with all of them in
:mod:`~chronojoin.asof.strategies.broadcast`. Here the hot keys' timelines (the
``hot_keys`` of a :class:`~chronojoin.asof.buckets.Layout`, which ``auto`` gives when
their left times spread over the buckets) are cut into ``layout.buckets`` equal-width
time buckets, and the bucket is the join key: one long that names the hot key too,
the key Spark's broadcast hash join looks up fastest. A right row meets only the left
times of its own bucket.

Every other key joins in the same broadcast under a join value of its own: its keys'
64-bit hash with the sign bit set (hot buckets are never negative), the keys checked
on each pair a lookup finds, so two keys that share a hash never meet. Keys whose
equal values may hash apart (floating point, or types that differ between the sides)
join on the keys and a constant value instead. So the right side is read once for all
keys, and one aggregate and one join back serve them all.

A left time whose own bucket holds no right row on its side (none at or before it
for backward, at or after it for forward) takes its answer from the nearest earlier
(later) bucket that holds any: every right row there lies on its side, so that
bucket's best row is the answer. Which left times need this, and which bucket, comes
from the hot keys' right keys and times alone: a hash aggregate of each bucket's
smallest and greatest time, and a window over those bucket ends and the hot left
times (one task per hot key, bounded: its left rows are part of the broadcast, and it
has no more buckets than the broadcast may hold rows). Those left times are registered
under the carry bucket as well, so one scan of the right side pairs every right row
with the queries it may answer. Bucket numbers grow with time, so the result is exact
for any bucket count.

Cost: per right table, one scan of the hot keys' keys and times (a hash aggregate, no
shuffle of the rows) and one scan of every column in which a right row meets about
half of its bucket's (or its key's) left times, the hot keys' left times with about
one per bucket; the carried queries are few when buckets hold many right rows. The
winners are found as in ``broadcast``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.columns import col
from chronojoin.asof.buckets import Layout, TimeBuckets, is_hot, span_grid
from chronojoin.asof.frames import BUCKET, TIME, key_names, right_frame
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies import broadcast


@dataclass(frozen=True)
class HotBuckets:
    """The hot keys of a layout and the equal-width time buckets their timelines get."""

    keys: tuple[tuple[object, ...], ...]
    grid: TimeBuckets

    def column(self, keys: list[Column], t: Column) -> Column:
        """The bucket of time ordinal ``t`` under ``keys``, one long naming both.

        The ``i``-th hot key's buckets are ``i * count`` to ``i * count + count - 1``
        (grid bucket ``b`` is ``i * count + b``), so equal buckets mean equal keys and
        bucket numbers grow with time within a key. NULL for any other key, which
        :func:`plan_many` gives a join value of its own.
        """
        index: Column | None = None
        for i, values in enumerate(self.keys):
            same = is_hot(keys, (values,))
            index = F.when(same, F.lit(i)) if index is None else index.when(same, F.lit(i))
        assert index is not None
        return index.cast("long") * F.lit(self.grid.count) + self.grid.column(t)

    def key_of(self, bucket: Column) -> Column:
        """The hot key's index of a bucket from :meth:`column`."""
        return F.floor(bucket / F.lit(self.grid.count))


def hot_buckets(layout: Layout | None) -> HotBuckets | None:
    """The buckets ``layout`` asks for (``None``: no hot key or no time span)."""
    if layout is None or not layout.hot_keys or layout.span is None:
        return None
    return HotBuckets(layout.hot_keys, span_grid(*layout.span, layout.buckets or 1))


#: A non-empty bucket's smallest and greatest right time; ``True`` on a query row.
_LOW, _HIGH, _QUERY = "__lo", "__hi", "__q"
#: The registration window's order, and a bucket end's bucket (NULL on a query row).
_ORDER, _NONEMPTY = "__o", "__ne"


def _bucket_ends(right: RightSpec, spec: AsofSpec, slot: int, hot: HotBuckets,
                 keys: list[str], back: bool, fwd: bool) -> DataFrame:
    """Each non-empty bucket of table ``slot``: its smallest or greatest time, or both.

    Only the right keys and times are read; a hash aggregate on one long with
    fixed-width values, of the ends the directions searched need (``back``: the
    smallest time, ``fwd``: the greatest).
    """
    rf = right_frame(spec, right, slot).select(
        hot.column([F.col(k) for k in keys], F.col(TIME)).alias(BUCKET), TIME)
    ends = []
    if back:
        ends.append(F.min(TIME).alias(_LOW))
    if fwd:
        ends.append(F.max(TIME).alias(_HIGH))
    return rf.groupBy(BUCKET).agg(*ends)


def _registrations(queries: DataFrame, right: RightSpec, spec: AsofSpec, slot: int,
                   hot: HotBuckets, keys: list[str]) -> DataFrame:
    """The queries of table ``slot``, each under one or more buckets.

    Every left time under its own bucket, and also under the nearest earlier (later)
    non-empty bucket when its own holds no right row on the side it needs.
    """
    back = right.direction != "forward"
    fwd = right.direction != "backward"
    ends = _bucket_ends(right, spec, slot, hot, keys, back, fwd)
    rows = queries.select(*keys, BUCKET, TIME, F.lit(True).alias(_QUERY)).unionByName(
        ends.withColumn(_QUERY, F.lit(False)), allowMissingColumns=True)
    # One window operator (one sort) per hot key over the queries and the bucket ends,
    # ordered by ``2 * bucket``, plus 1 for a query: a bucket's end row comes before
    # its queries. A query at ``2b + 1`` finds its own bucket's ends in the range
    # ``[2b, 2b + 1]``, the earlier buckets' ends up to ``2b - 1``, and the nearest
    # later non-empty bucket as the next end row (``lead`` skipping NULLs: a frame
    # ending at UNBOUNDED FOLLOWING would be recomputed for every row, see
    # :func:`~chronojoin.asof.buckets.later_buckets`).
    rows = rows.withColumn(_ORDER, F.col(BUCKET) * 2 + F.col(_QUERY).cast("long"))
    rows = rows.withColumn(_NONEMPTY, F.when(~F.col(_QUERY), F.col(BUCKET)))
    w = Window.partitionBy(hot.key_of(F.col(BUCKET))).orderBy(_ORDER)
    same = w.rangeBetween(-1, 0)
    t = F.col(TIME)
    exact = right.allow_exact_matches
    carries: dict[str, Column] = {}  # by name: no schema is read to find them again
    if back:
        low = F.min(_LOW).over(same)
        # Nothing at or before the query in its own bucket (strict: before it).
        needs = low.isNull() | ((low > t) if exact else (low >= t))
        earlier = F.max(_NONEMPTY).over(w.rangeBetween(Window.unboundedPreceding, -2))
        carries["__cb"] = F.when(needs, earlier)
    if fwd:
        high = F.max(_HIGH).over(same)
        needs = high.isNull() | ((high < t) if exact else (high <= t))
        later = F.expr(f"lead({_NONEMPTY}, 1) IGNORE NULLS").over(w)
        carries["__cf"] = F.when(needs, later)
    # The windows see the bucket-end rows; only the queries are kept after them.
    marked = rows.select(*keys, TIME, _QUERY, *[c.alias(n) for n, c in carries.items()])
    marked = marked.where(F.col(_QUERY)).drop(_QUERY)
    # Both carry buckets (``nearest``) from one pass over the window's output.
    bucket = F.explode(F.array(*[F.col(c) for c in carries]))
    carried = marked.select(*keys, TIME, bucket.alias(BUCKET)).where(F.col(BUCKET).isNotNull())
    return queries.unionByName(carried)


#: Key types whose equal values have equal hashes (so a cold key's join value may be
#: its keys' hash): not floating point (``0.0 = -0.0``), strings under a collation
#: other than the binary one (``'a' = 'A'`` in ``UTF8_LCASE``), nor nested values.
_HASHABLE = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType,
             T.DecimalType, T.BinaryType, T.DateType, T.TimestampType, T.TimestampNTZType)
#: The sign bit of a long: set on every cold key's join value, never on a hot bucket's.
_COLD = -(2**63)


def cold_value(keys: list[Column]) -> Column:
    """A cold key's join value: its keys' 64-bit hash, negative (hot buckets are not).

    Two keys may share one; :func:`~chronojoin.asof.strategies.broadcast.pairs` checks
    the keys of every pair it finds.
    """
    return F.xxhash64(*keys).bitwiseOR(F.lit(_COLD))


def _hashable(left: DataFrame, rights: list[RightSpec]) -> bool:
    """Whether every key has one type on every side, one whose equal values hash alike.

    Read from the inputs' schemas (the keys are top-level columns).
    """
    def types(df: DataFrame, names: tuple[str, ...]) -> list[T.DataType]:
        fields = {f.name: f.dataType for f in df.schema.fields}
        return [fields[n] for n in names]

    def hashable(dt: T.DataType) -> bool:
        return isinstance(dt, _HASHABLE) or dt == T.StringType()

    sides = [types(left, rights[0].keys.left), *[types(r.df, r.keys.right) for r in rights]]
    return all(hashable(column[0]) and all(dt == column[0] for dt in column)
               for column in zip(*sides, strict=True))


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build the plan for one right table; ``layout`` names the hot keys and buckets."""
    return plan_many(left, [right], spec, layout)


def plan_many(
    left: DataFrame, rights: list[RightSpec], spec: AsofSpec, layout: Layout | None = None,
    cold: Callable[[list[Column]], Column] = cold_value,
) -> DataFrame:
    """Build one plan for every right table (all share the left keys).

    ``cold(keys)`` gives the other keys' join value (a test makes them all collide).
    """
    hot = hot_buckets(layout)
    if hot is None or not rights[0].keys:
        msg = "hot_broadcast needs keys and a layout with hot keys and their time span"
        raise ValueError(msg)
    keys = key_names(len(rights[0].keys.left))
    hashed = _hashable(left, rights)
    other = cold if hashed else (lambda _: F.lit(-1).cast("long"))

    def join_value(ks: list[Column], t: Column) -> Column:
        return F.coalesce(hot.column(ks, t), other(ks))

    def pairs_of(queries: DataFrame, right: RightSpec, slot: int) -> DataFrame:
        valued = queries.withColumn(BUCKET, join_value([F.col(k) for k in keys], F.col(TIME)))
        is_hot_query = F.col(BUCKET) >= 0
        hot_right = dataclasses.replace(
            right, df=right.df.where(is_hot([col(k) for k in right.keys.right], hot.keys)))
        regs = _registrations(valued.where(is_hot_query), hot_right, spec, slot, hot, keys)
        return broadcast.pairs(valued.where(~is_hot_query).unionByName(regs), right, spec,
                               slot, bucket=join_value, keys="checked" if hashed else "equal")

    return broadcast.plan_with(left, rights, spec, pairs_of)
