"""Validation of ``band_join`` arguments into a frozen spec (no Spark job runs here)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import partial
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from chronojoin._plan.binning import check_bin_size, check_copies
from chronojoin._plan.longs import within_beyond
from chronojoin._plan.output import right_output_names
from chronojoin._typing import Closed, How
from chronojoin._validate import columns as C
from chronojoin._validate.durations import parse_duration
from chronojoin._validate.options import check_literal, check_str
from chronojoin._validate.timetypes import LONG_MAX, LONG_MIN, TimeKind, common_kind, time_kind
from chronojoin.errors import DurationError, TimeTypeError


class BoundMode(str, enum.Enum):
    """How a per-row bound column is read."""

    OFFSET = "offset"  # numeric time columns: a number in the time column's unit
    SECONDS = "seconds"  # temporal time columns: a number of seconds
    INTERVAL = "interval"  # temporal time columns: an ``interval day to second``
    ABSOLUTE = "absolute"  # temporal time columns: a timestamp/date, the bound itself


@dataclass(frozen=True)
class Bound:
    """A window bound: a constant offset (ordinal units) or a column of left."""

    value: int | float | None = None
    column: str | None = None
    mode: BoundMode | None = None
    kind: TimeKind | None = None  # the bound column's own kind (numeric/absolute)


@dataclass(frozen=True)
class BandSpec:
    """A validated band join."""

    left: DataFrame
    right: DataFrame
    left_on: str
    right_on: str
    kind: TimeKind
    left_kind: TimeKind
    right_kind: TimeKind
    lower: Bound
    upper: Bound
    closed: Closed
    keys: C.KeyPair
    how: How
    bin_size: int | float | None
    outputs: tuple[tuple[str, str], ...]

    @property
    def constant(self) -> bool:
        """Whether both bounds are constants (every row has the same window)."""
        return self.lower.column is None and self.upper.column is None


def band_spec(
    left: Any,
    right: Any,
    *,
    left_on: Any,
    right_on: Any,
    lower: Any,
    upper: Any,
    closed: Any,
    by: Any,
    left_by: Any,
    right_by: Any,
    how: Any,
    bin_size: Any,
    suffix: Any,
) -> BandSpec:
    """Check every argument of :func:`chronojoin.band_join` and build its spec."""
    left = C.check_dataframe("left", left)
    right = C.check_dataframe("right", right)
    lf = C.field(left.schema, argument="left_on", name=left_on, side="left")
    rf = C.field(right.schema, argument="right_on", name=right_on, side="right")
    lk = time_kind(lf.dataType, argument="left_on", column=lf.name, side="left")
    rk = time_kind(rf.dataType, argument="right_on", column=rf.name, side="right")
    times = [(lk, "left_on", lf.name, lf.dataType), (rk, "right_on", rf.name, rf.dataType)]
    kind = common_kind(times)
    lower_b = _bound("lower", lower, left.schema, kind, lf, times)
    upper_b = _bound("upper", upper, left.schema, kind, lf, times)
    closed = check_literal("closed", closed, Closed)
    how = check_literal("how", how, How)
    keys = C.keys(left.schema, right.schema, by=by, left_by=left_by, right_by=right_by)
    size = check_bin_size(bin_size, kind)
    if size is not None and lower_b.column is None and upper_b.column is None:
        _check_copies(bin_size, size, lower, upper, lower_b, upper_b, kind)
    suffix = check_str("suffix", suffix)
    outputs = right_output_names(left.columns, right.columns, keys, suffix=suffix,
                                 prefixes=False, case_sensitive=partial(C.case_sensitive, left))
    return BandSpec(
        left, right, lf.name, rf.name, kind, lk, rk, lower_b, upper_b, closed, keys, how,
        size, tuple(outputs),
    )


def _check_copies(
    bin_size: Any, size: float, lower: Any, upper: Any, lower_b: Bound, upper_b: Bound,
    kind: TimeKind,
) -> None:
    """An explicit bin size must not copy every row of a constant window into too many bins."""
    assert lower_b.value is not None and upper_b.value is not None
    width = float(upper_b.value) - float(lower_b.value)
    if kind is not TimeKind.FLOAT:  # long times: a window reaches at most across them all
        width = min(width, float(LONG_MAX) - float(LONG_MIN))
    unit = " microseconds" if kind.temporal else ""
    window = f"the window from lower={lower!r} to upper={upper!r} is {width:g}{unit} wide"
    check_copies(bin_size, float(size), width, window, stacklevel=4)  # band_join's caller


def _bound(
    argument: str, value: Any, schema: T.StructType, kind: TimeKind, time_field: T.StructField,
    times: list[tuple[TimeKind, str, str, T.DataType]],
) -> Bound:
    """Read a bound: a constant duration, or (a string naming a column of left) a per-row bound."""
    if isinstance(value, str) and value in schema.names:
        return _column_bound(argument, schema[value], kind, time_field, times)
    try:
        offset = parse_duration(argument, value, kind)
    except DurationError as e:
        if not isinstance(value, str):
            raise
        # a misspelt column name is read as a duration: say it names no column either
        near = [n for n in schema.names if n.lower() == value.strip().lower()]
        hint = (f"; the left column is spelt {near[0]!r}" if near else
                f"; nor is it a column of left (a per-row bound); available: {schema.names}")
        raise DurationError(f"{e}{hint}") from None
    # clamped, the window's width is a float (10**400 is none)
    return Bound(value=within_beyond(offset))


def _column_bound(
    argument: str, f: T.StructField, kind: TimeKind, time_field: T.StructField,
    times: list[tuple[TimeKind, str, str, T.DataType]],
) -> Bound:
    dtype = f.dataType
    numeric = isinstance(dtype, T.NumericType)
    if not kind.temporal:
        if numeric:
            own = time_kind(dtype, argument=argument, column=f.name, side="left")
            return Bound(column=f.name, mode=BoundMode.OFFSET, kind=own)
        expected = "a number (an offset in the unit of the time columns)"
    else:
        if numeric:
            return Bound(column=f.name, mode=BoundMode.SECONDS)
        if isinstance(dtype, T.DayTimeIntervalType):
            return Bound(column=f.name, mode=BoundMode.INTERVAL)
        if isinstance(dtype, (T.TimestampType, T.TimestampNTZType, T.DateType)):
            own = time_kind(dtype, argument=argument, column=f.name, side="left")
            # an error names both time columns and the bound, as they are
            common_kind([*times, (own, argument, f.name, dtype)])
            return Bound(column=f.name, mode=BoundMode.ABSOLUTE, kind=own)
        expected = (
            "a number of seconds, an interval day to second (offsets from left_on), "
            "or a timestamp/date (the bound itself)"
        )
    msg = (
        f"`{argument}`: per-row bound column {f.name!r} of left has type "
        f"{dtype.simpleString()} but left_on {time_field.name!r} is "
        f"{time_field.dataType.simpleString()}; expected {expected}"
    )
    raise TimeTypeError(msg)
