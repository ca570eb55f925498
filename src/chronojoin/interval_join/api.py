"""Public ``interval_join``: point-in-interval and interval-overlap joins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chronojoin._typing import Closed, DurationLike, How
from chronojoin.interval_join.plan import plan_interval_join
from chronojoin.interval_join.spec import interval_join_spec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import DataFrame


def interval_join(
    left: DataFrame,
    right: DataFrame,
    *,
    left_start: str,
    left_end: str | None = None,
    right_start: str,
    right_end: str,
    closed: Closed = "both",
    by: str | Sequence[str] | None = None,
    left_by: str | Sequence[str] | None = None,
    right_by: str | Sequence[str] | None = None,
    how: How = "inner",
    bin_size: DurationLike | None = None,
    suffix: str = "_right",
) -> DataFrame:
    """Join left points or intervals with the right intervals that contain or overlap them.

    Parameters
    ----------
    left, right
        The two DataFrames.
    left_start, left_end
        Left time columns. ``left_end=None``: left rows are points at ``left_start``
        (point-in-interval join); otherwise intervals ``[left_start, left_end]``
        (overlap join).
    right_start, right_end
        The right intervals. All time columns are ``timestamp``, ``timestamp_ntz``,
        ``date`` (midnight UTC), integer, float or double, all numeric or all temporal.
    closed : {"both", "left", "right", "neither"}
        Which interval ends are inclusive. Point in interval: ``start <= p <= end``
        with ``<`` on open ends. Overlap: ``"both"`` means the closed intervals share
        at least one point (``max(starts) <= min(ends)``); any other value means a
        non-empty intersection (``max(starts) < min(ends)``).
    by, left_by, right_by
        Equality keys (one name or a list).
    how : {"inner", "left"}
        ``"left"`` also returns every left row without a match once, with NULLs on the
        right.
    bin_size
        Width of the time bins (a number, ``datetime.timedelta`` or ``"1 hour"``);
        ``None`` chooses it from approximate percentiles of interval lengths and the
        density of the data (deterministic, a power of two).
    suffix
        Appended to right column names that clash with left column names.

    Returns
    -------
    DataFrame
        Left columns, then right columns (right keys named like their left key are
        dropped).

    Raises
    ------
    ValueError
        A missing column, a non-positive ``bin_size`` or an option outside its values.
    TypeError
        Time columns of unsupported or incompatible types.

    Notes
    -----
    Intervals with a NULL or inverted (``start > end``) bound never match; nor do rows
    with a NULL key. Intervals are copied into every bin of a fixed grid that they
    touch and joined on ``(keys, bin)``; intervals much longer than the typical one go
    to a coarser grid, so a heavy tail does not multiply rows (nor does a very small
    ``bin_size``: a row is copied into about 65 bins of a grid at most). Every pair is
    returned exactly once.

    Bounds compare as in Spark SQL: for float/double columns ``-inf`` and ``+inf`` are
    values like any other (``[2, inf]`` contains ``inf``), and NaN equals NaN and is
    greater than every other value (``[0, NaN]`` contains everything from 0 up, NaN
    included; ``[NaN, 0]`` is inverted). Intervals reaching ``Long.MIN``/``Long.MAX``,
    or wider than the long range, are exact.

    Examples
    --------
    Measurements taken while each machine was in a maintenance window:

    >>> windows = spark.createDataFrame(
    ...     [("m1", 10, 20), ("m1", 30, 40), ("m2", 10, 40)], "machine string, start int, stop int"
    ... )
    >>> points = spark.createDataFrame(
    ...     [("m1", 10), ("m1", 25), ("m1", 40), ("m2", 25)], "machine string, t int"
    ... )
    >>> cj.interval_join(
    ...     points, windows, left_start="t", right_start="start", right_end="stop",
    ...     by="machine", closed="left", how="left",
    ... ).orderBy("machine", "t").show()
    +-------+---+-----+----+
    |machine|  t|start|stop|
    +-------+---+-----+----+
    |     m1| 10|   10|  20|
    |     m1| 25| NULL|NULL|
    |     m1| 40| NULL|NULL|
    |     m2| 25|   10|  40|
    +-------+---+-----+----+
    <BLANKLINE>

    Overlapping intervals (closed: touching intervals overlap):

    >>> shifts = spark.createDataFrame([(1, 0, 10), (2, 20, 30)], "shift int, s int, e int")
    >>> cj.interval_join(
    ...     shifts, windows, left_start="s", left_end="e", right_start="start",
    ...     right_end="stop",
    ... ).orderBy("shift", "machine", "start").show()
    +-----+---+---+-------+-----+----+
    |shift|  s|  e|machine|start|stop|
    +-----+---+---+-------+-----+----+
    |    1|  0| 10|     m1|   10|  20|
    |    1|  0| 10|     m2|   10|  40|
    |    2| 20| 30|     m1|   10|  20|
    |    2| 20| 30|     m1|   30|  40|
    |    2| 20| 30|     m2|   10|  40|
    +-----+---+---+-------+-----+----+
    <BLANKLINE>
    """
    spec = interval_join_spec(
        left, right, left_start=left_start, left_end=left_end, right_start=right_start,
        right_end=right_end, closed=closed, by=by, left_by=left_by, right_by=right_by,
        how=how, bin_size=bin_size, suffix=suffix,
    )
    return plan_interval_join(spec)
