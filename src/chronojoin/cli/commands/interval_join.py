"""``chronojoin interval-join LEFT RIGHT --out OUT``: point-in-interval or overlap join."""

from __future__ import annotations

import argparse
import time

from chronojoin.cli import options, session
from chronojoin.cli.commands.band import add_common

#: The arguments naming input paths (``--out`` may be none of them, nor hold one).
INPUTS = ("left", "right")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin interval-join``."""
    parser.add_argument("left", help="left table: a path, or a table name with --format table")
    parser.add_argument("right", help="right table: a path, or a table name with --format table")
    options.add_output(parser)
    parser.add_argument("--left-start", required=True,
                        help="left time column (the point, or the interval start)")
    parser.add_argument("--left-end", default=None,
                        help="left interval end (omit: left rows are points)")
    parser.add_argument("--right-start", required=True, help="right interval start")
    parser.add_argument("--right-end", required=True, help="right interval end")
    add_common(parser)


def execute(args: argparse.Namespace) -> int:
    """Run the join and write the result."""
    import chronojoin as cj

    spark = session.session(args, app="chronojoin interval-join")
    left = session.read(spark, args.left, args.format)
    right = session.read(spark, args.right, args.format)
    split = options.split_list
    out = cj.interval_join(
        left, right, left_start=args.left_start, left_end=args.left_end,
        right_start=args.right_start, right_end=args.right_end, closed=args.closed,
        by=split(args.by), left_by=split(args.left_by), right_by=split(args.right_by),
        how=args.how, bin_size=args.bin_size, suffix=args.suffix,
    )
    start = time.perf_counter()
    session.write(out, args.out, args.mode)
    print(f"wrote {args.out} in {time.perf_counter() - start:.2f} s")
    return 0
