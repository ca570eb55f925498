"""Time column types: classification, compatibility, and the ordinal used for comparisons.

Every time column is compared through its *ordinal*: microseconds since the epoch for
``timestamp``, ``timestamp_ntz`` and ``date`` (so a date and a timestamp compare as
midnight of that date), the value itself for numbers. Durations are parsed into the
same unit (see :mod:`chronojoin._validate.durations`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin.errors import TimeTypeError

#: The ends of the long range, where time ordinals saturate instead of overflowing.
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000
MICROS_PER_SECOND = 1_000_000
#: Days from 1970-01-01 whose midnight still fits a microsecond ``long`` (~292,000 years).
DATE_DAYS_LIMIT = LONG_MAX // MICROS_PER_DAY


class TimeKind(str, enum.Enum):
    """The family a time column belongs to."""

    TIMESTAMP = "timestamp"
    TIMESTAMP_NTZ = "timestamp_ntz"
    DATE = "date"
    INTEGER = "integer"
    FLOAT = "float"

    @property
    def temporal(self) -> bool:
        """Whether durations for this kind are time spans (not plain numbers)."""
        return self in (TimeKind.TIMESTAMP, TimeKind.TIMESTAMP_NTZ, TimeKind.DATE)


_INTEGER_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_FLOAT_TYPES = (T.FloatType, T.DoubleType)
#: The most digits a decimal time may have: up to 15 a double holds every such value
#: apart and in order; whole decimals up to 18 digits are compared exactly as longs.
DECIMAL_AS_DOUBLE, DECIMAL_AS_LONG = 15, 18


def time_kind(data_type: T.DataType, *, argument: str, column: str, side: str) -> TimeKind:
    """Classify a time column's type, or raise naming the argument, column and side."""
    if isinstance(data_type, T.TimestampNTZType):
        return TimeKind.TIMESTAMP_NTZ
    if isinstance(data_type, T.TimestampType):
        return TimeKind.TIMESTAMP
    if isinstance(data_type, T.DateType):
        return TimeKind.DATE
    if isinstance(data_type, _INTEGER_TYPES):
        return TimeKind.INTEGER
    if isinstance(data_type, _FLOAT_TYPES):
        return TimeKind.FLOAT
    if isinstance(data_type, T.DecimalType):
        if data_type.scale == 0 and data_type.precision <= DECIMAL_AS_LONG:
            return TimeKind.INTEGER
        if data_type.precision <= DECIMAL_AS_DOUBLE:
            return TimeKind.FLOAT
        msg = (
            f"`{argument}`: column {column!r} of {side} has type "
            f"{data_type.simpleString()}, too wide to compare exactly as a time (at most "
            f"{DECIMAL_AS_DOUBLE} digits, or {DECIMAL_AS_LONG} with scale 0); cast it to "
            "bigint, double or a timestamp"
        )
        raise TimeTypeError(msg)
    msg = (
        f"`{argument}`: column {column!r} of {side} has type {data_type.simpleString()}; "
        "expected timestamp, timestamp_ntz, date, an integer type, float, double or "
        "decimal"
    )
    raise TimeTypeError(msg)


def common_kind(
    kinds: list[tuple[TimeKind, str, str, T.DataType]],
) -> TimeKind:
    """Return the kind in which several time columns are compared.

    ``kinds`` holds ``(kind, description, column, type)`` for each column, e.g.
    ``(TimeKind.DATE, "left_on", "day", DateType())``. Numbers compare with numbers
    (integer with float gives float); dates compare with either timestamp kind;
    ``timestamp`` and ``timestamp_ntz`` do not mix (the result would depend on the
    session time zone).
    """
    found = {k for k, *_ in kinds}
    numeric = {TimeKind.INTEGER, TimeKind.FLOAT}
    if found <= numeric:
        return TimeKind.FLOAT if TimeKind.FLOAT in found else TimeKind.INTEGER
    temporal = found - numeric
    if found & numeric or {TimeKind.TIMESTAMP, TimeKind.TIMESTAMP_NTZ} <= temporal:
        described = ", ".join(
            f"{arg} {col!r} ({dtype.simpleString()})" for _, arg, col, dtype in kinds
        )
        hint = (
            "cast one side so both are numbers, or both are dates/timestamps"
            if found & numeric
            else "cast one side so both are timestamp or both are timestamp_ntz"
        )
        msg = f"incompatible time columns: {described}; {hint}"
        raise TimeTypeError(msg)
    if TimeKind.TIMESTAMP_NTZ in temporal:
        return TimeKind.TIMESTAMP_NTZ
    if TimeKind.TIMESTAMP in temporal:
        return TimeKind.TIMESTAMP
    return TimeKind.DATE


