"""``strategy="auto"``: a pure function of the spec and cheap statistics, logged.

The statistics come from one aggregate job over the key and time columns only:
per key the number of points ``p_k``, of valid intervals ``i_k`` and the time range;
then globally the number of keys, ``P = sum p_k``, ``I = sum i_k``, the events
``E = P + 2 I`` the sweeps sort, the equi-join pairs ``sum p_k * i_k`` the ``join``
strategy compares, the largest per-key event count and the global time range.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from chronojoin._validate.columns import col
from chronojoin.intervals.events import key_names, ordinal_of, valid_intervals
from chronojoin.intervals.plan import Plan, bucket_target

if TYPE_CHECKING:
    from chronojoin.intervals.spec import IntervalSpec

log = logging.getLogger("chronojoin.intervals")

#: ``join`` is chosen while the equi-join compares at most this many pairs per event
#: of the sweep (points + 2 x intervals): then the join's extra work is small next to
#: the sweep's sort of all events.
JOIN_PAIRS_PER_EVENT = 16


@dataclass(frozen=True)
class Stats:
    """Cheap statistics of one call's inputs."""

    keys: int
    points: int
    intervals: int
    pairs: float
    max_key_events: int
    lo: float | None
    hi: float | None
    partitions: int

    @property
    def events(self) -> int:
        """Rows of the sweep's event stream: points + 2 x valid intervals."""
        return self.points + 2 * self.intervals


def _partitions(spec: IntervalSpec) -> int:
    value = spec.points.sparkSession.conf.get("spark.sql.shuffle.partitions", "200")
    try:
        return max(1, int(value or "200"))
    except ValueError:
        return 200


def gather(spec: IntervalSpec) -> Stats:
    """Run the statistics job (one small result row is collected)."""
    keys = key_names(spec)
    t = ordinal_of(spec, spec.time, 0)
    pts = spec.points.select(
        *[col(k).alias(n) for k, n in zip(spec.keys.left, keys, strict=True)],
        t.alias("__cj_lo"), t.alias("__cj_hi"),
        F.lit(1).alias("__cj_pi"), F.lit(0).alias("__cj_ii"),
    )
    ivs = spec.intervals.filter(valid_intervals(spec)).select(
        *[col(k).alias(n) for k, n in zip(spec.keys.right, keys, strict=True)],
        ordinal_of(spec, spec.start, 1).alias("__cj_lo"),
        ordinal_of(spec, spec.end, 2).alias("__cj_hi"),
        F.lit(0).alias("__cj_pi"), F.lit(1).alias("__cj_ii"),
    )
    per_key = pts.unionByName(ivs).groupBy(*keys).agg(
        F.sum("__cj_pi").alias("p"), F.sum("__cj_ii").alias("i"),
        F.min("__cj_lo").alias("lo"), F.max("__cj_hi").alias("hi"),
    )
    row = per_key.agg(
        F.count(F.lit(1)).alias("keys"),
        F.sum("p").alias("p"), F.sum("i").alias("i"),
        F.sum(F.col("p").cast("double") * F.col("i")).alias("pairs"),
        F.max(F.col("p") + 2 * F.col("i")).alias("max_e"),
        F.min("lo").alias("lo"), F.max("hi").alias("hi"),
    ).collect()[0]
    return Stats(
        keys=int(row["keys"] or 0), points=int(row["p"] or 0), intervals=int(row["i"] or 0),
        pairs=float(row["pairs"] or 0.0), max_key_events=int(row["max_e"] or 0),
        lo=None if row["lo"] is None else float(row["lo"]),
        hi=None if row["hi"] is None else float(row["hi"]),
        partitions=_partitions(spec),
    )


def _bucketed(spec: IntervalSpec, stats: Stats | None, reason: str) -> Plan:
    """Return the bucket layout for ``bucketed_sweep``: from ``buckets=``, else automatic."""
    b = spec.buckets
    if b is not None and b.width is not None:
        return Plan("bucketed_sweep", reason, width=b.width)
    assert stats is not None
    if b is not None and b.count is not None:
        return Plan("bucketed_sweep", reason, count=b.count, lo=stats.lo, hi=stats.hi)
    target = bucket_target(stats.events, stats.partitions)
    return Plan("bucketed_sweep", f"{reason}; {target} events per bucket", target=target)


def needs_stats(spec: IntervalSpec) -> bool:
    """Whether :func:`choose` needs :func:`gather` for this spec."""
    if spec.strategy == "auto":
        return True
    if spec.strategy == "bucketed_sweep":
        return spec.buckets is None or spec.buckets.width is None
    return False


def choose(spec: IntervalSpec, stats: Stats | None) -> Plan:
    """Resolve ``spec.strategy`` (``"auto"`` or a name) into a :class:`Plan`."""
    if spec.strategy == "bucketed_sweep":
        return _bucketed(spec, stats, "strategy='bucketed_sweep' requested")
    if spec.strategy != "auto":
        return Plan(spec.strategy, f"strategy={spec.strategy!r} requested")
    assert stats is not None
    if not spec.invertible:
        names = sorted({a.function for a in spec.aggs} - {"sum", "count", "mean"})
        return Plan("join", f"{names} cannot be swept with running sums")
    if spec.buckets is not None:
        return _bucketed(spec, stats, "buckets= given")
    per_event = stats.pairs / max(1, stats.events)
    if spec.keys and per_event <= JOIN_PAIRS_PER_EVENT:
        return Plan("join", f"{per_event:.1f} key-equal pairs per event <= "
                    f"{JOIN_PAIRS_PER_EVENT}: the join compares few pairs")
    target = bucket_target(stats.events, stats.partitions)
    if not spec.keys or stats.max_key_events > target:
        why = "no keys" if not spec.keys else (
            f"largest key has {stats.max_key_events} of {stats.events} events")
        return _bucketed(spec, stats, f"{why}; {per_event:.1f} pairs per event")
    return Plan("sweep", f"{per_event:.1f} pairs per event and no key above "
                f"{target} events")


def resolve(spec: IntervalSpec) -> Plan:
    """Gather statistics when needed, choose, and log the choice."""
    stats = gather(spec) if needs_stats(spec) else None
    plan = choose(spec, stats)
    log.info("interval_aggregate: strategy %s (%s); stats %s", plan.strategy, plan.reason, stats)
    return plan
