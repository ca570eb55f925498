"""``IncrementalLoader``: deduplicating appends into a partitioned table."""

from __future__ import annotations

import os
import re
import shutil
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._session import local_cores
from chronojoin._validate.columns import check_dataframe, col, collated, same_type
from chronojoin.errors import (
    ConcurrentWriterError,
    IndexRebuiltWarning,
    InvalidArgumentError,
    LoaderError,
)
from chronojoin.loader import commit, index, plan, target
from chronojoin.loader.layout import (
    HIVE_DEFAULT_PARTITION,
    META,
    misnamed_dirs,
    partition_dir,
    partition_dirs,
)
from chronojoin.loader.lock import TableLock
from chronojoin.loader.report import CheckReport, LoadReport
from chronojoin.loader.spec import check_batch_columns, loader_spec

#: A letter or digit first: staging directories of ids starting with '_' would be hidden.
_BATCH_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_]{0,63}")
#: How many times ``append`` prepares a batch whose table schema another writer changed
#: before it took the lock.
_SCHEMA_ATTEMPTS = 3


class IncrementalLoader:
    """Append batches to a partitioned table, dropping keys that are already stored.

    Parameters
    ----------
    spark
        The SparkSession that reads and writes (its configuration is not changed).
    path
        A local directory partitioned Hive-style by ``partition_by`` (created if missing).
    table
        A metastore table name (created on the first append if missing). Exactly one of
        ``path`` and ``table``.
    keys
        The composite primary key (column names); unique within a partition value.
    partition_by
        The partition column: a date, string, integer or boolean column that a duplicate
        never crosses.
    format
        ``"parquet"`` or ``"orc"``.
    order_by
        Columns (names or ``Column`` expressions such as ``F.col("ts").desc()``) that
        choose the winner among batch rows sharing a key: the first one wins. Without
        it, and to break ties, the row with the smallest 64-bit hash of all its values
        wins, then the smallest values: the same input gives the same winner every run.
    on_duplicate
        ``"drop"`` (default): drop duplicates; ``"fail"``: raise ``LoaderError`` and write
        nothing if the batch has any duplicate; ``"allow"``: append every row unchanged.

    Notes
    -----
    ``append`` reads the key index of the partitions the batch touches, never the
    table's data and never other partitions. The index stores the exact key values in
    Parquet (no false duplicates). The commit protocol (staging, an atomic manifest,
    roll-forward/roll-back on the next start) is described in
    :mod:`chronojoin.loader.commit`; one writer at a time is enforced by a lock file
    (:mod:`chronojoin.loader.lock`). Only local file systems are supported.

    Examples
    --------
    >>> import datetime as dt, tempfile
    >>> path = tempfile.mkdtemp() + "/clicks"
    >>> day = dt.date(2024, 1, 1)
    >>> batch = spark.createDataFrame(
    ...     [(1, "a", day, 10), (1, "a", day, 11), (2, "b", day, 12)],
    ...     "user_id long, click_id string, event_date date, value long")
    >>> loader = cj.IncrementalLoader(spark, path=path, keys=["user_id", "click_id"],
    ...                               partition_by="event_date", order_by="value")
    >>> r = loader.append(batch)
    >>> (r.rows_in, r.rows_appended, r.duplicates_in_batch, r.duplicates_existing)
    (3, 2, 1, 0)
    >>> more = spark.createDataFrame([(2, "b", day, 13), (3, "c", day, 14)], batch.schema)
    >>> r = loader.append(more)
    >>> (r.rows_in, r.rows_appended, r.duplicates_in_batch, r.duplicates_existing)
    (2, 1, 0, 1)
    >>> spark.read.parquet(path).orderBy("user_id").show()
    +-------+--------+-----+----------+
    |user_id|click_id|value|event_date|
    +-------+--------+-----+----------+
    |      1|       a|   10|2024-01-01|
    |      2|       b|   12|2024-01-01|
    |      3|       c|   14|2024-01-01|
    +-------+--------+-----+----------+
    <BLANKLINE>
    >>> loader.check().ok
    True
    """

    def __init__(self, spark: SparkSession, *, path: str | None = None,
                 table: str | None = None, keys: Sequence[str] | str = (),
                 partition_by: str = "event_date", format: str = "parquet",
                 order_by: str | Column | Sequence[str | Column] | None = None,
                 on_duplicate: str = "drop") -> None:
        self._spec = loader_spec(path=path, table=table, keys=keys, partition_by=partition_by,
                                 format=format, order_by=order_by, on_duplicate=on_duplicate)
        if not _is_session(spark):
            msg = f"`spark` must be a SparkSession; got {type(spark).__name__}"
            raise TypeError(msg)
        self._spark = spark
        self._path = None if path is None else target.local_path("path", path)

    # ------------------------------------------------------------------ public
    def append(self, batch: DataFrame, *, batch_id: str | None = None) -> LoadReport:
        """Append the rows of ``batch`` whose key is not stored yet; see the class docs.

        Parameters
        ----------
        batch
            Rows with the table's columns (any order).
        batch_id
            Optional id (letters, digits, ``_``); default: a hash of the content. A batch
            id committed before is skipped; re-using it for different content is an error.

        Returns
        -------
        LoadReport

        Raises
        ------
        ValueError
            A key or partition column is missing or NULL, or a string partition value
            is empty or ``"__HIVE_DEFAULT_PARTITION__"``, which Spark reads back as NULL
            (``InvalidArgumentError``); or the batch does not match the table's schema
            (``SchemaMismatchError``). Nothing is written.
        ConcurrentWriterError
            Another writer holds the table's lock.
        LoaderError
            ``on_duplicate="fail"`` found duplicates, or ``batch_id`` was re-used.
        """
        start = time.perf_counter()
        spec = self._spec
        check_dataframe("batch", batch)
        check_batch_columns(batch, spec)
        if batch_id is not None and not (isinstance(batch_id, str)
                                         and _BATCH_ID.fullmatch(batch_id)):
            msg = (f"`batch_id` must be 1-64 letters, digits or '_', starting with a letter "
                   f"or digit; got {batch_id!r}")
            raise InvalidArgumentError(msg)
        pcol_type = batch.schema[spec.partition_by].dataType
        for _ in range(_SCHEMA_ATTEMPTS):
            tgt = self._resolve()
            schema = self._schema(tgt, pcol_type) if tgt else None
            shape = schema or target.table_order(batch.schema, spec.partition_by)
            rows = target.conform(batch, shape, tgt or target.Target(root="", table=spec.table))
            stats = plan.batch_stats(rows, spec.keys, spec.partition_by)
            _reject_nulls(stats, spec.partition_by)
            if stats.rows == 0:
                return LoadReport(0, 0, 0, 0, 0, time.perf_counter() - start)
            bid = batch_id or plan.batch_id(stats.fingerprint, spec.settings())
            if tgt is None:
                target.create_table(self._spark, str(spec.table), shape,
                                    partition_by=spec.partition_by, fmt=spec.format)
                tgt = self._resolve()
                assert tgt is not None
            with self._writing(tgt):
                prior = commit.committed(tgt.root, bid)
                if prior is not None:
                    return _skipped(prior, stats, bid, start)
                # The schema read before the lock may be another writer's by now (two
                # first loads at once): then the batch is conformed to it again.
                if not same_type(self._schema(tgt, pcol_type) or shape, shape):
                    continue
                manifest = self._load(tgt, rows, shape, stats, bid)
                # after the commit: a failed first load records nothing
                meta = target.read_meta(tgt.root)
                if meta is None or meta.get("partition_type_guessed"):
                    target.write_meta(tgt.root, keys=spec.keys, partition_by=spec.partition_by,
                                      fmt=spec.format, schema=shape)
            break
        else:
            msg = (f"{tgt.describe() if tgt else spec.table}: the table's schema changed while "
                   f"the batch was prepared, {_SCHEMA_ATTEMPTS} times; append again")
            raise ConcurrentWriterError(msg)
        r = manifest["report"]
        return LoadReport(stats.rows, r["rows_appended"], r["duplicates_in_batch"],
                          r["duplicates_existing"], len(stats.partition_values),
                          time.perf_counter() - start, bid, False, r["partitions_rebuilt"],
                          r["files_written"])

    def rebuild_index(self) -> int:
        """Rebuild the whole key index from the stored data; return the partition count."""
        tgt = self._resolve()
        if tgt is None:
            return 0
        spec = self._spec
        with self._writing(tgt):
            schema = self._schema(tgt, None, check_keys=False)
            layout = self._layout(tgt)
            meta = target.read_meta(tgt.root)
            # a path table's partition type read from directory names: the first
            # append's batch gives the real one
            guessed = tgt.table is None and (meta is None or meta.get("partition_type_guessed"))
            index.remove_all(layout)
            if schema is None:
                return 0
            target.write_meta(tgt.root, keys=spec.keys, partition_by=spec.partition_by,
                              fmt=spec.format, schema=schema,
                              partition_type_guessed=bool(guessed))
            pdirs = partition_dirs(tgt.root, spec.partition_by)
            _refuse_misnamed(tgt, spec.partition_by, schema[spec.partition_by].dataType, pdirs)
            index.rebuild(self._spark, layout, schema, pdirs)
            return len(pdirs)

    def check(self) -> CheckReport:
        """Verify that no key is stored twice and that the index equals the data.

        Reads the whole table and the whole index (under the lock); meant for tests and
        audits, not for every load. It only reports, and repairs nothing: an index file
        whose footer cannot be read is left out, its keys count in
        ``missing_from_index`` and its partition is named in
        ``damaged_index_partitions`` (so ``ok`` is False). The next ``append`` to that
        partition rebuilds its index with an ``IndexRebuiltWarning``;
        ``rebuild_index()`` rebuilds every partition's.

        Returns
        -------
        CheckReport

        Raises
        ------
        LoaderError
            A data file of the table, or an index file past its footer, cannot be read
            (the message names the file).
        ConcurrentWriterError
            Another writer holds the table's lock.
        """
        tgt = self._resolve()
        if tgt is None:
            return CheckReport(0, 0, 0, 0, 0, 0, 0)
        with self._writing(tgt):
            schema = self._schema(tgt, None)
            if schema is None:
                return CheckReport(0, 0, 0, 0, 0, 0, 0)
            layout = self._layout(tgt)
            pdirs = partition_dirs(tgt.root, self._spec.partition_by)
            incomplete = sum(not index.complete(layout, p) for p in pdirs)
            data = index.read_data(self._spark, layout, schema, pdirs)
            idx, damaged = index.read_all(self._spark, layout, schema)
            counts = _compare(data, idx, [self._spec.partition_by, *self._spec.keys])
        return CheckReport(*counts, incomplete_partitions=incomplete, partitions=len(pdirs),
                           damaged_index_partitions=tuple(damaged))

    # --------------------------------------------------------------- internals
    def _resolve(self) -> target.Target | None:
        spec = self._spec
        if self._path is not None:
            return target.Target(root=self._path, table=None)
        assert spec.table is not None
        if not self._spark.catalog.tableExists(spec.table):
            return None
        return target.table_target(self._spark, spec.table, partition_by=spec.partition_by,
                                   fmt=spec.format)

    def _layout(self, tgt: target.Target) -> index.Layout:
        spec = self._spec
        return index.Layout(tgt.root, spec.keys, spec.partition_by, spec.format)

    def _schema(self, tgt: target.Target, pcol_type: T.DataType | None, *,
                check_keys: bool = True) -> T.StructType | None:
        """The table's schema (``None``: a path without data or metadata yet).

        A metastore table's comes from the catalog (columns added by ``ALTER TABLE``
        included, and before its location exists), a path's from the loader's metadata,
        else from its data.
        """
        spec = self._spec
        meta = target.read_meta(tgt.root) if os.path.isdir(tgt.root) else None
        if meta is not None:
            self._check_meta(tgt, meta, check_keys=check_keys)
        if tgt.table is None and meta is not None:
            return target.meta_schema(meta, pcol_type)
        if tgt.table is None and not os.path.isdir(tgt.root):
            return None
        return target.stored_schema(self._spark, tgt, partition_by=spec.partition_by,
                                    fmt=spec.format, pcol_type=pcol_type)

    def _check_meta(self, tgt: target.Target, meta: dict[str, Any], *,
                    check_keys: bool) -> None:
        spec = self._spec
        for name, mine, theirs in (("partition_by", spec.partition_by, meta["partition_by"]),
                                   ("format", spec.format, meta["format"])):
            if mine != theirs:
                msg = f"`{name}`: {tgt.describe()} was loaded with {theirs!r}, not {mine!r}"
                raise InvalidArgumentError(msg)
        if check_keys and list(spec.keys) != list(meta["keys"]):
            msg = (f"`keys`: the index of {tgt.describe()} is keyed by {meta['keys']}, not "
                   f"{list(spec.keys)}; call rebuild_index() to re-key it")
            raise InvalidArgumentError(msg)

    @contextmanager
    def _writing(self, tgt: target.Target) -> Iterator[None]:
        os.makedirs(commit.meta_dir(tgt.root), exist_ok=True)
        with TableLock(os.path.join(commit.meta_dir(tgt.root), "lock"), table=tgt.describe()):
            commit.recover(tgt.root, self._on_partitions(tgt))
            with index.read_errors(self._layout(tgt), tgt.describe()):
                yield

    def _on_partitions(self, tgt: target.Target) -> commit.OnPartitions | None:
        if tgt.table is None:
            return None
        name, pcol = tgt.table, self._spec.partition_by
        return lambda pdirs: target.register_partitions(self._spark, name, pcol, pdirs)

    def _repair(self, tgt: target.Target, schema: T.StructType, pdirs: list[str]) -> int:
        layout = self._layout(tgt)
        broken = [p for p in pdirs if not index.complete(layout, p)]
        if broken:
            warnings.warn(
                f"the key index of {len(broken)} partition(s) of {tgt.describe()} was missing "
                f"or damaged (e.g. {broken[0]}); rebuilt from their data",
                IndexRebuiltWarning, stacklevel=4,
            )
            index.rebuild(self._spark, layout, schema, broken)
        return len(broken)

    def _load(self, tgt: target.Target, batch: DataFrame, schema: T.StructType,
              stats: plan.BatchStats, bid: str) -> dict[str, Any]:
        spec = self._spec
        pdirs = sorted({partition_dir(spec.partition_by, v) for v in stats.partition_values})
        _refuse_misnamed(tgt, spec.partition_by, schema[spec.partition_by].dataType, pdirs)
        if tgt.table is not None:
            for pdir, where in target.foreign_partitions(self._spark, tgt, pdirs).items():
                msg = (f"partition {pdir!r} of {tgt.describe()} is stored at {where}, outside "
                       "the table's location; the loader reads and writes partitions only "
                       "below the table's location")
                raise LoaderError(msg)
        rebuilt = self._repair(tgt, schema, pdirs)
        stored = index.read(self._spark, self._layout(tgt), schema, pdirs)
        # Equal keys of a collation such as UTF8_LCASE can differ in their hashes: one
        # bucket per partition value keeps them in one task.
        cores = 1 if any(collated(schema[k].dataType) for k in spec.keys) else _cores(self._spark)
        splits = plan.splits_for(len(stats.partition_values), cores)
        n = len(stats.partition_values) * splits
        bucket = plan.bucket_column(spec.partition_by, schema[spec.partition_by].dataType,
                                    stats.partition_values, spec.keys, splits)
        d = plan.dedup(batch, stored, keys=spec.keys, partition_by=spec.partition_by,
                       order_by=spec.order_by, policy=spec.on_duplicate, bucket=bucket, n=n)
        stage = commit.new_staging_dir(tgt.root, bid)
        data_dir = os.path.join(stage, "data")
        d.rows.write.format(spec.format).partitionBy(spec.partition_by).save(data_dir)
        m = {k: int(v or 0) for k, v in d.observation.get.items()}
        in_batch = stats.rows - m["appended"] - m["existing"]
        if spec.on_duplicate == "fail" and (in_batch or m["existing"]):
            shutil.rmtree(stage, ignore_errors=True)
            msg = (f"`on_duplicate='fail'`: the batch has {in_batch} duplicate row(s) within "
                   f"itself and {m['existing']} key(s) already stored; nothing was written")
            raise LoaderError(msg)
        self._stage_index(schema, stage)
        moves, parts = commit.plan_moves(tgt.root, bid, stage)
        if not set(parts) <= set(pdirs):
            shutil.rmtree(stage, ignore_errors=True)
            msg = f"unexpected partition directories {sorted(set(parts) - set(pdirs))}"
            raise LoaderError(msg)
        files = len([dst for _, dst in moves if not dst.startswith(META)])
        manifest: dict[str, Any] = {
            "batch_id": bid, "fingerprint": stats.fingerprint, "moves": moves,
            "staging": os.path.relpath(stage, tgt.root),
            "partitions": parts, "time": time.time(),
            "report": {"rows_in": stats.rows, "rows_appended": m["appended"],
                       "duplicates_in_batch": in_batch, "duplicates_existing": m["existing"],
                       "partitions_rebuilt": rebuilt, "files_written": files},
        }
        commit.commit(tgt.root, manifest)
        commit.publish(tgt.root, manifest, self._on_partitions(tgt))
        return manifest

    def _stage_index(self, schema: T.StructType, stage: str) -> None:
        spec = self._spec
        data_dir = os.path.join(stage, "data")
        if not partition_dirs(data_dir, spec.partition_by):
            return
        staged = (self._spark.read.schema(schema).format(spec.format)
                  .option("basePath", data_dir).load(data_dir))
        # No shuffle: a staged data file holds one partition value and a task reads
        # whole files (or splits of one file), so each task writes the keys of its
        # files into their partitions' index directories.
        (staged.select(*[col(c) for c in [*spec.keys, spec.partition_by]])
         .write.partitionBy(spec.partition_by).parquet(os.path.join(stage, "index")))


