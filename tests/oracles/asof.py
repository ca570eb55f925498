"""Independent references for the as-of join: a brute-force scan, DuckDB and pandas."""

from __future__ import annotations

import math

import pandas as pd


def _null(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT


def brute_force(
    left: list[dict],
    right: list[dict],
    *,
    left_on: str,
    right_on: str,
    left_by: list[str],
    right_by: list[str],
    direction: str = "backward",
    allow_exact_matches: bool = True,
    tolerance=None,
    tiebreak: list[str] | None = None,
    rid: str = "rid",
) -> list[set]:
    """For each left row (in order) the set of right ``rid`` values that may be returned.

    An empty set means no match. Several values mean a tie the contract leaves open.
    Times must be numbers (the caller maps other types to numbers first).
    """
    out = []
    for lrow in left:
        lt = lrow[left_on]
        lkey = [lrow[k] for k in left_by]
        if _null(lt) or any(_null(v) for v in lkey):
            out.append(set())
            continue
        cands = []
        for rrow in right:
            rt = rrow[right_on]
            rkey = [rrow[k] for k in right_by]
            if _null(rt) or any(_null(v) for v in rkey) or rkey != lkey:
                continue
            d = lt - rt
            if direction == "backward" and not (d > 0 or (d == 0 and allow_exact_matches)):
                continue
            if direction == "forward" and not (d < 0 or (d == 0 and allow_exact_matches)):
                continue
            if direction == "nearest" and d == 0 and not allow_exact_matches:
                continue
            if tolerance is not None and abs(d) > tolerance:
                continue
            cands.append(rrow)
        if not cands:
            out.append(set())
            continue

        def rank(r, lt=lt):
            d = lt - r[right_on]
            if direction == "backward":
                return (d,)
            if direction == "forward":
                return (-d,)
            return (abs(d), 0 if d >= 0 else 1)

        best = min(rank(r) for r in cands)
        winners = [r for r in cands if rank(r) == best]
        if tiebreak:
            top = max(tuple(r[c] for c in tiebreak) for r in winners)
            winners = [r for r in winners if tuple(r[c] for c in tiebreak) == top]
        out.append({r[rid] for r in winners})
    return out


def duckdb_asof(left: pd.DataFrame, right: pd.DataFrame, *, on: str, by: list[str],
                direction: str, allow_exact_matches: bool, how: str = "left") -> pd.DataFrame:
    """DuckDB's ``ASOF JOIN`` (backward/forward, no tolerance): columns lid, rid."""
    import duckdb

    op = {("backward", True): ">=", ("backward", False): ">",
          ("forward", True): "<=", ("forward", False): "<"}[(direction, allow_exact_matches)]
    cond = " AND ".join([f"l.{k} = r.{k}" for k in by] + [f"l.{on} {op} r.{on}"])
    join = "ASOF LEFT JOIN" if how == "left" else "ASOF JOIN"
    con = duckdb.connect()
    con.register("l", left)
    con.register("r", right)
    return con.execute(f"SELECT l.lid, r.rid FROM l {join} r ON {cond}").df()
