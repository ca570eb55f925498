"""The chronojoin exception and warning tree.

Every error is a :class:`ChronojoinError` and also the builtin that users already
catch (``ValueError`` or ``TypeError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "ChronojoinError",
    "ChronojoinWarning",
    "ColumnNotFoundError",
    "ConcurrentWriterError",
    "DurationError",
    "IndexRebuiltWarning",
    "InvalidArgumentError",
    "LoaderError",
    "PerformanceWarning",
    "SchemaMismatchError",
    "TimeTypeError",
]


class ChronojoinError(Exception):
    """Base class of every error raised by chronojoin."""


class InvalidArgumentError(ChronojoinError, ValueError):
    """An argument has a value outside the allowed set or range."""


class ColumnNotFoundError(InvalidArgumentError):
    """A column named by an argument does not exist in its DataFrame."""


class DurationError(InvalidArgumentError):
    """A duration (tolerance, bound, bin size) cannot be parsed or is out of range."""


class TimeTypeError(ChronojoinError, TypeError):
    """A time column has an unsupported type, or two time columns are incompatible."""


class SchemaMismatchError(InvalidArgumentError):
    """A batch does not match the schema of the table it is loaded into."""


class LoaderError(ChronojoinError, RuntimeError):
    """The incremental loader cannot proceed (state on storage is inconsistent)."""


class ConcurrentWriterError(LoaderError):
    """Another writer holds the table's lock."""


class ChronojoinWarning(UserWarning):
    """Base class of every warning emitted by chronojoin."""


class PerformanceWarning(ChronojoinWarning):
    """The requested plan is correct but expected to be slow."""


class IndexRebuiltWarning(ChronojoinWarning):
    """The loader's key index was missing or damaged and was rebuilt from the data."""
