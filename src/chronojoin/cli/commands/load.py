"""``chronojoin load``: deduplicating incremental append into a partitioned table."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from chronojoin.cli.errors import CliError
from chronojoin.cli.options import INPUT_FORMATS, add_master, column_names, split_list

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: The options of the library's arguments whose names differ (see ``main.in_cli_terms``).
#: ``path`` and ``table`` are both given as ``--table``.
FLAGS = {"format": "--format", "path": "--table"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin load``."""
    parser.add_argument("batch", nargs="?", metavar="BATCH",
                        help="the batch to append (a Parquet, CSV, ORC or JSON path, or a "
                             "table name with --input-format table); not with --check or "
                             "--rebuild-index")
    parser.add_argument("--table", required=True, metavar="PATH_OR_NAME",
                        help="the target: a directory (a value with '/' or an existing "
                             "directory) or a metastore table name (enables Hive support)")
    parser.add_argument("--keys", type=column_names, required=True,
                        help="composite key, e.g. user_id,click_id")
    parser.add_argument("--partition-by", default="event_date",
                        help="partition column that duplicates never cross (default: event_date)")
    parser.add_argument("--order-by", type=column_names, default=None,
                        help="columns choosing the winner among batch rows with one key, "
                             "first wins (default: a deterministic hash rule)")
    parser.add_argument("--format", dest="table_format", default="parquet",
                        choices=["parquet", "orc"], help="table format (default: parquet)")
    parser.add_argument("--on-duplicate", default="drop", choices=["drop", "fail", "allow"],
                        help="drop duplicates (default), fail on any, or allow them")
    parser.add_argument("--batch-id", default=None,
                        help="explicit batch id (default: a hash of the batch content)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true",
                        help="verify no key is stored twice and the index equals the data")
    action.add_argument("--rebuild-index", action="store_true",
                        help="rebuild the key index from the stored data")
    parser.add_argument("--input-format", default=None, choices=INPUT_FORMATS,
                        help="format of BATCH (default: from the file extension: .csv, "
                             ".json, .jsonl, .orc, else parquet); 'table': BATCH is a "
                             "metastore table name")
    add_master(parser)


def _is_path(value: str) -> bool:
    return "/" in value or os.sep in value or os.path.isdir(value)


def _missing(args: argparse.Namespace) -> str:
    action = "check" if args.check else "rebuild"
    return f"--table: table {args.table} does not exist (nothing to {action})"


def _check_target(args: argparse.Namespace) -> None:
    """A directory target that is not the batch's own files and that can be written.

    Loading into the batch's directory (or one holding it, or inside it) would add the
    table's files to the batch's; a target under a file would fail mid-load.
    """
    from chronojoin._paths import local_path
    from chronojoin.cli.session import check_not_input, check_writable

    if args.input_format != "table":
        check_not_input(args.table, [args.batch], flag="--table")
    local = local_path(args.table)
    if local is None:  # a URL: the loader names what it supports
        return
    if os.path.exists(local) and not os.path.isdir(local):
        msg = f"--table {args.table}: not a directory"
        raise CliError(msg)
    check_writable(args.table)


def execute(args: argparse.Namespace) -> int:
    """Run the load, the check or the rebuild and print what happened."""
    maintenance = args.check or args.rebuild_index
    if maintenance and args.batch:
        msg = "BATCH is not used with --check or --rebuild-index"
        raise CliError(msg)
    if not maintenance and not args.batch:
        msg = "BATCH is required (or use --check / --rebuild-index)"
        raise CliError(msg)
    from chronojoin import IncrementalLoader
    from chronojoin.cli.session import input_format, quiet, read, session
    from chronojoin.loader.target import local_path

    is_path = _is_path(args.table)
    # --check and --rebuild-index on a table that does not exist would report success
    # (and create the loader's directory there): a path is looked at before Spark starts.
    if maintenance and is_path and not os.path.isdir(local_path("table", args.table)):
        raise CliError(_missing(args))
    if not maintenance and is_path:
        _check_target(args)
    spark = session(args, "chronojoin-load", hive=not is_path)
    exists = not is_path and spark.catalog.tableExists(args.table)
    if maintenance and not is_path and not exists:
        raise CliError(_missing(args))
    if not is_path and not maintenance and not exists:
        database = args.table.rpartition(".")[0]
        if database and not spark.catalog.databaseExists(database):
            msg = (f"--table {args.table}: database {database} does not exist (create it, "
                   "or give a path with '/' for a plain directory)")
            raise CliError(msg)
        # A name, not a path: say where the new table and its metastore will live.
        conf = spark.conf
        print(f"creating metastore table {args.table} (metastore: "
              f"{conf.get('spark.hadoop.javax.jdo.option.ConnectionURL', 'metastore_db/')}, "
              f"data: {conf.get('spark.sql.warehouse.dir')}); give a path with '/' for a "
              "plain directory", file=sys.stderr)
    loader = IncrementalLoader(
        spark, path=args.table if is_path else None, table=None if is_path else args.table,
        keys=split_list(args.keys) or [], partition_by=args.partition_by,
        format=args.table_format, order_by=split_list(args.order_by),
        on_duplicate=args.on_duplicate,
    )
    if args.check:
        with quiet(spark):
            report = loader.check()
        print(report)
        return 0 if report.ok else 1
    if args.rebuild_index:
        with quiet(spark):
            print(f"index rebuilt for {loader.rebuild_index()} partition(s)")
        return 0
    batch = read(spark, args.batch, args.input_format, flag="--input-format")
    if input_format(args.batch, args.input_format) in ("csv", "json"):
        batch = _as_stored(spark, batch, args, is_path=is_path, exists=exists)
    from chronojoin.cli.session import job_errors, spark_message

    try:
        with quiet(spark):
            appended = loader.append(batch, batch_id=args.batch_id)
    except job_errors(batch) as exc:  # a value the batch's job cannot read or convert
        raise CliError(_failed(args.batch, exc, spark_message(exc))) from exc
    print(appended)
    return 0


