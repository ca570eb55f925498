"""``strategy="auto"``: a pure function of the spec and cheap statistics that picks one.

The cost of ``exploding`` follows the number of candidate pairs, about
``left_rows * right_rows_per_key`` (half of it for backward/forward); the cost of
``union`` follows ``left_rows + right_rows`` (one shuffle, one sort). Exploding wins
when each key holds about one left row, because its sorts are on the key alone; the
rule below takes it while the estimated pairs stay within ``PAIRS_PER_ROW`` times the
input rows, and ``union`` otherwise.
"""

from __future__ import annotations

import logging

from chronojoin._plan.stats import side_stats
from chronojoin.asof.spec import AsofSpec, RightSpec

log = logging.getLogger("chronojoin.asof")

#: Exploding is chosen while estimated candidate pairs <= this many per input row.
PAIRS_PER_ROW = 1.0


def choose(spec: AsofSpec, right: RightSpec, left_rows: int | None = None) -> tuple[str, str]:
    """Return ``(strategy, reason)`` for one right table."""
    if not right.keys:
        return "union", "no equality key: time-bucketed union with carry-over runs in parallel"
    if spec.buckets is not None:
        return "union", f"buckets={spec.buckets} requested: union with carry-over"
    lstats = side_stats(spec.left, right.keys.left)
    rstats = side_stats(right.df, right.keys.right)
    share = 1.0 if right.direction == "nearest" or right.tolerance is not None else 0.5
    pairs = lstats.rows * rstats.rows_per_key * share
    inputs = max(1, lstats.rows + rstats.rows)
    reason = (
        f"{lstats.rows} left rows on ~{lstats.keys} keys, {rstats.rows} right rows on "
        f"~{rstats.keys} keys: ~{pairs:.3g} candidate pairs for {inputs} input rows"
    )
    if pairs <= PAIRS_PER_ROW * inputs:
        return "exploding", reason + " (few pairs per row: exploding)"
    return "union", reason + " (many pairs per row: union)"
