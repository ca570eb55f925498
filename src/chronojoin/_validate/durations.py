"""Durations: one parser for tolerances, window bounds and bin sizes.

A duration is returned in the ordinal unit of :mod:`chronojoin._validate.timetypes`:
microseconds for timestamp/date columns, the number itself for numeric columns.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import re
from decimal import Decimal
from typing import Any

from chronojoin._validate.timetypes import TimeKind
from chronojoin.errors import DurationError

_UNITS_MICROS = {
    "us": 1,
    "microsecond": 1,
    "microseconds": 1,
    "ms": 1_000,
    "millisecond": 1_000,
    "milliseconds": 1_000,
    "s": 1_000_000,
    "sec": 1_000_000,
    "secs": 1_000_000,
    "second": 1_000_000,
    "seconds": 1_000_000,
    "m": 60_000_000,
    "min": 60_000_000,
    "mins": 60_000_000,
    "minute": 60_000_000,
    "minutes": 60_000_000,
    "h": 3_600_000_000,
    "hr": 3_600_000_000,
    "hrs": 3_600_000_000,
    "hour": 3_600_000_000,
    "hours": 3_600_000_000,
    "d": 86_400_000_000,
    "day": 86_400_000_000,
    "days": 86_400_000_000,
    "w": 604_800_000_000,
    "week": 604_800_000_000,
    "weeks": 604_800_000_000,
}

_PART = re.compile(r"\s*([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*([a-zA-Z]+)\s*")
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


def _parse_text_micros(argument: str, text: str) -> int:
    """Parse ``"1 hour"``, ``"-90 seconds"``, ``"1h30m"`` into microseconds.

    A leading ``-`` before several parts negates them all (``"-1h30m"`` is -90
    minutes, as in pandas); a later part with a sign of its own is then ambiguous
    (Spark reads ``"-1 hour -30 minutes"`` as -90 minutes, ``"-1 hour +30 minutes"``
    as -30) and refused. ``"M"`` is refused too: a month in ISO 8601 and pandas.
    """
    stripped = text.strip()
    sign = 1
    if stripped.startswith("-") and _PART.fullmatch(stripped[1:].lstrip()) is None:
        sign, stripped = -1, stripped[1:].lstrip()
    pos, total, parts = 0, Decimal(0), 0
    while pos < len(stripped):
        match = _PART.match(stripped, pos)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _UNITS_MICROS:
            msg = (
                f"`{argument}`: cannot parse duration {text!r}; expected e.g. "
                "'90 seconds', '30 minutes', '1 hour', '7 days', '-1 hour'"
            )
            raise DurationError(msg)
        if match.group(2) == "M":
            msg = (f"`{argument}`: {text!r}: 'M' is a month in ISO 8601 and pandas, which "
                   "has no fixed length; write 'min' for minutes, or give days")
            raise DurationError(msg)
        if sign < 0 and match.group(1)[0] in "+-":
            msg = (f"`{argument}`: {text!r} is ambiguous: a leading '-' negates the whole "
                   "duration ('-1h30m' is -90 minutes), so give the other parts no sign")
            raise DurationError(msg)
        total += Decimal(match.group(1)) * _UNITS_MICROS[unit]
        pos, parts = match.end(), parts + 1
    if parts == 0:
        msg = f"`{argument}`: empty duration {text!r}"
        raise DurationError(msg)
    return sign * _whole_micros(argument, text, total)


def _whole_micros(argument: str, value: Any, micros: Decimal | int) -> int:
    """``micros`` as an int; a part below a microsecond is an error, not rounded.

    Spark's times count whole microseconds, so rounding would move a bound: a lower
    bound of -1.5 microseconds admits -1 but not -2, an upper bound the reverse.
    """
    if micros != int(micros):
        msg = (f"`{argument}`: {value!r} has a part below a microsecond, the unit of "
               "Spark's timestamps; give whole microseconds")
        raise DurationError(msg)
    return int(micros)


def _numpy_timedelta_micros(argument: str, value: Any) -> int:
    """A ``numpy.timedelta64`` in microseconds (months and years have no fixed length)."""
    import numpy as np

    if np.isnat(value):
        msg = f"`{argument}` must be a duration; got {value!r}"
        raise DurationError(msg)
    unit, step = np.datetime_data(value.dtype)
    if unit not in _NUMPY_UNIT_MICROS:  # months and years (numpy takes average lengths)
        msg = (f"`{argument}`: {value!r} has no fixed length (months and years vary, a "
               "value without a unit has none); give weeks, days or smaller units")
        raise DurationError(msg)
    count = int(value.astype(np.int64))  # in the value's own unit: no overflow
    return _whole_micros(argument, value, count * step * _NUMPY_UNIT_MICROS[unit])


#: numpy's fixed-length time units, in microseconds
_NUMPY_UNIT_MICROS = {
    "W": Decimal(604_800_000_000), "D": Decimal(86_400_000_000), "h": Decimal(3_600_000_000),
    "m": Decimal(60_000_000), "s": Decimal(1_000_000), "ms": Decimal(1_000), "us": Decimal(1),
    "ns": Decimal("1e-3"), "ps": Decimal("1e-6"), "fs": Decimal("1e-9"), "as": Decimal("1e-12"),
}


def parse_duration(argument: str, value: Any, kind: TimeKind) -> int | float:
    """Parse ``value`` into the ordinal unit of a time column of ``kind``.

    Parameters
    ----------
    argument
        The argument's name, used in error messages.
    value
        A number (numeric columns, a ``decimal.Decimal`` too; ``0`` is accepted for
        any kind), a ``datetime.timedelta`` (``pandas.Timedelta`` included), a
        ``numpy.timedelta64`` or a string such as ``"90 seconds"`` (temporal columns).
    kind
        The kind of the time column the duration applies to.

    Raises
    ------
    DurationError
        When the value cannot be parsed, is not finite, does not fit the kind, or has
        a part below a microsecond (temporal columns).

    Examples
    --------
    >>> parse_duration("tolerance", "1 hour", TimeKind.TIMESTAMP)
    3600000000
    >>> parse_duration("lower", -5, TimeKind.INTEGER)
    -5
    """
    if isinstance(value, bool) or value is None:
        msg = f"`{argument}` must be a duration; got {value!r}"
        raise DurationError(msg)
    if kind.temporal:
        if isinstance(value, _dt.timedelta):
            micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
            # pandas.Timedelta is a timedelta with nanoseconds on top
            nanos = getattr(value, "nanoseconds", 0)
            return _whole_micros(argument, value, micros + Decimal(nanos) / 1000)
        if _is_numpy_timedelta(value):
            return _numpy_timedelta_micros(argument, value)
        if isinstance(value, str) and not _NUMBER.fullmatch(value):
            return _parse_text_micros(argument, value)
        number = _as_number(argument, value)
        if number == 0:
            return 0
        msg = (
            f"`{argument}`: {value!r} has no unit but the time columns are {kind.value}; "
            "give a datetime.timedelta or a string such as '90 seconds' or '1 hour'"
        )
        raise DurationError(msg)
    if isinstance(value, str) and not _NUMBER.fullmatch(value) and not _is_span(value):
        msg = (f"`{argument}`: cannot parse {value!r} as a number (the time columns are "
               f"numeric: {kind.value}); give a number such as 5 or -2.5")
        raise DurationError(msg)
    if isinstance(value, _dt.timedelta) or _is_numpy_timedelta(value) or (
        isinstance(value, str) and not _NUMBER.fullmatch(value)
    ):
        msg = (
            f"`{argument}`: {value!r} is a time span but the time columns are numeric "
            f"({kind.value}); give a number"
        )
        raise DurationError(msg)
    number = _as_number(argument, value)
    if isinstance(number, int):
        if kind is TimeKind.INTEGER:
            return number
        try:
            return float(number)
        except OverflowError:  # 10**400: beyond every float time, as an infinity is
            return math.inf if number > 0 else -math.inf
    if kind is TimeKind.INTEGER and number.is_integer():
        exact = _written(value)
        if exact is None or exact == exact.to_integral_value() or abs(number) >= 2**52:
            return int(number)
        # A fraction that rounded to a whole double (2.9999999999999999999 to 3.0) stays
        # on its side of that whole number: whole times compare with it as with the fraction.
        return math.nextafter(number, math.inf if exact > number else -math.inf)
    return number


def _written(value: Any) -> Decimal | None:
    """A decimal or numeric string as the exact decimal it was written as, else ``None``."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, str):
        return Decimal(value.strip())
    return None


