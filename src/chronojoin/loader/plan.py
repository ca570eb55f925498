"""The Spark plans of one load: batch statistics, the exact-value partitioner, dedup.

The work is split as in the seed write-up: one Spark partition per distinct partition
value of the batch (their number is read from the batch statistics). Spark's hash
partitioning sends a row to ``pmod(murmur3(x, 42), n)``; :func:`exact_buckets` picks
for each of the ``n`` values a small integer whose hash lands in its own slot, so
``repartition(n, bucket)`` puts exactly one partition value in each Spark partition
(no sampling, unlike range partitioning). Each task then deduplicates one partition
value against that value's index and writes one file per partition directory. When
the value count would leave cores idle in the last wave (5 values on 2 cores), each
value is split into :func:`splits_for` buckets by a hash of the key, so the rows of a
key still meet in one task.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Observation, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.columns import col

TAG = "__cj_tag"
BUCKET = "__cj_bucket"
_RN = "__cj_rn"
_FIRST = "__cj_first"
_HASH = "__cj_hash"
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class BatchStats:
    """Small statistics of a batch, from one aggregation job."""

    rows: int
    fingerprint: str
    nulls: dict[str, int]
    empty_partition_values: int
    partition_values: tuple[Any, ...]


def batch_stats(batch: DataFrame, keys: Sequence[str], partition_by: str) -> BatchStats:
    """Row count, content fingerprint, NULL counts and the distinct partition values."""
    everything = [col(c) for c in batch.columns]
    checked = [*keys, partition_by]
    h64 = F.xxhash64(*everything)
    aggs = [
        F.count(F.lit(1)).alias("rows"),
        # The 64-bit hash summed as two 32-bit halves and the 32-bit hash as is: long
        # sums that cannot overflow below 2^31 rows (decimal sums cost twice as much).
        F.sum(F.shiftrightunsigned(h64, 32)).alias("h1"),
        F.sum(h64.bitwiseAND(F.lit(_MASK))).alias("h1b"),
        F.sum(F.hash(*everything).cast("long")).alias("h2"),
        *[F.sum(F.when(col(c).isNull(), 1).otherwise(0)).alias(f"n{i}")
          for i, c in enumerate(checked)],
        (F.sum(F.when(col(partition_by) == "", 1).otherwise(0))
         if isinstance(batch.schema[partition_by].dataType, T.StringType)
         else F.lit(0)).alias("empty"),
        F.array_sort(F.collect_set(col(partition_by))).alias("values"),
    ]
    row = batch.agg(*aggs).collect()[0]
    fingerprint = json.dumps([int(row["rows"]), str(row["h1"]), str(row["h1b"]), str(row["h2"]),
                              batch.schema.simpleString()])
    return BatchStats(
        rows=int(row["rows"]),
        fingerprint=hashlib.sha256(fingerprint.encode()).hexdigest(),
        nulls={c: int(row[f"n{i}"] or 0) for i, c in enumerate(checked)},
        empty_partition_values=int(row["empty"] or 0),
        partition_values=tuple(row["values"] or ()),
    )


def batch_id(fingerprint: str, settings: dict[str, Any]) -> str:
    """Return the batch id: a hash of the content and of what the loader does with it."""
    text = json.dumps({"content": fingerprint, **settings}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def murmur3_int(value: int, seed: int = 42) -> int:
    """Spark's ``hash(int)`` (Murmur3 x86 32-bit of one int), as a signed int."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = _rotl(k1, 15) * 0x1B873593 & _MASK
    h1 = _rotl((seed & _MASK) ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def exact_buckets(n: int) -> list[int]:
    """``n`` integers whose Spark hash partitions are exactly ``0 .. n-1``, in order."""
    slots: list[int | None] = [None] * n
    free, k = n, 0
    while free:
        slot = murmur3_int(k) % n
        if slots[slot] is None:
            slots[slot] = k
            free -= 1
        k += 1
    return [s for s in slots if s is not None]


def bucket_column(partition_by: str, dtype: T.DataType, values: Sequence[Any],
                  keys: Sequence[str] = (), splits: int = 1) -> Column:
    """Return an int column mapping each partition value to its own bucket(s).

    With ``splits > 1`` each value gets ``splits`` buckets and a row goes to the one
    chosen by a hash of its ``keys`` (so every row of a key, stored or new, meets in one
    task): ``len(values) * splits`` Spark partitions, one value each.
    """
    buckets = exact_buckets(len(values) * splits)
    if len(values) == 1:
        slot: Column = F.lit(0)
    else:
        pairs = []
        for i, value in enumerate(values):
            pairs += [F.lit(value).cast(dtype), F.lit(i * splits)]
        slot = F.element_at(F.create_map(*pairs), col(partition_by).cast(dtype))
    if splits > 1:
        slot = slot + F.pmod(F.xxhash64(*[col(k) for k in keys]), F.lit(splits))
    table = F.array(*[F.lit(b).cast("int") for b in buckets])
    return F.element_at(table, (slot + F.lit(1)).cast("int"))


def splits_for(values: int, cores: int, most: int = 8) -> int:
    """Buckets per partition value so that the tasks fill every core in whole waves.

    ``values`` tasks on ``cores`` cores leave cores idle in the last wave (5 values on 2
    cores: 3 waves for 2.5 waves of work); ``cores / gcd(values, cores)`` buckets per
    value make the task count a multiple of the cores. At most ``most`` (each bucket
    writes its own file per partition directory).
    """
    if values < 1 or cores <= 1:
        return 1
    return max(1, min(most, cores // math.gcd(values, cores)))


def _orderable(dtype: T.DataType) -> bool:
    if isinstance(dtype, T.MapType):
        return False
    if isinstance(dtype, T.ArrayType):
        return _orderable(dtype.elementType)
    if isinstance(dtype, T.StructType):
        return all(_orderable(f.dataType) for f in dtype.fields)
    return True


def winner_order(batch: DataFrame, order_by: Sequence[str | Column]) -> list[Column]:
    """Return stored rows first, then ``order_by``, then a hash of the row, then its values.

    The hash is the column :data:`_HASH` that :func:`dedup` adds (a column, not an
    expression, so that both window functions share one sort).
    """
    user = [col(c) if isinstance(c, str) else c for c in order_by]
    tie = [col(f.name).asc_nulls_first() for f in batch.schema.fields if _orderable(f.dataType)]
    return [col(TAG), *user, col(_HASH), *tie]


def observation(df: DataFrame, name: str) -> Observation:
    """Return an ``Observation`` of the kind ``df`` accepts (classic or Spark Connect)."""
    if type(df).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect.observation import Observation as ConnectObservation

        return ConnectObservation(name)  # type: ignore[return-value]
    return Observation(name)


@dataclass(frozen=True)
class Dedup:
    """The rows to append and the observation that counts what happened."""

    rows: DataFrame
    observation: Observation


def dedup(batch: DataFrame, index: DataFrame | None, *, keys: Sequence[str],
          partition_by: str, order_by: Sequence[str | Column], policy: str,
          bucket: Column, n: int) -> Dedup:
    """Rows of ``batch`` to append: first per key, and not already in ``index``."""
    columns = batch.columns
    tagged = batch.withColumn(TAG, F.lit(1))
    if index is not None and policy != "allow":
        stored = index.select(*[col(c) for c in [*keys, partition_by]]).withColumn(TAG, F.lit(0))
        tagged = tagged.unionByName(stored, allowMissingColumns=True)
    spread = tagged.withColumn(BUCKET, bucket).repartition(n, col(BUCKET))
    obs = observation(batch, f"chronojoin_load_{uuid.uuid4().hex}")
    is_batch = col(TAG) == 1
    if policy == "allow":
        marked = spread.withColumn(_RN, F.lit(1)).withColumn(_FIRST, F.lit(1))
    else:
        # Keys first: the sort's prefix is then the first key (the bucket and the
        # partition value are constant within a task); the bucket column lets the
        # window reuse the exchange above. Both functions share one frame, hence one
        # Window operator and one sort.
        w = Window.partitionBy(*[col(c) for c in [*keys, partition_by]], col(BUCKET))
        w = w.orderBy(*winner_order(batch, order_by)).rowsBetween(
            Window.unboundedPreceding, Window.currentRow)
        hashed = spread.withColumn(_HASH, F.xxhash64(*[col(c) for c in columns]))
        marked = hashed.select("*", F.row_number().over(w).alias(_RN),
                               F.first(col(TAG)).over(w).alias(_FIRST))
    new = is_batch & (col(_RN) == 1)
    existing = is_batch & (col(_RN) == 2) & (col(_FIRST) == 0)
    observed = marked.observe(
        obs,
        F.sum(F.when(is_batch, 1).otherwise(0)).alias("rows_in"),
        F.sum(F.when(new, 1).otherwise(0)).alias("appended"),
        F.sum(F.when(existing, 1).otherwise(0)).alias("existing"),
    )
    return Dedup(rows=observed.filter(new).select(*[col(c) for c in columns]), observation=obs)
