"""``chronojoin asof LEFT RIGHT [RIGHT ...] --out OUT``: point-in-time join.

Several right tables (feature tables for one set of labels) are matched in one call,
each under its own ``--prefix``; the time and key options apply to every table, and
``--right-on`` may name each table's time column.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, get_args

from chronojoin._typing import AsofStrategy
from chronojoin.cli import options, session
from chronojoin.cli.errors import CliError

#: The arguments naming input paths (``--out`` may be none of them, nor hold one).
INPUTS = ("left", "right")

#: The options of the library's arguments whose names differ (see ``main.in_cli_terms``).
FLAGS = {
    "allow_exact_matches": "--strict", "right.on": "--right-on", "right.by": "--right-by",
    "right.tolerance": "--tolerance", "right.prefix": "--prefix",
    "right.tiebreak": "--tiebreak", "right.direction": "--direction",
    "right.allow_exact_matches": "--strict",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin asof``."""
    parser.add_argument("left", help="left table: a path, or a table name with --format table")
    parser.add_argument("right", nargs="+",
                        help="right table(s): paths, or table names with --format table; several "
                             "are matched in one call, see --prefix")
    options.add_output(parser)
    parser.add_argument("--on", help="time column of both sides")
    parser.add_argument("--left-on", help="time column of the left side")
    parser.add_argument("--right-on",
                        help="time column of the right side; with several right tables one "
                             "name for all or one per table, comma separated")
    options.add_keys(parser)
    parser.add_argument("--direction", default="backward",
                        choices=["backward", "forward", "nearest"], help="default: backward")
    parser.add_argument("--strict", action="store_true",
                        help="no exact-time matches (allow_exact_matches=False)")
    parser.add_argument("--tolerance",
                        help="maximum distance, e.g. 5 (numeric times) or '1 hour'")
    parser.add_argument("--how", default="left", choices=["left", "inner"], help="default: left")
    parser.add_argument("--suffix", default="_right", help="suffix for clashing right columns")
    parser.add_argument("--prefix",
                        help="output column prefix of each right table, comma separated "
                             "(one per table; needed when the tables' columns clash)")
    parser.add_argument("--strategy", default="auto",
                        choices=list(get_args(AsofStrategy)),
                        help="algorithm (default: auto)")
    parser.add_argument("--tiebreak", type=options.column_names,
                        help="right column(s) deciding ties, comma separated")
    parser.add_argument("--buckets", type=int, help="time buckets per key (skewed keys)")
    options.add_input_format(parser)
    options.add_master(parser, remote=True)


def _right_tables(args: argparse.Namespace) -> tuple[list[str | None], list[str | None]]:
    """Each right table's prefix and time column, checked before any session starts."""
    count = len(args.right)
    prefixes: list[str | None] = [None] * count
    if args.prefix is not None:
        given = [p.strip() for p in args.prefix.split(",")]
        if len(given) != count or not all(given):
            raise CliError(f"--prefix: expected {count} non-empty prefix(es), one per right "
                           f"table, got {args.prefix!r}")
        prefixes = list(given)
    times: list[str | None] = [args.right_on] * count
    if count > 1 and args.right_on is not None and "," in args.right_on:
        named = options.split_list(args.right_on) or []
        if len(named) != count:
            raise CliError(f"--right-on: expected one time column or {count} (one per right "
                           f"table), got {args.right_on!r}")
        times = list(named)
    return prefixes, times


def execute(args: argparse.Namespace) -> int:
    """Run the join and write the result."""
    import chronojoin as cj

    prefixes, times = _right_tables(args)
    spark = session.session(args, app="chronojoin asof")
    left = session.read(spark, args.left, args.format)
    tables = [session.read(spark, path, args.format) for path in args.right]
    split = options.split_list
    # One table without a prefix is a plain join; otherwise each table is a spec
    # carrying its own time column (the call's other options apply to every spec).
    right: Any = tables[0]
    if len(tables) > 1 or prefixes[0] is not None:
        right = [cj.Right(df, on=on, prefix=prefix)
                 for df, on, prefix in zip(tables, times, prefixes, strict=True)]
    out = cj.asof_join(
        left, right, on=args.on, left_on=args.left_on,
        right_on=None if isinstance(right, list) else args.right_on,
        by=split(args.by), left_by=split(args.left_by), right_by=split(args.right_by),
        direction=args.direction, allow_exact_matches=not args.strict,
        tolerance=args.tolerance, how=args.how, suffix=args.suffix,
        strategy=args.strategy, tiebreak=split(args.tiebreak), buckets=args.buckets,
    )
    start = time.perf_counter()
    session.write(out, args.out, args.mode)
    print(f"wrote {args.out} in {time.perf_counter() - start:.2f} s")
    return 0
