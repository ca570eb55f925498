"""``strategy="auto"``: a pure function of the spec and a few cheap statistics.

* No equality key: ``union`` over a time-bucketed global timeline (exact carry-over).
* Small inputs: when Spark's own size estimate of the left side and every right table
  (read from the plans, no job) adds up to at most :data:`SMALL_INPUT_BYTES` (frames
  Spark cannot size: at most :data:`SMALL_INPUT_ROWS` rows, counted by one job that
  reads no column), ``union`` without the statistics jobs. The jobs below cost about
  a second on a local session, more than any other plan could save on such inputs (and
  a hot key of a few megabytes costs one task little). Tables read bucket by bucket
  still take the path below (their plans avoid an exchange).
* Keys: first one job counts the left rows of each key and keeps the largest keys
  with the range of their left times (:func:`~chronojoin._plan.stats.key_profile`,
  key and time columns only). With at most
  :data:`MAX_LEFT_PER_KEY` left rows per key and at most :data:`MAX_BROADCAST_ROWS`
  left rows, ``broadcast``: the left ``(keys, time)`` pairs are broadcast and the right
  side is never shuffled (a hot right key costs nothing there). Broadcasts switched
  off by the session (``spark.sql.autoBroadcastJoinThreshold=-1``) are respected, and
  so are tables bucketed by the key: when Spark would read the right side bucket by
  bucket (one task per bucket, each paying the broadcast plan's fixed cost),
  ``exploding`` joins within the buckets instead (no exchange, no sampling job).
* Keys holding over :data:`HOT_SHARE` of the left rows (read from that job's largest
  keys, :func:`heavy_layout`) next to keys of a left row or two: the other keys'
  counts come from that same job, and a second job (:func:`bucketed_hot_layout`,
  over the heavy keys' rows only) counts the left rows of their time buckets. When
  the other keys pass the ``broadcast`` rule and the heavy keys' left times spread
  over their buckets, ``hot_broadcast``: one broadcast for every key, in which the
  heavy keys' time buckets join their rows (a left time with nothing in its own bucket
  also meets the nearest non-empty one; the right side is never shuffled).
* Otherwise a seeded 1% sample of the right keys
  (:func:`~chronojoin._plan.stats.sampled_hot_spans`): a key holding more than
  :data:`HOT_SHARE` of it would put a whole timeline on one task, so those keys are
  split into time buckets with an exact carry-over (``union``). When the other keys'
  left rows pass the ``broadcast`` rule (one more job counts them), only the hot
  keys' rows take that path and the rest is broadcast (``hot_split``).
* No hot key and at most :data:`MAX_LEFT_PER_KEY` left rows per key (a left side too
  large to broadcast): ``exploding`` on a shuffled hash join (``exploding_hash``: its
  candidate pairs are about half the right rows, nothing is sorted on time); otherwise
  ``union`` (one shuffle of both sides, one sort on key and time).

Several right tables (which share the left keys) get ``broadcast``, ``hot_broadcast``
or ``union``, each as one plan for all tables. ``sort_merge`` and ``native`` are never
chosen (see their modules).
"""

from __future__ import annotations

import io
import logging
from contextlib import redirect_stdout
from typing import NamedTuple

from pyspark.sql import Column

from chronojoin._plan import stats as plan_stats
from chronojoin._plan.stats import (
    KeyCounts,
    KeyProfile,
    hot_bucket_counts,
    key_counts,
    key_profile,
    sampled_hot_spans,
    small_inputs,
)
from chronojoin._validate.columns import col
from chronojoin._validate.timetypes import ordinal
from chronojoin.asof.buckets import Layout, default_count, is_cold, is_hot
from chronojoin.asof.spec import AsofSpec, RightSpec
from chronojoin.asof.strategies.hot_broadcast import hot_buckets

log = logging.getLogger("chronojoin.asof")

#: Inputs whose estimated sizes add up to at most this many bytes get ``union`` without
#: a statistics job (0 turns that off; the value is shared with the other automatic
#: choices). On the thesis data at 10,000 ids (about 7 MB by the estimate) ``auto``
#: with its statistics took 1.5x ``union``'s time, without them 0.9-1.0x; at 30,000
#: ids (about 21 MB) it took 1.0x with them (BENCHMARKS.md).
SMALL_INPUT_BYTES = plan_stats.SMALL_INPUT_BYTES
#: Frames Spark cannot size count as small with at most this many rows in all.
SMALL_INPUT_ROWS = plan_stats.SMALL_INPUT_ROWS
#: A key holding more than this share of the sampled right rows is split into buckets.
HOT_SHARE = 0.05
#: Sampled rows a key needs before it counts as hot (about 10,000 rows in all).
MIN_SAMPLED = 100
#: ``broadcast`` and ``exploding`` are chosen when no key holds more left rows than this.
MAX_LEFT_PER_KEY = 2
#: The most left rows whose ``(keys, time)`` ``broadcast`` ships to every task (a hash
#: table of about 50 bytes per row: 100 MB at this size).
MAX_BROADCAST_ROWS = 2_000_000
#: A hot key's time buckets ``broadcast`` accepts: the left rows in a hot row's bucket,
#: on average over the hot rows, and in the largest bucket.
MEAN_LEFT_PER_BUCKET = 4.0
MAX_LEFT_PER_BUCKET = 64


