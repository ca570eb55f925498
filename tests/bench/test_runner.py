"""The runner: answer check, interleaving, time limits, records, metrics as None."""

from __future__ import annotations

import time

import pytest
from pyspark.sql import functions as F

from chronojoin.bench import metrics as M
from chronojoin.bench.case import Case, Method
from chronojoin.bench.runner import Runner, family_cases


def _load(spark):
    return {"df": spark.range(0, 2000).withColumn("k", F.col("id") % 7)}


def _good(inputs):
    return inputs["df"].groupBy("k").count()


def _also_good(inputs):
    return inputs["df"].repartition(3).groupBy("k").agg(F.count(F.lit(1)).alias("count"))


def _wrong(inputs):  # fast, and loses rows: must never be timed
    return inputs["df"].where("id > 5").groupBy("k").count()


def _floor(inputs):
    return inputs["df"].repartition("k").sortWithinPartitions("k")


def _local(inputs):
    return 7, None


def _conf_probe(inputs):
    df = inputs["df"]
    assert df.sparkSession.conf.get("spark.sql.shuffle.partitions") == "3"
    return _good(inputs)


def _case():
    return Case(
        name="toy", load=_load, params={"size": 2000},
        methods=(
            Method("floor", _floor, baseline=True, checked=False),
            Method("good", _good),
            Method("also_good", _also_good, spark_conf={"spark.sql.shuffle.partitions": "3"}),
            Method("probe", _conf_probe, spark_conf={"spark.sql.shuffle.partitions": "3"}),
            Method("wrong", _wrong),
            Method("local", _local, local=True),
        ),
    )


def test_wrong_answer_is_flagged_and_never_timed(spark):
    records = []
    before = spark.conf.get("spark.sql.shuffle.partitions")
    runner = Runner(spark, records.append, repetitions=2, context={"master": "test"})
    runner.run([_case()], family="toy")
    by = {}
    for r in records:
        by.setdefault(r["method"], []).append(r)
    assert [r["status"] for r in by["wrong"]] == ["wrong"]
    assert by["wrong"][0]["rows"] == 7 and by["wrong"][0]["expected_rows"] == 7
    assert by["wrong"][0]["checksum"] != by["wrong"][0]["expected_checksum"]
    for name in ("floor", "good", "also_good", "probe", "local"):
        assert [r["status"] for r in by[name]] == ["ok", "ok"], by[name]
        assert [r["repetition"] for r in by[name]] == [0, 1]
        assert all(r["elapsed_s"] > 0 for r in by[name])
    assert by["floor"][0]["baseline"] and not by["floor"][0]["checked"]
    assert all(r["master"] == "test" and r["family"] == "toy" for r in records)
    # the test session has no UI: every metric is unavailable (None), never 0
    assert all(v is None for v in by["good"][0]["metrics"].values())
    assert spark.conf.get("spark.sql.shuffle.partitions") == before


def test_round_robin_order(spark):
    seen = []

    def tracer(name):
        def build(inputs):
            seen.append(name)
            return inputs["df"].limit(1)

        return build

    case = Case(
        "order", _load,
        tuple(Method(n, tracer(n), checked=False) for n in ("a", "b", "c")),
    )
    Runner(spark, lambda r: None, repetitions=3).run([case])
    assert seen == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]


def test_rounds_interleave_the_cases(spark):
    """Every case is checked first; then each round times every case, in rotated order,
    so that a ratio between two cases compares timings taken in the same rounds."""
    seen = []

    def tracer(name):
        def build(inputs):
            seen.append(name)
            return inputs["df"].groupBy("k").count()

        return build

    one = Case("one", _load, (Method("a", tracer("a")), Method("b", tracer("b"))))
    two = Case("two", _load, (Method("c", tracer("c")),))
    records = Runner(spark, lambda r: None, repetitions=3).run([one, two])
    checks, rounds = seen[:3], seen[3:]
    assert checks == ["a", "b", "c"]
    assert rounds == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    # returned case by case, each case's records in the order they were taken
    assert [(r["case"], r["method"], r["repetition"]) for r in records] == [
        ("one", "a", 0), ("one", "b", 0), ("one", "b", 1), ("one", "a", 1),
        ("one", "a", 2), ("one", "b", 2), ("two", "c", 0), ("two", "c", 1), ("two", "c", 2)]


def test_time_limit_interrupts_and_records_timeout(spark):
    def slow(inputs):
        big = inputs["df"].sparkSession.range(0, 10**11, 1, 2)
        return big.select(F.max(F.xxhash64("id")).alias("k"), F.lit(1).alias("count"))

    def sleepy(inputs):
        time.sleep(30)
        return 7, None

    case = Case("limits", _load, (
        Method("good", _good),
        Method("slow", slow, timeout_s=3),
        Method("sleepy", sleepy, local=True, timeout_s=1),
    ))
    records = []
    start = time.monotonic()
    Runner(spark, records.append, repetitions=2).run([case])
    assert time.monotonic() - start < 120
    status = {(r["method"], r["status"]) for r in records}
    assert ("slow", "timeout") in status and ("sleepy", "timeout") in status
    assert [r["status"] for r in records if r["method"] == "good"] == ["ok", "ok"]
    # the session still works after the interrupt
    assert spark.range(3).count() == 3


def test_load_failure_and_method_error_are_recorded(spark):
    def broken(spark_):
        raise RuntimeError("no data")

    def failing(inputs):
        raise ValueError("bad plan")

    records = []
    Runner(spark, records.append, repetitions=1).run(
        [Case("broken", broken, (Method("good", _good),)),
         Case("failing", _load, (Method("good", _good), Method("failing", failing)))]
    )
    assert records[0]["status"] == "error" and "no data" in records[0]["error"]
    failed = [r for r in records if r["method"] == "failing"]
    assert [r["status"] for r in failed] == ["error"]
    assert "ValueError: bad plan" in failed[0]["error"]


def test_method_filter_keeps_baselines(spark):
    runner = Runner(spark, lambda r: None, methods=["good"])
    assert [m.name for m in runner.selected(_case())] == ["floor", "good"]


def test_family_discovery():
    with pytest.raises(ValueError, match="no benchmark cases for 'nonexistent'"):
        family_cases("nonexistent")
    cases = family_cases("asof", quick=True, data_dir="/nonexistent", unknown_param=1)
    assert len(cases) == 1 and cases[0].params["n_ids"] == 1000
    names = [m.name for m in cases[0].methods]
    assert names[:5] == ["floor", "exploding", "union", "sort_merge", "auto"]
    assert {"spark_smj", "spark_default", "duckdb"} <= set(names)


def test_metrics_unavailable_without_ui(spark):
    assert M.ui_client(spark) is None
    assert M.collect(None, "tag") == M.empty()
    assert set(M.empty()) == set(M.NAMES)
