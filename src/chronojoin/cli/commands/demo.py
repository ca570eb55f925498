"""``chronojoin demo``: generate data, run the as-of join locally, print results and timings."""

from __future__ import annotations

import argparse
import time
from typing import get_args

from chronojoin._typing import AsofStrategy
from chronojoin.cli import options, session
from chronojoin.cli.errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``chronojoin demo``."""
    parser.add_argument("--ids", type=int, default=20_000,
                        help="distinct ids of the generated data (default: 20000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    parser.add_argument("--strategies", default="exploding,union,sort_merge,broadcast,auto",
                        help="strategies to time, comma separated (default: every one but "
                             "native, which needs a session setting)")
    options.add_master(parser)
    parser.set_defaults(master="local[*]")


def execute(args: argparse.Namespace) -> int:
    """Generate the thesis data, join it with every strategy, print rows and timings."""
    import chronojoin as cj
    from chronojoin.datagen import thesis

    if args.ids < 1:
        msg = f"--ids must be >= 1; got {args.ids}"
        raise CliError(msg)
    names = options.split_list(args.strategies) or []
    allowed = list(get_args(AsofStrategy))
    unknown = [n for n in names if n not in allowed]
    if unknown:
        msg = f"--strategies: unknown {unknown}; allowed: {allowed}"
        raise CliError(msg)
    spark = session.session(args, app="chronojoin demo")
    print(f"Spark {spark.version}, master {args.master}")
    left, right = thesis(spark, args.ids, seed=args.seed, order="none")
    left, right = left.cache(), right.cache()
    n_left, n_right = left.count(), right.count()
    print(f"generated {n_left:,} label rows and {n_right:,} feature rows on {args.ids:,} ids")
    print("\nas-of join (backward: the latest feature at or before each label time):")
    cj.asof_join(left, right, on="time", by="id").orderBy("id", "time").show(5)
    print(f"{'strategy':<12} {'seconds':>8} {'rows':>10}  matched")
    for name in names:
        start = time.perf_counter()
        joined = cj.asof_join(left, right, on="time", by="id", strategy=name)  # type: ignore[arg-type]
        row = joined.selectExpr("count(*) as n", "count(value) as m").first()
        seconds = time.perf_counter() - start
        rows, matched = (row["n"], row["m"]) if row is not None else (0, 0)
        print(f"{name:<12} {seconds:>8.2f} {rows:>10,}  {matched:,}")
    return 0
