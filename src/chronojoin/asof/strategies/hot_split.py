"""``auto``'s plans for hot keys next to a broadcastable rest: one plan per key set.

When a few keys hold many rows on both sides (the hot keys of a
:class:`~chronojoin.asof.buckets.Layout`) and every other key holds at most a couple
of left rows, the left rows are split by key: the others go through ``broadcast``
(their right rows never shuffled), the hot keys' rows through

* ``hot_broadcast`` (:mod:`~chronojoin.asof.strategies.hot_broadcast`: their
  timelines cut into time buckets that join the keys, the right side still not
  shuffled), when their left times spread over the buckets, else
* ``union`` with those keys cut into time buckets (exact carry-over).

A left row's key puts it in exactly one part, NULL keys in the broadcast part (where
they find nothing, as everywhere), so the union of both results holds every left row
once. The right rows are split with plain equality predicates, which let a Parquet
scan skip the row groups of the other part.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pyspark.sql import DataFrame

from chronojoin._validate.columns import col
from chronojoin.asof.buckets import Layout, is_cold, is_hot
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies import broadcast, hot_broadcast, union

PlanMany = Callable[[DataFrame, list[RightSpec], AsofSpec, Layout | None], DataFrame]


def split(left: DataFrame, rights: list[RightSpec], spec: AsofSpec, layout: Layout | None,
          hot_plan: PlanMany) -> DataFrame:
    """The rest through ``broadcast``, the hot keys' rows through ``hot_plan``."""
    assert layout is not None and layout.hot_keys
    left_keys = [col(k) for k in rights[0].keys.left]
    cold_rights, hot_rights = [], []
    for right in rights:
        hot_right = is_hot([col(k) for k in right.keys.right], layout.hot_keys)
        # Right rows of a NULL key never match: the cold side may drop them too.
        cold_rights.append(dataclasses.replace(right, df=right.df.where(~hot_right)))
        hot_rights.append(dataclasses.replace(right, df=right.df.where(hot_right)))
    cold = broadcast.plan_many(left.where(is_cold(left_keys, layout.hot_keys)), cold_rights,
                               spec)
    hot = hot_plan(left.where(is_hot(left_keys, layout.hot_keys)), hot_rights, spec, layout)
    return cold.unionByName(hot)


def plan(left: DataFrame, right: RightSpec, spec: AsofSpec, layout: Layout | None) -> DataFrame:
    """The hot keys' rows through ``union`` in time buckets; ``layout`` names them."""
    return split(left, [right], spec, layout, union.plan_many)


def plan_hot_broadcast(left: DataFrame, right: RightSpec, spec: AsofSpec,
                       layout: Layout | None) -> DataFrame:
    """The hot keys' rows through ``hot_broadcast``; ``layout`` gives their buckets."""
    return plan_many_hot_broadcast(left, [right], spec, layout)


def plan_many_hot_broadcast(left: DataFrame, rights: list[RightSpec], spec: AsofSpec,
                            layout: Layout | None) -> DataFrame:
    """:func:`plan_hot_broadcast` for several right tables, in one plan."""
    return split(left, rights, spec, layout, hot_broadcast.plan_many)
