"""Times mean the same in every session time zone: timestamp_ntz wall times in a
daylight saving gap keep their order and their distances."""

from __future__ import annotations

import pytest

import chronojoin as cj
from tests.fuzz import session_settings

#: 02:00-02:59 on 2024-03-10 does not exist in Los Angeles (the clocks spring forward).
_DAY = "2024-03-10"


def _ntz(spark, rows: str, names: str):
    return spark.sql(f"SELECT * FROM VALUES {rows} AS v({names})")


def _at(clock: str) -> str:
    return f"TIMESTAMP_NTZ'{_DAY} {clock}'"


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_timestamp_ntz_in_a_daylight_saving_gap(spark, zone):
    points = _ntz(spark, f"(1, {_at('02:30')}), (2, {_at('03:30')})", "id, t")
    rows = _ntz(spark, f"(10, {_at('02:15')}, {_at('02:45')}, 1), "
                       f"(20, {_at('03:10')}, {_at('03:40')}, 10)", "rid, s, e, v")
    with session_settings(spark, {"spark.sql.session.timeZone": zone}):
        asof = cj.asof_join(points, rows.selectExpr("rid", "s AS t"), on="t")
        band = cj.band_join(points, rows, left_on="t", right_on="s", lower="-20 minutes",
                            upper=0)
        joined = cj.interval_join(points, rows, left_start="t", right_start="s", right_end="e")
        summed = {strategy: cj.interval_aggregate(points, rows, time="t", start="s", end="e",
                                                  aggs={"v": ("sum", "v")}, strategy=strategy)
                  for strategy in ("sweep", "join")}
        def rows(df, *names):
            return sorted(tuple(r) for r in df.select(*names).collect())

        got = {"asof": rows(asof, "id", "rid"), "band": rows(band, "id", "rid"),
               "interval_join": rows(joined, "id", "rid"),
               **{f"interval_aggregate {s}": rows(df, "id", "v") for s, df in summed.items()}}
    pairs = [(1, 10), (2, 20)]
    assert got == {"asof": pairs, "band": pairs, "interval_join": pairs,
                   "interval_aggregate sweep": [(1, 1), (2, 10)],
                   "interval_aggregate join": [(1, 1), (2, 10)]}
