"""What a loader writes to: a partitioned directory, or a metastore table over one.

Both end up as a local table root directory with Hive-style partition directories; a
metastore table additionally needs its partitions registered after each publish.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from chronojoin import _paths
from chronojoin._validate.columns import col, same_type
from chronojoin.errors import InvalidArgumentError, LoaderError, SchemaMismatchError
from chronojoin.loader.layout import META, atomic_write_json, partition_value, read_json

META_FILE = "_meta.json"
FORMATS = ("parquet", "orc")


@dataclass(frozen=True)
class Target:
    """A resolved table: its local root directory and, for a metastore table, its name."""

    root: str
    table: str | None

    def describe(self) -> str:
        """How errors name the table."""
        return f"table {self.table} ({self.root})" if self.table else self.root


def local_path(argument: str, location: str) -> str:
    """Return a local absolute path, or an error naming the argument."""
    path = _paths.local_path(location)
    if path is None:
        msg = (f"`{argument}`: only local file system paths are supported (the commit relies "
               f"on atomic renames); got {location!r}")
        raise InvalidArgumentError(msg)
    return os.path.abspath(path)


def _quote(name: str) -> str:
    return ".".join("`" + p.replace("`", "``") + "`" for p in name.split("."))


def describe_table(spark: SparkSession, name: str) -> dict[str, str]:
    """``DESCRIBE TABLE EXTENDED`` as a dict (a few metadata rows)."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {_quote(name)}").collect()
    return {r["col_name"]: r["data_type"] for r in rows if r["col_name"]}


def table_target(spark: SparkSession, name: str, *, partition_by: str, fmt: str) -> Target:
    """Resolve an existing metastore table, checking its layout."""
    info = describe_table(spark, name)
    provider = info.get("Provider", "").lower()
    if provider != fmt:
        msg = f"`format`: table {name} is stored as {provider or 'unknown'!r}, not {fmt!r}"
        raise InvalidArgumentError(msg)
    parts = [c.name for c in spark.catalog.listColumns(name) if c.isPartition]
    if parts != [partition_by]:
        msg = f"`partition_by`: table {name} is partitioned by {parts}, not [{partition_by!r}]"
        raise InvalidArgumentError(msg)
    if "Location" not in info:
        msg = f"table {name} has no location"
        raise LoaderError(msg)
    return Target(root=local_path("table", info["Location"]), table=name)


def create_table(spark: SparkSession, name: str, schema: T.StructType, *,
                 partition_by: str, fmt: str) -> None:
    """``CREATE TABLE IF NOT EXISTS`` partitioned by ``partition_by`` (no Spark job)."""
    columns = ", ".join(f"{_quote(f.name)} {f.dataType.simpleString()}" for f in schema.fields)
    spark.sql(f"CREATE TABLE IF NOT EXISTS {_quote(name)} ({columns}) USING {fmt} "
              f"PARTITIONED BY ({_quote(partition_by)})")


def foreign_partitions(spark: SparkSession, tgt: Target, pdirs: list[str]) -> dict[str, str]:
    """The partitions of ``pdirs`` the catalog keeps outside ``<root>/<pdir>``: location.

    ``ALTER TABLE ... ADD PARTITION ... LOCATION`` puts a partition elsewhere; rows the
    loader wrote under the table's location would not be read, nor the keys stored
    there. Every listed partition is described, also one whose directory exists under
    the root (``ALTER TABLE ... PARTITION ... SET LOCATION`` leaves it behind).
    """
    assert tgt.table is not None
    listed = {r[0] for r in spark.sql(f"SHOW PARTITIONS {_quote(tgt.table)}").collect()}
    out = {}
    for pdir in pdirs:
        if pdir not in listed:
            continue
        spec = f"{_quote(pdir.split('=', 1)[0])} = '{_sql_string(partition_value(pdir))}'"
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {_quote(tgt.table)} "
                         f"PARTITION ({spec})").collect()
        names = [r["col_name"] for r in rows]
        start = names.index("# Detailed Partition Information") if (
            "# Detailed Partition Information" in names) else 0
        found = next((r["data_type"] for r in rows[start:] if r["col_name"] == "Location"), None)
        if found is None:
            continue
        try:
            where = local_path("table", found)
        except InvalidArgumentError:  # not a local path
            where = None
        if where != os.path.join(tgt.root, pdir):
            out[pdir] = found
    return out


def register_partitions(spark: SparkSession, name: str, partition_by: str,
                        pdirs: list[str]) -> None:
    """Add the partitions a batch wrote to the metastore (idempotent) and refresh."""
    specs = " ".join(
        f"PARTITION ({_quote(partition_by)} = '{_sql_string(partition_value(p))}')"
        for p in pdirs
    )
    spark.sql(f"ALTER TABLE {_quote(name)} ADD IF NOT EXISTS {specs}")
    spark.catalog.refreshTable(name)


