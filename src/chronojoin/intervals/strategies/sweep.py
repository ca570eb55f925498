"""``sweep``: one window over the event stream per key (seed: time range join in Spark).

Points, +value start events and -value end events are unioned, partitioned by the keys,
ordered by time and the ``closed`` tie rank, and a running sum of the deltas is read at
every point row. Cost: one shuffle and sort of points + 2 x intervals; no pairs are
formed. Exact for ``sum``, ``count`` and ``mean`` (integer and decimal sums are exact;
float sums are running sums and can differ from a direct sum by rounding). A key with
very many rows is one window partition: see ``bucketed_sweep`` for skew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

from chronojoin._plan.windows import per_key
from chronojoin.intervals.events import RANK, T_COL, delta_types, events, finish, key_names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin.intervals.plan import Plan
    from chronojoin.intervals.spec import IntervalSpec


def build(spec: IntervalSpec, plan: Plan) -> DataFrame:
    """Build the lazy plan of a plain sweep (``plan`` is not used: no buckets)."""
    del plan
    # Without keys one partition holds the whole timeline: ``auto`` picks this only
    # when every event fits in one bucket.
    ev, by_key = per_key(events(spec), key_names(spec), RANK)
    window = (
        by_key.orderBy(F.col(T_COL).asc_nulls_first(), F.col(RANK))
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    deltas = list(delta_types(spec))
    running = ev.select(
        "__cj_p", *[F.sum(d).over(window).alias(d) for d in deltas]
    )
    return finish(running, spec)
