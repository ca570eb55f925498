"""Independent reference for ``interval_aggregate``: DuckDB ``LEFT JOIN ... GROUP BY``.

Inputs are lists of tuples with their column names and arrow types, loaded into DuckDB
as arrow tables, so NULLs and types are exactly those given to Spark. Results are
compared as multisets of normalised tuples (lists sorted, floats rounded).
"""

from __future__ import annotations

import math
import random
from collections import Counter

import duckdb
import pyarrow as pa

_SQL = {
    "sum": "SUM(i.{c})",
    "mean": "AVG(i.{c})",
    "min": "MIN(i.{c})",
    "max": "MAX(i.{c})",
    "count": "COUNT(i.{c})",
    "collect_list": "COALESCE(LIST(i.{c}) FILTER (WHERE i.{c} IS NOT NULL), [])",
    "collect_set": "COALESCE(LIST(DISTINCT i.{c}) FILTER (WHERE i.{c} IS NOT NULL), [])",
}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duckdb_interval_aggregate(
    points: pa.Table,
    intervals: pa.Table,
    *,
    left_by: list[str],
    right_by: list[str],
    time: str,
    start: str,
    end: str,
    aggs: dict[str, tuple[str, str | None]],
    closed: str = "both",
    how: str = "left",
) -> list[tuple]:
    """Rows of the reference answer: point columns, then the aggregates."""
    con = duckdb.connect()
    con.register("pts_in", points)
    con.register("ivs_in", intervals)
    low = "<=" if closed in ("both", "left") else "<"
    high = "<=" if closed in ("both", "right") else "<"
    cond = [f"p.{_q(lk)} = i.{_q(rk)}" for lk, rk in zip(left_by, right_by, strict=True)]
    cond += [f"i.{_q(start)} {low} p.{_q(time)}", f"p.{_q(time)} {high} i.{_q(end)}"]
    exprs = []
    for name, (fn, c) in aggs.items():
        expr = _SQL[fn].format(c=_q(c if c is not None else "__m"))
        exprs.append(f"{expr} AS {_q(name)}")
    pcols = ", ".join(f"p.{_q(c)}" for c in points.column_names)
    join = "LEFT JOIN" if how == "left" else "JOIN"
    sql = f"""
        WITH p AS (SELECT *, row_number() OVER () AS __rid FROM pts_in),
             i AS (SELECT *, 1 AS __m FROM ivs_in)
        SELECT {pcols}, {", ".join(exprs)}
        FROM p {join} i ON {" AND ".join(cond)}
        GROUP BY p.__rid, {pcols}
    """
    return [tuple(r) for r in con.execute(sql).fetchall()]


def _norm(v):
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 6)
    if isinstance(v, (list, tuple)):
        return tuple(sorted((_norm(x) for x in v), key=repr))
    if hasattr(v, "as_tuple") and not isinstance(v, tuple):  # Decimal
        return round(float(v), 6)
    return v


def normalise(rows) -> Counter:
    """A multiset of rows with lists sorted and floats rounded."""
    return Counter(tuple(_norm(v) for v in row) for row in rows)


def assert_same(actual_rows, expected_rows) -> None:
    """Assert two row collections are equal as multisets, showing the difference."""
    a, e = normalise(actual_rows), normalise(expected_rows)
    if a != e:
        missing = list((e - a).elements())[:10]
        extra = list((a - e).elements())[:10]
        msg = (f"{sum(a.values())} rows vs {sum(e.values())} expected; "
               f"missing {missing}; unexpected {extra}")
        raise AssertionError(msg)


POINT_SCHEMA = [("id", pa.int64()), ("time", pa.int64()), ("label", pa.string())]
INTERVAL_SCHEMA = [
    ("id", pa.int64()), ("start", pa.int64()), ("end", pa.int64()),
    ("v", pa.int64()), ("w", pa.float64()), ("s", pa.string()),
]


def random_data(seed: int, n_points: int = 300, n_intervals: int = 120, keys: int = 6):
    """Seeded random rows with NULL keys/times/values, ties, duplicates and a hot key.

    Key 0 holds about half of the rows; times are small integers so points often sit
    exactly on bounds; some intervals are inverted, empty (start == end) or have NULL
    bounds; some point rows are exact duplicates.
    """
    rnd = random.Random(seed)

    def key():
        r = rnd.random()
        if r < 0.05:
            return None
        return 0 if r < 0.5 else rnd.randrange(1, keys)

    def maybe(value, p=0.08):
        return None if rnd.random() < p else value

    points = [(key(), maybe(rnd.randrange(0, 100)), rnd.choice(["a", "b", None]))
              for _ in range(n_points)]
    points += rnd.sample(points, 10)  # exact duplicates
    intervals = []
    for _ in range(n_intervals):
        s = rnd.randrange(-5, 100)
        e = s + rnd.choice([rnd.randrange(0, 25), 0, -rnd.randrange(1, 5)])
        intervals.append((
            key(), maybe(s, 0.05), maybe(e, 0.05), maybe(rnd.randrange(-10, 50), 0.1),
            maybe(rnd.randrange(-40, 40) / 4, 0.1), maybe(rnd.choice("xyzw"), 0.1),
        ))
    return points, intervals


def arrow(rows: list[tuple], schema: list[tuple[str, pa.DataType]]) -> pa.Table:
    """An arrow table of ``rows`` with ``schema``."""
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.table({n: pa.array(list(c), type=t) for (n, t), c in zip(schema, cols, strict=True)})


def spark_schema(schema: list[tuple[str, pa.DataType]]) -> str:
    """A Spark DDL schema string for ``schema``."""
    names = {pa.int64(): "long", pa.float64(): "double", pa.string(): "string"}
    return ", ".join(f"`{n}` {names[t]}" for n, t in schema)
