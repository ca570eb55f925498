"""Validation of ``interval_join`` arguments into a frozen spec (no Spark job runs here)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from pyspark.sql import DataFrame

from chronojoin._plan.binning import check_bin_size
from chronojoin._plan.output import right_output_names
from chronojoin._typing import Closed, How
from chronojoin._validate import columns as C
from chronojoin._validate.options import check_literal, check_str
from chronojoin._validate.timetypes import TimeKind, common_kind, time_kind


@dataclass(frozen=True)
class IntervalJoinSpec:
    """A validated interval join; ``left_end`` None means left rows are points."""

    left: DataFrame
    right: DataFrame
    left_start: str
    left_end: str | None
    right_start: str
    right_end: str
    kinds: dict[str, TimeKind]  # column argument -> the column's own kind
    kind: TimeKind
    closed: Closed
    keys: C.KeyPair
    how: How
    bin_size: int | float | None
    outputs: tuple[tuple[str, str], ...]


def interval_join_spec(
    left: Any,
    right: Any,
    *,
    left_start: Any,
    left_end: Any,
    right_start: Any,
    right_end: Any,
    closed: Any,
    by: Any,
    left_by: Any,
    right_by: Any,
    how: Any,
    bin_size: Any,
    suffix: Any,
) -> IntervalJoinSpec:
    """Check every argument of :func:`chronojoin.interval_join` and build its spec."""
    left = C.check_dataframe("left", left)
    right = C.check_dataframe("right", right)
    wanted = [
        ("left_start", left_start, left, "left"),
        ("right_start", right_start, right, "right"),
        ("right_end", right_end, right, "right"),
    ]
    if left_end is not None:
        wanted.insert(1, ("left_end", left_end, left, "left"))
    found = []
    for argument, name, df, side in wanted:
        f = C.field(df.schema, argument=argument, name=name, side=side)
        kind = time_kind(f.dataType, argument=argument, column=f.name, side=side)
        found.append((kind, argument, f.name, f.dataType))
    kind = common_kind(found)
    closed = check_literal("closed", closed, Closed)
    how = check_literal("how", how, How)
    keys = C.keys(left.schema, right.schema, by=by, left_by=left_by, right_by=right_by)
    size = check_bin_size(bin_size, kind)
    suffix = check_str("suffix", suffix)
    outputs = right_output_names(left.columns, right.columns, keys, suffix=suffix,
                                 case_sensitive=partial(C.case_sensitive, left), prefixes=False)
    return IntervalJoinSpec(
        left, right, left_start, left_end, right_start, right_end,
        {argument: k for k, argument, _, _ in found}, kind, closed, keys, how, size,
        tuple(outputs),
    )
