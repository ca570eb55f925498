"""Metamorphic properties: grouped equals per-key, inner is left minus the unmatched."""

from __future__ import annotations

import pytest

import chronojoin as cj
from tests.asof.data import random_rows


@pytest.fixture(scope="module")
def data(spark):
    left, right = random_rows(seed=99, n_left=200, n_right=300, t_max=100)
    ldf = spark.createDataFrame([tuple(r.values()) for r in left],
                                "lid int, k string, t int, label int")
    rdf = spark.createDataFrame([tuple(r.values()) for r in right],
                                "rid int, k string, t int, v double, tb int")
    return ldf, rdf


@pytest.mark.parametrize("strategy", ["union", "sort_merge"])
def test_grouped_equals_per_key(data, strategy):
    ldf, rdf = data
    whole = {r.lid: r.rid for r in cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb",
                                                 strategy=strategy).collect()}
    for key in ("k0", "k3"):
        part = cj.asof_join(ldf.where(ldf.k == key), rdf.where(rdf.k == key).drop("k"),
                            on="t", tiebreak="tb", strategy=strategy)
        for r in part.collect():
            assert whole[r.lid] == r.rid


def test_inner_is_left_minus_unmatched(data):
    ldf, rdf = data
    left = cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb", direction="nearest")
    inner = cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb", direction="nearest",
                         how="inner")
    expected = sorted((r.lid, r.rid) for r in left.collect() if r.rid is not None)
    assert sorted((r.lid, r.rid) for r in inner.collect()) == expected


def test_duplicate_left_rows_each_returned(data):
    ldf, rdf = data
    doubled = ldf.unionAll(ldf)
    out = cj.asof_join(doubled, rdf, on="t", by="k")
    assert out.count() == 2 * ldf.count()