#: Whole digits of the integer types a decimal time compares exactly with.
_WHOLE_DIGITS: dict[type[T.DataType], int] = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10}


def exact_decimal(types: Sequence[T.DataType]) -> T.DecimalType | None:
    """The decimal type holding every value of ``types`` exactly, when distances need it.

    Decimal times with a fraction (``decimal(10, 2)``) have double ordinals, which keep
    their order but not their differences: ``0.80 - 0.10`` is past ``0.70`` in doubles.
    Such ordinals (of decimals up to 15 digits, and integers up to ``int``) cast back
    to this type are the values they came from, so tolerances and distances compared
    there are exact. ``None`` when no column has a fraction, or one is ``bigint`` or
    floating point (those keep double arithmetic).
    """
    scale, whole = 0, 0
    for t in types:
        if isinstance(t, T.DecimalType) and t.precision <= DECIMAL_AS_DOUBLE:
            scale, whole = max(scale, t.scale), max(whole, t.precision - t.scale)
        elif type(t) in _WHOLE_DIGITS:
            whole = max(whole, _WHOLE_DIGITS[type(t)])
        else:
            return None
    if scale == 0:
        return None
    # one more digit for the difference of two values
    return T.DecimalType(whole + scale + 1, scale)


def ordinal(column: Column, kind: TimeKind) -> Column:
    """Map a time column to a number that orders and subtracts like the time.

    Temporal kinds give microseconds since the epoch (``long``), integers ``long``,
    floats ``double``. NaN is mapped to NULL so that it never matches.
    """
    if kind is TimeKind.TIMESTAMP:
        return F.unix_micros(column)
    if kind is TimeKind.TIMESTAMP_NTZ:
        # The difference of two timestamp_ntz is a day-time interval computed without a
        # time zone (``timestamp_diff`` goes through the session zone: a wall time in
        # its spring-forward gap took the value of the hour after).
        epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
        return interval_micros(column - epoch, T.DayTimeIntervalType())
    if kind is TimeKind.DATE:
        return _date_micros(column)
    if kind is TimeKind.INTEGER:
        return column.cast("long")
    as_double = column.cast("double")
    return F.when(F.isnan(as_double), F.lit(None).cast("double")).otherwise(as_double)


#: Microseconds per unit of a day-time interval's last field (DAY, HOUR, MINUTE, SECOND).
_INTERVAL_UNITS = {
    T.DayTimeIntervalType.DAY: MICROS_PER_DAY,
    T.DayTimeIntervalType.HOUR: 3_600_000_000,
    T.DayTimeIntervalType.MINUTE: 60_000_000,
    T.DayTimeIntervalType.SECOND: MICROS_PER_SECOND,
}


def interval_micros(interval: Column, data_type: T.DayTimeIntervalType) -> Column:
    """A day-time interval in microseconds, exact, whatever the session time zone.

    Spark casts an interval to a decimal number of its type's last field (days, hours,
    minutes or seconds); a day is 24 hours.
    """
    # decimal(20,6) holds any day-time interval; the product's type needs no rounding.
    whole = F.lit(_INTERVAL_UNITS[data_type.endField]).cast("decimal(11,0)")
    return (interval.cast("decimal(20,6)") * whole).cast("long")


def _date_micros(column: Column) -> Column:
    """Midnight UTC of a date in microseconds; a clear error past the long range.

    Spark's dates reach about 5.8 million years, microseconds about 292,000: a date
    beyond that has no microsecond time, so the query stops with a message naming the
    column instead of an arithmetic overflow.
    """
    days = F.unix_date(column).cast("long")
    name = _label(column)
    msg = (
        f"date column {name!r} holds a date more than {DATE_DAYS_LIMIT:,} days "
        "(about 292,000 years) from 1970-01-01, beyond the microsecond range chronojoin "
        f"compares times in; filter such dates out or join on unix_date({name}) as an "
        "integer time"
    )
    outside = F.abs(days) > F.lit(DATE_DAYS_LIMIT)
    return F.when(outside, F.raise_error(F.lit(msg)).cast("long")).otherwise(
        days * F.lit(MICROS_PER_DAY)
    )


def _label(column: Column) -> str:
    """The name inside ``Column<'name'>`` (classic and Connect print it alike)."""
    text = str(column)
    if text.startswith("Column<'") and text.endswith("'>"):
        return text[len("Column<'") : -2]
    return text


def ordinal_of(column: Column, data_type: T.DataType) -> Column:
    """:func:`ordinal` for a column whose own type decides the mapping."""
    kind = time_kind(data_type, argument="time", column=str(column), side="input")
    return ordinal(column, kind)
