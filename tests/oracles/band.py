"""DuckDB references for band and interval joins: multisets of ``(left id, right id)``.

Each side carries an ``id`` column; a left row without a match (``how="left"``) counts
as ``(id, None)``. The join condition is plain SQL, written independently of the
library's ordinal arithmetic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import duckdb
import numpy as np
import pandas as pd

OPS = {"both": ("<=", "<="), "left": ("<=", "<"), "right": ("<", "<="), "neither": ("<", "<")}


def pairs(
    left: pd.DataFrame,
    right: pd.DataFrame,
    condition: str,
    *,
    keys: Sequence[tuple[str, str]] = (),
    how: str = "inner",
    temporal: Sequence[str] = (),
) -> Counter:
    """``SELECT l.id, r.id FROM l [LEFT] JOIN r ON keys AND condition`` as a Counter.

    ``temporal`` lists columns (of either side) holding integer microseconds that are
    turned into DuckDB timestamps before the join.
    """
    con = duckdb.connect()
    con.register("lp", left)
    con.register("rp", right)
    for name, frame in (("l", left), ("r", right)):
        cols = [
            f"make_timestamp({c}) AS {c}" if c in temporal else c for c in frame.columns
        ]
        con.execute(f"CREATE VIEW {name} AS SELECT {', '.join(cols)} FROM {name}p")
    on = " AND ".join([f"l.{a} = r.{b}" for a, b in keys] + [f"({condition})"])
    join = "LEFT JOIN" if how == "left" else "JOIN"
    rows = con.execute(f"SELECT l.id, r.id FROM l {join} r ON {on}").fetchall()
    return Counter((a, None if b is None else b) for a, b in rows)


def band_condition(lower_sql: str, r_time: str, upper_sql: str, closed: str) -> str:
    """``lower <= r <= upper`` with ``<`` on open ends."""
    lo, hi = OPS[closed]
    return f"{lower_sql} {lo} {r_time} AND {r_time} {hi} {upper_sql}"


def point_in_condition(p: str, start: str, end: str, closed: str) -> str:
    """``start <= p <= end`` with ``<`` on open ends."""
    lo, hi = OPS[closed]
    return f"{start} {lo} {p} AND {p} {hi} {end}"


def overlap_condition(s1: str, e1: str, s2: str, e2: str, closed: str) -> str:
    """API.md section 4: valid intervals and greatest(starts) <= / < least(ends)."""
    op = "<=" if closed == "both" else "<"
    return (
        f"{s1} <= {e1} AND {s2} <= {e2} AND "
        f"greatest({s1}, {s2}) {op} least({e1}, {e2})"
    )


def spark_pairs(df, left_id: str = "id", right_id: str = "id_right") -> Counter:  # type: ignore[no-untyped-def]
    """The ``(left id, right id)`` multiset of a Spark result."""
    rows = df.select(left_id, right_id).collect()
    return Counter((r[0], r[1]) for r in rows)


def with_nulls(values: np.ndarray, rng: np.random.Generator, fraction: float) -> pd.Series:
    """A nullable integer series with about ``fraction`` NULLs."""
    s = pd.Series(values, dtype="Int64")
    s[rng.random(len(s)) < fraction] = pd.NA
    return s


def spark_batch(frames: dict, left_id: str = "id", right_id: str = "id_right") -> dict:  # type: ignore[type-arg]
    """``{tag: Counter}`` of several Spark results, computed by one job (a union)."""
    from functools import reduce

    from pyspark.sql import functions as F

    tagged = [
        df.select(
            F.lit(str(tag)).alias("tag"), F.col(left_id).alias("a"), F.col(right_id).alias("b")
        )
        for tag, df in frames.items()
    ]
    rows = reduce(lambda a, b: a.unionByName(b), tagged).collect()
    out: dict = {tag: Counter() for tag in frames}
    index = {str(tag): tag for tag in frames}
    for r in rows:
        out[index[r["tag"]]][(r["a"], r["b"])] += 1
    return out
