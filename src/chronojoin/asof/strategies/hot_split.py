"""``auto``'s plan for hot keys next to a broadcastable rest: two plans, one per key set.

When a few keys hold many rows on both sides (the hot keys of a
:class:`~chronojoin.asof.buckets.Layout`) and every other key holds at most a couple
of left rows, the left rows are split by key: the hot keys' rows go through ``union``
with those keys cut into time buckets (exact carry-over), the others through
``broadcast`` (their right rows never shuffled). A left row's key puts it in exactly
one part, NULL keys in the broadcast part (where they find nothing, as everywhere), so
the union of both results holds every left row once.
"""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame

from chronojoin._validate.columns import col
from chronojoin.asof.buckets import Layout, is_cold, is_hot
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies import broadcast, union


def plan(left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None) -> DataFrame:
    """Build the split plan; ``layout`` names the hot keys."""
    assert layout is not None and layout.hot_keys
    left_keys = [col(k) for k in right.keys.left]
    hot_left = is_hot(left_keys, layout.hot_keys)
    hot_right = is_hot([col(k) for k in right.keys.right], layout.hot_keys)
    # Right rows of a NULL key never match: the cold side may drop them with the hot
    # keys (plain predicates, which let Parquet skip row groups of one side).
    cold_side = dataclasses.replace(right, df=right.df.where(~hot_right))
    cold = broadcast.plan(left.where(is_cold(left_keys, layout.hot_keys)), cold_side, spec)
    hot_side = dataclasses.replace(right, df=right.df.where(hot_right))
    hot = union.plan(left.where(hot_left), hot_side, spec, layout)
    return cold.unionByName(hot)