def _failed(batch: str, exc: BaseException, message: str) -> str:
    """What stopped a load, in one line.

    A value that does not parse as its column's type is named by the parser's own
    words (``Numeric value (3000000000) out of range of int``); else Spark's ``message``.
    """
    lines = [line.strip() for line in str(exc).splitlines()]
    for i, line in enumerate(lines):
        if "MALFORMED_RECORD_IN_PARSING" in line:
            cause = next((c for c in lines[i + 1:] if c.startswith("Caused by:")), None)
            why = f" ({cause.split(': ', 2)[-1]})" if cause else ""
            return (f"loading {batch} failed: a value of the batch is not of the type "
                    f"its table stores{why}")
    return f"loading {batch} failed: {message}"


def _as_stored(spark: SparkSession, batch: DataFrame, args: argparse.Namespace, *,
               is_path: bool, exists: bool) -> DataFrame:
    """A CSV or JSON batch read again with the types its table stores.

    Text keeps no types: JSON has no dates and reads every whole number as ``bigint``,
    CSV's inference makes ``00123`` the number 123 and a note that looks like a date
    a ``date``, and Spark's JSON writer gives a ``timestamp_ntz`` the form read as a
    ``timestamp``. The loader refuses such columns where the table stores other
    types. Read again with the table's types, each value is parsed as that type, and
    strictly: a value that is not one (``1.5`` or ``3000000000`` for an ``int``, text
    for a date) stops the load, and a decimal with more digits than the table's
    scale is refused, not rounded. The types are the table's own: the loader's record
    of a path table (a partition type it only guessed from directory names is left as
    the batch has it), the catalog's of a metastore table. A table that does not exist
    yet takes the batch's types; columns the table does not have keep theirs.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from chronojoin._validate.columns import col
    from chronojoin.cli.session import JSON_TIMESTAMPS, input_format
    from chronojoin.loader.target import local_path, meta_schema, read_meta

    if is_path:
        meta = read_meta(local_path("table", args.table))
        if meta is None:
            return batch
        names = {f.name: f.dataType for f in batch.schema.fields}
        stored = meta_schema(meta, names.get(args.partition_by))
    elif exists:
        stored = spark.table(args.table).schema
    else:
        return batch
    by_name = {f.name: f.dataType for f in stored.fields}
    wanted = [(f.name, by_name.get(f.name, f.dataType)) for f in batch.schema.fields]
    if all(t == f.dataType for (_, t), f in zip(wanted, batch.schema.fields)):
        return batch

    def parsed(t: T.DataType) -> T.DataType:
        # a decimal is parsed with every fraction digit its whole digits leave, then
        # checked against the table's scale (Spark's parsers round to the scale)
        if isinstance(t, T.DecimalType):
            return T.DecimalType(38, 38 - (t.precision - t.scale))
        return t

    schema = T.StructType([T.StructField(n, parsed(t), True) for n, t in wanted])
    reader = spark.read.schema(schema).option("mode", "FAILFAST")
    if input_format(args.batch, args.input_format) == "csv":
        # the header names the columns; they are checked against the schema's
        typed = reader.option("header", True).option("enforceSchema", False).csv(args.batch)
    else:
        typed = reader.option("timestampFormat", JSON_TIMESTAMPS).json(args.batch)
    exact: dict[str, Column] = {}
    for name, t in wanted:
        if isinstance(t, T.DecimalType):
            value = col(name).cast(t)
            fits = col(name).isNull() | (value == col(name))
            # the value as written: 1.257, not 1.2570000000000000000000000000
            written = F.regexp_replace(F.regexp_replace(
                col(name).cast("string"), r"(\.\d*?)0+$", "$1"), r"\.$", "")
            error = F.raise_error(F.concat(
                F.lit(f"column {name!r} of the batch: "), written,
                F.lit(f" is not a {t.simpleString()} of the table")))
            exact[name] = F.when(fits, value).otherwise(error.cast(t))
    return typed.withColumns(exact) if exact else typed
