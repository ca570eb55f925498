"""The runner: answer check, interleaving, time limits, records, metrics as None."""

from __future__ import annotations

import threading
import time

import pytest
from pyspark.sql import functions as F

from chronojoin.bench import metrics as M
from chronojoin.bench.case import Case, Method
from chronojoin.bench.cases import asof as asof_cases
from chronojoin.bench.data import duckdb_row
from chronojoin.bench.runner import Runner, family_cases, verdicts


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
    assert by["wrong"][0]["check"] == "wrong" and by["floor"][0]["check"] is None
    assert {r["check"] for n in ("good", "also_good", "probe") for r in by[n]} == {"compared"}
    assert {r["check"] for r in by["local"]} == {"rows"}   # a row count only
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
    Runner(spark, records.append, repetitions=2, stop_wait_s=1).run([case])
    assert time.monotonic() - start < 120
    status = {(r["method"], r["status"]) for r in records}
    assert ("slow", "timeout") in status and ("sleepy", "timeout") in status
    # a sleep cannot be interrupted: the runner waited a while, then went on and said so
    sleepy_rec = next(r for r in records if r["method"] == "sleepy")
    assert sleepy_rec["abandoned"] and "abandoned" in sleepy_rec["error"]
    assert [r["status"] for r in records if r["method"] == "good"] == ["ok", "ok"]
    # the session still works after the interrupt
    assert spark.range(3).count() == 3


def test_local_method_past_its_limit_is_stopped_before_the_next_method(spark):
    """A local method's Spark jobs and DuckDB query are interrupted, not left running."""
    def spark_count(inputs):   # Spark work driven from the driver, as band's count
        big = inputs["df"].sparkSession.range(0, 10**11, 1, 2)
        return big.select(F.max(F.xxhash64("id"))).collect()[0][0], None

    def duckdb_query(inputs):
        query = "SELECT sum(hash(range)) FROM range(100000000000)"
        return duckdb_row({"threads": 1}, query, [])[0], None

    case = Case("local limits", _load, (
        Method("spark_count", spark_count, local=True, timeout_s=2, checked=False),
        Method("duckdb_query", duckdb_query, local=True, timeout_s=2, checked=False),
        Method("good", _good),
    ))
    records = []
    start = time.monotonic()
    Runner(spark, records.append, repetitions=1, stop_wait_s=60).run([case])
    assert time.monotonic() - start < 90
    by = {r["method"]: r for r in records}
    for name in ("spark_count", "duckdb_query"):
        assert by[name]["status"] == "timeout" and not by[name].get("abandoned"), by[name]
    assert by["good"]["status"] == "ok"
    ours = {"cjbench-spark_count", "cjbench-duckdb_query"}
    assert not [t.name for t in threading.enumerate() if t.name in ours]


def test_verdicts_of_the_answer_check():
    a, b = (7, "1"), (7, "2")
    assert verdicts({"auto": a}) == ({"auto": "none"}, a)
    assert verdicts({}) == ({}, None)
    assert verdicts({"x": a, "y": a, "z": b}) == (
        {"x": "compared", "y": "compared", "z": "wrong"}, a)
    # a tie is not decided by the order the methods are listed in
    assert verdicts({"x": a, "z": b}) == ({"x": "disagree", "z": "disagree"}, None)
    assert verdicts({"x": a, "z": b}, {"z"}) == ({"x": "wrong", "z": "baseline"}, b)
    # no checksum on one side: the row counts only
    assert verdicts({"x": a, "duck": (7, None)}) == ({"x": "rows", "duck": "rows"}, a)
    assert verdicts({"x": a, "duck": (8, None)}) == ({"x": "disagree", "duck": "disagree"}, None)
    assert verdicts({"x": a, "y": a, "duck": (8, None)})[0]["duck"] == "wrong"
    # one row count agreeing with two different checksums decides nothing
    assert verdicts({"x": a, "z": b, "duck": (7, None)}, {"duck"})[1] is None


def test_one_checked_method_is_compared_with_none(spark):
    case = Case("alone", _load, (
        Method("floor", _floor, baseline=True, checked=False), Method("good", _good),
    ))
    records = Runner(spark, lambda r: None, repetitions=1).run([case])
    by = {r["method"]: r for r in records}
    assert by["good"]["status"] == "ok" and by["good"]["check"] == "none"
    assert by["floor"]["check"] is None


def test_two_disagreeing_answers_are_both_untimed_unless_a_baseline_decides(spark):
    methods = (Method("good", _good), Method("wrong", _wrong))
    records = Runner(spark, lambda r: None, repetitions=1).run([Case("tie", _load, methods)])
    assert {(r["method"], r["status"], r["check"]) for r in records} == {
        ("good", "disagree", "disagree"), ("wrong", "disagree", "disagree")}
    decided = (Method("good", _good, baseline=True), Method("wrong", _wrong))
    records = Runner(spark, lambda r: None, repetitions=1).run([Case("tie", _load, decided)])
    assert {(r["method"], r["status"], r["check"]) for r in records} == {
        ("good", "ok", "baseline"), ("wrong", "wrong", "wrong")}


@pytest.mark.parametrize(("family", "size", "methods"), [
    ("asof", 200, ["union", "auto", "duckdb"]),
    ("intervals", 2000, ["sweep", "auto", "duckdb"]),
])
def test_duckdb_answers_are_checked_on_a_checksum(spark, tmp_path, monkeypatch, family, size,
                                                  methods):
    params = {"variants": ["size"]} if family == "asof" else {"variants": ["few_pairs"],
                                                              "buckets": [4]}
    case = family_cases(family, sizes=[size], data_dir=str(tmp_path), **params)[0]
    records = Runner(spark, lambda r: None, repetitions=1, methods=methods).run([case])
    by = {r["method"]: r for r in records}
    assert by["duckdb"]["status"] == "ok" and by["duckdb"]["check"] == "compared", by["duckdb"]
    assert by["auto"]["check"] == "compared"
    if family == "asof":   # a forward join in DuckDB has as many rows, and is caught
        checked = asof_cases._duckdb_checked

        def forward(inputs, condition):
            return checked(inputs, condition.replace(">=", "<="))

        monkeypatch.setattr(asof_cases, "_duckdb_checked", forward)
        records = Runner(spark, lambda r: None, repetitions=1, methods=methods).run([case])
        wrong = next(r for r in records if r["method"] == "duckdb")
        assert wrong["status"] == "wrong" and wrong["rows"] == wrong["expected_rows"]


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
