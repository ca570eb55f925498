"""Seeded random inputs shared by the band and interval join tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import functions as F

from tests.oracles.band import with_nulls


def to_spark(spark, pdf: pd.DataFrame, schema: str, temporal=(), local=True):  # type: ignore[no-untyped-def]
    """Spark DataFrame of ``pdf`` (NULLs kept); ``temporal`` columns: micros -> timestamp.

    ``local=True`` gives a local relation (small: Spark broadcasts it, fast tests);
    ``local=False`` an RDD scan without size statistics (Spark plans sort-merge joins).
    """
    if local:
        df = spark.createDataFrame(pdf, schema)
        for c in temporal:
            df = df.withColumn(c, F.timestamp_micros(F.col(c)))
        return df
    rows = [
        tuple(None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in row)
        for row in pdf.itertuples(index=False)
    ]
    df = spark.createDataFrame(rows, schema)
    for c in temporal:
        df = df.withColumn(c, F.timestamp_micros(F.col(c)))
    return df


def points(seed: int, n: int, *, span: int = 1000, keys: int = 3, nulls: float = 0.05):
    """``id, k, t``: integer times in ``[0, span)``, key 0 on about half of the rows."""
    rng = np.random.default_rng(seed)
    k = np.where(rng.random(n) < 0.5, 0, rng.integers(1, max(keys, 2), n))
    return pd.DataFrame({
        "id": np.arange(n),
        "k": with_nulls(k, rng, nulls),
        "t": with_nulls(rng.integers(0, span, n), rng, nulls),
    })


def intervals(seed: int, n: int, *, span: int = 1000, length: int = 30, tail: float = 0.0,
              keys: int = 3, nulls: float = 0.05):
    """``id, k, s, e``: intervals of typical ``length``; ``tail`` of them very long.

    A few are inverted (``s > e``) and a few have zero length.
    """
    rng = np.random.default_rng(seed)
    s = rng.integers(0, span, n)
    lengths = rng.integers(0, length + 1, n)
    long_rows = rng.random(n) < tail
    lengths[long_rows] = rng.integers(span // 2, span * 20, int(long_rows.sum()))
    inverted = rng.random(n) < 0.03
    e = np.where(inverted, s - 1 - lengths, s + lengths)
    k = np.where(rng.random(n) < 0.5, 0, rng.integers(1, max(keys, 2), n))
    return pd.DataFrame({
        "id": np.arange(n),
        "k": with_nulls(k, rng, nulls),
        "s": with_nulls(s, rng, nulls),
        "e": with_nulls(e, rng, nulls),
    })


def sql_reference(left, right, condition: str, *, how: str = "inner"):  # type: ignore[no-untyped-def]
    """The plain Spark SQL join ``left l [LEFT] JOIN right r ON condition``: ``id, id_right``.

    A nested-loop join on small inputs, with Spark's own comparisons of doubles (inf,
    NaN) and its own NULL semantics: the reference that the binned plans must match.
    """
    joined = left.alias("l").join(right.alias("r"), on=F.expr(condition), how=how)
    return joined.select(F.col("l.id").alias("id"), F.col("r.id").alias("id_right"))
