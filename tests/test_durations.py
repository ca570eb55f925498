"""Durations as users write them: strings, datetime and pandas timedeltas, numpy values.

Spark's timestamps count whole microseconds, so a duration with a part below a
microsecond is refused rather than rounded (rounding would move a bound by one
microsecond: a lower bound of -1.5 microseconds admits -1 but not -2).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import chronojoin as cj
from chronojoin._validate.durations import parse_duration
from chronojoin._validate.timetypes import TimeKind
from chronojoin.errors import DurationError

TS, INT = TimeKind.TIMESTAMP, TimeKind.INTEGER


@pytest.mark.parametrize(("value", "micros"), [
    ("1 hour", 3_600_000_000), ("1h30m", 5_400_000_000), ("0.1 seconds", 100_000),
    ("1.5 ms", 1_500), ("-2 us", -2), (dt.timedelta(seconds=-1), -1_000_000),
    (pd.Timedelta("2ms"), 2_000), (pd.Timedelta("-3us"), -3),
    (np.timedelta64(3, "s"), 3_000_000), (np.timedelta64(-2000, "ns"), -2),
    (np.timedelta64(2, "5s"), 10_000_000), (np.timedelta64(10**6, "W"), 6048 * 10**14),
])
def test_durations_of_timestamp_columns(value, micros):
    assert parse_duration("tolerance", value, TS) == micros


@pytest.mark.parametrize("value", ["-1 hour -30 minutes", "-1h -30m", "-1 hour +30 minutes"])
def test_a_leading_minus_and_signed_parts_are_refused(value):
    """A leading '-' negates the whole duration ("-1h30m" is -90 minutes, as in pandas),
    so a later signed part is ambiguous: "-1 hour -30 minutes" was -30 minutes, where
    Spark's intervals read -90 (and "-1 hour +30 minutes" -30, not -90)."""
    with pytest.raises(DurationError, match=r"^`lower`: .* is ambiguous: a leading '-'"):
        parse_duration("lower", value, TS)
    assert parse_duration("lower", "-1 hour 30 minutes", TS) == -5_400_000_000
    assert parse_duration("lower", "1 hour -30 minutes", TS) == 1_800_000_000


def test_capital_m_is_refused_as_a_month(spark):
    """"1M" was one minute; pandas and ISO 8601 read M as a month, which has no fixed
    length, so a window meant to span a month silently spanned a minute."""
    for value in ("1M", "1 M", "1h30M"):
        with pytest.raises(DurationError, match=r"^`tolerance`: .*'M' is a month"):
            parse_duration("tolerance", value, TS)
    assert parse_duration("tolerance", "1m", TS) == parse_duration("tolerance", "1 Min", TS)
    left = spark.sql("SELECT TIMESTAMP'2024-01-31 00:00:00' AS ts")
    with pytest.raises(DurationError, match=r"^`upper`: '1M': 'M' is a month"):
        cj.band_join(left, left, left_on="ts", right_on="ts", lower=0, upper="1M")


@pytest.mark.parametrize("value", ["1.5 us", "-1.5us", "1.0000005 s", pd.Timedelta("1ns"),
                                   pd.Timedelta("-1500ns"), np.timedelta64(1500, "ns"),
                                   np.timedelta64(5, "ps")])
def test_parts_below_a_microsecond_are_refused(value):
    with pytest.raises(DurationError, match=r"^`lower`: .* has a part below a microsecond"):
        parse_duration("lower", value, TS)


@pytest.mark.parametrize("value", [np.timedelta64(1, "M"), np.timedelta64(2, "Y"),
                                   np.timedelta64(5)])
def test_numpy_months_years_and_unitless_values_are_refused(value):
    with pytest.raises(DurationError, match=r"^`upper`: .* has no fixed length"):
        parse_duration("upper", value, TS)
    with pytest.raises(DurationError, match=r"must be a duration"):
        parse_duration("upper", np.timedelta64("NaT"), TS)


def test_numpy_numbers_for_numeric_columns():
    assert parse_duration("tolerance", np.int64(5), INT) == 5
    assert isinstance(parse_duration("tolerance", np.int32(5), INT), int)
    assert parse_duration("tolerance", np.float32(2.5), TimeKind.FLOAT) == 2.5
    with pytest.raises(DurationError, match=r"is a time span but the time columns are numeric"):
        parse_duration("tolerance", np.timedelta64(3, "s"), INT)
    with pytest.raises(DurationError, match=r"has no unit but the time columns are timestamp"):
        parse_duration("tolerance", np.int64(5), TS)


