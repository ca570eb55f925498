"""Windows over time buckets, shared by the plans that carry values between buckets."""

from __future__ import annotations

from pyspark.sql import Window, WindowSpec
from pyspark.sql import functions as F


def over_buckets(keys: list[str], bucket: str) -> WindowSpec:
    """A window over each key's bucket rows, ordered by ``bucket``.

    Without keys every bucket row (one per bucket, a few hundred) meets in one
    partition, which is what the carry needs. That partition is named ``bucket * 0``
    rather than left empty: the same single partition, without Spark's warning of a
    global sort of the data (a literal would be optimised away, and the warning with
    it).
    """
    part = [F.col(k) for k in keys] or [F.col(bucket) * 0]
    return Window.partitionBy(*part).orderBy(bucket)
