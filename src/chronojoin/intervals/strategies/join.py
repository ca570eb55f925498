"""``join``: range join on the keys plus a group-by per point row (the naive plan).

Each point row gets an id (``monotonically_increasing_id``, taken once, so duplicate
point rows stay distinct), is joined with the intervals of equal keys whose bounds
cover its time, and the matches are grouped by that id. Cost: one shuffle of both
sides by key, all (point, interval) pairs of a key are compared, then one shuffle of
the matches. Cheap when keys have few pairs; quadratic per key otherwise. The only
strategy for ``min``, ``max``, ``collect_list`` and ``collect_set``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

from chronojoin._validate.columns import col, struct_of
from chronojoin.intervals.events import ordinal_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin.intervals.plan import Plan
    from chronojoin.intervals.spec import AggSpec, IntervalSpec

_FUNCTIONS = {
    "sum": F.sum,
    "mean": F.avg,
    "min": F.min,
    "max": F.max,
    "collect_list": F.collect_list,
    "collect_set": F.collect_set,
    "count": F.count,
}


def _covers(spec: IntervalSpec) -> Column:
    t, s, e = F.col("__cj_t"), F.col("__cj_start"), F.col("__cj_end")
    low = s <= t if spec.closed in ("both", "left") else s < t
    high = t <= e if spec.closed in ("both", "right") else t < e
    cond = low & high
    for i in range(len(spec.keys.left)):
        cond = (F.col(f"__cj_lk{i}") == F.col(f"__cj_rk{i}")) & cond
    return cond


def _aggregate(a: AggSpec, values: dict[str, str]) -> Column:
    if a.column is None:
        return F.count(F.col("__cj_m"))
    return _FUNCTIONS[a.function](F.col(values[a.column]))


def build(spec: IntervalSpec, plan: Plan) -> DataFrame:
    """Build the lazy plan of the range join + group-by."""
    del plan
    values = {name: f"__cj_v{j}" for j, name in enumerate(spec.value_columns)}
    pts = spec.points.select(
        F.monotonically_increasing_id().alias("__cj_id"),
        struct_of((c, c) for c in spec.points.columns).alias("__cj_p"),
        *[col(k).alias(f"__cj_lk{i}") for i, k in enumerate(spec.keys.left)],
        ordinal_of(spec, spec.time, 0).alias("__cj_t"),
    )
    ivs = spec.intervals.select(
        *[col(k).alias(f"__cj_rk{i}") for i, k in enumerate(spec.keys.right)],
        ordinal_of(spec, spec.start, 1).alias("__cj_start"),
        ordinal_of(spec, spec.end, 2).alias("__cj_end"),
        *[col(c).alias(v) for c, v in values.items()],
        F.lit(1).alias("__cj_m"),
    )
    joined = pts.join(ivs, _covers(spec), "inner" if spec.how == "inner" else "left")
    grouped = joined.groupBy("__cj_id").agg(
        F.first("__cj_p").alias("__cj_p"),
        *[_aggregate(a, values).alias(f"__cj_a{i}") for i, a in enumerate(spec.aggs)],
    )
    return grouped.select(
        "__cj_p.*",  # a star, not a column function per field
        *[F.col(f"__cj_a{i}").cast(a.result_type).alias(a.name) for i, a in enumerate(spec.aggs)],
    )
