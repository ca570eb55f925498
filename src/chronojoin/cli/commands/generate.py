"""``chronojoin generate``: write seeded benchmark datasets as Parquet (and bucketed tables).

``--kind thesis`` is the as-of dataset of the thesis (section 3.3.1): ``DIR/left`` and
``DIR/right`` (``DIR/<order>/...`` when several orders are asked for). With ``--buckets``
the ascending dataset is also saved as bucketed tables in a persistent metastore (Hive
support, embedded Derby under ``DIR/metastore_db``, data under ``DIR/warehouse``).
The other kinds come from the ``generate(spark, **params) -> {table: DataFrame}`` function
of the family's benchmark module (``chronojoin.bench.cases.<kind>``), given those of
``n_ids``/``keys`` (``--ids``), ``rows``, ``points``, ``intervals``, ``seed``, ``skew``,
``order``, ``time_type``, ``value_type`` and ``max_seconds`` that it accepts; an option
the kind does not take is an error rather than silently ignored. ``_dataset.json`` beside
the tables records the parameters the kind took.

``--mode overwrite`` first removes what earlier runs of generate wrote in ``DIR``: each
dataset found by its ``_dataset.json`` (the description and the tables of its kind, in
``DIR`` and in its order subdirectories, which go when nothing else is left in them) and
the ``--buckets`` warehouse and metastore beside them. Files it did not write stay.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import shlex
import shutil
from importlib import import_module
from typing import Any

from chronojoin.cli.errors import CliError
from chronojoin.cli.options import add_master, add_output, split_list

KINDS = ("thesis", "intervals", "band", "loader")
ORDERS = ("asc", "desc", "random", "none")
#: Options that only some kinds take: option -> (parameter, default).
OPTIONAL = {
    "--time-type": ("time_type", "timestamp"),
    "--order": ("order", "asc"),
    "--max-seconds": ("max_seconds", 365 * 86400),
    "--left-rows-per-id": ("left_rows_per_id", 1),
    "--skew": ("skew", 0.0),
    "--value-type": ("value_type", "string"),
    "--rows": ("rows", None),
    "--points": ("points", None),
    "--intervals": ("intervals", None),
    "--buckets": ("buckets", None),
}
#: The tables each kind writes (``--mode overwrite`` removes those of an earlier run).
TABLES = {"thesis": ("left", "right"), "intervals": ("points", "intervals"),
          "band": ("events", "measurements"), "loader": ("base", "batch")}
#: The default ``--database`` of bucketed tables.
DATABASE = "chronojoin"
#: The parameters of :func:`chronojoin.datagen.thesis` (and ``--buckets``).
THESIS = ("n_ids", "seed", "time_type", "order", "max_seconds", "left_rows_per_id", "skew",
          "value_type", "buckets")


#: The options of the library's arguments whose names differ (see ``main.in_cli_terms``).
FLAGS = {"n_ids": "--ids", "keys": "--ids"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``generate``."""
    parser.add_argument("--kind", default="thesis", choices=KINDS, help="which dataset")
    parser.add_argument("--ids", type=int, required=True, help="number of distinct ids (keys)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--time-type", default=OPTIONAL["--time-type"][1], choices=["timestamp", "integer"],
        help="thesis: time column type (default timestamp)",
    )
    parser.add_argument(
        "--order", default=OPTIONAL["--order"][1],
        help="thesis: row order(s), comma-separated: asc, desc, random, none (default asc)",
    )
    parser.add_argument("--max-seconds", type=int, default=OPTIONAL["--max-seconds"][1],
                        help="thesis: largest time")
    parser.add_argument("--left-rows-per-id", type=int,
                        default=OPTIONAL["--left-rows-per-id"][1], help="thesis: left rows per id")
    parser.add_argument(
        "--skew", type=float, default=OPTIONAL["--skew"][1],
        help="thesis, intervals: share of rows moved to one hot key (0 <= skew < 1)",
    )
    parser.add_argument(
        "--value-type", default=OPTIONAL["--value-type"][1], choices=["string", "double"],
        help="thesis: type of the right table's value (default string, as in the thesis; "
             "double: a fixed-width feature value)",
    )
    parser.add_argument(
        "--rows", type=int, default=None,
        help="band: events and measurements each; loader: rows of the first load, whose "
             "batch to append gets 1/20 as many (default: --ids)",
    )
    parser.add_argument(
        "--points", type=int, default=None,
        help="intervals: number of points (default 100 per id)",
    )
    parser.add_argument(
        "--intervals", type=int, default=None,
        help="intervals: number of intervals (default 10 per id)",
    )
    parser.add_argument(
        "--buckets", help="thesis: also save bucketed tables, e.g. 20,40,80,160 or 'thesis'"
    )
    parser.add_argument(
        "--database", default=DATABASE,
        help=f"thesis: metastore database of the --buckets tables (default {DATABASE})",
    )
    add_output(parser, mode_help=(
        "what to do when --out exists (default: errorifexists); overwrite first removes "
        "what earlier runs of generate wrote there (datasets with their _dataset.json, "
        "order directories, the --buckets warehouse and metastore_db), not other files"))
    add_master(parser)


