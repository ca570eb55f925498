"""Every bad argument raises before any Spark job, naming the argument, column and side."""

from __future__ import annotations

import numpy as np
import pytest

import chronojoin as cj
from chronojoin.errors import ColumnNotFoundError


@pytest.fixture(scope="module")
def frames(spark):
    left = spark.createDataFrame([(1, 1, "a")], "id int, time int, label string")
    right = spark.createDataFrame([(1, 1, 2.0)], "id int, time int, v double")
    return left, right


def test_missing_column_names_side_and_available(frames):
    left, right = frames
    with pytest.raises(cj.ColumnNotFoundError,
                       match=r"`left_on`: column 'ts' not found in left; available: "
                             r"\['id', 'time', 'label'\]"):
        cj.asof_join(left, right, left_on="ts", right_on="time")
    with pytest.raises(ValueError, match=r"`by`: column 'id' not found in right"):
        cj.asof_join(left, right.withColumnRenamed("id", "x"), on="time", by="id")


def test_names_differing_in_case_name_the_column(frames):
    """Names are exact (as in pandas and polars) and the error spells the column."""
    left, right = frames
    with pytest.raises(cj.ColumnNotFoundError,
                       match=r"`on`: column 'TIME' not found in left; .* case included: did "
                             r"you mean 'time'\?"):
        cj.asof_join(left, right, on="TIME", by="id")
    with pytest.raises(cj.ColumnNotFoundError, match=r"`by`: .* did you mean 'id'\?"):
        cj.band_join(left, right, left_on="time", right_on="time", lower=0, upper=1, by="Id")


def test_a_nested_field_says_names_are_top_level_columns(spark, frames):
    """"s.t" names a column called "s.t", not the field t of struct s (Spark's reading
    of F.col("s.t")); the error says so instead of listing the columns alone."""
    left, right = frames
    nested = left.selectExpr("id", "named_struct('t', time) AS s")
    with pytest.raises(cj.ColumnNotFoundError,
                       match=r"`left_on`: column 's.t' not found in left; .* never a field "
                             r"of struct 's'"):
        cj.asof_join(nested, right, left_on="s.t", right_on="time")


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"direction": "backwards"}, r"`direction` must be one of \['backward', 'forward', "),
        ({"how": "outer"}, r"`how` must be one of \['left', 'inner'\]"),
        ({"strategy": "magic"}, r"`strategy` must be one of"),
        ({"strategy": "nearest"}, r"`strategy` must be one of .*; got 'nearest': the "
                                  r"direction is `direction='nearest'` \(polars' "),
        ({"tolerance": -1}, r"`tolerance` must be positive or zero"),
        ({"tolerance": "1 hour"}, r"`tolerance`: '1 hour' is a time span but the time "
                                  r"columns are numeric"),
        ({"allow_exact_matches": "yes"}, r"`allow_exact_matches` must be True or False"),
        ({"tiebreak": "nope"}, r"`tiebreak`: column 'nope' not found in right"),
        ({"buckets": 0}, r"`buckets` must be a bucket count from 1 to 2,147,483,647; got 0"),
        ({"buckets": 2**64}, r"`buckets` must be a bucket count from 1 to 2,147,483,647"),
        ({"buckets": True}, r"`buckets` must be a bucket count from 1 to 2,147,483,647"),
        ({"buckets": 2.0}, r"`buckets` must be a bucket count from 1 to 2,147,483,647"),
    ],
)
def test_bad_options(frames, kwargs, pattern):
    left, right = frames
    with pytest.raises(ValueError, match=pattern):
        cj.asof_join(left, right, on="time", by="id", **kwargs)


def test_on_and_left_on_together(frames):
    left, right = frames
    with pytest.raises(ValueError, match=r"either `on` or `left_on`/`right_on`"):
        cj.asof_join(left, right, on="time", left_on="time", right_on="time")
    with pytest.raises(ValueError, match=r"`left_by` and `right_by` must name as many keys of "
                       r"left as of right: \['id', 'label'\] vs \['id'\]"):
        cj.asof_join(left, right, on="time", left_by=["id", "label"], right_by=["id"])


def test_incompatible_time_types(spark, frames):
    left, _ = frames
    right = spark.createDataFrame([(1, "2024-01-01")], "id int, time string")
    with pytest.raises(TypeError, match=r"column 'time' of right has type string"):
        cj.asof_join(left, right, on="time", by="id")
    ts = spark.sql("select 1 as id, timestamp'2024-01-01 00:00:00' as time")
    with pytest.raises(cj.TimeTypeError, match=r"incompatible time columns: on 'time' \(int\)"):
        cj.asof_join(left, ts, on="time", by="id")


def test_bad_duration_text(spark):
    left = spark.sql("select 1 as id, timestamp'2024-01-01 00:00:00' as ts")
    with pytest.raises(cj.DurationError, match=r"`tolerance`: cannot parse duration '1 fortnight'"):
        cj.asof_join(left, left, on="ts", by="id", tolerance="1 fortnight")
    with pytest.raises(cj.DurationError, match=r"has no unit"):
        cj.asof_join(left, left, on="ts", by="id", tolerance=5)


