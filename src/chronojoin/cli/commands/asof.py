"""``chronojoin asof LEFT RIGHT --out OUT``: point-in-time join of two tables."""

from __future__ import annotations

import argparse
import time
from typing import get_args

from chronojoin._typing import AsofStrategy
from chronojoin.cli import options, session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin asof``."""
    parser.add_argument("left", help="left table (Parquet directory or .csv file)")
    parser.add_argument("right", help="right table (Parquet directory or .csv file)")
    options.add_output(parser)
    parser.add_argument("--on", help="time column of both sides")
    parser.add_argument("--left-on", help="time column of the left side")
    parser.add_argument("--right-on", help="time column of the right side")
    parser.add_argument("--by", help="equality key column(s) of both sides, comma separated")
    parser.add_argument("--left-by", help="left key column(s), comma separated")
    parser.add_argument("--right-by", help="right key column(s), comma separated")
    parser.add_argument("--direction", default="backward",
                        choices=["backward", "forward", "nearest"], help="default: backward")
    parser.add_argument("--strict", action="store_true",
                        help="no exact-time matches (allow_exact_matches=False)")
    parser.add_argument("--tolerance",
                        help="maximum distance, e.g. 5 (numeric times) or '1 hour'")
    parser.add_argument("--how", default="left", choices=["left", "inner"], help="default: left")
    parser.add_argument("--suffix", default="_right", help="suffix for clashing right columns")
    parser.add_argument("--strategy", default="auto",
                        choices=list(get_args(AsofStrategy)),
                        help="algorithm (default: auto)")
    parser.add_argument("--tiebreak", help="right column(s) deciding ties, comma separated")
    parser.add_argument("--buckets", type=int, help="time buckets per key (skewed keys)")
    options.add_input_format(parser)
    options.add_master(parser)


def execute(args: argparse.Namespace) -> int:
    """Run the join and write the result."""
    import chronojoin as cj

    spark = session.session(args, app="chronojoin asof")
    left = session.read(spark, args.left, args.format)
    right = session.read(spark, args.right, args.format)
    split = options.split_list
    out = cj.asof_join(
        left, right, on=args.on, left_on=args.left_on, right_on=args.right_on,
        by=split(args.by), left_by=split(args.left_by), right_by=split(args.right_by),
        direction=args.direction, allow_exact_matches=not args.strict,
        tolerance=args.tolerance, how=args.how, suffix=args.suffix,
        strategy=args.strategy, tiebreak=split(args.tiebreak), buckets=args.buckets,
    )
    start = time.perf_counter()
    session.write(out, args.out, args.mode)
    print(f"wrote {args.out} in {time.perf_counter() - start:.2f} s")
    return 0
