"""Seeded random as-of test data with NULLs, ties, duplicates and a hot key."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np

EPOCH = dt.datetime(2024, 1, 1)


def random_rows(seed: int, n_left: int = 120, n_right: int = 160, n_keys: int = 5,
                t_max: int = 60, null_share: float = 0.05, hot_key: bool = True):
    """Left rows (lid, k, t, label) and right rows (rid, k, t, v, tb) as dicts."""
    rng = np.random.default_rng(seed)

    def key():
        if rng.random() < null_share:
            return None
        if hot_key and rng.random() < 0.5:
            return "k0"
        return f"k{int(rng.integers(0, n_keys))}"

    def time():
        return None if rng.random() < null_share else int(rng.integers(0, t_max))

    left = [{"lid": i, "k": key(), "t": time(), "label": int(rng.integers(0, 3))}
            for i in range(n_left)]
    right = [{"rid": i, "k": key(), "t": time(), "v": float(rng.normal()),
              "tb": int(rng.integers(0, 1000))} for i in range(n_right)]
    return left, right


def one_left_row_per_key(left: list[dict], keep: tuple = ()) -> list[dict]:
    """The first left row of each key; every row of the keys in ``keep`` and NULL keys."""
    seen: set = set()
    return [r for r in left if r["k"] in (*keep, None)
            or (r["k"] not in seen and not seen.add(r["k"]))]


def as_kind(value, kind: str):
    """Map an integer test time to a value of a Spark time type."""
    if value is None:
        return None
    if kind == "int":
        return int(value)
    if kind == "double":
        return float(value) / 4
    if kind == "decimal":
        return decimal.Decimal(int(value)) / 10
    if kind in ("timestamp", "timestamp_ntz"):
        return EPOCH + dt.timedelta(seconds=int(value))
    if kind == "date":
        return (EPOCH + dt.timedelta(days=int(value))).date()
    raise ValueError(kind)


def numeric(value, kind: str):
    """The number the oracle compares for a test time of ``kind``."""
    if value is None:
        return None
    if kind == "decimal":  # tenths, which doubles hold only approximately
        return decimal.Decimal(int(value)) / 10
    return float(value) / 4 if kind == "double" else int(value)


def ordinal(value: float, kind: str) -> float:
    """The time ordinal chronojoin compares for test time ``value`` (UTC sessions).

    Microseconds for timestamps, days for dates, the number itself otherwise; what a
    layout's time ``span`` is given in.
    """
    if kind in ("timestamp", "timestamp_ntz"):
        return (EPOCH.replace(tzinfo=dt.timezone.utc).timestamp() + value) * 1_000_000
    if kind == "date":
        return float((EPOCH.date() - dt.date(1970, 1, 1)).days + value)
    return float(numeric(value, kind))  # type: ignore[arg-type]


#: A tolerance past the long range in every time type's units (as-of joins saturate
#: the bounds it gives); no test time is that far from another.
HUGE_TOLERANCE = 10**30


def tolerance_for(tol: int | None, kind: str):
    """The tolerance argument, in the duration form each time type takes."""
    if tol is None:
        return None
    if kind == "int":
        return tol
    if kind == "double":
        return tol / 4
    if kind == "decimal":
        return tol / 10  # a float, 0.3 say, counts as the decimal it is written as
    if kind in ("timestamp", "timestamp_ntz"):
        # the largest timedelta, 8.64e19 microseconds, stands in for a huge tolerance
        return dt.timedelta.max if tol == HUGE_TOLERANCE else dt.timedelta(seconds=tol)
    return f"{tol} days"


SPARK_TYPE = {"int": "int", "double": "double", "decimal": "decimal(7,1)",
              "timestamp": "timestamp", "timestamp_ntz": "timestamp_ntz", "date": "date"}
