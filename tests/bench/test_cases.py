"""Benchmark cases that the quick run does not cover compute equal answers."""

from __future__ import annotations

import pytest

from chronojoin.bench.case import checksum
from chronojoin.bench.cases import asof, band, interval_join


@pytest.mark.parametrize("variant", ["many_right", "wide"])
def test_many_right_one_pass_equals_chained(spark, tmp_path, variant):
    (case,) = asof.cases(sizes=[300], variants=[variant], data_dir=str(tmp_path))
    inputs = case.load(spark)
    last = f"x{asof.WIDE_COLUMNS - 1}"
    if variant == "wide":  # every right table has the feature columns; the last is checked
        assert all(last in inputs[f"right{i}"].columns for i in (1, 2, 3))
        assert f"f3_{last}" in case.checksum_columns
    else:
        assert last not in inputs["right1"].columns
    answers = {}
    for m in case.methods:
        if m.checked:
            out = m.build(inputs)
            assert set(case.checksum_columns or ()) <= set(out.columns)
            answers[m.name] = tuple(checksum(out, case.checksum_columns).collect()[0])
    assert answers["one_pass"] == answers["chained"]
    assert answers["one_pass"][0] == inputs["left"].count()


def test_numeric_values_cases(spark, tmp_path):
    """The largest size and its hot key with double values (the fixed-width path of
    the winners' aggregate): every chronojoin method finds the same right times."""
    cases = asof.cases(sizes=[100, 400], variants=["numeric"], data_dir=str(tmp_path))
    assert [c.name for c in cases] == ["asof numeric n=400 asc values=double",
                                       "asof numeric n=400 asc hot=0.5 values=double"]
    for case in cases:
        inputs = case.load(spark)
        assert dict(inputs["right"].dtypes)["value"] == "double"
        answers = {m.name: tuple(checksum(m.build(inputs), case.checksum_columns).collect()[0])
                   for m in case.methods
                   if m.name in ("auto", "union", "exploding", "broadcast")}
        assert len(set(answers.values())) == 1, (case.name, answers)


def test_no_key_auto_equals_constant_key(spark, tmp_path):
    (case,) = asof.cases(sizes=[200], variants=["no_key"], data_dir=str(tmp_path))
    inputs = case.load(spark)
    got = {
        m.name: tuple(checksum(m.build(inputs), case.checksum_columns).collect()[0])
        for m in case.methods if m.checked and not m.local
    }
    assert got["auto"] == got["constant_key"]
    local = next(m for m in case.methods if m.local)
    assert local.build(inputs)[0] == got["auto"][0]


def test_interval_join_methods_agree(spark, tmp_path):
    cases = interval_join.cases(sizes=[3000], data_dir=str(tmp_path))
    assert [c.params["variant"] for c in cases] == [
        "short_inner", "short_left", "open_ended_inner", "open_ended_left"]
    counts = {}
    for case in cases:
        inputs = case.load(spark)
        answers = {m.name: tuple(checksum(m.build(inputs), case.checksum_columns).collect()[0])
                   for m in case.methods}
        assert len(set(answers.values())) == 1, (case.name, answers)
        counts[case.params["variant"]] = answers["spark"][0]
    assert counts["short_left"] > counts["short_inner"] > 0
    # the ten intervals that never end cover every later point of their keys
    assert counts["open_ended_inner"] > counts["short_inner"]


def test_band_methods_agree_with_duckdb_on_the_pairs(spark, tmp_path):
    """Every method, DuckDB and the counting one included, finds the same pairs."""
    (case,) = band.cases(sizes=[400], quick=True, data_dir=str(tmp_path))
    inputs = case.load(spark)
    answers = {m.name: m.build(inputs) if m.local else tuple(case.checksum_plan(
        m.build(inputs)).collect()[0]) for m in case.methods}
    assert {"naive", "duckdb", "chronojoin_count", "bin_60m"} <= set(answers)
    assert len(set(answers.values())) == 1, answers
    assert answers["naive"][0] > 400
