"""Counter-based random numbers as Spark column expressions.

Every draw is a hash of ``(seed, stream, id, index...)``: a row's values depend only on
its own identity, never on partitioning, the master or the number of rows generated.
The same seed therefore gives the same data on ``local[1]``, ``local[2]`` or a cluster,
and the dataset of 10,000 ids holds the first 10,000 ids of the one of 100,000.
"""

from __future__ import annotations

import math

from pyspark.sql import Column
from pyspark.sql import functions as F

_TWO_POW_53 = float(2**53)


def uniform(seed: int, stream: str, *keys: Column) -> Column:
    """Uniform double in ``[0, 1)`` keyed by ``seed``, a stream name and ``keys``."""
    h = F.xxhash64(F.lit(int(seed)), F.lit(stream), *keys)
    return F.shiftrightunsigned(h, 11).cast("double") / F.lit(_TWO_POW_53)


def normal(seed: int, stream: str, *keys: Column) -> Column:
    """Draw a standard normal (Box-Muller on two independent uniforms)."""
    u1 = F.lit(1.0) - uniform(seed, stream + ".u1", *keys)  # (0, 1]
    u2 = uniform(seed, stream + ".u2", *keys)
    return F.sqrt(F.lit(-2.0) * F.log(u1)) * F.cos(F.lit(2.0 * math.pi) * u2)


def integer_below(seed: int, stream: str, bound: int, *keys: Column) -> Column:
    """Uniform long in ``[0, bound)``."""
    return F.floor(uniform(seed, stream, *keys) * F.lit(float(bound))).cast("long")
