"""``strategy="auto"``: a pure function of the spec and cheap statistics that picks one.

Statistics (one small job each): rows and approximate distinct keys of both sides,
and the keys that hold more than :data:`HOT_SHARE` of the right rows.

* Hot keys (a key with a large share of the rows) would put a whole timeline on one
  task: ``union`` with those keys split into time buckets (exact carry-over).
* Otherwise the cost of ``exploding`` follows the candidate pairs, about
  ``left_rows * right_rows_per_key`` (half of that for backward/forward without a
  tolerance), the cost of ``union`` follows ``left_rows + right_rows``. Exploding wins
  when keys hold about one left row, because its sorts are on the key alone: it is
  chosen while the estimated pairs stay within :data:`PAIRS_PER_ROW` per input row.
"""

from __future__ import annotations

import logging

from chronojoin._plan.stats import SideStats, frequent_keys, side_stats
from chronojoin.asof.buckets import Layout, default_count
from chronojoin.asof.spec import AsofSpec, RightSpec

log = logging.getLogger("chronojoin.asof")

#: Exploding is chosen while estimated candidate pairs <= this many per input row.
PAIRS_PER_ROW = 1.0
#: A key holding more than this share of the right rows is split into time buckets...
HOT_SHARE = 0.05
#: ...when the right side has at least this many rows (below, one task is fast anyway).
MIN_ROWS_TO_SPLIT = 100_000


def choose(spec: AsofSpec, right: RightSpec) -> tuple[str, Layout | None, str]:
    """Return ``(strategy, layout, reason)`` for one right table."""
    if not right.keys:
        return "union", None, "no equality key: time-bucketed union with carry-over"
    if spec.buckets is not None:
        return "union", None, f"buckets={spec.buckets} requested: union with carry-over"
    rstats = side_stats(right.df, right.keys.right)
    layout = hot_layout(spec, [right], [rstats])
    if layout is not None and layout.hot_keys:
        reason = (f"{len(layout.hot_keys)} hot key(s) over {HOT_SHARE:.0%} of right rows: "
                  "union with those keys split into time buckets")
        return "union", layout, reason
    lstats = side_stats(spec.left, right.keys.left)
    share = 1.0 if right.direction == "nearest" or right.tolerance is not None else 0.5
    pairs = lstats.rows * rstats.rows_per_key * share
    inputs = max(1, lstats.rows + rstats.rows)
    reason = (
        f"{lstats.rows} left rows on ~{lstats.keys} keys, {rstats.rows} right rows on "
        f"~{rstats.keys} keys: ~{pairs:.3g} candidate pairs for {inputs} input rows"
    )
    if pairs <= PAIRS_PER_ROW * inputs:
        return "exploding", None, reason + " (few pairs per row: exploding)"
    return "union", None, reason + " (many pairs per row: union)"


def hot_layout(
    spec: AsofSpec, rights: list[RightSpec], stats: list[SideStats] | None = None
) -> Layout | None:
    """Split the keys that are hot in any of ``rights`` (``None`` when none is)."""
    if spec.buckets is not None or not rights[0].keys:
        return None
    hot: dict[tuple[object, ...], None] = {}
    for i, right in enumerate(rights):
        rows = (stats[i] if stats else side_stats(right.df, right.keys.right)).rows
        if rows >= MIN_ROWS_TO_SPLIT:
            hot.update(dict.fromkeys(frequent_keys(right.df, right.keys.right, HOT_SHARE)))
    if not hot:
        return None
    return Layout(buckets=default_count(spec.left), hot_keys=tuple(hot))
