"""What ``auto`` (or the caller) decided: a strategy and, for ``bucketed_sweep``, buckets."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The automatic bucket count aims at this many bucket groups per shuffle partition
#: (see :func:`bucket_target`).
GROUPS_PER_PARTITION = 8
#: ... but never splits a key into buckets of fewer events than this.
MIN_BUCKET_EVENTS = 20_000
#: ... nor into more buckets than this.
MAX_BUCKETS = 4096


@dataclass(frozen=True)
class Plan:
    """A resolved strategy with its bucket layout.

    Exactly one bucket layout is set for ``bucketed_sweep``:

    * ``width``: bucket = floor(time / width), the same grid for every key;
    * ``count`` with ``lo``/``hi``: ``count`` equal-width buckets over the global time
      range ``[lo, hi]``, for every key;
    * ``target``: per key, ``ceil(events_k / target)`` equal-width buckets over that
      key's own time range (at most ``max_buckets``); keys with at most ``target``
      events stay in one bucket. This is the automatic layout.
    """

    strategy: str
    reason: str = ""
    width: int | float | None = None
    count: int | None = None
    lo: float | None = None
    hi: float | None = None
    target: int | None = None
    max_buckets: int = MAX_BUCKETS


def bucket_target(events: int, partitions: int) -> int:
    """Events per bucket of the automatic layout.

    With ``E`` events (points + 2 x intervals) hashed into ``S`` shuffle partitions a
    partition holds ``E / S`` events on average. A key with ``e_k > E / S`` events makes
    its partition a straggler. Cutting every key into buckets of at most
    ``g = E / (8 S)`` events gives about 8 (key, bucket) groups per partition for the
    hot keys; hashing ``8 S`` groups into ``S`` partitions is close to even (the
    fullest partition holds about 1.3-1.6 x the mean in a balls-into-bins estimate)
    so the longest task stays within about 2 x the median. Buckets smaller than
    :data:`MIN_BUCKET_EVENTS` only add carry rows, so ``g`` is at least that. Keys
    with ``e_k <= g`` keep one bucket: no extra rows or work for the many small keys.

    Examples
    --------
    >>> from chronojoin.intervals.plan import bucket_target
    >>> bucket_target(12_000_000, 200)
    20000
    >>> bucket_target(120_000_000, 200)
    75000
    """
    return max(MIN_BUCKET_EVENTS, math.ceil(events / (GROUPS_PER_PARTITION * max(1, partitions))))


def buckets_for(events_k: int, target: int, max_buckets: int = MAX_BUCKETS) -> int:
    """Return the number of buckets of a key with ``events_k`` events under ``target``.

    Examples
    --------
    >>> from chronojoin.intervals.plan import buckets_for
    >>> buckets_for(6_000_000, 20_000), buckets_for(500, 20_000)
    (300, 1)
    """
    return max(1, min(max_buckets, math.ceil(events_k / max(1, target))))
