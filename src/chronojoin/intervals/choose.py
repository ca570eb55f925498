"""``strategy="auto"``: a pure function of the spec and cheap statistics, logged.

The statistics come from one aggregate job over the key and time columns only:
per key the number of points ``p_k``, of valid intervals ``i_k`` and the time range;
then globally the number of keys, ``P = sum p_k``, ``I = sum i_k``, the events
``E = P + 2 I`` the sweeps sort, the equi-join pairs ``sum p_k * i_k`` the ``join``
strategy compares, the largest per-key event count and the global time range.

An exact pass over all rows costs about half a sweep, so ``auto`` first aggregates a
seeded sample (:data:`SAMPLE_FRACTION` of the points and, independently, of the
intervals) and scales it up: ``P / f``, ``I / f``, ``sum p_k i_k / f^2`` (unbiased for
independent samples) and ``max_k e_k / f``. Only when the sample is too small to
decide (fewer than :data:`MIN_SAMPLED` rows: small inputs, where an exact pass is
cheap) or when the global time range must be exact (``buckets=`` a count) does it
run the exact pass. Every strategy returns the same rows, so an estimate can only
cost speed, never change a result; the sample is seeded, so the same inputs give the
same choice.

Two cases need no statistics at all: functions other than ``sum``, ``count`` and
``mean`` (only ``join`` computes them, as it does decimal sums and means wider than
the sweeps compute exactly: ``IntervalSpec.sweep_limit``), and small inputs. When
Spark's own size estimates of both inputs (read from the plans, no job) add up to at
most :data:`SMALL_INPUT_BYTES` (frames Spark cannot size: at most
:data:`SMALL_INPUT_ROWS` rows, counted by one job that reads no column), ``auto``
takes the sweep at once: its one shuffle and sort of a few megabytes costs less than
the statistics jobs, and unlike the join it never pairs rows, however the intervals
overlap.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from chronojoin._plan import stats as plan_stats
from chronojoin._plan.stats import small_inputs
from chronojoin._validate.columns import col
from chronojoin.intervals.events import key_names, ordinal_of, valid_intervals
from chronojoin.intervals.plan import Plan, bucket_target

if TYPE_CHECKING:
    from chronojoin.intervals.spec import IntervalSpec

log = logging.getLogger("chronojoin.intervals")

#: ``join`` is chosen while the equi-join compares at most this many pairs per event
#: of the sweep (points + 2 x intervals): then the join's extra work is small next to
#: the sweep's sort of all events. Measured (BENCHMARKS.md, 100 points and 10
#: intervals per key, 8.3 pairs per event): the join cost the same as the sweep at
#: 1M points and 1.38x the sweep at 10M, so the break-even lies below 8.
JOIN_PAIRS_PER_EVENT = 4
#: Share of the rows the statistics of ``auto`` aggregate.
SAMPLE_FRACTION = 0.01
#: Below this many sampled rows the exact statistics are gathered instead.
MIN_SAMPLED = 2_000
_SEED = 17
#: Inputs whose estimated sizes add up to at most this many bytes get the sweep
#: without statistics (0 turns that off; see the module and BENCHMARKS.md).
SMALL_INPUT_BYTES = plan_stats.SMALL_INPUT_BYTES
#: Frames Spark cannot size count as small with at most this many rows in all.
SMALL_INPUT_ROWS = plan_stats.SMALL_INPUT_ROWS


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
    sampled: int = 0
    fraction: float = 1.0

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


def gather(spec: IntervalSpec, fraction: float = 1.0) -> Stats:
    """Run the statistics job (one small result row is collected).

    With ``fraction < 1`` the job aggregates seeded samples of both inputs and the
    counts are scaled up; the time range is then the sample's.
    """
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
    if fraction < 1.0:
        pts = pts.sample(fraction=fraction, seed=_SEED)
        ivs = ivs.sample(fraction=fraction, seed=_SEED + 1)
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
        keys=int(row["keys"] or 0), points=round((row["p"] or 0) / fraction),
        intervals=round((row["i"] or 0) / fraction),
        pairs=float(row["pairs"] or 0.0) / fraction**2,
        max_key_events=round((row["max_e"] or 0) / fraction),
        lo=None if row["lo"] is None else float(row["lo"]),
        hi=None if row["hi"] is None else float(row["hi"]),
        partitions=_partitions(spec),
        sampled=(row["p"] or 0) + (row["i"] or 0),
        fraction=fraction,
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
    if stats.max_key_events <= target:
        # Every key fits in one bucket: the layout would be the plain sweep plus a
        # per-key statistics pass and a carry of zero. Same rows, less work.
        return Plan("sweep", f"{reason}; no key above {target} events, so one bucket "
                    "per key: the plain sweep")
    return Plan("bucketed_sweep", f"{reason}; {target} events per bucket", target=target)


def needs_stats(spec: IntervalSpec) -> bool:
    """Whether :func:`choose` needs :func:`gather` for this spec."""
    if spec.strategy == "auto":
        return spec.sweep_limit is None
    if spec.strategy == "bucketed_sweep":
        return spec.buckets is None or spec.buckets.width is None
    return False


def choose(spec: IntervalSpec, stats: Stats | None) -> Plan:
    """Resolve ``spec.strategy`` (``"auto"`` or a name) into a :class:`Plan`."""
    if spec.strategy == "bucketed_sweep":
        return _bucketed(spec, stats, "strategy='bucketed_sweep' requested")
    if spec.strategy != "auto":
        return Plan(spec.strategy, f"strategy={spec.strategy!r} requested")
    limit = spec.sweep_limit
    if limit is not None:
        return Plan("join", limit)
    assert stats is not None
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


def _statistics(spec: IntervalSpec) -> Stats | None:
    """Sampled statistics when they can decide, else the exact pass; None if unneeded."""
    if not needs_stats(spec):
        return None
    if spec.buckets is not None and spec.buckets.count is not None:
        return gather(spec)  # the global time range of a bucket count must be exact
    stats = gather(spec, SAMPLE_FRACTION)
    return stats if stats.sampled >= MIN_SAMPLED else gather(spec)


def _small_inputs(spec: IntervalSpec) -> Plan | None:
    """The sweep when ``auto`` may take it without statistics (see the module)."""
    if spec.strategy != "auto" or spec.buckets is not None or spec.sweep_limit is not None:
        return None
    found = small_inputs([spec.points, spec.intervals], max_bytes=SMALL_INPUT_BYTES,
                         max_rows=SMALL_INPUT_ROWS)
    if found is None:
        return None
    return Plan("sweep", f"small inputs ({found}): one shuffle and one sort, no statistics")


def resolve(spec: IntervalSpec) -> Plan:
    """Gather statistics when needed, choose, and log the choice."""
    stats = None
    plan = _small_inputs(spec)
    if plan is None:
        stats = _statistics(spec)
        plan = choose(spec, stats)
    log.info("interval_aggregate: strategy %s (%s); stats %s", plan.strategy, plan.reason, stats)
    return plan
