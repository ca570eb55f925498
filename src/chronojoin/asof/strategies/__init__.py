"""As-of strategies: one module each, all with ``plan(left, right, spec, layout) -> DataFrame``."""

from __future__ import annotations

import functools
from collections.abc import Callable

from pyspark.sql import DataFrame

from chronojoin.asof.buckets import Layout
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies import (
    broadcast,
    exploding,
    hot_broadcast,
    hot_split,
    native,
    sort_merge,
    union,
)

Plan = Callable[[DataFrame, RightSpec, AsofSpec, Layout | None], DataFrame]

#: strategy name (as in ``strategy=`` and ``--strategy``) -> plan builder
STRATEGIES: dict[str, Plan] = {
    "exploding": exploding.plan,
    "union": union.plan,
    "sort_merge": sort_merge.plan,
    "native": native.plan,
    "broadcast": broadcast.plan,
}

#: plans only ``auto`` picks (not accepted by ``strategy=``)
AUTO_ONLY: dict[str, Plan] = {
    "exploding_hash": functools.partial(exploding.plan, hash_join=True),
    "hot_split": hot_split.plan,
    "hot_broadcast": hot_broadcast.plan,
}
