"""Option literals checked at run time against the ``Literal`` aliases of ``_typing``."""

from __future__ import annotations

import numbers
from typing import Any, TypeVar, get_args

import numpy as np

from chronojoin.errors import InvalidArgumentError

T = TypeVar("T")


def check_literal(argument: str, value: Any, alias: Any, hint: str | None = None) -> Any:
    """Return ``value`` if it is one of the strings of the ``Literal`` alias.

    Raises
    ------
    InvalidArgumentError
        Naming the argument, the value and the allowed values, then ``hint``.
    """
    allowed = get_args(alias)
    if not isinstance(value, str) or value not in allowed:
        msg = f"`{argument}` must be one of {list(allowed)}; got {value!r}"
        if hint:
            msg += f": {hint}"
        raise InvalidArgumentError(msg)
    return value


def check_bool(argument: str, value: Any) -> bool:
    """Return ``value`` as a bool if it is one (numpy's too), else raise naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        msg = f"`{argument}` must be True or False; got {value!r} ({type(value).__name__})"
        raise InvalidArgumentError(msg)
    return bool(value)


def check_str(argument: str, value: Any) -> str:
    """Return ``value`` if it is a string, else raise naming the argument."""
    if not isinstance(value, str):
        msg = f"`{argument}` must be a string; got {value!r} ({type(value).__name__})"
        raise InvalidArgumentError(msg)
    return value


#: The most buckets a count may ask for: bucket numbers are Spark ints.
MAX_BUCKET_COUNT = 2**31 - 1


def is_count(value: Any) -> bool:
    """Whether ``value`` is an integer (a numpy integer too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_bucket_count(argument: str, value: Any) -> int:
    """Return ``value`` as an int if it is a whole number of buckets Spark can number."""
    if not is_count(value) or not 1 <= int(value) <= MAX_BUCKET_COUNT:
        msg = f"`{argument}` must be a bucket count from 1 to {MAX_BUCKET_COUNT:,}; got {value!r}"
        raise InvalidArgumentError(msg)
    return int(value)
