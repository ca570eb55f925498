"""The event stream shared by the sweep strategies (seed: "generalize and combine").

Points, interval starts (+value) and interval ends (-value) become rows of one
DataFrame with the columns

* ``__cj_k0 ...``: the equality keys,
* ``__cj_t``: the time ordinal (NULL for points without a time),
* ``__cj_o``: the rank of the row kind at equal times (from ``closed``),
* ``__cj_p``: a struct of all point columns (NULL for interval events), so a point
  row travels through the plan as one row and comes out exactly once,
* ``__cj_n``: +1/-1 per interval (NULL for points),
* ``__cj_s<j>`` / ``__cj_c<j>``: +/-value and +/-1 when the value is not NULL, for the
  j-th value column (for doubles: finite values only, and ``__cj_s<j>_nan``,
  ``_pinf``, ``_ninf`` count NaN, +inf and -inf values; for integers: the value's
  high 32 bits, and ``__cj_s<j>_low`` its low 32 bits).

A running sum of the deltas up to a point row (ordered by ``(__cj_t, __cj_o)`` within
its keys) is the aggregate over exactly the intervals that cover the point.

A running sum holds every interval open at its row, not only those covering a point:
integer values are summed in two halves, so that it overflows only where the sum of a
point's own intervals does (as Spark's ``sum`` over them would).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.columns import col, not_null, struct_of
from chronojoin._validate.timetypes import TimeKind, ordinal
from chronojoin.intervals.spec import MEAN_DIVIDEND_DIGITS, AggSpec, IntervalSpec, sum_type

T_COL, RANK, POINT, COUNT = "__cj_t", "__cj_o", "__cj_p", "__cj_n"
#: Values of double columns a running sum cannot subtract again; counted apart.
SPECIALS = ("nan", "pinf", "ninf")
#: The suffix of an integer value's low 32 bits (``__cj_s<j>`` holds the high ones).
LOW = "_low"


def key_names(spec: IntervalSpec) -> list[str]:
    """Return the internal names of the key columns."""
    return [f"__cj_k{i}" for i in range(len(spec.keys.left))]


def time_type(spec: IntervalSpec) -> T.DataType:
    """Return the ordinal type all times are compared in."""
    return T.DoubleType() if spec.kind is TimeKind.FLOAT else T.LongType()


def ordinal_of(spec: IntervalSpec, name: str, which: int) -> Column:
    """Return the ordinal of time column ``name`` (0: time, 1: start, 2: end) in the common type."""
    return ordinal(col(name), spec.kinds[which]).cast(time_type(spec))


def sum_column(j: int) -> str:
    """Name of the +/-value delta of value column ``j``."""
    return f"__cj_s{j}"


def count_column(j: int) -> str:
    """Name of the +/-1-if-not-NULL delta of value column ``j``."""
    return f"__cj_c{j}"


def _summed(spec: IntervalSpec) -> dict[str, T.DataType]:
    """Value columns that need a running sum, with the type it is summed in."""
    out: dict[str, T.DataType] = {}
    for a in spec.aggs:
        if a.function in ("sum", "mean") and a.column is not None and a.source_type:
            out[a.column] = sum_type(a.source_type)
    return out


def delta_types(spec: IntervalSpec) -> dict[str, T.DataType]:
    """Every delta column of the event stream with its type."""
    out: dict[str, T.DataType] = {COUNT: T.LongType()}
    summed = _summed(spec)
    for j, name in enumerate(spec.value_columns):
        if name in summed:
            out[sum_column(j)] = summed[name]
            if isinstance(summed[name], T.DoubleType):
                for special in SPECIALS:
                    out[f"{sum_column(j)}_{special}"] = T.LongType()
            elif isinstance(summed[name], T.LongType):
                out[sum_column(j) + LOW] = T.LongType()
        out[count_column(j)] = T.LongType()
    return out


def valid_intervals(spec: IntervalSpec) -> Column:
    """Intervals that can cover a point: keys and bounds not NULL, not inverted/empty."""
    start, end = ordinal_of(spec, spec.start, 1), ordinal_of(spec, spec.end, 2)
    ordered = (start <= end) if spec.closed == "both" else (start < end)
    return not_null(start, end, *[col(k) for k in spec.keys.right]) & ordered


def events(spec: IntervalSpec) -> DataFrame:
    """Union of point rows and start/end events (see the module docstring)."""
    keys = key_names(spec)
    deltas = delta_types(spec)
    s_rank, p_rank, e_rank = spec.ties
    point_struct = struct_of((c, c) for c in spec.points.columns)
    pts = spec.points.select(
        *[col(k).alias(n) for k, n in zip(spec.keys.left, keys, strict=True)],
        ordinal_of(spec, spec.time, 0).alias(T_COL),
        F.lit(p_rank).alias(RANK),
        point_struct.alias(POINT),
        *[F.lit(None).cast(t).alias(d) for d, t in deltas.items()],
    )
    sign = F.col("__cj_sign")
    starting = sign > 0
    values = {name: f"__cj_v{j}" for j, name in enumerate(spec.value_columns)}
    base = spec.intervals.filter(valid_intervals(spec)).select(
        *[col(k).alias(n) for k, n in zip(spec.keys.right, keys, strict=True)],
        ordinal_of(spec, spec.start, 1).alias("__cj_start"),
        ordinal_of(spec, spec.end, 2).alias("__cj_end"),
        *[col(c).alias(v) for c, v in values.items()],
        F.explode(F.array(F.lit(1), F.lit(-1))).alias("__cj_sign"),
    )
    delta_exprs = [sign.cast("long").alias(COUNT)]
    for j, name in enumerate(spec.value_columns):
        v = F.col(values[name])
        if sum_column(j) in deltas:
            delta_exprs.extend(_sum_deltas(v, deltas, j, sign))
        one = F.when(v.isNotNull(), sign).otherwise(F.lit(0)).cast("long")
        delta_exprs.append(one.alias(count_column(j)))
    evs = base.select(
        *keys,
        F.when(starting, F.col("__cj_start")).otherwise(F.col("__cj_end")).alias(T_COL),
        F.when(starting, F.lit(s_rank)).otherwise(F.lit(e_rank)).alias(RANK),
        F.lit(None).cast(point_struct_type(spec)).alias(POINT),
        *delta_exprs,
    )
    return pts.unionByName(evs)


def _sum_deltas(v: Column, deltas: dict[str, T.DataType], j: int, sign: Column) -> list[Column]:
    """+/-value; for doubles only finite values, with NaN/+inf/-inf counted apart.

    A running sum cannot take back a NaN or an infinity (``inf - inf`` is NaN), so
    they are counted and put back when the aggregate is read (:func:`_special_sum`).
    """
    name = sum_column(j)
    typed = v.cast(deltas[name])
    if name + LOW in deltas:
        # v = high * 2^32 + low, 0 <= low < 2^32: sums of either part fit a long for
        # up to 2^31 open intervals, whatever the values.
        high, low = F.shiftright(typed, 32), typed.bitwiseAND(F.lit(0xFFFFFFFF))
        return [F.when(sign > 0, high).otherwise(-high).alias(name),
                F.when(sign > 0, low).otherwise(-low).alias(name + LOW)]
    if f"{name}_nan" not in deltas:
        return [F.when(sign > 0, typed).otherwise(-typed).alias(name)]
    inf = F.lit(float("inf"))
    tests = {"nan": F.isnan(typed), "pinf": typed == inf, "ninf": typed == -inf}
    finite = F.when(tests["nan"] | tests["pinf"] | tests["ninf"], F.lit(0.0)).otherwise(typed)
    out = [F.when(sign > 0, finite).otherwise(-finite).alias(name)]
    for special in SPECIALS:
        hit = F.when(typed.isNotNull() & tests[special], sign).otherwise(F.lit(0))
        out.append(hit.cast("long").alias(f"{name}_{special}"))
    return out


def _special_sum(s: Column, j: int) -> Column:
    """The running sum with NaN and infinities put back as a direct sum would give."""
    n = {k: F.coalesce(F.col(f"{sum_column(j)}_{k}"), F.lit(0)) for k in SPECIALS}
    nan, inf = F.lit(float("nan")), F.lit(float("inf"))
    return (
        F.when((n["nan"] > 0) | ((n["pinf"] > 0) & (n["ninf"] > 0)), nan)
        .when(n["pinf"] > 0, inf)
        .when(n["ninf"] > 0, -inf)
        .otherwise(s)
    )


def _halves_sum(high: Column, low: Column, *, mean: bool) -> Column:
    """The integer sum from the running sums of its halves (:func:`_sum_deltas`).

    ``low`` (the low halves, each below 2**32) carries into ``high``; the sum is a long
    where ``high`` then fits 32 bits, put together by bit operations. Past that only
    a decimal holds it, and its cast to a long fails (ANSI) as Spark's ``sum`` would.
    A mean divides a double (Spark's ``avg`` of integers sums in doubles).
    """
    if mean:
        return high.cast("double") * F.lit(float(2**32)) + low.cast("double")
    top = high + F.shiftright(low, 32)
    bits = F.shiftleft(top, 32).bitwiseOR(low.bitwiseAND(F.lit(0xFFFFFFFF)))
    wide = "decimal(38,0)"
    exact = high.cast(wide) * F.lit(2**32).cast(wide) + low.cast(wide)
    return F.when(top.between(-(2**31), 2**31 - 1), bits).otherwise(exact.cast("long"))


def point_struct_type(spec: IntervalSpec) -> T.StructType:
    """Return the type of the ``__cj_p`` struct."""
    return T.StructType(
        [T.StructField(f.name, f.dataType, True) for f in spec.points.schema.fields]
    )


def _aggregate(a: AggSpec, spec: IntervalSpec) -> Column:
    n = F.coalesce(F.col(COUNT), F.lit(0).cast("long"))
    if a.column is None:
        return n
    j = spec.value_columns.index(a.column)
    c = F.coalesce(F.col(count_column(j)), F.lit(0).cast("long"))
    if a.function == "count":
        return c
    s = F.col(sum_column(j))
    deltas = delta_types(spec)
    if f"{sum_column(j)}_nan" in deltas:
        s = _special_sum(s, j)
    elif sum_column(j) + LOW in deltas:
        s = _halves_sum(s, F.col(sum_column(j) + LOW), mean=a.function == "mean")
    if a.function == "sum":
        return F.when(c > 0, s.cast(a.result_type))
    if isinstance(a.source_type, T.DecimalType):
        return F.when(c > 0, _decimal_mean(s, c, a.source_type).cast(a.result_type))
    return F.when(c > 0, (s / c).cast(a.result_type))


def _decimal_mean(total: Column, count: Column, data_type: T.DecimalType) -> Column:
    """``total / count`` rounded once to the mean's scale, as Spark's ``avg`` rounds.

    ``avg`` divides exactly and rounds half up to ``scale + 4`` digits. Spark's decimal
    division keeps ``38 - integer digits`` of scale, and at least 6: a dividend typed
    ``decimal(34, scale)`` gives exactly ``scale + 4``. Below a scale of 2 the total is
    first divided by ``10**k`` (exactly: its scale grows to 2), so that the quotient's
    6 digits are the mean's ``scale + 4`` shifted by ``k``; multiplying back is exact.
    This holds any sum of ``precision + 10`` digits up to a precision of 24 (23 at
    scale 1, 22 at scale 0); wider columns divide in ``sum``'s type, whose quotient
    can keep fewer digits than the mean shows.
    """
    k = max(0, 2 - data_type.scale)
    n = count.cast("decimal(20,0)")
    if data_type.precision + 10 + k > MEAN_DIVIDEND_DIGITS:
        return total.cast(sum_type(data_type)) / n
    scale = data_type.scale + k
    shifted = total * F.lit(10**-k).cast(f"decimal({k + 1},{k})") if k else total
    quotient = shifted.cast(T.DecimalType(34, scale)) / n
    return quotient * F.lit(10**k).cast(f"decimal({k + 1},0)") if k else quotient


def finish(running: DataFrame, spec: IntervalSpec) -> DataFrame:
    """Keep point rows of a swept stream and project the output columns."""
    out = running.filter(F.col(POINT).isNotNull())
    if spec.how == "inner":
        out = out.filter(F.col(COUNT) > 0)
    return out.select(
        f"{POINT}.*",  # a star, not a column function per field
        *[_aggregate(a, spec).cast(a.result_type).alias(a.name) for a in spec.aggs],
    )
