"""The interval join as a binned range join (see :mod:`chronojoin._plan.binned_join`).

* point-in-interval (``left_end`` None): left rows are points in one bin each, right
  intervals are copied into every bin they touch; ``how="left"`` is then a plain left
  outer join (unless heavy-tail intervals need a second grid level);
* overlap: both sides are copied into the bins they touch and a pair is kept only in
  the bin of ``greatest(left_start, right_start)``, the first point they share.
"""

from __future__ import annotations

import logging

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._plan import binned_join as J
from chronojoin._typing import Closed
from chronojoin._validate.columns import col
from chronojoin._validate.timetypes import TimeKind
from chronojoin.interval_join.spec import IntervalJoinSpec

_LS, _LE, _RS, _RE = "_cj_ls", "_cj_le", "_cj_rs", "_cj_re"

log = logging.getLogger("chronojoin.interval_join")


def plan_interval_join(spec: IntervalJoinSpec) -> DataFrame:
    """Build the lazy plan of a validated interval join."""
    left, lmap = J.internal(spec.left, "l")
    right, rmap = J.internal(spec.right, "r")
    left = left.withColumn(_LS, _ordinal(spec, lmap, "left_start"))
    right = right.withColumn(_RS, _ordinal(spec, rmap, "right_start"))
    right = right.withColumn(_RE, _ordinal(spec, rmap, "right_end"))
    ls, rs, re_ = F.col(_LS), F.col(_RS), F.col(_RE)
    if spec.left_end is None:
        le = None
        condition = _point_in(spec.closed, ls, rs, re_)
    else:
        left = left.withColumn(_LE, _ordinal(spec, lmap, "left_end"))
        le = F.col(_LE)
        condition = _overlap(spec.closed, ls, le, rs, re_)
    lside = J.RangeSide(
        left, tuple(lmap[c] for c in spec.left.columns), tuple(lmap[k] for k in spec.keys.left),
        ls, le,
    )
    rside = J.RangeSide(
        right, tuple(rmap[c] for c in spec.right.columns),
        tuple(rmap[k] for k in spec.keys.right), rs, re_,
    )
    join = J.RangeJoin(
        lside, rside, condition, spec.how, spec.bin_size, spec.kind is not TimeKind.FLOAT
    )
    grid = J.choose_grid(join)
    log.info("interval_join: %s", grid.reason)
    result = J.plan_range_join(join, grid)
    return J.finish(result, list(spec.left.columns), lmap, spec.outputs, rmap)


def _ordinal(spec: IntervalJoinSpec, mapping: dict[str, str], argument: str) -> Column:
    """The ordinal of the column that ``argument`` names (``+-inf`` and NaN kept)."""
    name: str = getattr(spec, argument)
    return J.join_ordinal(col(mapping[name]), spec.kinds[argument])


def _point_in(closed: Closed, p: Column, start: Column, end: Column) -> Column:
    """``start <= p <= end`` with ``<`` on the open ends."""
    low = start <= p if closed in ("both", "left") else start < p
    high = p <= end if closed in ("both", "right") else p < end
    return low & high


def _overlap(closed: Closed, s1: Column, e1: Column, s2: Column, e2: Column) -> Column:
    """Both intervals valid and sharing a point (``both``) or a non-empty stretch."""
    first, last = F.greatest(s1, s2), F.least(e1, e2)
    valid = (s1 <= e1) & (s2 <= e2)
    return valid & (first <= last if closed == "both" else first < last)