def _is_session(spark: Any) -> bool:
    if isinstance(spark, SparkSession):
        return True
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError:  # Spark Connect's client dependencies are not installed
        return False
    return isinstance(spark, ConnectSession)


def _cores(spark: Any) -> int:
    """The cores of a ``local[N]`` master, else Spark's default parallelism (1 if unknown)."""
    local = local_cores(str(spark.conf.get("spark.master", "") or ""))
    if local is not None:
        return local
    value = spark.conf.get("spark.default.parallelism", None)
    if value and str(value).isdigit():
        return int(value)
    try:  # classic sessions know their executors' cores; Spark Connect has no context
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # any failure means "unknown"
        return 1


def _refuse_misnamed(tgt: target.Target, column: str, dtype: T.DataType,
                     pdirs: Sequence[str]) -> None:
    """Refuse a table where another tool named a partition of ``pdirs`` otherwise.

    The loader finds a value's stored keys, and puts its new rows, under the name Spark
    writes (``month=1``); rows under another name of the same value (``month=01``) would
    be neither indexed nor seen, and their keys stored twice.
    """
    wanted = set(pdirs)
    for found, name in misnamed_dirs(tgt.root, column, dtype).items():
        if name in wanted or found in wanted:
            msg = (f"partition directory {found!r} of {tgt.describe()} holds the value that "
                   f"Spark names {name!r}; move its files into {name!r} and call "
                   "rebuild_index()")
            raise LoaderError(msg)