class SplitCounts(NamedTuple):
    """Left rows of the cold keys and of the hot keys' time buckets (non-NULL keys).

    ``hot_mean`` is the mean size of a hot bucket as a hot row sees it (the sum of
    squared bucket sizes over the hot rows): the left rows a right row of the bucket
    is paired with, up to a half.
    """

    cold_most: int
    cold_rows: int
    hot_most: int
    hot_rows: int
    hot_mean: float


def choose(spec: AsofSpec, right: RightSpec) -> tuple[str, Layout | None, str]:
    """Return ``(strategy, layout, reason)`` for one right table."""
    if not right.keys:
        return "union", None, "no equality key: time-bucketed union with carry-over"
    if spec.buckets is not None:
        return "union", None, f"buckets={spec.buckets} requested: union with carry-over"
    small = _small_inputs(spec)
    if small is not None:
        return "union", None, small
    profile = key_profile(spec.left, right.keys.left, _left_time(spec), over=MAX_LEFT_PER_KEY)
    counts = profile.counts
    if _broadcastable(spec, counts):
        if not bucketed_by_keys(right):
            return "broadcast", None, _broadcast_reason(counts)
        # At most two left rows per key: the sort-merge join within the buckets pairs
        # each right row with at most two left rows, hot key or not.
        return "exploding", None, (f"at most {counts.most} left row(s) per key and a right "
                                   "table read bucket by bucket: sort-merge join within the "
                                   "buckets, best pair per left row")
    heavy = heavy_layout(spec, profile)
    chosen = None if heavy is None else bucketed_hot_layout(spec, [right], heavy, profile)
    if chosen is not None:
        return "hot_broadcast", chosen[0], _hot_reason(*chosen)
    layout = hot_layout(spec, [right])
    if layout is not None and layout.hot_keys:
        hot = f"{len(layout.hot_keys)} hot key(s) over {HOT_SHARE:.0%} of sampled right rows"
        rest = key_counts(spec.left.where(is_cold([col(k) for k in right.keys.left],
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
        small = _small_inputs(spec)
        if small is not None:
            return "union", None, small
        profile = key_profile(spec.left, rights[0].keys.left, _left_time(spec),
                              over=MAX_LEFT_PER_KEY)
        if _broadcastable(spec, profile.counts) and not any(bucketed_by_keys(r) for r in rights):
            return "broadcast", None, _broadcast_reason(profile.counts)
        heavy = heavy_layout(spec, profile)
        chosen = None if heavy is None else bucketed_hot_layout(spec, rights, heavy, profile)
        if chosen is not None:
            return "hot_broadcast", chosen[0], _hot_reason(*chosen)
    layout = hot_layout(spec, rights)
    return "union", layout, "one union, one shuffle and one sort of every table"


def _small_inputs(spec: AsofSpec) -> str | None:
    """The reason to take ``union`` without statistics, or ``None`` (see the module)."""
    found = small_inputs([spec.left, *(r.df for r in spec.rights)],
                         max_bytes=SMALL_INPUT_BYTES, max_rows=SMALL_INPUT_ROWS,
                         eligible=lambda: not any(bucketed_by_keys(r) for r in spec.rights))
    if found is None:
        return None
    return f"small inputs ({found}): one shuffle and one sort, no key statistics"


def heavy_layout(spec: AsofSpec, profile: KeyProfile) -> Layout | None:
    """The keys holding over :data:`HOT_SHARE` of the left rows, and their left times.

    They are what rules ``broadcast`` out when every other key has a left row or two
    (each of their right rows would meet all their left rows); ``None`` when no key
    holds that many. ``profile`` is the left keys' counts and largest keys with their
    time ranges (:func:`~chronojoin._plan.stats.key_profile` with ``over`` at most
    :data:`MAX_LEFT_PER_KEY`).
    """
    counts, top = profile.counts, profile.top
    threshold = max(MAX_LEFT_PER_KEY, int(HOT_SHARE * counts.rows))
    if counts.most <= threshold or not _broadcasts_on(spec):
        return None
    found = [s for rows, s in top if rows > threshold]
    lows = [float(s.low) for s in found if s.low is not None]
    highs = [float(s.high) for s in found if s.high is not None]
    if not found or not lows or not highs:
        return None
    return Layout(hot_keys=tuple(s.key for s in found), span=(min(lows), max(highs)))


def _left_time(spec: AsofSpec) -> Column:
    """The left time ordinal, as the strategies compare it."""
    return ordinal(col(spec.left_on), spec.left_kind)


def bucketed_hot_layout(
    spec: AsofSpec, rights: list[RightSpec], layout: Layout, profile: KeyProfile,
) -> tuple[Layout, SplitCounts] | None:
    """The layout of ``hot_broadcast`` for ``layout``'s hot keys, if it pays.

    As many equal-width buckets over the hot keys' time span as the largest key has
    left rows (about one per bucket when its times spread), as long as the broadcast
    stays under :data:`MAX_BROADCAST_ROWS`. The cold keys' counts come from
    ``profile`` (its largest keys: the hot keys were found among them, so the largest
    of the others, or else the most of the small keys, is the largest cold key); one
    job counts the left rows of every hot bucket, over the hot keys' rows only. The
    layout (with those counts) is returned when the cold keys pass the ``broadcast``
    rule and a hot bucket holds about :data:`MEAN_LEFT_PER_BUCKET` left rows (at most
    :data:`MAX_LEFT_PER_BUCKET`), else ``None`` (without the job when the cold keys
    fail, the broadcast cannot fit or a right table is read bucket by bucket).
    """
    hot_keys = layout.hot_keys or ()
    counts, top = profile.counts, profile.top
    room = (MAX_BROADCAST_ROWS - counts.rows) // max(1, len(hot_keys))
    grid = Layout(buckets=max(1, min(counts.most, room)), hot_keys=hot_keys, span=layout.span)
    buckets = hot_buckets(grid)
    if buckets is None or room < 1 or any(bucketed_by_keys(r) for r in rights):
        return None
    cold_most = max((rows for rows, span in top if span.key not in hot_keys),
                    default=profile.small_most)
    cold_rows = counts.rows - sum(rows for rows, span in top if span.key in hot_keys)
    if cold_most > MAX_LEFT_PER_KEY:
        return None
    left_keys = [col(k) for k in rights[0].keys.left]
    hot_most, hot_rows, hot_mean = hot_bucket_counts(
        spec.left, rights[0].keys.left, is_hot(left_keys, hot_keys),
        buckets.grid.column(_left_time(spec)))
    split = SplitCounts(cold_most, cold_rows, hot_most, hot_rows, hot_mean)
    fits = hot_most <= MAX_LEFT_PER_BUCKET and hot_mean <= MEAN_LEFT_PER_BUCKET
    return (grid, split) if fits else None


def _hot_reason(grid: Layout, split: SplitCounts) -> str:
    cold = KeyCounts(split.cold_most, split.cold_rows)
    return (f"{len(grid.hot_keys or ())} key(s) holding over {HOT_SHARE:.0%} of the left "
            f"rows: their rows broadcast with those keys cut into {grid.buckets} time "
            f"buckets ({split.hot_mean:.1f} left rows per bucket as a left row sees it, at "
            f"most {split.hot_most}), empty buckets bridged; the rest "
            f"({_broadcast_reason(cold)})")


def _broadcastable(spec: AsofSpec, counts: KeyCounts) -> bool:
    if counts.most > MAX_LEFT_PER_KEY or counts.rows > MAX_BROADCAST_ROWS:
        return False
    return _broadcasts_on(spec)


def _broadcasts_on(spec: AsofSpec) -> bool:
    """Whether the session allows broadcasts (``autoBroadcastJoinThreshold`` not -1)."""
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
    # A list, not a set: an array key is collected as a list, which cannot be hashed.
    hot: list[tuple[object, ...]] = []
    lows, highs = [], []
    for right in rights:
        found = sampled_hot_spans(right.df, right.keys.right,
                                  ordinal(col(right.on), right.time_kind), HOT_SHARE,
                                  min_sampled=MIN_SAMPLED)
        hot += [s.key for s in found if s.key not in hot]
        lows += [s.low for s in found if s.low is not None]
        highs += [s.high for s in found if s.high is not None]
    if not hot:
        return None
    # The buckets span the hot keys' sampled right times (no job over every row);
    # rows outside fall into the first or last bucket.
    span = (float(min(lows)), float(max(highs))) if lows and highs else None
    return Layout(buckets=default_count(spec.left), hot_keys=tuple(hot), span=span)
