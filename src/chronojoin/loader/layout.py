"""Where the loader keeps things on disk, and the small file-system primitives it uses.

A table root ``T`` (a directory, or the location of a metastore table) holds::

    T/<pcol>=<value>/part-...                 committed data files (what readers see)
    T/_chronojoin/_meta.json                  keys, partition column, format, schema
    T/_chronojoin/lock                        the writer lock (see ``lock.py``)
    T/_chronojoin/commits/<batch_id>.json     one manifest per committed batch
    T/_chronojoin/staging/<batch_id>/...      uncommitted work of one batch
    T/_chronojoin/index/<pcol>=<value>/...    the key index (Parquet, see ``index.py``)

Spark's file index skips names starting with ``_`` or ``.``, so ``spark.read.parquet(T)``
never sees the loader's own files.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from typing import Any

from pyspark.sql import types as T

META = "_chronojoin"
#: The directory value Spark writes for a NULL (or empty string) partition value and
#: reads back as NULL (ExternalCatalogUtils.DEFAULT_PARTITION_NAME).
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Spark's escaping of partition values in directory names (ExternalCatalogUtils).
_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(1, 32))


def escape_path_name(value: str) -> str:
    """Escape a partition value the way Spark names partition directories."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_name(name: str) -> str:
    """Inverse of :func:`escape_path_name`."""
    out, i = [], 0
    while i < len(name):
        if name[i] == "%" and _is_hex(name[i + 1 : i + 3]):
            out.append(chr(int(name[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def value_string(value: Any) -> str:
    """Return the string Spark casts a partition value to (date, integer, boolean, string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        msg = "timestamp partition values are not supported"
        raise TypeError(msg)
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def partition_dir(column: str, value: Any) -> str:
    """Return the directory name of one partition, e.g. ``event_date=2024-01-01``."""
    return f"{escape_path_name(column)}={escape_path_name(value_string(value))}"


def partition_value(dirname: str) -> str:
    """Return the unescaped value string of a partition directory name."""
    return unescape_path_name(dirname.split("=", 1)[1])


_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")
_DATE = re.compile(r"\s*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[T ].*)?\s*")


def canonical_dir(dirname: str, column: str, dtype: T.DataType) -> str:
    """The directory name Spark writes for the value it reads from ``dirname`` as ``dtype``.

    Another tool may name one value otherwise (``month=01`` for the integer 1, ``day=
    2024-1-5``, ``flag=TRUE``); Spark reads both names as the same value. A name that
    does not read as ``dtype`` is returned as it is.
    """
    value = partition_value(dirname)
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return partition_dir(column, int(value)) if _INTEGER.fullmatch(value) else dirname
    if isinstance(dtype, T.BooleanType):
        word = value.strip().lower()
        return partition_dir(column, word == "true") if word in ("true", "false") else dirname
    if isinstance(dtype, T.DateType):
        found = _DATE.fullmatch(value)
        try:
            day = _dt.date(*(int(g) for g in found.groups())) if found else None
        except ValueError:  # no such day
            day = None
        return dirname if day is None else partition_dir(column, day)
    return partition_dir(column, value)


def misnamed_dirs(root: str, column: str, dtype: T.DataType) -> dict[str, str]:
    """Partition directories of ``root`` that Spark would name otherwise, with that name.

    See :func:`canonical_dir`.
    """
    names = {d: canonical_dir(d, column, dtype) for d in partition_dirs(root, column)}
    return {d: c for d, c in names.items() if c != d}


def visible(name: str) -> bool:
    """Whether Spark's file index would read a file or directory of this name."""
    return not (name.startswith(("_", ".")))


def list_visible(path: str) -> list[str]:
    """Sorted visible entries of ``path`` (empty when it does not exist)."""
    try:
        return sorted(n for n in os.listdir(path) if visible(n))
    except FileNotFoundError:
        return []


def partition_dirs(root: str, column: str) -> list[str]:
    """Sorted partition directory names under ``root`` (``<column>=...``)."""
    prefix = escape_path_name(column) + "="
    return [n for n in list_visible(root) if n.startswith(prefix)
            and os.path.isdir(os.path.join(root, n))]


def fsync_dir(path: str) -> None:
    """Flush a directory entry (a rename or a new file) to stable storage."""
    fsync_path(path)


def fsync_path(path: str) -> None:
    """Flush a file's content, or a directory's entries, to stable storage."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: str) -> None:
    """``os.makedirs``, flushing each new directory's entry in its parent.

    Flushing a directory makes its own entries durable, not its entry in its parent: a
    file moved into a new directory and flushed there could still be lost with the
    directory after a power loss.
    """
    if not path or os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    make_dirs(parent)
    try:
        os.mkdir(path)
    except FileExistsError:
        return
    fsync_dir(parent)


def atomic_write_json(path: str, obj: Any) -> None:
    """Write JSON so that ``path`` holds either the old or the complete new content."""
    directory = os.path.dirname(path)
    make_dirs(directory)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(directory)


def read_json(path: str) -> dict[str, Any] | None:
    """Return the JSON object in ``path``; ``None`` when missing or unparsable."""
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def move(src: str, dst: str) -> bool:
    """Idempotent move: ``True`` if ``dst`` holds the file afterwards.

    A missing ``src`` with an existing ``dst`` means an earlier run already moved it.
    """
    if os.path.exists(src):
        make_dirs(os.path.dirname(dst))
        os.replace(src, dst)
        return True
    return os.path.exists(dst)


def data_files(directory: str) -> list[str]:
    """Visible regular files in a partition directory."""
    return [n for n in list_visible(directory) if os.path.isfile(os.path.join(directory, n))]


def walk_files(root: str) -> list[str]:
    """Relative paths of visible files below ``root`` (hidden directories skipped)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if visible(d))
        out.extend(os.path.relpath(os.path.join(dirpath, f), root)
                   for f in sorted(filenames) if visible(f))
    return out
