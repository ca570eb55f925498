"""Public ``band_join``: every pair whose times are within a window of each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chronojoin._typing import Closed, DurationLike, How
from chronojoin.band.plan import plan_band
from chronojoin.band.spec import band_spec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import DataFrame


def band_join(
    left: DataFrame,
    right: DataFrame,
    *,
    left_on: str,
    right_on: str,
    lower: DurationLike,
    upper: DurationLike,
    closed: Closed = "both",
    by: str | Sequence[str] | None = None,
    left_by: str | Sequence[str] | None = None,
    right_by: str | Sequence[str] | None = None,
    how: How = "inner",
    bin_size: DurationLike | None = None,
    suffix: str = "_right",
) -> DataFrame:
    """Join every left row with the right rows whose time lies in a window around it.

    Returns every (left, right) pair with equal keys and
    ``left_on + lower <= right_on <= left_on + upper`` (``<`` on an open bound), planned
    as an equi-join on time bins (no cartesian product, no nested-loop join).

    Parameters
    ----------
    left, right
        The two DataFrames.
    left_on, right_on
        Time columns: ``timestamp``, ``timestamp_ntz``, ``date``, integer, float or double
        (both numeric, or both temporal; a date compares as midnight UTC).
    lower, upper
        The window relative to ``left_on``. A number for numeric time columns; a
        ``datetime.timedelta`` or a string such as ``"-1 hour"`` or ``"90 seconds"`` for
        temporal ones (``0`` is accepted for both). Negative, positive and zero-width
        windows are allowed; ``lower > upper`` matches nothing.
        A string that names a column of ``left`` is a *per-row* bound, read as:

        * numeric time columns: a number in the time columns' unit (an offset);
        * temporal time columns: a number of **seconds** (an offset; fractions are
          rounded to microseconds; ``-inf``/``+inf`` puts that end at the beginning or
          the end of time, NaN matches nothing), an ``interval day to second`` (an
          offset; a day is 24 hours in any session time zone), or a
          ``timestamp``/``date`` column, which is the window end itself (absolute).

        A NULL bound, like a NULL time or key, matches nothing.
    closed : {"both", "left", "right", "neither"}
        Which ends of ``[lower, upper]`` are inclusive.
    by, left_by, right_by
        Equality keys (one name or a list); ``by`` when both sides use the same names.
    how : {"inner", "left"}
        ``"left"`` also returns every left row without a match once, with NULLs on the
        right (including rows with a NULL time, key or bound).
    bin_size
        Width of the time bins (a duration like ``lower``). ``None`` chooses it from
        cheap statistics (row counts, extents and approximate percentiles of window
        lengths, one small job for both sides, and a seeded sample of the keys when it
        decides), rounded to a power of two: the same inputs give the same plan and
        result every time. Small inputs with constant bounds (at most 8 MiB in all by
        Spark's size estimate, or 100,000 rows of frames Spark cannot size) take bins
        as wide as the window instead, without statistics (logged on
        ``chronojoin.band``, like the statistics' choice). With constant bounds, a size
        that copies every row into more than 1,000,000 bins (``(upper - lower) /
        bin_size``) is refused, and more than 100,000 gives a ``PerformanceWarning``.
    suffix
        Appended to right column names that clash with left column names.

    Returns
    -------
    DataFrame
        Left columns, then right columns (right keys named like their left key are
        dropped). The join runs at an action; when called, ``bin_size=None`` reads
        small statistics of the inputs (short jobs; the bin size is logged on the
        ``chronojoin.band`` logger).

    Raises
    ------
    ValueError
        A missing column, an unparsable duration, a non-positive ``bin_size`` or one
        that copies every row into too many bins, an option outside its allowed values
        (messages name the argument and the column).
    TypeError
        Time or bound columns of unsupported or incompatible types.

    Notes
    -----
    Both sides are binned on one grid; the side with fewer rows (``how="left"``: the
    right side) is copied into every bin its window touches (about ``width / bin_size
    + 1`` copies per row), the other side goes to one bin; the equi-join on
    ``(keys, bin)`` is filtered by the exact predicate. With per-row windows the left
    rows are copied; windows much longer than the typical one are planned on coarser
    grids so they do not multiply rows, and every pair is returned exactly once.

    Times and bounds compare as in Spark SQL: for float/double columns ``-inf`` and
    ``+inf`` are times like any other (``inf + lower <= inf`` holds), and NaN equals NaN
    and is greater than every other value (a NaN upper bound leaves the window open
    above). Integer and temporal windows are exact, also when ``t + lower`` or
    ``t + upper`` would leave the long range: the window then ends at that range's end.

    Examples
    --------
    Measurements in the hour before each event (the hour-old one excluded, the
    simultaneous one included):

    >>> events = spark.createDataFrame(
    ...     [(1, "2024-01-01 10:00:00"), (2, "2024-01-01 10:30:00")], "eid int, eventTime string"
    ... ).selectExpr("eid", "timestamp(eventTime) AS eventTime")
    >>> measurements = spark.createDataFrame(
    ...     [(10, "2024-01-01 09:00:00", 0.5), (11, "2024-01-01 09:30:00", 0.7),
    ...      (12, "2024-01-01 10:00:00", 0.1), (13, "2024-01-01 10:15:00", 0.9)],
    ...     "mid int, measurementTime string, value double",
    ... ).selectExpr("mid", "timestamp(measurementTime) AS measurementTime", "value")
    >>> cj.band_join(
    ...     events, measurements, left_on="eventTime", right_on="measurementTime",
    ...     lower="-1 hour", upper="0 seconds", closed="right",
    ... ).orderBy("eid", "mid").show()
    +---+-------------------+---+-------------------+-----+
    |eid|          eventTime|mid|    measurementTime|value|
    +---+-------------------+---+-------------------+-----+
    |  1|2024-01-01 10:00:00| 11|2024-01-01 09:30:00|  0.7|
    |  1|2024-01-01 10:00:00| 12|2024-01-01 10:00:00|  0.1|
    |  2|2024-01-01 10:30:00| 12|2024-01-01 10:00:00|  0.1|
    |  2|2024-01-01 10:30:00| 13|2024-01-01 10:15:00|  0.9|
    +---+-------------------+---+-------------------+-----+
    <BLANKLINE>

    A future window, 15 to 30 minutes after each event, keeping unmatched events:

    >>> cj.band_join(
    ...     events, measurements, left_on="eventTime", right_on="measurementTime",
    ...     lower="15 minutes", upper="30 minutes", how="left",
    ... ).orderBy("eid").select("eid", "mid").show()
    +---+----+
    |eid| mid|
    +---+----+
    |  1|  13|
    |  2|NULL|
    +---+----+
    <BLANKLINE>
    """
    spec = band_spec(
        left, right, left_on=left_on, right_on=right_on, lower=lower, upper=upper,
        closed=closed, by=by, left_by=left_by, right_by=right_by, how=how,
        bin_size=bin_size, suffix=suffix,
    )
    return plan_band(spec)
