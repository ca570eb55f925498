"""Cheap statistics for strategy choice (one small job each, key columns only).

And two readings that run no job: Spark's own size estimate of a plan and the
session's broadcast threshold.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from contextlib import redirect_stdout
from functools import reduce
from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._validate.columns import col, not_null


class HotSpan(NamedTuple):
    """A hot key and the range of its sampled times (``None`` when no time was asked)."""

    key: tuple[object, ...]
    low: float | None
    high: float | None


class KeyCounts(NamedTuple):
    """Rows per non-NULL key of a frame: the most any key holds, and their total."""

    most: int
    rows: int


class KeyProfile(NamedTuple):
    """:class:`KeyCounts`, the largest keys with their time ranges, and the rest's most.

    ``top`` lists the :data:`TOP_KEYS` largest keys that hold more than the ``over``
    rows :func:`key_profile` was given, largest first, each as ``(rows, span)``;
    ``small_most`` is the most rows a key holding at most ``over`` rows holds (0 when
    there is none).
    """

    counts: KeyCounts
    top: list[tuple[int, HotSpan]]
    small_most: int


#: How many of the largest keys :func:`key_profile` and :func:`sampled_hot_spans` keep:
#: at most ``1 / share`` keys can each hold more than ``share`` of the rows, so these
#: cover any share >= 1/64.
TOP_KEYS = 64


def sampled_hot_spans(
    df: DataFrame,
    keys: tuple[str, ...],
    time: Column | None,
    share: float,
    *,
    fraction: float = 0.01,
    min_sampled: int = 100,
    seed: int = 7,
) -> list[HotSpan]:
    """Keys holding more than ``share`` of a seeded ``fraction`` sample (one cheap job).

    Only the key columns (and ``time``, whose sampled range is returned for each hot
    key) are read and only sampled rows are aggregated. A key must also appear
    ``min_sampled`` times in the sample (about ``min_sampled / fraction`` rows in all),
    so small inputs never count as skewed. A key missed by the sample only costs
    speed, never correctness.
    """
    if not keys:
        return []
    cols = [col(k) for k in keys]
    counts = _per_key(df.sample(fraction=fraction, seed=seed), cols, time)
    # The sample's total and largest keys from one global aggregate, as in
    # :func:`key_profile` (a window for the total would move every key's count into one
    # partition): the keys over ``share`` are among the largest.
    (_, total), top, _ = _largest(counts, len(keys))
    return [span for n, span in top
            if n >= min_sampled and n > total * share and all(v is not None for v in span.key)]


def _per_key(df: DataFrame, cols: list[Column], time: Column | None) -> DataFrame:
    """Rows (``__cj_n``) and its time range (``__cj_low``, ``__cj_high``; NULL without ``time``)."""
    none = F.lit(None).cast("double")
    low, high = (none, none) if time is None else (F.min(time), F.max(time))
    return df.groupBy(*cols).agg(F.count(F.lit(1)).alias("__cj_n"), low.alias("__cj_low"),
                                 high.alias("__cj_high"))


def _largest(per_key: DataFrame, n_keys: int, over: int = 0) -> KeyProfile:
    """The most and total ``__cj_n`` of ``per_key`` and its :data:`TOP_KEYS` largest keys.

    One global aggregate: ``max_by`` with a count keeps the largest keys holding more
    than ``over`` rows (a key at or under it never enters the ``max_by``'s heap: about
    0.4 s of a 2 s job over a million keys of a row each), and a plain ``max`` gives
    the most rows of the others.
    """
    n = F.col("__cj_n")
    entry = F.struct(*[col(c) for c in per_key.columns[:n_keys]], n,
                     F.col("__cj_low"), F.col("__cj_high"))
    large = n > F.lit(over)
    row = per_key.agg(F.max(n).alias("m"), F.sum(n).alias("n"),
                      F.max_by(entry, F.when(large, n), TOP_KEYS).alias("top"),
                      F.max(F.when(~large, n)).alias("small")).collect()[0]
    top = sorted(row["top"] or [], key=lambda r: -int(r[n_keys]))
    spans = [(int(r[n_keys]), HotSpan(tuple(r[:n_keys]), r[n_keys + 1], r[n_keys + 2]))
             for r in top]
    counts = KeyCounts(int(row["m"] or 0), int(row["n"] or 0))
    return KeyProfile(counts, spans, int(row["small"] or 0))


def key_counts(df: DataFrame, keys: tuple[str, ...]) -> KeyCounts:
    """The most rows any non-NULL key holds in ``df`` and the rows with a non-NULL key.

    One job over the key columns; ``(0, 0)`` for an empty frame. Rows with a NULL key
    are left out: they never match.
    """
    cols = [col(k) for k in keys]
    counts = df.select(*cols).where(not_null(*cols)).groupBy(*cols).count()
    row = counts.agg(F.max("count").alias("m"), F.sum("count").alias("n")).collect()[0]
    return KeyCounts(int(row["m"] or 0), int(row["n"] or 0))


def rows_up_to(frames: list[DataFrame], limit: int) -> int:
    """The rows of ``frames`` in all, counted up to ``limit + 1`` (one job).

    No column is read, and each partition of a frame stops after ``limit + 1`` rows;
    a result over ``limit`` means "more".
    """
    probes = [df.select(F.lit(1).alias("__one")).limit(limit + 1) for df in frames]
    return min(limit + 1, reduce(DataFrame.unionAll, probes).count())


#: The limits below which each ``auto`` takes its plan without statistics (each
#: choosing module keeps its own copy of them, which a caller may change): Spark's
#: size estimates of the inputs in all, and the rows of the frames it cannot size.
SMALL_INPUT_BYTES = 8 * 1024 ** 2
SMALL_INPUT_ROWS = 100_000
#: Spark's size estimate of a plan it cannot size (``spark.sql.defaultSizeInBytes``,
#: the largest long by default): estimates at or above this count as unknown.
UNSIZED_BYTES = 2.0 ** 62


def small_inputs(frames: list[DataFrame], *, max_bytes: float, max_rows: int,
                 eligible: Callable[[], bool] = lambda: True) -> str | None:
    """How small ``frames`` are in all (for a log line), or None when they are not.

    Small: Spark's size estimates of the frames' plans (no job) add up to at most
    ``max_bytes``, and the frames Spark cannot size (made from local Python data or an
    RDD on a classic session, a table without statistics) hold at most ``max_rows``
    rows in all, counted by one job that reads no column (:func:`rows_up_to`).
    ``eligible`` is asked once the sizes pass, before that job; ``max_bytes <= 0``
    turns the test off.
    """
    if max_bytes <= 0:
        return None
    total, unsized = 0.0, []
    for df in frames:
        size = estimated_bytes(df)
        if size is None or size >= UNSIZED_BYTES:
            unsized.append(df)
            continue
        total += size
        if total > max_bytes:
            return None
    if not eligible():
        return None
    found = f"about {total / 1024 ** 2:.1f} MiB by Spark's estimate"
    if not unsized:
        return found
    rows = rows_up_to(unsized, max_rows)
    if rows > max_rows:
        return None
    return f"{rows} row(s)" + (f" and {found}" if len(unsized) < len(frames) else "")


def key_profile(df: DataFrame, keys: tuple[str, ...], time: Column, *,
                over: int = 0) -> KeyProfile:
    """:func:`key_counts` and the largest keys with their time ranges (a :class:`KeyProfile`).

    The same one job as :func:`key_counts` (key and time columns only): the per-key
    counts also keep each key's smallest and greatest ``time``, and the global
    aggregate keeps the :data:`TOP_KEYS` largest keys holding more than ``over`` rows
    (``max_by`` with a count), so finding the keys that hold a share of the rows costs
    no second pass.
    """
    cols = [col(k) for k in keys]
    return _largest(_per_key(df.where(not_null(*cols)), cols, time), len(keys), over)


def hot_bucket_counts(df: DataFrame, keys: tuple[str, ...], hot: Column,
                      bucket: Column) -> tuple[int, int, float]:
    """Rows per ``(hot key, bucket)`` of ``df``'s hot rows, in one job.

    ``hot`` tells the hot keys' rows and ``bucket`` their time bucket (both computed
    from ``df``'s columns); only those rows are grouped, and only key columns and those
    two are read. Returns the largest bucket, the hot rows, and the mean bucket size as
    a hot row sees it (the sum of squared bucket sizes over the hot rows; ``0.0``
    without hot rows).
    """
    cols = [col(k) for k in keys]
    groups = (df.where(not_null(*cols) & hot)
              .groupBy(*cols, bucket.alias("__cj_bucket")).agg(F.count(F.lit(1)).alias("__cj_n")))
    n = F.col("__cj_n")
    row = groups.agg(F.max(n).alias("m"), F.sum(n).alias("r"), F.sum(n * n).alias("s")).collect()[0]
    rows = int(row["r"] or 0)
    return int(row["m"] or 0), rows, float(row["s"] or 0) / rows if rows else 0.0


#: :func:`same_key_share` samples about this many rows of each side.
PAIR_SAMPLE_ROWS = 200_000


def same_key_share(
    left: DataFrame, left_keys: tuple[str, ...], left_rows: int,
    right: DataFrame, right_keys: tuple[str, ...], right_rows: int, *, seed: int = 11,
) -> float:
    """The share of (left row, right row) pairs whose keys are equal, in ``(0, 1]``.

    ``sum_k l_k * r_k / (left_rows * right_rows)`` over the keys ``k`` (``l_k``, ``r_k``:
    rows per key), from seeded samples of about :data:`PAIR_SAMPLE_ROWS` rows of each
    side (all rows of a smaller side; the sampled sum scaled by both fractions is
    unbiased). One job over the key columns; 1.0 without keys. Never below one pair per
    row of the larger side: an estimate that found no common key only means few.
    """
    if not left_keys or left_rows <= 0 or right_rows <= 0:
        return 1.0
    names = [f"__k{i}" for i in range(len(left_keys))]
    lf, rf = min(1.0, PAIR_SAMPLE_ROWS / left_rows), min(1.0, PAIR_SAMPLE_ROWS / right_rows)
    lcounts = _sampled_key_counts(left, left_keys, names, lf, seed, "__l")
    rcounts = _sampled_key_counts(right, right_keys, names, rf, seed + 1, "__r")
    pairs = lcounts.join(rcounts, on=names).agg(
        F.sum(F.col("__l").cast("double") * F.col("__r")).alias("s")).collect()[0]["s"]
    share = float(pairs or 0.0) / (lf * rf) / (float(left_rows) * float(right_rows))
    return min(1.0, max(share, 1.0 / max(left_rows, right_rows)))


def _sampled_key_counts(df: DataFrame, keys: tuple[str, ...], names: list[str],
                        fraction: float, seed: int, count: str) -> DataFrame:
    """Rows per non-NULL key (renamed to ``names``) of a seeded ``fraction`` sample."""
    sampled = df if fraction >= 1.0 else df.sample(fraction=fraction, seed=seed)
    cols = [col(k) for k in keys]
    return (sampled.where(not_null(*cols))
            .select(*[c.alias(name) for c, name in zip(cols, names, strict=True)])
            .groupBy(*names).agg(F.count(F.lit(1)).alias(count)))


#: ``Statistics(sizeInBytes=2.3 MiB, ...)`` in the text of ``explain(mode="cost")``
_SIZE_IN_BYTES = re.compile(r"sizeInBytes=([0-9.]+(?:E[+-]?[0-9]+)?)\s*([KMGTPE]i)?B")
_BINARY_UNITS = {None: 0, "Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
#: the suffixes of Spark's byte sizes in settings (``10MB``, ``10m``, ``10485760b``)
_SIZE_SUFFIXES = {"": 0, "b": 0, "k": 1, "kb": 1, "m": 2, "mb": 2, "g": 3, "gb": 3,
                  "t": 4, "tb": 4, "p": 5, "pb": 5}


def estimated_bytes(df: DataFrame) -> float | None:
    """Spark's own size estimate of ``df``'s optimized plan (no job), None if unreadable.

    The estimate Spark's planner compares with ``spark.sql.autoBroadcastJoinThreshold``
    when it decides to broadcast a join side, read from the text of
    ``explain(mode="cost")`` (printed alike by classic and Spark Connect sessions).
    """
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain(mode="cost")
    text = buffer.getvalue()
    optimized = text.split("== Optimized Logical Plan ==", 1)[-1]
    found = _SIZE_IN_BYTES.search(optimized)
    if found is None:
        return None
    return float(found.group(1)) * 1024.0 ** _BINARY_UNITS[found.group(2)]


def broadcast_threshold(df: DataFrame) -> int | None:
    """The session's ``spark.sql.autoBroadcastJoinThreshold`` in bytes.

    None when broadcasts are off (a negative value) or the value cannot be read; a
    caller then plans as if nothing were broadcast.
    """
    value = df.sparkSession.conf.get("spark.sql.autoBroadcastJoinThreshold", "10MB")
    found = re.fullmatch(r"\s*(-?[0-9]+)\s*([a-zA-Z]*)\s*", str(value or "10MB"))
    if found is None or found.group(2).lower() not in _SIZE_SUFFIXES:
        return None
    number = int(found.group(1))
    if number < 0:
        return None
    return number * 1024 ** _SIZE_SUFFIXES[found.group(2).lower()]