def _reject_nulls(stats: plan.BatchStats, partition_by: str) -> None:
    """NULL keys, and partition values that Spark would store or read back as NULL."""
    for name, count in stats.nulls.items():
        if count:
            what = "`partition_by`" if name == partition_by else "`keys`"
            msg = f"{what}: column {name!r} of the batch has {count} NULL value(s); nothing written"
            raise InvalidArgumentError(msg)
    if stats.empty_partition_values:
        msg = (f"`partition_by`: column {partition_by!r} of the batch has "
               f"{stats.empty_partition_values} empty string value(s); nothing written")
        raise InvalidArgumentError(msg)
    if stats.default_partition_values:
        msg = (f"`partition_by`: column {partition_by!r} of the batch has "
               f"{stats.default_partition_values} {HIVE_DEFAULT_PARTITION!r} value(s), which "
               "Spark reads back from the partition directory name as NULL; nothing written")
        raise InvalidArgumentError(msg)


def _skipped(prior: dict[str, Any], stats: plan.BatchStats, bid: str,
             start: float) -> LoadReport:
    if prior.get("fingerprint") != stats.fingerprint:
        msg = (f"`batch_id`: batch {bid!r} was committed before with different content; "
               "use a new batch id")
        raise LoaderError(msg)
    in_batch = int(prior["report"]["duplicates_in_batch"])
    return LoadReport(stats.rows, 0, in_batch, stats.rows - in_batch,
                      len(stats.partition_values), time.perf_counter() - start, bid, True)