def execute(args: argparse.Namespace) -> int:
    """Generate and write the dataset(s)."""
    from chronojoin._paths import local_path
    from chronojoin.datagen import parse_buckets

    local = local_path(args.out)
    if local is None:
        msg = (f"--out {args.out}: generate writes the description of the data "
               "(_dataset.json) on the local file system; give a local path or a file:// URL")
        raise CliError(msg)
    args.out = local
    if os.path.exists(local) and not os.path.isdir(local):  # --mode overwrite of a file
        msg = f"--out {args.out}: not a directory (generate writes a directory of tables)"
        raise CliError(msg)
    orders = split_list(args.order) or ["asc"]
    bad = [o for o in orders if o not in ORDERS]
    if bad:
        msg = f"--order: unknown {bad}; allowed: {list(ORDERS)}"
        raise CliError(msg)
    if args.ids < 1:
        msg = f"--ids must be >= 1; got {args.ids}"
        raise CliError(msg)
    for name in ("rows", "points", "intervals"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            msg = f"--{name} must be >= 1; got {getattr(args, name)}"
            raise CliError(msg)
    buckets = parse_buckets(split_list(args.buckets))
    if args.database != DATABASE and not buckets:
        msg = "--database: only with --buckets (the metastore database of bucketed tables)"
        raise CliError(msg)
    generator, accepted = _generator(args.kind)
    unused = [option for option, (name, default) in OPTIONAL.items()
              if name not in accepted and getattr(args, name) != default]
    if unused:
        msg = (f"{', '.join(unused)}: not an option of --kind {args.kind} (it takes "
               f"{', '.join(o for o, (n, _) in OPTIONAL.items() if n in accepted) or 'none'})")
        raise CliError(msg)
    if "skew" in accepted and not 0 <= args.skew < 1:  # 1 or more: every row on one key
        msg = f"--skew must be a number with 0 <= skew < 1; got {args.skew}"
        raise CliError(msg)
    if args.mode == "overwrite":
        _remove_earlier(args.out)
    spark = _session(args, bool(buckets))
    for order in orders:
        out = args.out if len(orders) == 1 else os.path.join(args.out, order)
        tables = generator(spark, args, order)
        _write(tables, out, args, order, accepted)
        label = f"{args.kind} {order}" if "order" in accepted else args.kind
        print(f"{label}: " + ", ".join(
            f"{os.path.join(out, t)} ({', '.join(df.columns)})" for t, df in tables.items()))
    if buckets:
        _bucketed(generator(spark, args, "asc"), args, buckets)
    return 0


def _remove_earlier(out: str) -> None:
    """Remove what earlier runs of generate wrote in ``out`` (``--mode overwrite``).

    A dataset is recognised by its ``_dataset.json`` naming a kind: that file and the
    kind's tables go, in ``out`` and in its order subdirectories (removed when empty
    then); with a dataset found, so do the ``--buckets`` warehouse and Derby metastore.
    """
    if not os.path.isdir(out):
        return
    found = _remove_dataset(out)
    for order in ORDERS:
        directory = os.path.join(out, order)
        if os.path.isdir(directory) and _remove_dataset(directory):
            found = True
            with contextlib.suppress(OSError):  # something else is left in it
                os.rmdir(directory)
    if found and os.path.isfile(os.path.join(out, "metastore_db", "service.properties")):
        for name in ("metastore_db", "warehouse"):
            path = os.path.join(out, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)


def _remove_dataset(directory: str) -> bool:
    """Remove the dataset generate wrote in ``directory``; whether there was one."""
    description = os.path.join(directory, "_dataset.json")
    try:
        with open(description, encoding="utf-8") as fh:
            kind = json.load(fh).get("kind")
    except (OSError, ValueError, AttributeError):  # none, or not a description of generate's
        return False
    if kind not in TABLES:
        return False
    for table in TABLES[kind]:
        path = os.path.join(directory, table)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
    os.remove(description)
    return True


def _session(args: argparse.Namespace, hive: bool) -> Any:
    from chronojoin.cli.session import session

    if not hive:
        return session(args, app="chronojoin-generate")
    return session(args, app="chronojoin-generate", hive=True, conf=_hive_conf(args.out))


def _hive_conf(out: str) -> dict[str, str]:
    """The warehouse and embedded Derby metastore, both under ``out``."""
    root = os.path.abspath(out)
    return {
        "spark.sql.warehouse.dir": os.path.join(root, "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={os.path.join(root, 'metastore_db')};create=true",
    }


def _write(tables: dict[str, Any], out: str, args: argparse.Namespace, order: str,
           accepted: frozenset[str]) -> None:
    """Write the tables, with the parameters the kind was generated with."""
    from chronojoin.datagen import write_tables

    given = {**_offered(args, order), "n_ids": args.ids}
    params = {"kind": args.kind, **{k: v for k, v in given.items() if k in accepted}}
    write_tables(tables, out, mode="overwrite", params=params)


def _bucketed(tables: dict[str, Any], args: argparse.Namespace, buckets: tuple[int, ...]) -> None:
    from chronojoin.datagen import dataset_name, write_bucketed

    prefix = dataset_name(args.kind, n_ids=args.ids, seed=args.seed)
    for b in buckets:
        names = write_bucketed(tables, buckets=b, database=args.database, prefix=prefix)
        print(f"bucketed ({b}): " + ", ".join(names.values()))
    print(f"read them with Hive support and these confs: {conf_options(args.out)}")


def conf_options(out: str) -> str:
    """The ``--conf`` options of :func:`_hive_conf`, quoted for a shell (the URL has ';')."""
    return " ".join(f"--conf {shlex.quote(f'{k}={v}')}" for k, v in _hive_conf(out).items())


#: The parameters :func:`_offered` gives.
OFFERED = ("n_ids", "keys", "seed", "skew", "order", "time_type", "max_seconds",
           "left_rows_per_id", "value_type", "rows", "points", "intervals")


def _offered(args: argparse.Namespace, order: str) -> dict[str, Any]:
    """Every parameter a kind's ``generate`` may take (:data:`OFFERED`), from the options."""
    return {
        "n_ids": args.ids, "keys": args.ids, "seed": args.seed, "skew": args.skew,
        "order": order, "time_type": args.time_type, "max_seconds": args.max_seconds,
        "left_rows_per_id": args.left_rows_per_id, "value_type": args.value_type,
        "rows": args.rows or args.ids,
        "points": args.points or 100 * args.ids, "intervals": args.intervals or 10 * args.ids,
    }


def _generator(kind: str) -> tuple[Any, frozenset[str]]:
    """``(spark, args, order) -> {table: DataFrame}`` for ``kind``, and its parameters."""
    if kind == "thesis":
        return _thesis, frozenset(THESIS)
    module_name = f"chronojoin.bench.cases.{kind}"
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        msg = f"--kind {kind}: the {kind} benchmark module ({module_name}) is not available"
        raise CliError(msg) from exc
    make = getattr(module, "generate", None)
    if make is None:
        msg = f"--kind {kind}: {module_name} has no `generate` function"
        raise CliError(msg)

    parameters = inspect.signature(make).parameters
    missing = [
        n for n, p in parameters.items()
        if n != "spark" and p.default is inspect.Parameter.empty and n not in OFFERED
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    if missing:
        msg = f"--kind {kind}: {module_name}.generate needs {missing}, not offered here"
        raise CliError(msg)
    accepted = frozenset(n for n in parameters if n in OFFERED)

    def family(spark: Any, args: argparse.Namespace, order: str) -> dict[str, Any]:
        kwargs = {k: v for k, v in _offered(args, order).items() if k in accepted}
        return dict(make(spark, **kwargs))

    return family, accepted


def _thesis(spark: Any, args: argparse.Namespace, order: str) -> dict[str, Any]:
    from chronojoin.datagen import thesis

    make: Any = thesis  # --order values are checked by thesis() itself
    left, right = make(
        spark, args.ids, seed=args.seed, time_type=args.time_type, max_seconds=args.max_seconds,
        order=order, left_rows_per_id=args.left_rows_per_id, skew=args.skew,
        value_type=args.value_type,
    )
    return {"left": left, "right": right}