def test_a_string_that_is_neither_number_nor_duration_is_not_called_a_time_span(spark):
    """A misspelt per-row bound column of a band join on numeric times was reported as
    "'lo_x' is a time span", pointing away from the mistake."""
    with pytest.raises(DurationError, match=r"^`lower`: cannot parse 'lo_x' as a number "
                       r"\(the time columns are numeric: integer\)"):
        parse_duration("lower", "lo_x", INT)
    left = spark.sql("SELECT 1 AS t, -1 AS lo")
    with pytest.raises(DurationError, match=r"^`lower`: cannot parse 'Lo' as a number"):
        cj.band_join(left, left, left_on="t", right_on="t", lower="Lo", upper=2)


def test_integers_past_the_double_range():
    """An int too large for a double is exact for integer columns and an infinity for
    float ones (it was an OverflowError)."""
    assert parse_duration("lower", -(10**400), TimeKind.INTEGER) == -(10**400)
    assert parse_duration("lower", -(10**400), TimeKind.FLOAT) == float("-inf")
    assert parse_duration("upper", 10**400, TimeKind.FLOAT) == float("inf")


def test_a_fraction_that_rounds_to_a_whole_double_keeps_its_side(spark):
    """Integer times: a tolerance of 2.9999999999999999999 (a Decimal or a string) admits
    a distance of 2, not 3; the double it rounds to, 3.0, was taken as the integer 3."""
    for value in (Decimal("2.9999999999999999999"), "2.9999999999999999999"):
        tol = parse_duration("tolerance", value, INT)
        assert 2 < tol < 3
        assert -3 < parse_duration("lower", -Decimal(value), INT) < -2
    assert parse_duration("tolerance", Decimal("3.000"), INT) == 3
    left = spark.createDataFrame([(1, 10)], "k int, t bigint")
    right = spark.createDataFrame([(1, 7, "x"), (1, 8, "y")], "k int, t bigint, v string")
    tol = Decimal("2.9999999999999999999")
    got = cj.asof_join(left, right.filter("v = 'x'"), on="t", tolerance=tol)
    assert [r["v"] for r in got.collect()] == [None]
    band = cj.band_join(left, right, left_on="t", right_on="t", lower=-tol, upper=0)
    assert [r["v"] for r in band.collect()] == ["y"]


def test_decimals_for_numeric_columns(spark):
    """A ``decimal.Decimal`` (the natural duration of decimal times) is exact where whole."""
    assert parse_duration("tolerance", Decimal("5"), INT) == 5
    assert parse_duration("tolerance", Decimal("1E+30"), INT) == 10**30  # exact, not 1e30
    assert parse_duration("lower", Decimal("-0.25"), TimeKind.FLOAT) == -0.25
    with pytest.raises(DurationError, match=r"`tolerance` must be finite; got Decimal\('NaN'\)"):
        parse_duration("tolerance", Decimal("NaN"), INT)
    with pytest.raises(DurationError, match=r"`upper` must be finite"):
        parse_duration("upper", Decimal("1E+999999999"), INT)  # never a billion digits
    with pytest.raises(DurationError, match=r"has no unit but the time columns are timestamp"):
        parse_duration("tolerance", Decimal("5"), TS)
    left = spark.sql("SELECT 1 AS k, 5.000BD AS t UNION ALL SELECT 1, 2.500BD")
    right = spark.sql("SELECT 1 AS k, 4.500BD AS t, 'x' AS v UNION ALL SELECT 1, 1.000BD, 'y'")
    got = cj.asof_join(left, right, on="t", by="k", tolerance=Decimal("0.5"))
    assert sorted((r["t"], r["v"]) for r in got.collect()) == [
        (Decimal("2.500"), None), (Decimal("5.000"), "x")]
    band = cj.band_join(left, right, left_on="t", right_on="t", lower=Decimal("-1.5"),
                        upper=Decimal("-0.5"))
    assert sorted((r["t"], r["v"]) for r in band.collect()) == [
        (Decimal("2.500"), "y"), (Decimal("5.000"), "x")]