def _compare(data: DataFrame | None, idx: DataFrame | None,
             key_cols: list[str]) -> tuple[int, int, int, int, int]:
    """``(rows, keys, duplicate_keys, missing_from_index, extra_in_index)``."""
    if data is None and idx is None:
        return (0, 0, 0, 0, 0)
    parts = []
    if data is not None:
        parts.append(data.groupBy(*[col(c) for c in key_cols]).agg(
            F.count(F.lit(1)).alias("__cj_n"), F.lit(0).alias("__cj_i")))
    if idx is not None:
        parts.append(idx.select(*[col(c) for c in key_cols]).distinct()
                     .withColumn("__cj_n", F.lit(0).cast("long")).withColumn("__cj_i", F.lit(1)))
    u = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    per_key = u.groupBy(*[col(c) for c in key_cols]).agg(
        F.sum("__cj_n").alias("n"), F.max("__cj_i").alias("i"))
    row = per_key.agg(
        F.sum("n"), F.sum(F.when(F.col("n") > 0, 1).otherwise(0)),
        F.sum(F.when(F.col("n") > 1, 1).otherwise(0)),
        F.sum(F.when((F.col("n") > 0) & (F.col("i") == 0), 1).otherwise(0)),
        F.sum(F.when((F.col("n") == 0) & (F.col("i") == 1), 1).otherwise(0)),
    ).collect()[0]
    return tuple(int(v or 0) for v in row)  # type: ignore[return-value]
