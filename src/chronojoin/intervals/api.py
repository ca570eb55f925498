"""Public ``interval_aggregate``: validation, strategy choice, and nothing else."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chronojoin.intervals.choose import resolve
from chronojoin.intervals.spec import build_spec
from chronojoin.intervals.strategies import STRATEGIES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin._typing import Closed, DurationLike, How, IntervalStrategy


def interval_aggregate(
    points: DataFrame,
    intervals: DataFrame,
    *,
    by: str | Sequence[str] | None = None,
    left_by: str | Sequence[str] | None = None,
    right_by: str | Sequence[str] | None = None,
    time: str = "time",
    start: str = "start",
    end: str = "end",
    aggs: Mapping[str, tuple[str, str | None]] | None = None,
    closed: Closed = "both",
    how: How = "left",
    strategy: IntervalStrategy = "auto",
    buckets: int | DurationLike | None = None,
) -> DataFrame:
    """Aggregate, for every point row, the interval rows that cover its time.

    For each row of ``points``: the aggregates of all rows of ``intervals`` with equal
    keys and ``start <= time <= end`` (bounds per ``closed``), computed without
    forming (point, interval) pairs unless ``strategy="join"``. The aggregation runs at
    an action; when called, ``"auto"`` and ``"bucketed_sweep"`` read small statistics
    of the inputs for their choice and bucket layout (short jobs; the choice is logged
    on the ``chronojoin.intervals`` logger).

    Parameters
    ----------
    points, intervals
        The DataFrames.
    by, left_by, right_by
        Equality keys (a name or a list); ``left_by`` names columns of ``points``,
        ``right_by`` of ``intervals``. ``None``: one global timeline.
    time
        The time column of ``points``.
    start, end
        The bound columns of ``intervals``. Time types: timestamp, timestamp_ntz,
        date, integers, float, double (all three compatible).
    aggs
        Output name -> ``(function, column)``; default ``{"total": ("sum", "points")}``.
        Functions: ``"sum"``, ``"count"`` (column ``None`` counts the covering
        intervals, a column counts its non-NULL values), ``"mean"``, ``"min"``,
        ``"max"``, ``"collect_list"``, ``"collect_set"``. NULL values are skipped as in
        SQL; with nothing to aggregate count is 0, collect_* an empty list and the
        others NULL. Names must not clash with columns of ``points``.
    closed
        Which bounds are inclusive: ``"both"``, ``"left"`` (start only), ``"right"``
        (end only) or ``"neither"``.
    how
        ``"left"``: every point row exactly once (duplicates, NULL keys and NULL times
        included; uncovered points get count 0 / NULL); ``"inner"``: only points
        covered by at least one interval.
    strategy
        ``"auto"``, ``"sweep"``, ``"bucketed_sweep"`` or ``"join"`` (see Notes).
    buckets
        For ``"bucketed_sweep"`` (``"auto"`` then takes it, unless an aggregate needs
        ``"join"``, which has no buckets and ignores them): an ``int`` is a number of
        equal-width time buckets over the global time range; anything else is a bucket
        width (``"1 hour"``, a ``timedelta``, or a number -- also a numeric string --
        for numeric times).
        ``None``: per-key bucket counts chosen from statistics (Notes).

    Returns
    -------
    DataFrame
        All columns of ``points`` in order, then one column per aggregate (count:
        long; sum: long, double or a wider decimal; mean: double or decimal; min/max:
        the column's type; collect_*: an array).

    Raises
    ------
    InvalidArgumentError
        A bad option, an unknown or clashing name, ``buckets`` with ``"sweep"`` or
        ``"join"``, a ``buckets`` count that is not positive, or
        ``min``/``max``/``collect_*`` with a sweep strategy.
    ColumnNotFoundError
        A named column does not exist (the message names the argument and side).
    TimeTypeError
        A time column has an unsupported type, or the three are incompatible.
    DurationError
        A ``buckets`` width that cannot be parsed or is not positive (a subclass of
        ``InvalidArgumentError``).

    Notes
    -----
    Intervals with a NULL key, start or end, with ``start > end`` (or ``start == end``
    unless ``closed="both"``) never match. Strategies, all returning the same rows:

    * ``"sweep"``: points, ``+value`` start events and ``-value`` end events in one
      window per key ordered by time and a tie rank derived from ``closed``; running
      sums give every aggregate at every point. One shuffle and sort of points + 2 x
      intervals. Only ``sum``, ``count`` and ``mean`` (running sums are invertible).
      Integer and decimal sums are exact (integers are summed in two 32-bit halves,
      so a running sum overflows only where a point's own sum does; a decimal of
      more than 28 digits can overflow a running sum where a direct sum would
      not, and a decimal mean rounds as ``avg`` only up to 24 digits: 23 at
      scale 1, 22 at scale 0); for float/double
      columns NaN and infinities are counted apart (exact), but finite values are
      running sums, so the result can differ from a direct sum by rounding that
      grows with the magnitudes seen earlier in the key (an earlier ``1e20`` can
      absorb a later ``1.0`` whole, and finite values whose running sum leaves the
      double range give an infinity): use ``"join"`` when that matters.
    * ``"bucketed_sweep"``: the same cut into time buckets per key, with the totals of
      earlier buckets carried into each bucket; exact for any bucket layout, and a hot
      key is spread over many tasks.
    * ``"join"``: range join on the keys and a group-by per point row. Compares every
      (point, interval) pair of a key; needed for ``min``, ``max``, ``collect_*``.
    * ``"auto"``: ``join`` for the non-invertible functions and for decimal sums or
      means past those limits, and ``sweep`` for small
      inputs (at most 8 MiB in all by Spark's size estimate, or 100,000 rows of frames
      Spark cannot size), both without statistics; otherwise one statistics job
      (per-key counts), then ``join`` when the key-equal pairs are at most 4 per event,
      ``bucketed_sweep`` without keys or when a key holds more than
      ``max(20000, E / (8 x shuffle partitions))`` of the ``E`` events, ``sweep``
      otherwise. Such a key gets ``ceil(events / that target)`` buckets (at most 4096);
      other keys stay whole. The choice is logged on logger ``chronojoin.intervals``.

    Examples
    --------
    >>> from datetime import datetime as dt
    >>> A = spark.createDataFrame(
    ...     [(1, dt(2024, 1, 1, 10, 0)), (1, dt(2024, 1, 1, 10, 15)), (2, dt(2024, 1, 1, 10, 1))],
    ...     ["id", "time"])
    >>> B = spark.createDataFrame(
    ...     [(1, dt(2024, 1, 1, 9, 30), dt(2024, 1, 1, 10, 30), 10),
    ...      (1, dt(2024, 1, 1, 10, 1), dt(2024, 1, 1, 10, 5), 20),
    ...      (1, dt(2024, 1, 1, 10, 8), dt(2024, 1, 1, 10, 20), 30),
    ...      (1, dt(2024, 1, 1, 10, 30), dt(2024, 1, 1, 10, 45), 40),
    ...      (2, dt(2024, 1, 1, 9, 30), dt(2024, 1, 1, 10, 30), 50)],
    ...     ["id", "start_time", "end_time", "points"])
    >>> out = cj.interval_aggregate(
    ...     A, B, by="id", time="time", start="start_time", end="end_time",
    ...     aggs={"total": ("sum", "points"), "n": ("count", None)}, strategy="sweep")
    >>> out.orderBy("id", "time").show()
    +---+-------------------+-----+---+
    | id|               time|total|  n|
    +---+-------------------+-----+---+
    |  1|2024-01-01 10:00:00|   10|  1|
    |  1|2024-01-01 10:15:00|   40|  2|
    |  2|2024-01-01 10:01:00|   50|  1|
    +---+-------------------+-----+---+
    <BLANKLINE>
    """
    spec = build_spec(
        points, intervals, by=by, left_by=left_by, right_by=right_by, time=time,
        start=start, end=end, aggs=_default_aggs(aggs), closed=closed, how=how,
        strategy=strategy, buckets=buckets,
    )
    plan = resolve(spec)
    return STRATEGIES[plan.strategy](spec, plan)


def _default_aggs(aggs: Any) -> Any:
    return {"total": ("sum", "points")} if aggs is None else aggs
