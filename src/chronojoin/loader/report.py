"""What one ``append`` did (``LoadReport``) and what ``check`` found (``CheckReport``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class LoadReport:
    """What one ``append`` did.

    ``rows_in == rows_appended + duplicates_in_batch + duplicates_existing``.

    Attributes
    ----------
    rows_in
        Rows in the batch.
    rows_appended
        Rows written (one per key that was not stored already).
    duplicates_in_batch
        Batch rows that lost to another batch row with the same key.
    duplicates_existing
        Keys of the batch that were already stored (one dropped row each).
    partitions_touched
        Distinct partition values in the batch.
    seconds
        Wall-clock time of the call.
    batch_id
        The batch's id (a content hash unless given).
    skipped
        True when this batch id was committed before: nothing was done.
    partitions_rebuilt
        Partitions whose index was rebuilt from data during this call.
    files_written
        Data files published.
    """

    rows_in: int
    rows_appended: int
    duplicates_in_batch: int
    duplicates_existing: int
    partitions_touched: int
    seconds: float
    batch_id: str = ""
    skipped: bool = False
    partitions_rebuilt: int = 0
    files_written: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Return the fields as a dict."""
        return asdict(self)

    def __str__(self) -> str:
        """One ``name: value`` line per field."""
        return "\n".join(f"{k}: {v}" for k, v in self.as_dict().items())


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found; ``ok`` is True when there is nothing wrong.

    Attributes
    ----------
    rows
        Rows stored.
    keys
        Distinct keys stored (per partition value).
    duplicate_keys
        Keys stored more than once.
    missing_from_index
        Stored keys the index does not have (would be appended again).
    extra_in_index
        Index keys with no stored row (new rows with these keys would be dropped).
    incomplete_partitions
        Partitions whose index files do not match their data files by name, or have
        an unreadable index file.
    partitions
        Partition directories of the table.
    damaged_index_partitions
        Index directories (such as ``event_date=2024-01-02``) holding an index file
        whose Parquet footer is unreadable or lacks the key columns. ``check`` leaves
        those files out, so their keys count in ``missing_from_index``; the next
        ``append`` to the partition rebuilds its index (with an ``IndexRebuiltWarning``),
        and so does ``rebuild_index()``.
    """

    rows: int
    keys: int
    duplicate_keys: int
    missing_from_index: int
    extra_in_index: int
    incomplete_partitions: int
    partitions: int
    damaged_index_partitions: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No duplicate stored keys and the index equals the data."""
        return not (self.duplicate_keys or self.missing_from_index or self.extra_in_index
                    or self.incomplete_partitions or self.damaged_index_partitions)

    def __str__(self) -> str:
        """One ``name: value`` line per field (names comma-separated, or none), then ``ok``."""
        lines = [f"{k}: {(', '.join(v) or 'none') if isinstance(v, tuple) else v}"
                 for k, v in asdict(self).items()]
        return "\n".join([*lines, f"ok: {self.ok}"])
