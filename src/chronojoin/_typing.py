"""Type aliases shared by the public API (option sets are checked at run time)."""

from __future__ import annotations

import datetime as _dt
from typing import Literal, Union  # Union: aliases are evaluated at run time on 3.10

from pyspark.sql import Column

Direction = Literal["backward", "forward", "nearest"]
How = Literal["left", "inner"]
Closed = Literal["both", "left", "right", "neither"]
AsofStrategy = Literal["auto", "exploding", "union", "sort_merge", "native", "broadcast"]
IntervalStrategy = Literal["auto", "sweep", "bucketed_sweep", "join"]
AggFunction = Literal["sum", "count", "mean", "min", "max", "collect_list", "collect_set"]

DurationLike = Union[int, float, _dt.timedelta, str]  # noqa: UP007
ColumnOrName = Union[Column, str]  # noqa: UP007
