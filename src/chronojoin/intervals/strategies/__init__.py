"""The strategies of ``interval_aggregate``: name -> plan builder ``(spec, plan) -> DataFrame``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from chronojoin.intervals.strategies import bucketed_sweep, join, sweep

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from chronojoin.intervals.plan import Plan
    from chronojoin.intervals.spec import IntervalSpec

Builder = Callable[["IntervalSpec", "Plan"], "DataFrame"]

#: Registry: the same names as ``strategy=`` and the command line's ``--strategy``.
STRATEGIES: dict[str, Builder] = {
    "sweep": sweep.build,
    "bucketed_sweep": bucketed_sweep.build,
    "join": join.build,
}
