"""``native``: Spark's own sort-merge as-of join operator, where it is correct.

Spark 4.3 plans ``DataFrame._joinAsOf`` as a CartesianProduct unless the internal
configuration ``spark.sql.join.sortMergeAsOfJoin.enabled`` is ``true``; then it uses
a SortMergeAsOfJoin operator that was the fastest Spark method on one left row per key
in this project's benchmarks. That operator rescans a key's whole right group for
every left row (quadratic when keys hold many left rows, and adaptive skew handling
does not apply to it), its ``nearest`` is wrong when right times repeat, and its
DataFrame API rejects timestamp and date columns. So this strategy:

* runs only when the session already has that configuration on (library code never
  changes session configuration; planning happens at the user's action, so a
  temporary change would not even apply) and raises otherwise;
* supports ``backward`` and ``forward`` without ``tiebreak`` (which right row wins a
  tie at equal times is the operator's choice, as with the other strategies when no
  tie-break is given);
* joins the time ordinals (timestamps as microseconds, dates as days), never the raw
  columns, and applies the tolerance in :func:`~chronojoin.asof.frames.finish`.

``auto`` never picks it: whether a key holds one left row or thousands is not known
without a statistics pass.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from chronojoin._session import setting_on
from chronojoin.asof.buckets import Layout
from chronojoin.asof.frames import (
    BACK,
    FORWARD,
    RIGHT_STRUCT,
    TIME,
    finish,
    floating_time,
    key_names,
    keys_equal,
    left_frame,
    reversed_time,
    right_frame,
)
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.errors import InvalidArgumentError

#: The session configuration that turns on Spark's SortMergeAsOfJoin operator.
CONF = "spark.sql.join.sortMergeAsOfJoin.enabled"
_RT, _REVERSED = "__rt", "__rev"


def enabled(df: DataFrame) -> bool:
    """Whether the session of ``df`` has Spark's sort-merge as-of join turned on."""
    return setting_on(df, CONF)


def check(spec: AsofSpec) -> None:
    """Raise unless every right table can use the native operator."""
    if not enabled(spec.left):
        msg = (f"`strategy`: 'native' uses Spark's SortMergeAsOfJoin, which this session "
               f"has turned off; set {CONF}=true in the session (chronojoin never changes "
               "session configuration) or choose another strategy")
        raise InvalidArgumentError(msg)
    for right in spec.rights:
        if right.direction not in ("backward", "forward"):
            msg = (f"`direction`: 'native' supports 'backward' and 'forward' for "
                   f"{right.what}; got {right.direction!r} (Spark's operator is wrong for "
                   "'nearest' when right times repeat)")
            raise InvalidArgumentError(msg)
        if right.tiebreak:
            msg = (f"`tiebreak`: 'native' cannot order ties for {right.what} "
                   f"(columns {list(right.tiebreak)}); choose another strategy")
            raise InvalidArgumentError(msg)
    if spec.buckets is not None:
        msg = "`buckets`: 'native' does not split timelines into buckets; choose 'union'"
        raise InvalidArgumentError(msg)


def plan(
    left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None = None
) -> DataFrame:
    """Build the native plan for one right table (``layout`` does not apply)."""
    keys = key_names(len(right.keys.left))
    lf = left_frame(left, spec, right)
    rf = right_frame(spec, right).select(
        *[F.col(k).alias(f"__r{k}") for k in keys], F.col(TIME).alias(_RT), RIGHT_STRUCT
    )
    forward = right.direction == "forward"
    if forward:
        # The operator subtracts the times looking forward (an overflow at the ends of
        # the long range, and -inf never equal to -inf): a forward join is a backward
        # one over reversed times, ``~t`` for longs and ``-t`` for doubles.
        floating = floating_time(spec, [right])
        lf, rf = (df.withColumn(_REVERSED, reversed_time(
                      F.col(c).cast("double") if floating else F.col(c), floating))
                  for df, c in ((lf, TIME), (rf, _RT)))
    on = (_REVERSED, _REVERSED) if forward else (TIME, _RT)
    joined = lf._joinAsOf(
        rf, leftAsOfColumn=lf[on[0]], rightAsOfColumn=rf[on[1]],
        on=keys_equal(lf, rf, keys), how="left",
        allowExactMatches=right.allow_exact_matches, direction="backward",
    )
    slot = BACK if right.direction == "backward" else FORWARD
    return finish(joined.withColumn(slot, F.col(RIGHT_STRUCT)), right, spec.how)
