"""``strategy="auto"``: a pure function of the spec and at most two cheap statistics.

* No equality key: ``union`` over a time-bucketed global timeline (exact carry-over).
* Keys: first one job counts the left rows of each key
  (:func:`~chronojoin._plan.stats.key_counts`, key columns only). With at most
  :data:`MAX_LEFT_PER_KEY` left rows per key and at most :data:`MAX_BROADCAST_ROWS`
  left rows, ``broadcast``: the left ``(keys, time)`` pairs are broadcast and the right
  side is never shuffled (a hot right key costs nothing there). Broadcasts switched
  off by the session (``spark.sql.autoBroadcastJoinThreshold=-1``) are respected, and
  so are tables bucketed by the key: when Spark would read the right side bucket by
  bucket (one task per bucket, each paying the broadcast plan's fixed cost),
  ``exploding`` joins within the buckets instead (no exchange, no sampling job).
* Otherwise a seeded 1% sample of the right keys
  (:func:`~chronojoin._plan.stats.sampled_hot_spans`): a key holding more than
  :data:`HOT_SHARE` of it would put a whole timeline on one task, so those keys are
  split into time buckets with an exact carry-over (``union``). When the other keys'
  left rows pass the ``broadcast`` rule (a third job counts them), only the hot keys'
  rows take that path and the rest is broadcast (``hot_split``).
* No hot key and at most :data:`MAX_LEFT_PER_KEY` left rows per key (a left side too
  large to broadcast): ``exploding`` on a shuffled hash join (``exploding_hash``: its
  candidate pairs are about half the right rows, nothing is sorted on time); otherwise
  ``union`` (one shuffle of both sides, one sort on key and time).

Several right tables (which share the left keys) get ``broadcast`` or ``union``, each
as one plan for all tables. ``sort_merge`` and ``native`` are never chosen (see their
modules).
"""

from __future__ import annotations

import io
import logging
from contextlib import redirect_stdout

from chronojoin._plan.stats import KeyCounts, key_counts, sampled_hot_spans
from chronojoin._validate.columns import col
from chronojoin._validate.timetypes import ordinal
from chronojoin.asof.buckets import Layout, default_count, is_hot
from chronojoin.asof.spec import AsofSpec, RightSpec

log = logging.getLogger("chronojoin.asof")

#: A key holding more than this share of the sampled right rows is split into buckets.
HOT_SHARE = 0.05
#: Sampled rows a key needs before it counts as hot (about 10,000 rows in all).
MIN_SAMPLED = 100
#: ``broadcast`` and ``exploding`` are chosen when no key holds more left rows than this.
MAX_LEFT_PER_KEY = 2
#: The most left rows whose ``(keys, time)`` ``broadcast`` ships to every task (a hash
#: table of about 50 bytes per row: 100 MB at this size).
MAX_BROADCAST_ROWS = 2_000_000


def choose(spec: AsofSpec, right: RightSpec) -> tuple[str, Layout | None, str]:
    """Return ``(strategy, layout, reason)`` for one right table."""
    if not right.keys:
        return "union", None, "no equality key: time-bucketed union with carry-over"
    if spec.buckets is not None:
        return "union", None, f"buckets={spec.buckets} requested: union with carry-over"
    counts = key_counts(spec.left, right.keys.left)
    if _broadcastable(spec, counts):
        if not bucketed_by_keys(right):
            return "broadcast", None, _broadcast_reason(counts)
        # At most two left rows per key: the sort-merge join within the buckets pairs
        # each right row with at most two left rows, hot key or not.
        return "exploding", None, (f"at most {counts.most} left row(s) per key and a right "
                                   "table read bucket by bucket: sort-merge join within the "
                                   "buckets, best pair per left row")
    layout = hot_layout(spec, [right])
    if layout is not None and layout.hot_keys:
        hot = f"{len(layout.hot_keys)} hot key(s) over {HOT_SHARE:.0%} of sampled right rows"
        rest = key_counts(spec.left.where(~is_hot([col(k) for k in right.keys.left],
                                                   layout.hot_keys)), right.keys.left)
        if _broadcastable(spec, rest):
            return "hot_split", layout, (f"{hot}: union with those keys split into time "
                                         f"buckets; the rest ({_broadcast_reason(rest)})")
        return "union", layout, f"{hot}: union with those keys split into time buckets"
    if counts.most <= MAX_LEFT_PER_KEY:
        return "exploding_hash", None, (f"at most {counts.most} left row(s) per key, no hot "
                                        "key: hash join on the keys, best pair per left row")
    return "union", None, (f"up to {counts.most} left rows per key, no hot key: "
                           "one shuffle and one sort")


def choose_many(spec: AsofSpec) -> tuple[str, Layout | None, str]:
    """Return ``(strategy, layout, reason)`` for one plan joining every right table."""
    rights = list(spec.rights)
    if rights[0].keys and spec.buckets is None:
        counts = key_counts(spec.left, rights[0].keys.left)
        if _broadcastable(spec, counts) and not any(bucketed_by_keys(r) for r in rights):
            return "broadcast", None, _broadcast_reason(counts)
    layout = hot_layout(spec, rights)
    return "union", layout, "one union, one shuffle and one sort of every table"


def _broadcastable(spec: AsofSpec, counts: KeyCounts) -> bool:
    if counts.most > MAX_LEFT_PER_KEY or counts.rows > MAX_BROADCAST_ROWS:
        return False
    conf = spec.left.sparkSession.conf
    return not str(conf.get("spark.sql.autoBroadcastJoinThreshold", "0")).strip().startswith("-")


def bucketed_by_keys(right: RightSpec) -> bool:
    """Whether Spark reads ``right`` bucket by bucket when a plan groups it by its keys.

    That is what ``broadcast`` does (its partial aggregate groups the right rows by the
    left keys they match): a table bucketed by the keys is then read with one task per
    bucket. Read from the text of the physical plan (``explain``, printed alike by
    classic and Spark Connect sessions), where such a scan is marked ``Bucketed: true``.
    """
    grouped = right.df.groupBy(*[col(k) for k in right.keys.right]).count()
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        grouped.explain()
    return "Bucketed: true" in buffer.getvalue()


def _broadcast_reason(counts: KeyCounts) -> str:
    return (f"{counts.rows} left row(s), at most {counts.most} per key: left (keys, time) "
            "broadcast, right side not shuffled")


def hot_layout(spec: AsofSpec, rights: list[RightSpec]) -> Layout | None:
    """Split the keys that are hot in any of ``rights`` (``None`` when none is)."""
    if spec.buckets is not None or not rights[0].keys:
        return None
    hot: dict[tuple[object, ...], None] = {}
    lows, highs = [], []
    for right in rights:
        found = sampled_hot_spans(right.df, right.keys.right,
                                  ordinal(col(right.on), right.time_kind), HOT_SHARE,
                                  min_sampled=MIN_SAMPLED)
        hot.update(dict.fromkeys(s.key for s in found))
        lows += [s.low for s in found if s.low is not None]
        highs += [s.high for s in found if s.high is not None]
    if not hot:
        return None
    # The buckets span the hot keys' sampled right times (no job over every row);
    # rows outside fall into the first or last bucket.
    span = (float(min(lows)), float(max(highs))) if lows and highs else None
    return Layout(buckets=default_count(spec.left), hot_keys=tuple(hot), span=span)
