"""``chronojoin band LEFT RIGHT --out OUT``: band (time-range) join of two tables."""

from __future__ import annotations

import argparse
import time

from chronojoin.cli import options, session

#: The arguments naming input paths (``--out`` may be none of them, nor hold one).
INPUTS = ("left", "right")


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``band`` and ``interval-join``."""
    parser.add_argument("--closed", default="both", choices=["both", "left", "right", "neither"],
                        help="which bounds are inclusive (default: both)")
    options.add_keys(parser)
    parser.add_argument("--how", default="inner", choices=["inner", "left"],
                        help="default: inner")
    parser.add_argument("--bin-size",
                        help="width of the time bins, e.g. 600 or '10 minutes' "
                             "(default: chosen automatically)")
    parser.add_argument("--suffix", default="_right", help="suffix for clashing right columns")
    options.add_input_format(parser)
    options.add_master(parser, remote=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin band``."""
    parser.add_argument("left", help="left table: a path, or a table name with --format table")
    parser.add_argument("right", help="right table: a path, or a table name with --format table")
    options.add_output(parser)
    parser.add_argument("--left-on", required=True, help="time column of the left side")
    parser.add_argument("--right-on", required=True, help="time column of the right side")
    parser.add_argument("--lower", required=True,
                        help="window start relative to --left-on, e.g. '-1 hour' or -5 "
                             "(or a left column name: a per-row bound)")
    parser.add_argument("--upper", required=True,
                        help="window end relative to --left-on, e.g. 0 or '30 minutes' "
                             "(or a left column name: a per-row bound)")
    add_common(parser)


def execute(args: argparse.Namespace) -> int:
    """Run the join and write the result."""
    import chronojoin as cj

    spark = session.session(args, app="chronojoin band")
    left = session.read(spark, args.left, args.format)
    right = session.read(spark, args.right, args.format)
    split = options.split_list
    out = cj.band_join(
        left, right, left_on=args.left_on, right_on=args.right_on, lower=args.lower,
        upper=args.upper, closed=args.closed, by=split(args.by), left_by=split(args.left_by),
        right_by=split(args.right_by), how=args.how, bin_size=args.bin_size,
        suffix=args.suffix,
    )
    start = time.perf_counter()
    session.write(out, args.out, args.mode)
    print(f"wrote {args.out} in {time.perf_counter() - start:.2f} s")
    return 0
