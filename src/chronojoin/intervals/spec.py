"""Validation of ``interval_aggregate`` arguments into a frozen spec (no Spark job runs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from chronojoin._plan.longs import within_beyond
from chronojoin._typing import AggFunction, Closed, How, IntervalStrategy
from chronojoin._validate import columns as C
from chronojoin._validate.durations import parse_duration
from chronojoin._validate.options import check_bucket_count, check_literal, is_count
from chronojoin._validate.timetypes import TimeKind, common_kind, time_kind
from chronojoin.errors import DurationError, InvalidArgumentError

#: Functions a running (+value at the start, -value at the end) sweep computes exactly.
INVERTIBLE: frozenset[str] = frozenset({"sum", "count", "mean"})

#: Decimal sums of at most this many digits never overflow a running sum: its 38 digits
#: leave 10 for the intervals open at once. A wider one can overflow where no point's
#: own sum does (an error with ANSI on).
RUNNING_SUM_DIGITS = 28
#: A sweep's decimal mean rounds once to the mean's scale, as Spark's ``avg``, while
#: ``precision + 10 + max(0, 2 - scale)`` digits fit this (see ``events._decimal_mean``);
#: a wider column's mean keeps fewer digits than ``avg``'s.
MEAN_DIVIDEND_DIGITS = 34

#: Sort rank of (start event, point, end event) at equal times, per ``closed``.
#: A point sees every event ranked before it at its own time.
TIE_ORDER: dict[str, tuple[int, int, int]] = {
    "both": (0, 1, 2),  # start, point, end: both bounds count
    "left": (0, 2, 1),  # start, end, point: the end no longer counts
    "right": (1, 0, 2),  # point, start, end: the start does not count yet
    "neither": (2, 1, 0),  # end, point, start
}


@dataclass(frozen=True)
class AggSpec:
    """One output aggregate: ``name = function(column)`` over the covering intervals."""

    name: str
    function: AggFunction
    column: str | None
    source_type: T.DataType | None
    result_type: T.DataType


@dataclass(frozen=True)
class Buckets:
    """The ``buckets=`` argument: a bucket count, or a width in ordinal units."""

    count: int | None = None
    width: int | float | None = None


@dataclass(frozen=True)
class IntervalSpec:
    """A validated ``interval_aggregate`` call."""

    points: DataFrame
    intervals: DataFrame
    keys: C.KeyPair
    time: str
    start: str
    end: str
    kinds: tuple[TimeKind, TimeKind, TimeKind]  # of time, start, end
    kind: TimeKind  # the kind in which they are compared
    aggs: tuple[AggSpec, ...]
    closed: Closed
    how: How
    strategy: IntervalStrategy
    buckets: Buckets | None

    @property
    def sweep_limit(self) -> str | None:
        """Why a sweep could differ from a direct aggregate here, or None when it cannot.

        Functions a running sum cannot compute, and decimals past the sweeps' limits
        (:data:`RUNNING_SUM_DIGITS`, :data:`MEAN_DIVIDEND_DIGITS`). Floats are not
        listed: their running sums differ from a direct sum by rounding (documented).
        """
        names = sorted({a.function for a in self.aggs} - INVERTIBLE)
        if names:
            return f"{names} cannot be swept with running sums"
        for a in self.aggs:
            reason = _decimal_limit(a)
            if reason is not None:
                return reason
        return None

    @property
    def value_columns(self) -> tuple[str, ...]:
        """Interval columns read by the aggregates, each once, in first-use order."""
        seen: list[str] = []
        for a in self.aggs:
            if a.column is not None and a.column not in seen:
                seen.append(a.column)
        return tuple(seen)

    @property
    def ties(self) -> tuple[int, int, int]:
        """Sort ranks of (start, point, end) events at equal times."""
        return TIE_ORDER[self.closed]


def sum_type(data_type: T.DataType) -> T.DataType:
    """Return the type Spark's ``sum`` returns for a column of ``data_type``."""
    if isinstance(data_type, T.DecimalType):
        return T.DecimalType(min(38, data_type.precision + 10), data_type.scale)
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return T.DoubleType()
    return T.LongType()


def mean_type(data_type: T.DataType) -> T.DataType:
    """Return the type Spark's ``avg`` returns for a column of ``data_type``."""
    if isinstance(data_type, T.DecimalType):
        return T.DecimalType(min(38, data_type.precision + 4), min(38, data_type.scale + 4))
    return T.DoubleType()


def _decimal_limit(a: AggSpec) -> str | None:
    """Why a running sum of a decimal aggregate could differ from Spark's, or None."""
    t = a.source_type
    if not isinstance(t, T.DecimalType) or a.function not in ("sum", "mean"):
        return None
    what = f"{a.function} of {t.simpleString()} column {a.column!r}"
    if a.function == "sum" and t.precision > RUNNING_SUM_DIGITS:
        return f"a running {what} can overflow where the direct sum does not"
    if a.function == "mean" and t.precision + 10 + max(0, 2 - t.scale) > MEAN_DIVIDEND_DIGITS:
        return f"a swept {what} keeps fewer digits than avg"
    return None


def _numeric(data_type: T.DataType) -> bool:
    return isinstance(data_type, T.NumericType)


def _result_type(function: str, data_type: T.DataType | None) -> T.DataType:
    if function == "count":
        return T.LongType()
    assert data_type is not None
    if function == "sum":
        return sum_type(data_type)
    if function == "mean":
        return mean_type(data_type)
    if function in ("collect_list", "collect_set"):
        return T.ArrayType(data_type, containsNull=False)
    return data_type


