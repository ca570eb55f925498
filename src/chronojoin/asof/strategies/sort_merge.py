"""``sort_merge``: the thesis's early-stop sort-merge idea as one linear pass per partition.

Both sides are co-partitioned by key in one shuffle and sorted within partitions by
``(key, time, side, tiebreak)``. A vectorised Arrow pass (``mapInArrow``) then walks
each partition once: for every left row the backward candidate is the last right row
seen so far in the same key (a running maximum of right-row positions, reset at key
boundaries, carried across Arrow batches). ``forward`` runs the same pass over the
partition sorted by descending time; ``nearest`` runs both. No window buffers are
built and no state grows with the key's size.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

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
    side_codes,
    tiebreak_names,
)
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies.union import tagged_union
from chronojoin.errors import InvalidArgumentError

#: Stands for NaN in a key (NaN is not equal to itself in Python).
_NAN = ("NaN",)


def _key_value(value: Any) -> Any:
    """A key value as Spark compares it: NaN equal to NaN."""
    return _NAN if isinstance(value, float) and math.isnan(value) else value


def check_keys(right: RightSpec) -> None:
    """Reject keys the Arrow pass cannot compare as Spark does.

    Struct, array and map keys, and strings under a collation other than
    ``UTF8_BINARY`` (``'ABC'`` equals ``'abc'`` under ``UTF8_LCASE``): the pass sees
    raw values.
    """
    types = {f.name: f.dataType for f in right.df.schema.fields}
    for name in right.keys.right:
        dtype = types[name]
        plain = not isinstance(dtype, (T.StructType, T.ArrayType, T.MapType))
        if isinstance(dtype, T.StringType):
            plain = dtype.collation == "UTF8_BINARY"
        if not plain:
            msg = (f"`strategy`: 'sort_merge' compares keys outside Spark and cannot "
                   f"compare key {name!r} of {right.what} ({dtype.simpleString()}); "
                   "expected a number, a date or timestamp, binary or a string without a "
                   "collation; use strategy='union' or 'auto'")
            raise InvalidArgumentError(msg)


def check_columns(left: DataFrame, right: RightSpec) -> None:
    """Reject columns that Arrow cannot carry through the pass (the rows of both sides do)."""
    from pyspark.errors import PySparkTypeError
    from pyspark.sql.pandas.types import to_arrow_type

    for df, what in ((left, "left"), (right.df, right.what)):
        for f in df.schema.fields:
            try:
                to_arrow_type(f.dataType, timezone="UTC")
            except PySparkTypeError:
                msg = (f"`strategy`: 'sort_merge' passes rows through Arrow, which cannot "
                       f"carry column {f.name!r} of {what} ({f.dataType.simpleString()}); "
                       "use strategy='union' or 'auto'")
                raise InvalidArgumentError(msg) from None


def _linear_pass(
    batches: Iterator[Any], *, keys: list[str], right_code: int, out: str, keep_right: bool
) -> Iterator[Any]:
    """Executor side: append column ``out`` = last right struct so far in the key."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    carry_key: tuple[Any, ...] | None = None
    carry_r: Any = None
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        side = batch.column(SIDE).to_numpy(zero_copy_only=False)
        is_right = side == right_code
        pos = np.arange(n)
        new = np.zeros(n, dtype=bool)
        new[0] = True
        for k in keys:
            a = batch.column(k)
            if n > 1:
                later, earlier = a.slice(1), a.slice(0, n - 1)
                ne = pc.not_equal(later, earlier)
                if pa.types.is_floating(a.type):
                    # Spark's keys hold NaN equal to NaN (IEEE comparisons do not).
                    ne = pc.and_(ne, pc.invert(pc.and_(pc.is_nan(later), pc.is_nan(earlier))))
                new[1:] |= pc.fill_null(ne, True).to_numpy(zero_copy_only=False)
        seg_start = np.maximum.accumulate(np.where(new, pos, 0))
        last_r = np.maximum.accumulate(np.where(is_right, pos, -1))
        idx = np.where(last_r >= seg_start, last_r, -1)
        rcol = batch.column(RIGHT_STRUCT)
        found = pc.take(rcol, pa.array(np.maximum(idx, 0), mask=idx < 0))
        first_key = tuple(_key_value(batch.column(k)[0].as_py()) for k in keys)
        if carry_r is not None and first_key == carry_key:
            fill = (seg_start == 0) & (idx < 0)
            if fill.any():
                found = pc.if_else(pa.array(fill), carry_r, found)
        if is_right.any():
            j = int(np.flatnonzero(is_right)[-1])
            carry_r = rcol[j]
            carry_key = tuple(_key_value(batch.column(k)[j].as_py()) for k in keys)
        result = batch.append_column(out, found) if hasattr(batch, "append_column") else None
        if result is None:
            cols = [*batch.columns, found]
            result = pa.RecordBatch.from_arrays(cols, names=[*batch.schema.names, out])
        if not keep_right:
            result = result.filter(pa.array(~is_right))
        yield result


def _pass(
    df: DataFrame, part: list[str], order: list[Any], *, right_code: int, out: str,
    keep_right: bool,
) -> DataFrame:
    rtype = df.schema[RIGHT_STRUCT].dataType
    schema = T.StructType([*df.schema.fields, T.StructField(out, rtype, True)])
    fn = functools.partial(
        _linear_pass, keys=part, right_code=right_code, out=out, keep_right=keep_right
    )
    return df.sortWithinPartitions(*[F.col(c) for c in part], *order).mapInArrow(fn, schema)


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: B.Layout | None = None
) -> DataFrame:
    """Build the sort-merge plan for one right table."""
    check_keys(right)
    check_columns(left, right)
    right_code, left_code = side_codes(right)
    keys = key_names(len(right.keys.left))
    ties = [F.col(c).asc_nulls_first() for c in tiebreak_names(len(right.tiebreak))]
    union = tagged_union(left, right, spec)
    layout = layout or B.Layout(spec.buckets)
    union, part, bucketed = B.bucketize(union, keys, layout)
    backward = right.direction in ("backward", "nearest")
    forward = right.direction in ("forward", "nearest")
    # Partition by a hash of the keys, not the keys themselves: Spark drops a
    # repartition whose target equals a bucketed input's partitioning and then also
    # disables the bucketed scan (nothing above it asks for a distribution), which
    # would leave a key's rows on several tasks.
    data = union.repartition(F.xxhash64(*[F.col(c) for c in part]))
    side = F.col(SIDE).asc()
    if backward:
        data = _pass(data, part, [F.col(TIME).asc(), side, *ties], right_code=right_code,
                     out=BACK, keep_right=forward)
    if forward:
        data = _pass(data, part, [F.col(TIME).desc(), side, *ties], right_code=right_code,
                     out=FORWARD, keep_right=False)
    matched = data.where(F.col(SIDE) == F.lit(left_code))
    if bucketed:
        tbs = tuple(tiebreak_names(len(right.tiebreak)))
        matched = B.carry(union, matched, keys, [B.Carried(0, tbs, backward, forward)],
                          layout, floating_time(spec, [right]))
    return finish(matched, right, spec.how)
