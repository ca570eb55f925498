"""``chronojoin interval POINTS INTERVALS --out OUT``: aggregate the intervals covering points."""

from __future__ import annotations

import argparse
import time

from chronojoin.cli import options, session
from chronojoin.cli.errors import CliError

#: The arguments naming input paths (``--out`` may be none of them, nor hold one).
INPUTS = ("points", "intervals")

FUNCTIONS = ("sum", "count", "mean", "min", "max", "collect_list", "collect_set")


#: The options of the library's arguments whose names differ (see ``main.in_cli_terms``).
FLAGS = {"buckets": "--buckets/--bucket-width", "aggs": "--agg"}


def parse_agg(text: str) -> tuple[str, tuple[str, str | None]]:
    """``"total=sum:points"`` -> ``("total", ("sum", "points"))``; ``"n=count"`` counts rows.

    Examples
    --------
    >>> parse_agg("total=sum:points"), parse_agg("n=count")
    (('total', ('sum', 'points')), ('n', ('count', None)))
    """
    name, sep, rest = text.partition("=")
    function, _, column = rest.partition(":")
    if not sep or not name.strip() or function.strip() not in FUNCTIONS:
        msg = (
            f"--agg {text!r}: expected NAME=FUNCTION[:COLUMN] with FUNCTION one of "
            f"{', '.join(FUNCTIONS)}, e.g. total=sum:points or n=count"
        )
        raise CliError(msg)
    return name.strip(), (function.strip(), column.strip() or None)


def parse_aggs(texts: list[str]) -> dict[str, tuple[str, str | None]]:
    """Every ``--agg``, by output name; a name given twice is an error (not the last wins)."""
    aggs: dict[str, tuple[str, str | None]] = {}
    for text in texts:
        name, agg = parse_agg(text)
        if name in aggs:
            msg = f"--agg {text!r}: output name {name!r} is given twice; choose another name"
            raise CliError(msg)
        aggs[name] = agg
    return aggs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin interval``."""
    parser.add_argument("points", help="points table: a path, or a table name with --format table")
    parser.add_argument("intervals",
                        help="intervals table: a path, or a table name with --format table")
    options.add_output(parser)
    options.add_keys(parser, left="points", right="intervals")
    parser.add_argument("--time", default="time", help="time column of points (default: time)")
    parser.add_argument("--start", default="start",
                        help="start column of intervals (default: start)")
    parser.add_argument("--end", default="end", help="end column of intervals (default: end)")
    parser.add_argument(
        "--agg", action="append", default=[], metavar="NAME=FUNCTION[:COLUMN]",
        help=f"an output aggregate, repeatable; FUNCTION: {', '.join(FUNCTIONS)}; "
             "count without a column counts intervals (default: total=sum:points)",
    )
    parser.add_argument("--closed", default="both", choices=["both", "left", "right", "neither"],
                        help="inclusive interval bounds (default: both)")
    parser.add_argument("--how", default="left", choices=["left", "inner"],
                        help="left: every point once; inner: covered points only (default: left)")
    parser.add_argument("--strategy", default="auto",
                        choices=["auto", "sweep", "bucketed_sweep", "join"],
                        help="algorithm (default: auto)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--buckets", type=int,
                       help="bucketed_sweep: number of time buckets (default: automatic)")
    group.add_argument("--bucket-width",
                       help="bucketed_sweep: bucket width, e.g. '1 hour' or 50 (numeric times)")
    options.add_input_format(parser)
    options.add_master(parser, remote=True)


def execute(args: argparse.Namespace) -> int:
    """Run the aggregation and write the result."""
    import chronojoin as cj

    aggs = parse_aggs(args.agg) or None
    spark = session.session(args, app="chronojoin interval")
    points = session.read(spark, args.points, args.format)
    intervals = session.read(spark, args.intervals, args.format)
    split = options.split_list
    buckets = args.buckets if args.buckets is not None else args.bucket_width
    out = cj.interval_aggregate(
        points, intervals, by=split(args.by), left_by=split(args.left_by),
        right_by=split(args.right_by), time=args.time, start=args.start, end=args.end,
        aggs=aggs, closed=args.closed, how=args.how, strategy=args.strategy, buckets=buckets,
    )
    start = time.perf_counter()
    session.write(out, args.out, args.mode)
    print(f"wrote {args.out} in {time.perf_counter() - start:.2f} s")
    return 0
