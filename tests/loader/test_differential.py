"""The loader against the pandas reference on seeded random batches (skew, overlaps)."""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd
import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from tests.oracles.loader import read_table, reference

KEYS = ["user_id", "click_id"]
DATES = [dt.date(2024, 3, d) for d in range(1, 5)]
SCHEMA = "user_id long, click_id string, event_date date, seq long, value double"


def random_batch(rng: random.Random, start: int, n: int) -> pd.DataFrame:
    rows = []
    for j in range(n):
        if rng.random() < 0.5:  # skew: half of the rows share one key
            user, click = 0, "c0"
        else:
            user, click = rng.randrange(30), f"c{rng.randrange(3)}"
        rows.append((user, click, rng.choice(DATES), start + j, round(rng.random(), 3)))
    return pd.DataFrame(rows, columns=["user_id", "click_id", "event_date", "seq", "value"])


def as_strings(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(event_date=df["event_date"].astype(str))


@pytest.mark.parametrize("seed", [1, 2])
def test_sequence_of_batches_matches_reference(spark, tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    loader = cj.IncrementalLoader(spark, path=path, keys=KEYS, order_by=["seq"])
    expected = None
    for b in range(3):
        pdf = random_batch(rng, start=1000 * b, n=300)
        batch = spark.createDataFrame(list(pdf.itertuples(index=False)), SCHEMA)
        report = loader.append(batch)
        new, in_batch, existing = reference(expected, as_strings(pdf), keys=KEYS,
                                            partition_by="event_date", order_by=["seq"])
        assert (report.rows_in, report.rows_appended, report.duplicates_in_batch,
                report.duplicates_existing) == (300, len(new), in_batch, existing)
        expected = new if expected is None else pd.concat([expected, new], ignore_index=True)
        got = read_table(path, "event_date")
        cols = ["event_date", *KEYS, "seq", "value"]
        pd.testing.assert_frame_equal(
            got[cols].sort_values(cols).reset_index(drop=True),
            expected[cols].sort_values(cols).reset_index(drop=True), check_dtype=False)
    assert loader.check().ok


def test_without_order_by_keys_and_counts_match_reference(spark, tmp_path):
    rng = random.Random(7)
    pdf = random_batch(rng, start=0, n=400)
    batch = spark.createDataFrame(list(pdf.itertuples(index=False)), SCHEMA)
    report = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=KEYS).append(batch)
    new, in_batch, _ = reference(None, as_strings(pdf), keys=KEYS, partition_by="event_date",
                                 order_by=[])
    assert (report.rows_appended, report.duplicates_in_batch) == (len(new), in_batch)
    got = read_table(str(tmp_path / "t"), "event_date")
    ident = ["event_date", *KEYS]
    assert not got.duplicated(ident).any()
    # every winner is one of the batch rows with its key
    merged = got.merge(as_strings(pdf), on=[*ident, "seq", "value"], how="left", indicator=True)
    assert (merged["_merge"] == "both").all()
    assert sorted(map(tuple, got[ident].values.tolist())) == sorted(
        map(tuple, new[ident].values.tolist()))


FIXED = "user_id long, click_id long, event_date date, seq long, value double"


def _fixed_width_batch(rng: random.Random, n: int) -> pd.DataFrame:
    pdf = random_batch(rng, start=0, n=n)
    return pdf.assign(click_id=pdf["click_id"].str[1:].astype("int64"),
                      seq=[rng.randrange(50) for _ in range(n)])


@pytest.mark.parametrize("sort_aggregate", ["true", "false"])
def test_fixed_width_columns_pick_the_winner_of_a_descending_order(spark, tmp_path,
                                                                    sort_aggregate):
    """Fixed-width columns allow a hash aggregate (Spark's choice when it does not replace
    it by a sort aggregate): the winner must not depend on it."""
    spark.conf.set("spark.sql.execution.replaceHashWithSortAgg", sort_aggregate)
    try:
        _check_descending_winner(spark, tmp_path)
    finally:
        spark.conf.unset("spark.sql.execution.replaceHashWithSortAgg")


def _check_descending_winner(spark, tmp_path):
    rng = random.Random(11)
    pdf = _fixed_width_batch(rng, 500)
    batch = spark.createDataFrame(list(pdf.itertuples(index=False)), FIXED).repartition(4)
    loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=KEYS,
                                  order_by=[F.col("seq").desc(), "value"])
    report = loader.append(batch)
    ranked = pdf.assign(neg=-pdf["seq"])
    new, in_batch, _ = reference(None, as_strings(ranked), keys=KEYS,
                                 partition_by="event_date", order_by=["neg", "value"])
    # ties on (seq, value) are broken by the row hash: compare the winning (seq, value)
    assert (report.rows_appended, report.duplicates_in_batch) == (len(new), in_batch)
    got = read_table(str(tmp_path / "t"), "event_date")
    cols = ["event_date", *KEYS, "seq", "value"]
    pd.testing.assert_frame_equal(
        got[cols].sort_values(cols).reset_index(drop=True),
        new[cols].sort_values(cols).reset_index(drop=True), check_dtype=False)


def test_winner_without_order_by_does_not_depend_on_input_order(spark, tmp_path):
    rng = random.Random(5)
    pdf = random_batch(rng, start=0, n=400)
    pdf = pdf.assign(seq=[rng.randrange(3) for _ in range(len(pdf))])
    rows = list(pdf.itertuples(index=False))
    tables = []
    for i, (order, parts) in enumerate([(rows, 1), (rows[::-1], 3), (rows[1::2] + rows[::2], 5)]):
        batch = spark.createDataFrame(order, SCHEMA).repartition(parts)
        path = str(tmp_path / f"t{i}")
        cj.IncrementalLoader(spark, path=path, keys=KEYS).append(batch)
        got = read_table(path, "event_date")
        cols = ["event_date", *KEYS, "seq", "value"]
        tables.append(got[cols].sort_values(cols).reset_index(drop=True))
    pd.testing.assert_frame_equal(tables[0], tables[1])
    pd.testing.assert_frame_equal(tables[0], tables[2])