def _one_agg(name: Any, value: Any, intervals: DataFrame, taken: list[str],
             fold: Callable[[str], str], columns: list[str]) -> AggSpec:
    if not isinstance(name, str) or not name:
        msg = f"`aggs`: output names must be non-empty strings; got {name!r}"
        raise InvalidArgumentError(msg)
    argument = f"aggs[{name!r}]"
    if isinstance(value, str):
        value = (value, None)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        msg = (
            f"`{argument}` must be a (function, column) pair such as ('sum', 'points') "
            f"or ('count', None); got {value!r}"
        )
        raise InvalidArgumentError(msg)
    function, column = value
    check_literal(f"{argument} function", function, AggFunction)
    clash = next((c for c in taken if fold(c) == fold(name)), None)
    if clash is not None:
        what = (f"a column of points {columns}" if clash in columns
                else f"the output name {clash!r}")
        msg = f"`{argument}`: output name {name!r} clashes with {what}; choose another name"
        raise InvalidArgumentError(msg)
    if column is None:
        if function != "count":
            msg = f"`{argument}`: {function!r} needs a column of intervals; only 'count' takes None"
            raise InvalidArgumentError(msg)
        return AggSpec(name, function, None, None, T.LongType())
    dtype = C.field(intervals.schema, argument=argument, name=column, side="intervals").dataType
    if function in ("sum", "mean") and not _numeric(dtype):
        msg = (
            f"`{argument}`: {function!r} needs a numeric column; column {column!r} of "
            f"intervals is {dtype.simpleString()}"
        )
        raise InvalidArgumentError(msg)
    kind = C.incomparable(dtype, variant=function != "collect_set")
    if function in ("min", "max", "collect_set") and kind:
        msg = (
            f"`{argument}`: {function!r} cannot compare values of column {column!r} of "
            f"intervals ({dtype.simpleString()}: {kind} cannot be compared)"
        )
        raise InvalidArgumentError(msg)
    return AggSpec(name, function, column, dtype, _result_type(function, dtype))


def _aggs(aggs: Any, points: DataFrame, intervals: DataFrame) -> tuple[AggSpec, ...]:
    if not isinstance(aggs, Mapping) or not aggs:
        msg = (
            "`aggs` must be a non-empty dict of output name -> (function, column), e.g. "
            f"{{'total': ('sum', 'points'), 'n': ('count', None)}}; got {aggs!r}"
        )
        raise InvalidArgumentError(msg)
    columns = list(points.columns)
    fold = C.fold_of(points, [*columns, *(name for name in aggs if isinstance(name, str))])
    taken, specs = list(columns), []
    for name, value in aggs.items():
        specs.append(_one_agg(name, value, intervals, taken, fold, columns))
        taken.append(name)
    return tuple(specs)


def _buckets(value: Any, kind: TimeKind) -> Buckets | None:
    if value is None:
        return None
    if is_count(value):  # a numpy integer too: a count, never a width
        return Buckets(count=check_bucket_count("buckets", value))
    width = parse_duration("buckets", value, kind)
    if width <= 0:
        msg = f"`buckets`: a bucket width must be positive; got {value!r}"
        raise DurationError(msg)
    # a width of BEYOND already holds every long time in one or two buckets
    return Buckets(width=within_beyond(width))


def _time(df: DataFrame, argument: str, name: Any, side: str) -> tuple[TimeKind, Any]:
    f = C.field(df.schema, argument=argument, name=name, side=side)
    kind = time_kind(f.dataType, argument=argument, column=name, side=side)
    return kind, (kind, argument, name, f.dataType)


def build_spec(
    points: Any,
    intervals: Any,
    *,
    by: Any,
    left_by: Any,
    right_by: Any,
    time: Any,
    start: Any,
    end: Any,
    aggs: Any,
    closed: Any,
    how: Any,
    strategy: Any,
    buckets: Any,
) -> IntervalSpec:
    """Check every argument of :func:`chronojoin.interval_aggregate` and build its spec."""
    points = C.check_dataframe("points", points)
    intervals = C.check_dataframe("intervals", intervals)
    check_literal("closed", closed, Closed)
    check_literal("how", how, How)
    check_literal("strategy", strategy, IntervalStrategy)
    if len(set(points.columns)) != len(points.columns):
        msg = f"`points` has duplicate column names: {points.columns}; rename them first"
        raise InvalidArgumentError(msg)
    keys = C.keys(points.schema, intervals.schema, by=by, left_by=left_by, right_by=right_by,
                  left_side="points", right_side="intervals")
    tk, tdesc = _time(points, "time", time, "points")
    sk, sdesc = _time(intervals, "start", start, "intervals")
    ek, edesc = _time(intervals, "end", end, "intervals")
    kind = common_kind([tdesc, sdesc, edesc])
    specs = _aggs(aggs, points, intervals)
    if strategy in ("sweep", "bucketed_sweep"):
        for a in specs:
            if a.function not in INVERTIBLE:
                msg = (
                    f"`strategy`: {strategy!r} computes running aggregates and cannot "
                    f"compute {a.function!r} (aggs[{a.name!r}]); use strategy='join' or "
                    "'auto', or compute it in a separate call"
                )
                raise InvalidArgumentError(msg)
    parsed = _buckets(buckets, kind)
    if parsed is not None and strategy in ("sweep", "join"):
        msg = (
            f"`buckets` applies to strategy 'bucketed_sweep' (or 'auto'); got "
            f"buckets={buckets!r} with strategy={strategy!r}"
        )
        raise InvalidArgumentError(msg)
    return IntervalSpec(
        points, intervals, keys, time, start, end, (tk, sk, ek), kind, specs,
        closed, how, strategy, parsed,
    )
