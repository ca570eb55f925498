"""The thesis generator: reproducible, partition-independent, distributions as specified."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from chronojoin.bench.case import checksum
from chronojoin.datagen import HOT_ID, YEAR, dataset_name, parse_buckets, thesis, write_bucketed
from chronojoin.errors import InvalidArgumentError


def _sums(*dfs):
    return [tuple(checksum(df).collect()[0]) for df in dfs]


def test_same_seed_same_data_on_any_partitioning(spark):
    a = thesis(spark, 300, seed=7, time_type="integer", order="none")
    b = thesis(spark, 300, seed=7, time_type="integer", order="random", num_partitions=5)
    c = thesis(spark, 300, seed=8, time_type="integer", order="none")
    first, again, other = _sums(*a), _sums(*b), _sums(*c)
    assert first == again
    assert first[1] != other[1]
    assert first[0][0] == 300


def test_smaller_dataset_is_a_prefix_of_the_larger(spark):
    small = thesis(spark, 50, seed=3, time_type="integer", order="none")[1]
    large = thesis(spark, 120, seed=3, time_type="integer", order="none")[1]
    assert _sums(small) == _sums(large.where(F.col("id") < 50))


def test_distributions(spark):
    left, right = thesis(spark, 400, seed=11, time_type="integer", order="none")
    stats = left.agg(
        F.count("*").alias("n"), F.countDistinct("id").alias("ids"),
        F.min("time").alias("lo"), F.max("time").alias("hi"),
    ).collect()[0]
    assert (stats.n, stats.ids) == (400, 400)
    assert stats.lo >= 0 and stats.hi <= YEAR
    counts = right.groupBy("id").count()
    # per id: Normal(20, 2) or Normal(80, 8), chosen per id with probability 1/2
    small = counts.where("count < 50").agg(F.avg("count"), F.count("*")).collect()[0]
    big = counts.where("count >= 50").agg(F.avg("count"), F.count("*")).collect()[0]
    assert 17 < small[0] < 23 and 70 < big[0] < 90
    assert 140 < small[1] < 260 and small[1] + big[1] == 400
    rt = right.agg(F.min("time"), F.max("time")).collect()[0]
    assert rt[0] >= 0 and rt[1] <= YEAR
    assert right.where(F.col("value").isNull() | F.col("time").isNull()).count() == 0


def test_timestamp_type_order_and_columns(spark):
    left, right = thesis(spark, 20, seed=1, order="asc")
    assert dict(left.dtypes) == {"id": "bigint", "time": "timestamp", "label": "string"}
    assert dict(right.dtypes) == {"id": "bigint", "time": "timestamp", "value": "string"}
    rows = [(r.id, r.time) for r in right.collect()]
    assert rows == sorted(rows)
    desc = [(r.id, r.time) for r in thesis(spark, 20, seed=1, order="desc")[1].collect()]
    assert desc == sorted(desc, reverse=True)


def test_many_left_rows_and_hot_key(spark):
    left, _ = thesis(spark, 30, seed=2, time_type="integer", left_rows_per_id=4, order="none")
    assert left.count() == 120 and left.select("label").distinct().count() == 120
    left, right = thesis(spark, 200, seed=2, time_type="integer", skew=0.5, order="none")
    share_left = left.where(F.col("id") == HOT_ID).count() / left.count()
    share_right = right.where(F.col("id") == HOT_ID).count() / right.count()
    assert 0.4 < share_left < 0.6 and 0.45 < share_right < 0.55


def test_double_values(spark):
    """Fixed-width feature values: the same events, a seeded number in [0, 1) each."""
    _, strings = thesis(spark, 40, seed=3, time_type="integer")
    _, numbers = thesis(spark, 40, seed=3, time_type="integer", value_type="double")
    assert dict(numbers.dtypes)["value"] == "double"
    assert strings.select("id", "time").collect() == numbers.select("id", "time").collect()
    values = [r.value for r in numbers.collect()]
    assert all(0.0 <= v < 1.0 for v in values) and len(set(values)) == len(values)
    again = thesis(spark, 40, seed=3, time_type="integer", value_type="double")[1]
    assert [r.value for r in again.collect()] == values


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_ids": 0}, "`n_ids` must be an integer >= 1"),
        ({"value_type": "int"}, "`value_type` must be one of"),
        ({"time_type": "date"}, "`time_type` must be one of"),
        ({"order": "sideways"}, "`order` must be one of"),
        ({"skew": 1.0}, "`skew` must be a number with 0 <= skew < 1"),
        ({"left_rows_per_id": 0}, "`left_rows_per_id`"),
        ({"seed": "x"}, "`seed` must be an integer"),
    ],
)
def test_invalid_arguments(spark, kwargs, match):
    args = {"n_ids": 10, **kwargs}
    n = args.pop("n_ids")
    with pytest.raises(InvalidArgumentError, match=match):
        thesis(spark, n, **args)


def test_bucketed_tables_and_names(spark, tmp_path):
    left, right = thesis(spark, 40, seed=5, time_type="integer")
    names = write_bucketed(
        {"left": left, "right": right}, buckets=4, database="cj_test_datagen", prefix="t"
    )
    assert names == {"left": "cj_test_datagen.t_left_b4", "right": "cj_test_datagen.t_right_b4"}
    assert spark.table(names["right"]).count() == right.count()
    assert "Bucket" in spark.sql(f"DESCRIBE TABLE EXTENDED {names['left']}").toPandas().to_string()
    spark.sql("DROP DATABASE cj_test_datagen CASCADE")
    assert dataset_name("thesis", n_ids=10, seed=0, skew=0.5) == "thesis_n10_s0_k0p5"
    assert parse_buckets(["thesis"]) == (20, 40, 80, 160)
    with pytest.raises(InvalidArgumentError, match="`buckets`"):
        parse_buckets(["x"])
    with pytest.raises(InvalidArgumentError, match="`database`"):
        write_bucketed({"left": left}, buckets=2, database="a b", prefix="t")


class _Partitioned:
    """A session whose ``range`` makes ``n`` partitions: the data must not change."""

    def __init__(self, spark, n):
        self._spark, self._n = spark, n

    def range(self, start, end=None, step=1, numPartitions=None):
        return self._spark.range(start, end, step, self._n)


@pytest.mark.parametrize(("kind", "params"), [
    ("intervals", {"points": 300, "intervals": 40, "keys": 6, "skew": 0.5, "seed": 7}),
    ("band", {"rows": 200, "seed": 7}),
    ("loader", {"rows": 1000, "seed": 7}),
    ("interval_join", {"points": 2000, "open_ended": 3, "seed": 7}),
])
def test_benchmark_datasets_do_not_depend_on_partitioning(spark, kind, params):
    from importlib import import_module

    generate = import_module(f"chronojoin.bench.cases.{kind}").generate
    one = generate(_Partitioned(spark, 1), **params)
    three = generate(_Partitioned(spark, 3), **params)
    other = generate(spark, **{**params, "seed": 8})
    for name, df in one.items():
        assert _sums(df) == _sums(three[name]), name
        if "value" in df.columns or kind in ("intervals", "interval_join"):
            assert _sums(df) != _sums(other[name]), name


def test_benchmark_dataset_distributions(spark):
    from chronojoin.bench.cases import band, intervals, loader

    tables = intervals.generate(spark, points=400, intervals=100, keys=8, skew=0.5, seed=3)
    share, low, high, keys = tables["points"].agg(
        F.avg((F.col("id") == 0).cast("int")), F.min("time"), F.max("time"),
        F.countDistinct("id")).collect()[0]
    assert 0.4 < share < 0.6 and 0 <= low <= high < intervals.TIME_RANGE and keys == 8
    length = F.col("end_time") - F.col("start_time")
    shortest, longest, fewest, most = tables["intervals"].agg(
        F.min(length), F.max(length), F.min("points"), F.max("points")).collect()[0]
    assert 0 <= shortest <= longest < intervals.TIME_RANGE / 5 and 0 <= fewest <= most < 100
    bands = band.generate(spark, rows=300, seed=3)
    kinds = {r.eventType for r in bands["events"].select("eventType").distinct().collect()}
    assert kinds == {"LoginEvent", "PurchaseEvent", "DetailsUpdateEvent"}
    noise = F.unix_micros("measurementTime") - F.unix_micros("eventTime")
    low, high, smallest, largest = bands["measurements"].join(
        bands["events"], F.col("mid") == F.col("eid")).agg(
        F.min(noise), F.max(noise), F.min("value"), F.max("value")).collect()[0]
    assert 0 <= low <= high < 5_000_000 and 0 <= smallest <= largest < 1
    for df in loader.generate(spark, rows=1000, seed=3).values():
        smallest, largest = df.agg(F.min("value"), F.max("value")).collect()[0]
        assert 0 <= smallest <= largest < 1
