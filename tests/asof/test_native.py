"""``strategy="native"`` (Spark's SortMergeAsOfJoin) against the brute-force oracle."""

from __future__ import annotations

import pytest

import chronojoin as cj
from chronojoin.asof.strategies.native import CONF
from chronojoin.errors import InvalidArgumentError
from tests.asof.data import random_rows, tolerance_for
from tests.asof.test_conformance import _check, _frames, _oracle


@pytest.fixture
def smj(spark):
    """The session with Spark's sort-merge as-of join on, restored afterwards."""
    spark.conf.set(CONF, "true")
    try:
        yield spark
    finally:
        spark.conf.unset(CONF)


# every direction x exactness, every time type (pairwise, to keep the suite short)
@pytest.mark.parametrize(("direction", "exact", "kind"), [
    ("backward", True, "int"), ("backward", False, "int"),
    ("forward", True, "int"), ("forward", False, "double"),
    ("backward", False, "timestamp"), ("forward", True, "timestamp"),
    ("backward", True, "date"), ("forward", False, "date"),
    ("backward", True, "double"),
])
def test_native_against_brute_force(smj, direction, exact, kind):
    left, right = random_rows(seed=31 + exact, t_max=40)
    ldf, rdf = _frames(smj, left, right, kind)
    tol = None if kind == "int" else tolerance_for(5, kind)
    how = "inner" if exact and kind == "double" else "left"
    out = cj.asof_join(ldf, rdf, on="t", by="k", direction=direction, allow_exact_matches=exact,
                       tolerance=tol, how=how, strategy="native")
    expected = _oracle(left, right, kind, direction=direction, allow_exact_matches=exact,
                       tolerance=None if tol is None else (5 / 4 if kind == "double" else 5))
    _check(out, left, expected, how)
    assert out.columns == cj.asof_join(ldf, rdf, on="t", by="k", strategy="union").columns


def test_native_several_right_tables_and_no_key(smj):
    left, right = random_rows(seed=8, null_share=0.0, t_max=200)
    ldf, rdf = _frames(smj, left, right, "int")
    specs = [cj.Right(rdf, on="t", by="k", prefix="a_"),
             cj.Right(rdf, on="t", by="k", prefix="b_", direction="forward")]
    got = cj.asof_join(ldf, specs, on="t", by="k", strategy="native")
    want = cj.asof_join(ldf, specs, on="t", by="k", strategy="union")
    cols = ["lid", "a_t", "b_t"]
    assert sorted(got.select(*cols).collect()) == sorted(want.select(*cols).collect())
    got = cj.asof_join(ldf, rdf.drop("k"), on="t", strategy="native")
    want = cj.asof_join(ldf, rdf.drop("k"), on="t", strategy="union")
    cols = ["lid", "t_right"]
    assert sorted(got.select(*cols).collect()) == sorted(want.select(*cols).collect())


@pytest.mark.parametrize(("kind", "low", "high"), [("bigint", -(2**63), 2**63 - 1),
                                                   ("double", float("-inf"), float("inf"))])
def test_native_at_the_ends_of_time(smj, kind, low, high):
    """Spark's operator subtracts times looking forward: chronojoin looks backward over
    reversed times instead, so nothing overflows and -inf meets -inf."""
    left = smj.createDataFrame([(1, "a", low), (2, "a", high)], f"lid int, k string, t {kind}")
    zero = 0.0 if kind == "double" else 0
    right = smj.createDataFrame([(10, "a", low), (11, "a", high), (12, "a", zero)],
                                f"rid int, k string, t {kind}")
    got = {}
    for direction, exact in (("forward", True), ("forward", False), ("backward", False)):
        out = cj.asof_join(left, right, on="t", by="k", direction=direction,
                           allow_exact_matches=exact, strategy="native")
        got[direction, exact] = sorted((r.lid, r.rid) for r in out.select("lid", "rid").collect())
    assert got == {("forward", True): [(1, 10), (2, 11)], ("forward", False): [(1, 12), (2, None)],
                   ("backward", False): [(1, None), (2, 12)]}


def test_native_refuses_what_it_cannot_do(spark):
    ldf, rdf = _frames(spark, *random_rows(seed=2), "int")
    with pytest.raises(InvalidArgumentError, match=f"`strategy`: 'native'.*{CONF}=true"):
        cj.asof_join(ldf, rdf, on="t", by="k", strategy="native")
    spark.conf.set(CONF, "true")
    try:
        with pytest.raises(InvalidArgumentError, match=r"`direction`: 'native'.*'nearest'"):
            cj.asof_join(ldf, rdf, on="t", by="k", direction="nearest", strategy="native")
        with pytest.raises(InvalidArgumentError, match=r"`tiebreak`: 'native'.*\['tb'\]"):
            cj.asof_join(ldf, rdf, on="t", by="k", tiebreak="tb", strategy="native")
        with pytest.raises(InvalidArgumentError, match="`buckets`: 'native'"):
            cj.asof_join(ldf, rdf, on="t", by="k", buckets=4, strategy="native")
    finally:
        spark.conf.unset(CONF)
