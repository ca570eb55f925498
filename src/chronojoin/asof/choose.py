"""``strategy="auto"``: a pure function of the spec and at most two cheap statistics.

* No equality key: ``union`` over a time-bucketed global timeline (exact carry-over).
* Keys: first a seeded 1% sample of the right keys
  (:func:`~chronojoin._plan.stats.sampled_hot_keys`): a key holding more than
  :data:`HOT_SHARE` of it would put a whole timeline on one task, so those keys are
  split into time buckets with an exact carry-over (``union``).
* Keys without a hot key: one job counts the left rows of each key
  (:func:`~chronojoin._plan.stats.max_rows_per_key`, key columns only). With at most
  :data:`MAX_LEFT_PER_KEY` left rows per key, ``exploding`` on a shuffled hash join
  (``exploding_hash``: its candidate pairs are about half the right rows, nothing is
  sorted on time, and without a hot key no task's hash table holds a large key);
  otherwise ``union`` (one shuffle of both sides, one sort on key and time).

``sort_merge`` and ``native`` are never chosen (see their modules).
"""

from __future__ import annotations

import logging

from chronojoin._plan.stats import max_rows_per_key, sampled_hot_keys
from chronojoin.asof.buckets import Layout, default_count
from chronojoin.asof.spec import AsofSpec, RightSpec

log = logging.getLogger("chronojoin.asof")

#: A key holding more than this share of the sampled right rows is split into buckets.
HOT_SHARE = 0.05
#: Sampled rows a key needs before it counts as hot (about 10,000 rows in all).
MIN_SAMPLED = 100
#: ``exploding`` is chosen when no key holds more left rows than this.
MAX_LEFT_PER_KEY = 2


def choose(spec: AsofSpec, right: RightSpec) -> tuple[str, Layout | None, str]:
    """Return ``(strategy, layout, reason)`` for one right table."""
    if not right.keys:
        return "union", None, "no equality key: time-bucketed union with carry-over"
    if spec.buckets is not None:
        return "union", None, f"buckets={spec.buckets} requested: union with carry-over"
    layout = hot_layout(spec, [right])
    if layout is not None and layout.hot_keys:
        reason = (f"{len(layout.hot_keys)} hot key(s) over {HOT_SHARE:.0%} of sampled right "
                  "rows: union with those keys split into time buckets")
        return "union", layout, reason
    most = max_rows_per_key(spec.left, right.keys.left)
    if most <= MAX_LEFT_PER_KEY:
        return "exploding_hash", None, (f"at most {most} left row(s) per key, no hot key: "
                                        "hash join on the keys, best pair per left row")
    return "union", None, (f"up to {most} left rows per key, no hot key: "
                           "one shuffle and one sort")


def hot_layout(spec: AsofSpec, rights: list[RightSpec]) -> Layout | None:
    """Split the keys that are hot in any of ``rights`` (``None`` when none is)."""
    if spec.buckets is not None or not rights[0].keys:
        return None
    hot: dict[tuple[object, ...], None] = {}
    for right in rights:
        found = sampled_hot_keys(right.df, right.keys.right, HOT_SHARE, min_sampled=MIN_SAMPLED)
        hot.update(dict.fromkeys(found))
    if not hot:
        return None
    return Layout(buckets=default_count(spec.left), hot_keys=tuple(hot))
