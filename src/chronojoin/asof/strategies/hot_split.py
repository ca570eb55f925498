"""``auto``'s plan for hot keys that ``hot_broadcast`` does not fit, next to a small rest.

When a few keys hold many rows on both sides (the hot keys of a
:class:`~chronojoin.asof.buckets.Layout`), every other key holds at most a couple of
left rows, and the hot keys' left times do not spread over time buckets (else
``auto`` takes :mod:`~chronojoin.asof.strategies.hot_broadcast`, one broadcast for
all keys), the left rows are split by key: the others go through ``broadcast``
(their right rows never shuffled), the hot keys' rows through ``union`` with those
keys cut into time buckets (exact carry-over).

A left row's key puts it in exactly one part, NULL keys in the broadcast part (where
they find nothing, as everywhere), so the union of both results holds every left row
once. The right rows are split with plain equality predicates, which let a Parquet
scan skip the row groups of the other part.
"""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame

from chronojoin._validate.columns import col
from chronojoin.asof.buckets import Layout, is_cold, is_hot
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies import broadcast, union


def plan(left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None) -> DataFrame:
    """The rest through ``broadcast``, the hot keys' rows through ``union``.

    ``layout`` names the hot keys and their time buckets.
    """
    assert layout is not None and layout.hot_keys
    left_keys = [col(k) for k in right.keys.left]
    hot_right = is_hot([col(k) for k in right.keys.right], layout.hot_keys)
    # Right rows of a NULL key never match: the cold side may drop them too.
    cold = broadcast.plan(left.where(is_cold(left_keys, layout.hot_keys)),
                          dataclasses.replace(right, df=right.df.where(~hot_right)), spec)
    hot = union.plan_many(left.where(is_hot(left_keys, layout.hot_keys)),
                          [dataclasses.replace(right, df=right.df.where(hot_right))], spec,
                          layout)
    return cold.unionByName(hot)
