"""The loader against the pandas reference on seeded random batches (skew, overlaps)."""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd
import pytest

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
