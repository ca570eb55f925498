"""The key index: per partition value, the exact composite keys stored there.

Layout: ``_chronojoin/index/<pcol>=<v>/`` holds Parquet files whose columns are the key
columns, exactly as stored (no hashing, so no false duplicates). A batch adds one file
``cj-<batch_id>-<n>-d<k>.parquet`` per partition it wrote to (``k``: its data files
there), published by the same manifest as its data files ``part-cj-<batch_id>-...``.
Rebuilding a partition from its data writes ``cj-rebuild-<token>-<n>.parquet`` and
``_covered.json`` listing the data files and index files of the rebuild.

A partition's index is *complete* when, by file names alone (no data is read):

* every data file is listed in ``_covered.json`` or is ``part-cj-<b>-...`` with an index
  file ``cj-<b>-...`` present;
* every index file is listed in ``_covered.json`` or belongs to a batch ``<b>`` whose
  data files are all present (as many as its index file's name counts), and every file
  listed in ``_covered.json`` exists (a deleted data file leaves keys in the index that
  the table no longer holds: a later load of them would be dropped);
* every index file has a readable Parquet footer whose columns are the keys.

An incomplete partition (a missing, extra or unreadable index file, data written by
another tool) is rebuilt from its own data with an ``IndexRebuiltWarning`` by the
``append`` that touches it; ``check`` only reports it (:func:`read_all` leaves
unreadable index files out).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from chronojoin._validate.columns import col
from chronojoin.errors import LoaderError
from chronojoin.loader.layout import (
    META,
    atomic_write_json,
    data_files,
    fsync_dir,
    list_visible,
    read_json,
    walk_files,
)

COVERED = "_covered.json"
_DATA_RE = re.compile(r"^part-cj-([0-9a-zA-Z_]+)-\d+")
#: ``-d<k>``: the batch's data files in the partition (index files of older releases
#: have no count)
_INDEX_RE = re.compile(r"^cj-([0-9a-zA-Z_]+)-\d+(?:-d(\d+))?\.parquet$")


@dataclass(frozen=True)
class Layout:
    """What the index code needs to know about a table."""

    root: str
    keys: tuple[str, ...]
    partition_by: str
    format: str

    @property
    def index_root(self) -> str:
        """The index directory."""
        return os.path.join(self.root, META, "index")

    def index_dir(self, pdir: str) -> str:
        """Return the index directory of one partition."""
        return os.path.join(self.index_root, pdir)


def _footer_ok(path: str, keys: Sequence[str]) -> bool:
    try:
        names = pq.read_schema(path).names
    except Exception:  # any unreadable footer means a damaged file
        return False
    return list(names) == list(keys)


def complete(layout: Layout, pdir: str) -> bool:
    """Whether the index of partition ``pdir`` covers exactly its data files."""
    data = data_files(os.path.join(layout.root, pdir))
    idx_dir = layout.index_dir(pdir)
    index = list_visible(idx_dir)
    covered = read_json(os.path.join(idx_dir, COVERED)) or {}
    covered_data = set(covered.get("data_files", []))
    covered_index = set(covered.get("index_files", []))
    if not (covered_index <= set(index) and covered_data <= set(data)):
        return False
    index_batches = {m.group(1) for n in index if (m := _INDEX_RE.match(n))}
    data_batches = Counter(m.group(1) for n in data if (m := _DATA_RE.match(n)))
    for name in data:
        m = _DATA_RE.match(name)
        if name not in covered_data and (m is None or m.group(1) not in index_batches):
            return False
    for name in index:
        m = _INDEX_RE.match(name)
        if name in covered_index:
            continue
        if m is None or m.group(1) not in data_batches:
            return False
        if m.group(2) is not None and data_batches[m.group(1)] != int(m.group(2)):
            return False
    return all(_footer_ok(os.path.join(idx_dir, n), layout.keys) for n in index)


def index_schema(table_schema: T.StructType, layout: Layout) -> T.StructType:
    """Key columns then the partition column, typed as in the table."""
    by_name = {f.name: f for f in table_schema.fields}
    return T.StructType([by_name[k] for k in layout.keys] + [by_name[layout.partition_by]])


def read(spark: SparkSession, layout: Layout, table_schema: T.StructType,
         pdirs: Sequence[str]) -> DataFrame | None:
    """Index entries ``(keys..., pcol)`` of the given partitions (``None`` if none)."""
    paths = [layout.index_dir(p) for p in pdirs if list_visible(layout.index_dir(p))]
    if not paths:
        return None
    return (spark.read.schema(index_schema(table_schema, layout))
            .option("basePath", layout.index_root).parquet(*paths))


def read_all(spark: SparkSession, layout: Layout,
             table_schema: T.StructType) -> tuple[DataFrame | None, list[str]]:
    """Every readable index entry of the table, and the partitions with damaged index files.

    For ``check``, which reports rather than repairs: an index file whose Parquet footer
    is unreadable or does not hold the key columns is left out (its keys count as
    missing from the index) and its partition directory is named.
    """
    paths, damaged = [], []
    for pdir in list_visible(layout.index_root):
        idx_dir = layout.index_dir(pdir)
        names = list_visible(idx_dir) if os.path.isdir(idx_dir) else []
        good = [n for n in names if _footer_ok(os.path.join(idx_dir, n), layout.keys)]
        if len(good) < len(names):
            damaged.append(pdir)
            paths += [os.path.join(idx_dir, n) for n in good]
        elif names:
            paths.append(idx_dir)
    if not paths:
        return None, damaged
    df = (spark.read.schema(index_schema(table_schema, layout))
          .option("basePath", layout.index_root).parquet(*paths))
    return df, damaged


#: Spark's error for a file it cannot read (classic: in a Py4JJavaError's text).
_FAILED_READ = re.compile(r"\[FAILED_READ_FILE[.\w]*\] Encountered error while reading file "
                          r"(\S+)\.(?:\s|$)")
_CAUSE = re.compile(r"Caused by: [\w.$]+(?:Exception|Error): (.+)")


@contextlib.contextmanager
def read_errors(layout: Layout, table: str) -> Iterator[None]:
    """Turn Spark's error for a file it cannot read into a ``LoaderError`` naming the file.

    ``table`` is how the message names the table; any other error passes unchanged.
    """
    try:
        yield
    except Exception as exc:  # Py4JJavaError (classic) or SparkException (Spark Connect)
        failed = failed_read(exc)
        if failed is None:
            raise
        path, reason = failed
        in_index = path.startswith(layout.index_root + os.sep)
        what, fix = (("index file", "call rebuild_index()") if in_index else
                     ("data file", "restore it, or move it out of the table and call "
                                   "rebuild_index()"))
        msg = f"cannot read the {what} {path} of {table}{': ' + reason if reason else ''}; {fix}"
        raise LoaderError(msg) from None


def failed_read(exc: BaseException) -> tuple[str, str] | None:
    """Return ``(local path, reason)`` of Spark's ``FAILED_READ_FILE`` error, else ``None``.

    The reason is the message of the innermost Java cause when the error carries the
    stack trace (a classic session), without the file name; otherwise empty.
    """
    text = str(exc)
    found = _FAILED_READ.search(text)
    if found is None:
        return None
    uri = urlparse(found.group(1))
    path = unquote(uri.path) if uri.scheme in ("", "file") else found.group(1)
    causes = _CAUSE.findall(text)
    reason = causes[-1].strip() if causes else ""
    name = os.path.basename(path)
    if name and name in reason:
        reason = reason.split(name, 1)[1].strip()
    return path, reason


def read_data(spark: SparkSession, layout: Layout, table_schema: T.StructType,
              pdirs: Sequence[str]) -> DataFrame | None:
    """Return the stored rows of the given partitions (``None`` if none)."""
    paths = [os.path.join(layout.root, p) for p in pdirs
             if data_files(os.path.join(layout.root, p))]
    if not paths:
        return None
    return (spark.read.schema(table_schema).format(layout.format)
            .option("basePath", layout.root).load(paths))


def rebuild(spark: SparkSession, layout: Layout, table_schema: T.StructType,
            pdirs: Sequence[str]) -> None:
    """Rebuild the index of ``pdirs`` from their data files (crash-safe, idempotent)."""
    pdirs = sorted(set(pdirs))
    files = {p: data_files(os.path.join(layout.root, p)) for p in pdirs}
    token = f"rebuild-{secrets.token_hex(6)}"
    stage = os.path.join(layout.root, META, "staging", token)
    data = read_data(spark, layout, table_schema, pdirs)
    if data is not None:
        keys = [col(k) for k in layout.keys]
        (data.select(*keys, col(layout.partition_by)).distinct()
         .repartition(col(layout.partition_by)).write.partitionBy(layout.partition_by)
         .mode("overwrite").parquet(stage))
    staged: dict[str, list[str]] = {}
    for rel in walk_files(stage) if os.path.isdir(stage) else []:
        staged.setdefault(os.path.dirname(rel), []).append(rel)
    for pdir in pdirs:
        _swap(layout, pdir, token, [os.path.join(stage, r) for r in staged.get(pdir, [])],
              files[pdir], os.path.join(stage, "replaced"))
    shutil.rmtree(stage, ignore_errors=True)


def _swap(layout: Layout, pdir: str, token: str, new_files: list[str],
          covered_data: list[str], replaced: str) -> None:
    """Replace a partition's index files: set the old ones aside, move, write the cover.

    The old index directory leaves in one rename (into ``replaced``, in the staging
    directory that recovery deletes), so a crash at any step leaves the partition
    without an index, or with uncovered rebuild files: incomplete either way, and
    rebuilt again by the next ``append`` that touches it. Deleting the old files one
    by one could stop where the rest looked complete while keys were missing.
    """
    idx_dir = layout.index_dir(pdir)
    if os.path.isdir(idx_dir):
        os.makedirs(replaced, exist_ok=True)
        os.rename(idx_dir, os.path.join(replaced, pdir))
        fsync_dir(os.path.dirname(idx_dir))
    if not new_files and not covered_data:
        return
    os.makedirs(idx_dir, exist_ok=True)
    names = []
    for i, src in enumerate(sorted(new_files)):
        name = f"cj-{token}-{i:05d}.parquet"
        os.replace(src, os.path.join(idx_dir, name))
        names.append(name)
    fsync_dir(idx_dir)
    atomic_write_json(os.path.join(idx_dir, COVERED),
                      {"data_files": covered_data, "index_files": names})


def remove_all(layout: Layout) -> None:
    """Delete the whole index (before a full rebuild).

    Renamed away first, so that a crash while deleting leaves no partition's index
    half deleted (which could look complete while keys are missing).
    """
    if not os.path.isdir(layout.index_root):
        return
    gone = os.path.join(layout.root, META, "staging", f"removed-{secrets.token_hex(6)}")
    os.makedirs(os.path.dirname(gone), exist_ok=True)
    os.rename(layout.index_root, gone)
    fsync_dir(os.path.dirname(layout.index_root))
    shutil.rmtree(gone, ignore_errors=True)
