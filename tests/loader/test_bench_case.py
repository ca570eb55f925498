"""The loader benchmark case on tiny data: every method agrees, runs repeat from the same state."""

from __future__ import annotations

import pytest

from chronojoin.bench.cases.loader import cases


@pytest.mark.slow
def test_quick_case_methods_agree_and_repeat(spark, tmp_path):
    (case,) = cases(sizes=[2_000], partitions=20, data_dir=str(tmp_path))
    inputs = case.load(spark)
    assert case.params["index_bytes_per_key"] > 0
    answers = {m.name: m.build(inputs) for m in case.methods}
    # 100 batch rows: 90 new keys, 5 stored keys, 5 second rows of new keys
    assert answers == {"loader": (90, None), "loader_4x": (90, None), "naive": (90, None)}
    loader = next(m for m in case.methods if m.name == "loader")
    assert loader.build(inputs) == (90, None)  # the second run starts from the same state
