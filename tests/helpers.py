"""Small helpers shared by the tests of the automatic choices."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import DataFrame

#: For the tests whose inputs Spark cannot size: rows from local Python data on a classic
#: session. A Spark Connect client sends such rows inside the plan, which Spark sizes.
classic_only = pytest.mark.skipif(
    bool(os.environ.get("CHRONOJOIN_TEST_REMOTE")),
    reason="needs local rows Spark cannot size (a classic session's)")


def small_input_modules() -> list[ModuleType]:
    """The modules whose ``SMALL_INPUT_BYTES`` (0: off) lets small inputs skip statistics."""
    from chronojoin.asof import choose as asof
    from chronojoin.band import plan as band
    from chronojoin.intervals import choose as intervals

    return [asof, band, intervals]


def parquet_copies(tmp_path: Any, *frames: DataFrame) -> list[DataFrame]:
    """Each frame written to Parquet under ``tmp_path`` and read back: a plan Spark sizes
    from its files (frames of local Python data it cannot size)."""
    out = []
    for i, df in enumerate(frames):
        path = str(tmp_path / f"copy{i}")
        df.write.parquet(path)
        out.append(df.sparkSession.read.parquet(path))
    return out


def refuse(monkeypatch: Any, module: Any, name: str) -> None:
    """Make ``module.name`` (a statistics job) fail the test if it is called."""
    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"{name} ran: the statistics job was not to run")

    monkeypatch.setattr(module, name, refused)