def test_key_types_must_match(spark, frames):
    left, _ = frames
    right = spark.createDataFrame([("1", 1)], "id string, time int")
    with pytest.raises(TypeError, match=r"key 'id' of left is int but key 'id' of right is string"):
        cj.asof_join(left, right, on="time", by="id")


def test_right_spec_errors_name_position(spark, frames):
    left, right = frames
    with pytest.raises(ValueError, match=r"`right\[1\].on`: column 'at' not found in right\[1\]"):
        cj.asof_join(left, [cj.Right(right), cj.Right(right, on="at")], on="time", by="id")
    with pytest.raises(ValueError, match=r"right\[1\]: output column 'time_right'"):
        cj.asof_join(left.withColumn("v", left.id), [cj.Right(right), cj.Right(right)],
                     on="time", by="id")
    with pytest.raises(TypeError, match=r"`right\[0\]`: the items of a list must be cj.Right "
                       r"specs; got DataFrame \(wrap it: cj.Right\(df\)\)"):
        cj.asof_join(left, [right], on="time", by="id")
    # a table's own keys name the argument that lacks its counterpart, and the table
    with pytest.raises(ValueError, match=r"`left_by` and `right\[0\].by` must be given together"):
        cj.asof_join(left, [cj.Right(right, by="id")], on="time")
    with pytest.raises(ValueError, match=r"`by` and `right\[0\].by` must name as many keys of "
                       r"left as of right\[0\]"):
        cj.asof_join(left, [cj.Right(right, by=["id", "time"])], on="time", by="id")
    # `left_on`/`left_by` alone: a table without its own columns needs the left names.
    with pytest.raises(ValueError, match=r"`right\[1\].on`: column 'time' not found in right\[1\]"):
        cj.asof_join(left, [cj.Right(right), cj.Right(right.withColumnRenamed("time", "at"))],
                     left_on="time", left_by="id")
    with pytest.raises(ValueError, match=r"`right\[1\].by`: column 'id' not found in right\[1\]"):
        cj.asof_join(left, [cj.Right(right), cj.Right(right.withColumnRenamed("id", "uid"))],
                     left_on="time", left_by="id")
    with pytest.raises(ValueError, match=r"`left_on` and `right_on` must be given together"):
        cj.asof_join(left, right, left_on="time", by="id")


def test_no_time_columns(frames):
    left, right = frames
    with pytest.raises(ValueError, match=r"give the time columns"):
        cj.asof_join(left, right, by="id")


def test_no_left_time_column_with_several_rights(frames):
    """With cj.Right specs, the message asks for the left table's column only."""
    left, right = frames
    with pytest.raises(ValueError, match=r"the left table's time column: `on` or `left_on`"):
        cj.asof_join(left, [cj.Right(right, on="time")], by="id")


def test_data_frames_of_other_libraries_say_how_to_convert(spark, frames):
    import pandas as pd
    import pyarrow as pa

    left, right = frames
    cases = [(pd.DataFrame({"t": [1]}), "pandas.DataFrame", "spark.createDataFrame(df)"),
             (pa.table({"t": [1]}), "pyarrow.Table", "spark.createDataFrame(table)"),
             (left.pandas_api(), "pyspark.pandas.DataFrame", "df.to_spark()")]
    for other, name, conversion in cases:
        with pytest.raises(TypeError) as raised:
            cj.asof_join(left, other, on="time")
        assert str(raised.value) == (f"`right` must be a pyspark.sql.DataFrame; got {name} "
                                     f"(convert it with {conversion})")
    with pytest.raises(TypeError, match=r"^`left` must be a pyspark\.sql\.DataFrame; got int$"):
        cj.asof_join(5, right, on="time")


def test_numpy_bools_are_bools(frames):
    """``numpy.False_`` (from a pandas frame's column, say) reads as False."""
    left, right = frames
    out = cj.asof_join(left, right, on="time", by="id", allow_exact_matches=np.False_)
    assert [r["v"] for r in out.collect()] == [None]  # the only right row is at the same time


def test_a_right_time_column_not_found_names_the_argument_given(frames):
    left, right = frames
    only_left = left.withColumnRenamed("time", "t")
    with pytest.raises(ColumnNotFoundError, match=r"^`on`: column 't' not found in right"):
        cj.asof_join(only_left, right, on="t", by="id")
    with pytest.raises(ColumnNotFoundError, match=r"^`right_on`: column 'u' not found in right"):
        cj.asof_join(left, right, left_on="time", right_on="u", by="id")
    with pytest.raises(ColumnNotFoundError, match=r"^`right\[0\].on`: column 't' not found"):
        cj.asof_join(only_left, [cj.Right(right)], left_on="t", by="id")
    with pytest.raises(ColumnNotFoundError, match=r"^`right\[0\].on`: column 't' not found"):
        cj.asof_join(only_left, [cj.Right(right)], on="t", by="id")
    with pytest.raises(ColumnNotFoundError, match=r"^`right\[0\].on`: column 'u' not found"):
        cj.asof_join(left, [cj.Right(right, on="u")], on="time", by="id")
