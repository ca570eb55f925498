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

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._session import is_connect
from chronojoin._validate.columns import col, comparable, holds
from chronojoin.loader.layout import HIVE_DEFAULT_PARTITION

TAG = "__cj_tag"
BUCKET = "__cj_bucket"
_IN_BATCH = "__cj_in_batch"
_SEQ = "__cj_seq"
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
    default_partition_values: int
    partition_values: tuple[Any, ...]


def batch_stats(batch: DataFrame, keys: Sequence[str], partition_by: str) -> BatchStats:
    """Row count, content fingerprint, NULL counts and the distinct partition values.

    Also counts the partition values that Spark would store or read back as NULL: the
    empty string and ``__HIVE_DEFAULT_PARTITION__``.

    One hash aggregate grouped by the partition column (fixed-width buffers, so Spark
    runs it as a code-generated hash aggregate); the few per-value rows are summed here.
    """
    everything = _fingerprinted(batch)
    pcol = col(partition_by)
    h64 = F.xxhash64(*everything)
    empty = (F.sum(F.when(pcol == "", 1).otherwise(0))
             if isinstance(batch.schema[partition_by].dataType, T.StringType) else F.lit(0))
    groups = batch.groupBy(pcol.alias("value")).agg(
        F.count(F.lit(1)).alias("rows"),
        # The 64-bit hash summed as two 32-bit halves and the 32-bit hash as is: long
        # sums that cannot overflow below 2^31 rows (decimal sums cost twice as much).
        F.sum(F.shiftrightunsigned(h64, 32)).alias("h1"),
        F.sum(h64.bitwiseAND(F.lit(_MASK))).alias("h1b"),
        F.sum(F.hash(*everything).cast("long")).alias("h2"),
        *[F.sum(F.when(col(k).isNull(), 1).otherwise(0)).alias(f"n{i}")
          for i, k in enumerate(keys)],
        empty.alias("empty"),
    ).collect()

    def total(name: str) -> int:
        return sum(int(g[name] or 0) for g in groups)

    rows = total("rows")
    fingerprint = json.dumps([rows, str(total("h1")), str(total("h1b")), str(total("h2")),
                              batch.schema.simpleString()])
    nulls = {k: total(f"n{i}") for i, k in enumerate(keys)}
    nulls[partition_by] = sum(int(g["rows"]) for g in groups if g["value"] is None)
    return BatchStats(
        rows=rows,
        fingerprint=hashlib.sha256(fingerprint.encode()).hexdigest(),
        nulls=nulls,
        empty_partition_values=total("empty"),
        default_partition_values=sum(int(g["rows"]) for g in groups
                                     if g["value"] == HIVE_DEFAULT_PARTITION),
        partition_values=tuple(sorted(g["value"] for g in groups if g["value"] is not None)),
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


def winner_order(batch: DataFrame, order_by: Sequence[str | Column]) -> list[Column]:
    """Return stored rows first, then ``order_by``, then a hash of the row, then its values.

    The hash is the column :data:`_HASH` that :func:`dedup` adds.
    """
    user = [col(c) if isinstance(c, str) else c for c in order_by]
    tie = [c.asc_nulls_first() for c in _hashable(batch)]
    return [col(TAG), *user, col(_HASH), *tie]


def _hashable(batch: DataFrame) -> list[Column]:
    """Every column of ``batch``, each with a stand-in where Spark cannot hash or order it.

    Maps, variants, geometries and geographies: see :func:`comparable`.
    """
    return [comparable(col(f.name), f.dataType) for f in batch.schema.fields]


def _fingerprinted(batch: DataFrame) -> list[Column]:
    """:func:`_hashable`'s columns, each paired with where it holds NULLs.

    Spark's row hashes skip NULL values, also inside arrays and structs: without the
    flags, ``('a', 'b', NULL)`` and ``(NULL, 'a', 'b')`` would hash alike, and so would
    two batches of such rows (their default batch ids with them).
    """
    stand_ins = _hashable(batch)
    types = batch.select(*stand_ins).schema.fields
    out = []
    for c, f in zip(stand_ins, types, strict=True):
        nested = isinstance(f.dataType, (T.ArrayType, T.StructType))
        out += [_null_marked(c, f.dataType) if nested else c, c.isNull()]
    return out


def _null_marked(column: Column, data_type: T.DataType) -> Column:
    """``column`` as a struct of its NULL flag and value, array elements and fields too."""
    if isinstance(data_type, T.ArrayType):
        element = data_type.elementType
        value = F.transform(column, lambda x: _null_marked(x, element))
    elif isinstance(data_type, T.StructType):
        value = F.struct(*[_null_marked(column[f.name], f.dataType).alias(f"f{i}")
                           for i, f in enumerate(data_type.fields)])
    else:
        value = column
    return F.struct(column.isNull().alias("n"), value.alias("v"))


def observation(df: DataFrame, name: str) -> Observation:
    """Return an ``Observation`` of the kind ``df`` accepts (classic or Spark Connect)."""
    if is_connect(df):
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
    """Rows of ``batch`` to append: first per key, and not already in ``index``.

    Stored keys (from ``index``) and batch rows meet in the task of their bucket. The
    task sorts its rows by key, then by :func:`winner_order` (stored keys first), and
    numbers them in that order; an aggregate per key then takes the values of the row
    with the smallest number (``min_by``, whatever order the aggregate merges in). A
    batch row is appended when it comes first, and the key is already stored when a
    stored key comes first. No window: Spark's window operator costs more than the sort
    on keys with one or two rows each, and an aggregate over the sorted rows needs no
    second sort (Spark replaces the hash aggregate by a sort aggregate).
    """
    columns = batch.columns
    tagged = batch.withColumn(TAG, F.lit(1))
    if index is not None and policy != "allow":
        stored = index.select(*[col(c) for c in [*keys, partition_by]]).withColumn(TAG, F.lit(0))
        tagged = tagged.unionByName(stored, allowMissingColumns=True)
    spread = tagged.withColumn(BUCKET, bucket).repartition(n, col(BUCKET))
    obs = observation(batch, f"chronojoin_load_{uuid.uuid4().hex}")
    if policy == "allow":
        counted = spread.observe(obs, F.count(F.lit(1)).alias("appended"),
                                 F.lit(0).alias("existing"))
        return Dedup(rows=counted.select(*[col(c) for c in columns]), observation=obs)
    group = [col(c) for c in [*keys, partition_by]] + [col(BUCKET)]
    rest = [c for c in columns if c not in {*keys, partition_by}]
    # The bucket column in the grouping lets the sort and the aggregate reuse the
    # exchange above (one value per task); keys lead the sort so that its prefix
    # (the first key) tells rows apart.
    ordered = (spread.withColumn(_HASH, F.xxhash64(*_hashable(batch)))
               .sortWithinPartitions(*group, *winner_order(batch, order_by))
               .withColumn(_SEQ, F.monotonically_increasing_id()))
    seq = col(_SEQ)
    # Grouping turns -0.0 into 0.0: float keys are taken from the winning row itself.
    floats = {k: f"__cj_key{i}" for i, k in enumerate(keys)
              if holds(batch.schema[k].dataType, (T.FloatType, T.DoubleType))}
    firsts = ordered.groupBy(*group).agg(
        F.min_by(col(TAG), seq).alias(_FIRST),
        F.sum(col(TAG)).alias(_IN_BATCH),
        *[F.min_by(col(c), seq).alias(c) for c in rest],
        *[F.min_by(col(k), seq).alias(raw) for k, raw in floats.items()],
    )
    new = col(_FIRST) == 1
    existing = (col(_FIRST) == 0) & (col(_IN_BATCH) > 0)
    observed = firsts.observe(
        obs,
        F.sum(F.when(new, 1).otherwise(0)).alias("appended"),
        F.sum(F.when(existing, 1).otherwise(0)).alias("existing"),
    )
    out = [col(floats[c]).alias(c) if c in floats else col(c) for c in columns]
    return Dedup(rows=observed.filter(new).select(*out), observation=obs)
