"""Every bad argument is rejected before any Spark job, naming the argument."""

from __future__ import annotations

import pytest

import chronojoin as cj


@pytest.fixture(scope="module")
def frames(spark):
    left = spark.sql(
        "SELECT 1 AS id, TIMESTAMP'2024-01-01 00:00:00' AS ts, 1 AS n, 'x' AS s, "
        "TIMESTAMP_NTZ'2024-01-01 00:00:00' AS ntz"
    )
    right = spark.sql("SELECT 2 AS id, TIMESTAMP'2024-01-01 00:00:00' AS ts, 1 AS n")
    return left, right


def _call(frames, **kw):
    left, right = frames
    args = {"left_on": "ts", "right_on": "ts", "lower": "-1 hour", "upper": 0} | kw
    return cj.band_join(left, right, **args)


@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"left_on": "nope"}, ValueError, "`left_on`: column 'nope' not found in left"),
    ({"right_on": "nope"}, ValueError, "`right_on`: column 'nope' not found in right"),
    ({"right_on": "n"}, TypeError, "incompatible time columns"),
    ({"left_on": "s"}, TypeError, "`left_on`: column 's' of left has type string"),
    ({"lower": "an hour"}, ValueError, "`lower`: cannot parse duration"),
    ({"lower": "nn"}, ValueError, r"`lower`: cannot parse duration 'nn'.*; nor is it a "
     r"column of left \(a per-row bound\); available: \['id', 'ts', 'n', 's', 'ntz'\]"),
    ({"lower": "NTZ"}, ValueError, r"cannot parse duration 'NTZ'.*; the left column is "
     r"spelt 'ntz'"),
    ({"upper": 5}, ValueError, "`upper`: 5 has no unit"),
    ({"closed": "open"}, ValueError, "`closed` must be one of"),
    ({"how": "outer"}, ValueError, "`how` must be one of"),
    ({"bin_size": 0}, ValueError, "`bin_size` must be positive"),
    ({"bin_size": "-1 minute"}, ValueError, "`bin_size` must be positive"),
    ({"by": "nope"}, ValueError, "`by`: column 'nope' not found in left"),
    ({"left_by": "id"}, ValueError, "`left_by` and `right_by` must be given together"),
    ({"lower": "s"}, TypeError, "`lower`: per-row bound column 's' of left has type string"),
    ({"upper": "ntz"}, TypeError, "incompatible time columns"),
    ({"suffix": 3}, ValueError, "`suffix` must be a string"),
    ({"suffix": ""}, ValueError, "clashes.*choose another suffix$"),
])
def test_errors(frames, kw, exc, match):
    with pytest.raises(exc, match=match):
        _call(frames, **kw)


def test_numeric_errors(spark):
    left = spark.sql("SELECT 1 AS t, 'a' AS w, INTERVAL '1' HOUR AS iv")
    with pytest.raises(ValueError, match="`lower`: '1 hour' is a time span"):
        cj.band_join(left, left, left_on="t", right_on="t", lower="1 hour", upper=2)
    with pytest.raises(TypeError, match="per-row bound column 'iv'"):
        cj.band_join(left, left, left_on="t", right_on="t", lower="iv", upper=2)
    with pytest.raises(TypeError, match=r"must be a pyspark\.sql\.DataFrame"):
        cj.band_join(left.toPandas(), left, left_on="t", right_on="t", lower=0, upper=2)


def test_a_bound_of_the_other_timestamp_type_names_the_time_column_it_clashes_with(spark):
    left = spark.sql("SELECT DATE'2024-01-01' AS d, TIMESTAMP_NTZ'2024-01-01 00:00:00' AS ntz")
    right = spark.sql("SELECT TIMESTAMP'2024-01-01 00:00:00' AS ts")
    with pytest.raises(TypeError, match=r"right_on 'ts' \(timestamp\), upper 'ntz' "
                       r"\(timestamp_ntz\); cast one side"):
        cj.band_join(left, right, left_on="d", right_on="ts", lower="-1 hour", upper="ntz")
