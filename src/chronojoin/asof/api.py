"""Public ``asof_join``: validation, strategy choice, and nothing else."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chronojoin.asof.choose import choose, choose_many
from chronojoin.asof.spec import Right, build_spec
from chronojoin.asof.strategies import (
    AUTO_ONLY,
    STRATEGIES,
    broadcast,
    hot_broadcast,
    native,
    union,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin._typing import AsofStrategy, Direction, DurationLike, How

log = logging.getLogger("chronojoin.asof")


def asof_join(
    left: DataFrame,
    right: DataFrame | Sequence[Right],
    *,
    on: str | None = None,
    left_on: str | None = None,
    right_on: str | None = None,
    by: str | Sequence[str] | None = None,
    left_by: str | Sequence[str] | None = None,
    right_by: str | Sequence[str] | None = None,
    direction: Direction = "backward",
    allow_exact_matches: bool = True,
    tolerance: DurationLike | None = None,
    how: How = "left",
    suffix: str = "_right",
    strategy: AsofStrategy = "auto",
    tiebreak: str | Sequence[str] | None = None,
    buckets: int | None = None,
) -> DataFrame:
    """Join each left row with the right row of the same keys nearest its time.

    For every left row, the right row with the same keys whose time is the greatest
    ``<=`` the left time (``direction="backward"``, the point-in-time rule of feature
    stores: never a future row), the smallest ``>=`` it (``"forward"``), or the closer
    of the two (``"nearest"``; on equal distance the backward candidate wins). The join
    runs at an action; when called, ``"auto"`` and the time buckets read small
    statistics of the inputs (a few short jobs; the choice is logged on the
    ``chronojoin.asof`` logger).

    Parameters
    ----------
    left, right
        The DataFrames. ``right`` may also be a list of :class:`chronojoin.Right`
        specs, each joined as of the left row's time (the training-set case).
    on, left_on, right_on
        Time columns: ``on`` when both sides use the same name. Types: timestamp,
        timestamp_ntz, date, integers, float, double (both sides compatible).
    by, left_by, right_by
        Equality keys (a name or a list). ``None``: one global timeline, still run
        in parallel (time buckets with exact carry-over).
    direction
        ``"backward"``, ``"forward"`` or ``"nearest"``.
    allow_exact_matches
        ``False``: strictly earlier (backward) / later (forward) right rows only.
    tolerance
        Maximum ``|left time - right time|``, inclusive; a number for numeric times,
        a ``datetime.timedelta`` or a string such as ``"1 hour"`` for timestamps.
    how
        ``"left"``: every left row exactly once (NULLs when nothing matches);
        ``"inner"``: only left rows that found a match.
    suffix
        Appended to right column names that clash with left ones.
    strategy
        ``"auto"`` (chosen from cheap statistics, hot keys included; the log says
        why), ``"exploding"``, ``"union"``, ``"sort_merge"``, ``"broadcast"`` or
        ``"native"`` (Spark's SortMergeAsOfJoin; only when the session has
        ``spark.sql.join.sortMergeAsOfJoin.enabled=true``, for ``backward`` and
        ``forward`` without ``tiebreak``); all return the same rows.
    tiebreak
        Right columns deciding which of several right rows at the winning time is
        returned (greatest values win). Without it, exactly one of them is returned.
    buckets
        Split each key's timeline into this many time buckets (exact carry-over
        between buckets; 1 to 2,147,483,647), for keys that hold a large share of
        the rows. ``None``: a global timeline (``by=None``) is always split, and
        ``"auto"`` finds keys holding over 5% of the left or right rows and splits those.

    Returns
    -------
    DataFrame
        All left columns in order, then the right columns (right keys named like
        their left counterpart dropped, clashing names suffixed, the right time
        column kept).

    Raises
    ------
    ValueError
        (:class:`chronojoin.InvalidArgumentError`) for an unknown column, option or
        an unparsable or negative tolerance.
    TypeError
        (:class:`chronojoin.TimeTypeError`) for incompatible time or key columns.

    Notes
    -----
    Strategies: ``union`` (one shuffle, one sort of both sides),
    ``sort_merge`` (one shuffle, a sort within partitions and a vectorised linear
    pass), ``exploding`` (range join plus ``row_number``: fast with about one left row
    per key, quadratic with many), ``broadcast`` (the left keys and times broadcast, the
    right side never shuffled: the fastest with a small left side and about one left
    row per key). NULL keys and NULL times never match.

    Examples
    --------
    >>> quotes = spark.createDataFrame(
    ...     [("A", 1, 10.0), ("A", 5, 11.0), ("B", 2, 20.0)], "sym string, t int, px double")
    >>> trades = spark.createDataFrame(
    ...     [("A", 4, 100), ("A", 5, 200), ("B", 1, 300)], "sym string, t int, qty int")
    >>> cj.asof_join(trades, quotes, on="t", by="sym").orderBy("sym", "t").show()
    +---+---+---+-------+----+
    |sym|  t|qty|t_right|  px|
    +---+---+---+-------+----+
    |  A|  4|100|      1|10.0|
    |  A|  5|200|      5|11.0|
    |  B|  1|300|   NULL|NULL|
    +---+---+---+-------+----+
    <BLANKLINE>
    """
    spec = build_spec(
        left, right, on=on, left_on=left_on, right_on=right_on, by=by, left_by=left_by,
        right_by=right_by, direction=direction, allow_exact_matches=allow_exact_matches,
        tolerance=tolerance, how=how, suffix=suffix, strategy=strategy, tiebreak=tiebreak,
        buckets=buckets,
    )
    if spec.strategy == "native":
        native.check(spec)
    if len(spec.rights) > 1 and spec.strategy in ("auto", "union", "broadcast"):
        one: str = spec.strategy
        layout, reason = None, "requested"
        if one == "auto":
            one, layout, reason = choose_many(spec)
        log.info("asof_join: %d right tables in one %r plan (%s)", len(spec.rights), one,
                 reason)
        if one == "broadcast":
            return broadcast.plan_many(spec.left, list(spec.rights), spec)
        if one == "hot_broadcast":
            return hot_broadcast.plan_many(spec.left, list(spec.rights), spec, layout)
        return union.plan_many(spec.left, list(spec.rights), spec, layout)
    result: DataFrame = spec.left
    for item in spec.rights:
        name: str = spec.strategy
        layout = None
        if name == "auto":
            name, layout, reason = choose(spec, item)
            log.info("asof_join %s: strategy %r (%s)", item.what, name, reason)
        plan = STRATEGIES[name] if name in STRATEGIES else AUTO_ONLY[name]
        result = plan(result, item, spec, layout)
    return result