def _is_span(text: str) -> bool:
    """Whether ``text`` reads as a duration string such as ``"1 hour"``."""
    try:
        _parse_text_micros("", text)
    except DurationError:
        return False
    return True


def _is_numpy_timedelta(value: Any) -> bool:
    return type(value).__name__ == "timedelta64" and type(value).__module__ == "numpy"


def _as_number(argument: str, value: Any) -> int | float:
    if isinstance(value, str):
        number: int | float = float(value) if any(c in value for c in ".eE") else int(value)
    elif isinstance(value, (int, float)):
        number = value
    elif isinstance(value, numbers.Integral):  # numpy and other integer scalars
        number = int(value)
    elif isinstance(value, Decimal):  # the natural duration of decimal time columns
        if not value.is_finite():
            msg = f"`{argument}` must be finite; got {value!r}"
            raise DurationError(msg)
        # whole and within 40 digits: exact (past that, every time is in reach anyway)
        whole = value.adjusted() < 40 and value == value.to_integral_value()
        number = int(value) if whole else float(value)
    elif isinstance(value, numbers.Real):
        number = float(value)
    else:
        msg = (
            f"`{argument}` must be a number, a datetime.timedelta or a string such as "
            f"'1 hour'; got {value!r} ({type(value).__name__})"
        )
        raise DurationError(msg)
    if isinstance(number, float) and not math.isfinite(number):
        msg = f"`{argument}` must be finite; got {value!r}"
        raise DurationError(msg)
    return number
