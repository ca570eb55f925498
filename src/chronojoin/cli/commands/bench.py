"""``chronojoin bench``: run benchmark cases; ``chronojoin bench report``: write the report.

Examples::

    chronojoin bench --quick                          # < 2 minutes, proves the harness
    chronojoin bench --cases asof --sizes 10000,100000,1000000 --masters local[2]
    chronojoin bench --cases asof --variants size --masters local[1],local[2] --cluster 2
    chronojoin bench report --results bench-results --out report
    chronojoin bench report --results bench-results --out report --embed BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from chronojoin.cli.errors import CliError
from chronojoin.cli.options import add_master, split_list

DEFAULT_RESULTS = "bench-results"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``bench`` and ``bench report``."""
    parser.add_argument(
        "action", nargs="?", default="run", choices=["run", "report"],
        help="run benchmarks (default) or turn stored results into a report",
    )
    parser.add_argument("--cases", help="families to run, e.g. asof,intervals (default: all)")
    parser.add_argument("--sizes", help="dataset sizes (ids), e.g. 10000,100000")
    parser.add_argument("--methods", help="only these methods (baselines always run)")
    parser.add_argument(
        "--variants",
        help=("asof variants: size,order,buckets,many_left,hot_key,many_right,wide,"
              "numeric,no_key; "
              "intervals variants: few_pairs,many_pairs,hot_key; each family runs the "
              "ones it has (default: asof size,order,buckets,many_left,hot_key; "
              "intervals all)"),
    )
    parser.add_argument("--orders", help="row orders of the order study: asc,desc,random")
    parser.add_argument("--buckets", help="bucket counts, e.g. 20,40,80,160")
    parser.add_argument("--repetitions", type=int, default=3, help="timed runs per method")
    parser.add_argument("--quick", action="store_true", help="tiny data, one repetition (CI)")
    parser.add_argument("--timeout", type=float, default=None, help="per-method limit (s)")
    parser.add_argument("--seed", type=int, default=0, help="data generator seed")
    parser.add_argument("--data", help="where generated inputs are cached")
    parser.add_argument(
        "--masters", help="run once per master, e.g. local[1],local[2] (default: --master)"
    )
    parser.add_argument(
        "--cluster", type=int, default=None, metavar="N",
        help="also run on a standalone cluster of N one-core workers started on 127.0.0.1",
    )
    parser.add_argument(
        "--results", default=DEFAULT_RESULTS,
        help=f"results directory (JSON lines; default: {DEFAULT_RESULTS})",
    )
    parser.add_argument("--out", help="report: output directory (Markdown + PNG)")
    parser.add_argument(
        "--embed", metavar="FILE",
        help="report: also copy the report into this Markdown file, below its line "
             "'<!-- chronojoin bench report -->' (figure paths relative to FILE)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    add_master(parser)


def execute(args: argparse.Namespace) -> int:
    """Run the benchmarks, or write the report."""
    if args.action == "report":
        return _report(args)
    if args.embed:
        msg = "--embed: only with `bench report`"
        raise CliError(msg)
    return _run(args)


def _report(args: argparse.Namespace) -> int:
    if not args.out:
        msg = "`bench report` needs --out DIR"
        raise CliError(msg)
    if args.embed and not os.path.isfile(args.embed):
        msg = f"--embed: {args.embed} is not a file"
        raise CliError(msg)
    try:
        from chronojoin.report import embed_report, marker_line, write_report
    except ModuleNotFoundError as exc:  # matplotlib comes with the bench extra
        msg = (f"`bench report` needs {exc.name}: install the bench extra, "
               "pip install 'chronojoin[bench]'")
        raise CliError(msg) from exc

    if args.embed:
        with open(args.embed, encoding="utf-8") as fh:
            try:
                marker_line(fh.read().splitlines(), args.embed)
            except ValueError as exc:
                raise CliError(f"--embed: {exc}") from exc
    path = write_report([args.results], args.out)
    print(f"report written: {path}")
    if args.embed:
        embed_report(path, args.embed)
        print(f"report copied into: {args.embed}")
    return 0


def _case_params(args: argparse.Namespace) -> dict[str, Any]:
    params: dict[str, Any] = {"quick": args.quick, "seed": args.seed, "data_dir": args.data}
    for name, convert in (("sizes", int), ("buckets", int), ("orders", str), ("variants", str)):
        values = split_list(getattr(args, name))
        if values:
            try:
                params[name] = [convert(v) for v in values]
            except ValueError as exc:
                msg = f"--{name}: expected a comma-separated list of numbers; got {values}"
                raise CliError(msg) from exc
    if args.timeout is not None:
        params["timeout_s"] = args.timeout
    return params


def _families(args: argparse.Namespace) -> list[str]:
    from chronojoin.bench.runner import available_families, known_variants

    available = available_families()
    wanted = split_list(args.cases) or available
    missing = [f for f in wanted if f not in available]
    if missing:
        msg = f"--cases: no benchmark cases for {missing}; available: {available}"
        raise CliError(msg)
    known = known_variants(wanted)
    unknown = [v for v in split_list(args.variants) or [] if v not in known]
    if unknown:
        msg = f"--variants: {unknown} is not a variant of {wanted}; expected some of {known}"
        raise CliError(msg)
    return wanted


def _run(args: argparse.Namespace) -> int:
    from chronojoin.bench.results import ResultsFile, new_run_id
    from chronojoin.bench.suite import Suite, executors_of, summary

    if args.repetitions < 1:
        msg = f"--repetitions must be >= 1; got {args.repetitions}"
        raise CliError(msg)
    if args.cluster is not None and args.cluster < 1:
        msg = f"--cluster must be >= 1; got {args.cluster}"
        raise CliError(msg)
    suite = Suite(
        families=_families(args), case_params=_case_params(args),
        methods=split_list(args.methods), repetitions=1 if args.quick else args.repetitions,
        timeout_s=args.timeout, progress=not args.no_progress,
        metrics_wait_s=5.0 if args.quick else 10.0, command=_command_line(args),
    )
    masters: list[tuple[str, int | None]] = [
        (m, executors_of(m)) for m in (split_list(args.masters) or [args.master])
    ]
    results = ResultsFile(args.results, new_run_id())
    print(f"results: {results.path}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="chronojoin-bench-") as scratch:
        records = _with_cluster(args, suite, masters, results, scratch)
    print(summary(records))
    print(f"\nraw results: {results.path}\nreport: chronojoin bench report "
          f"--results {args.results} --out DIR")
    return 0


def _command_line(args: argparse.Namespace) -> str:
    """Rebuild the command as it could be typed again (options that differ from the defaults)."""
    words = ["chronojoin", "bench"]
    for name in ("cases", "sizes", "methods", "variants", "orders", "buckets", "masters"):
        if getattr(args, name):
            words += [f"--{name}", str(getattr(args, name))]
    if args.quick:
        words.append("--quick")
    if args.repetitions != 3:
        words += ["--repetitions", str(args.repetitions)]
    for name, default in (("timeout", None), ("seed", 0), ("cluster", None)):
        if getattr(args, name) != default:
            words += [f"--{name}", str(getattr(args, name))]
    if not args.masters and args.master != "local[*]":
        words += ["--master", args.master]
    words += [x for kv in args.conf for x in ("--conf", kv)]
    return " ".join(words)


def _with_cluster(
    args: argparse.Namespace, suite: Any, masters: list[tuple[str, int | None]],
    results: Any, scratch: str,
) -> list[dict[str, Any]]:
    from chronojoin.cli.session import session

    base = {
        "spark.ui.enabled": "true",
        "spark.ui.port": "0",
        "spark.sql.warehouse.dir": f"{scratch}/warehouse",
        "spark.driver.memory": "4g",
    }
    if args.quick:  # tiny data: 200 shuffle partitions would only measure task overhead
        base["spark.sql.shuffle.partitions"] = "4"
    cluster_conf: dict[str, str] = {}

    def make(master: str) -> Any:
        ns = argparse.Namespace(master=master, conf=args.conf)
        conf = {**base, **(cluster_conf if master.startswith("spark://") else {})}
        return session(ns, app="chronojoin-bench", conf=conf)

    if args.cluster is None:
        return list(suite.run(masters, make, results))
    from chronojoin.bench.cluster import StandaloneCluster

    with StandaloneCluster(workers=args.cluster, work_dir=f"{scratch}/cluster") as cluster:
        cluster_conf.update(cluster.session_conf())
        return list(suite.run([*masters, (cluster.master_url, args.cluster)], make, results))