def _sql_string(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")


def table_order(schema: T.StructType, partition_by: str) -> T.StructType:
    """Return data columns in their order, then the partition column (how Spark reads it)."""
    fields = [f for f in schema.fields if f.name != partition_by]
    return T.StructType([*fields, *[f for f in schema.fields if f.name == partition_by]])


def read_meta(root: str) -> dict[str, Any] | None:
    """Return the loader's metadata of a table (``None`` when missing or damaged)."""
    meta = read_json(os.path.join(root, META, META_FILE))
    if meta is None or not {"keys", "partition_by", "format", "schema"} <= set(meta):
        return None
    return meta


def meta_schema(meta: dict[str, Any], pcol_type: T.DataType | None = None) -> T.StructType:
    """Return the table schema recorded in the metadata.

    A partition type the metadata marks as guessed is replaced by ``pcol_type`` (a
    batch's) when given.
    """
    schema = T.StructType.fromJson(json.loads(meta["schema"]))
    if pcol_type is None or not meta.get("partition_type_guessed"):
        return schema
    return with_type(schema, meta["partition_by"], pcol_type)


def with_type(schema: T.StructType, column: str, dtype: T.DataType) -> T.StructType:
    """``schema`` with ``column`` (nullable) of type ``dtype``."""
    return T.StructType([T.StructField(f.name, dtype, True) if f.name == column else f
                         for f in schema.fields])


def write_meta(root: str, *, keys: tuple[str, ...], partition_by: str, fmt: str,
               schema: T.StructType, partition_type_guessed: bool = False) -> None:
    """Record keys, partition column, format and schema (atomically).

    ``partition_type_guessed``: the partition column's type was read from directory
    names (an adopted table's index rebuilt before any append), so the first batch's
    type replaces it.
    """
    atomic_write_json(os.path.join(root, META, META_FILE), {
        "version": 1, "keys": list(keys), "partition_by": partition_by, "format": fmt,
        "schema": schema.json(), "partition_type_guessed": partition_type_guessed,
    })


def stored_schema(spark: SparkSession, target: Target, *, partition_by: str, fmt: str,
                  pcol_type: T.DataType | None) -> T.StructType | None:
    """Return the schema of stored data without loader metadata (``None`` for no data)."""
    if target.table is not None:
        return table_order(spark.table(target.table).schema, partition_by)
    has_data = any(n.startswith(partition_by + "=") for n in os.listdir(target.root))
    if not has_data:
        return None
    inferred = spark.read.format(fmt).load(target.root).schema
    if pcol_type is None:
        return table_order(inferred, partition_by)
    return table_order(with_type(inferred, partition_by, pcol_type), partition_by)


def conform(batch: DataFrame, schema: T.StructType, target: Target) -> DataFrame:
    """Return the batch with the table's columns in the table's order, or SchemaMismatchError."""
    mine = {f.name: f.dataType for f in batch.schema.fields}
    theirs = {f.name: f.dataType for f in schema.fields}
    for name, dtype in theirs.items():
        if name not in mine:
            msg = (f"`batch`: column {name!r} of {target.describe()} is missing from the "
                   f"batch; batch columns: {list(mine)}")
            raise SchemaMismatchError(msg)
        if not same_type(mine[name], dtype) and not widens(mine[name], dtype):
            msg = (f"`batch`: column {name!r} has type {mine[name].simpleString()} in the batch "
                   f"but {dtype.simpleString()} in {target.describe()}")
            raise SchemaMismatchError(msg)
    extra = [n for n in mine if n not in theirs]
    if extra:
        msg = (f"`batch`: column {extra[0]!r} is not a column of {target.describe()}; "
               f"table columns: {list(theirs)}")
        raise SchemaMismatchError(msg)
    return batch.select(*[
        col(f.name) if same_type(mine[f.name], f.dataType) else col(f.name).cast(f.dataType)
        for f in schema.fields
    ])


#: Numeric types in the order a value of one fits every later one of its line unchanged.
_WIDER = ((T.ByteType, T.ShortType, T.IntegerType, T.LongType), (T.FloatType, T.DoubleType))


def widens(batch: T.DataType, table: T.DataType) -> bool:
    """Whether every value of ``batch``'s type is a value of ``table``'s, exactly.

    A narrower integer into a wider one (``int`` into ``bigint``, as a CSV batch's
    inferred schema often has it) and ``float`` into ``double``; nothing that could
    round, overflow or change meaning (``bigint`` into ``double``, ``date`` into
    ``timestamp``).
    """
    for line in _WIDER:
        kinds = [type(batch) is t for t in line], [type(table) is t for t in line]
        if any(kinds[0]) and any(kinds[1]):
            return kinds[0].index(True) < kinds[1].index(True)
    return False
