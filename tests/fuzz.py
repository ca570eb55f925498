"""A longer random differential run: random inputs and options against the references.

Each case draws its own inputs and options from its seed (sizes 0 to a few hundred
rows, NULL keys and times, ties, a hot key, every time type, direction, tolerance,
``closed``, ``how``, strategy and bucket count), runs the public function and compares
every left row with the brute-force as-of reference or DuckDB. The ``load`` family
appends random batches with the incremental loader and checks the table after each
(:mod:`tests.loader.random_loads`). The suite's conformance tests cover fixed cases;
this covers the combinations between them. Run it with::

    python -m tests.fuzz --seconds 600            # as-of, the other joins, loads
    python -m tests.fuzz asof --seed 1000 --seconds 1200
    python -m tests.fuzz --connect                # on a Spark Connect session
    python -m tests.fuzz --settings legacy_new_york --conf spark.sql.shuffle.partitions=5
    python -m tests.fuzz load --metastore         # metastore tables too (Hive, Derby)

``--connect`` starts the Connect server that ships in the pyspark wheel on 127.0.0.1
and stops it at the end; ``--metastore`` builds a local session with a Hive metastore
(embedded Derby) in a temporary directory; ``--settings`` applies one of
:data:`SETTINGS` and ``--conf`` any session setting. Each failing case is printed
with its seed and options and reruns alone with ``--seed <seed - 1> --cases 1`` (and
the same session options). The exit code is the number of failures (at most 100).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chronojoin as cj
from chronojoin.asof.buckets import Layout
from chronojoin.asof.spec import build_spec
from chronojoin.asof.strategies import hot_broadcast, hot_split
from chronojoin.errors import InvalidArgumentError
from tests.asof.data import (
    HUGE_TOLERANCE,
    SPARK_TYPE,
    numeric,
    one_left_row_per_key,
    ordinal,
    random_rows,
    tolerance_for,
)
from tests.asof.test_conformance import _check, _frames
from tests.band.helpers import intervals, points, to_spark
from tests.helpers import small_input_modules
from tests.intervals.test_conformance import EVERYTHING, STRATEGIES, SWEEPABLE
from tests.loader.random_loads import load_case
from tests.oracles.asof import brute_force
from tests.oracles.band import (
    band_condition,
    overlap_condition,
    pairs,
    point_in_condition,
    spark_pairs,
)
from tests.oracles.intervals import (
    INTERVAL_SCHEMA,
    POINT_SCHEMA,
    arrow,
    assert_same,
    duckdb_interval_aggregate,
    random_data,
    spark_schema,
)

Case = Callable[[Any, random.Random], dict[str, Any]]
#: As-of tolerances in test time units: none, exact only, short, long, past the long range.
TOLERANCES = [None, 0, 3, 20, HUGE_TOLERANCE]


def asof_case(spark: Any, rng: random.Random) -> dict[str, Any]:
    """One as-of join: a public strategy (or auto's hot-key plans) against brute force."""
    with contextlib.ExitStack() as stack:
        return _asof_case(spark, rng, stack)


def _asof_case(spark: Any, rng: random.Random, stack: contextlib.ExitStack) -> dict[str, Any]:
    kind = rng.choice(list(SPARK_TYPE))
    left, right = random_rows(
        seed=rng.randrange(1 << 30), n_left=rng.choice([0, 1, 40, 150]),
        n_right=rng.choice([0, 1, 60, 300]), n_keys=rng.choice([1, 3, 20, 150]),
        t_max=rng.choice([5, 60, 400]), null_share=rng.choice([0.0, 0.05, 0.3]),
        hot_key=rng.random() < 0.7)
    if rng.random() < 0.4:  # one left row per key except the hot one: auto's broadcasts
        left = one_left_row_per_key(left, keep=("k0",))
    opts = {"direction": rng.choice(["backward", "forward", "nearest"]),
            "allow_exact_matches": rng.random() < 0.6, "tol": rng.choice(TOLERANCES),
            "how": rng.choice(["left", "inner"]), "tiebreak": rng.random() < 0.5,
            "keys": rng.random() < 0.85,
            "strategy": rng.choice(["exploding", "union", "sort_merge", "broadcast", "auto",
                                    "auto", "hot_broadcast", "hot_split"])}
    if opts["strategy"] in ("union", "sort_merge"):
        opts["buckets"] = rng.choice([None, 1, 3, 50])
    if opts["strategy"].startswith("hot_"):
        opts["keys"] = True
    nums = [[dict(r, t=numeric(r["t"], kind)) for r in side] for side in (left, right)]
    if not opts["keys"]:
        nums = [[dict(r, k="one") for r in side] for side in nums]
    tol = opts["tol"]
    expected = brute_force(
        *nums, left_on="t", right_on="t", left_by=["k"], right_by=["k"],
        direction=opts["direction"], allow_exact_matches=opts["allow_exact_matches"],
        tolerance=numeric(tol, kind),
        tiebreak=["tb"] if opts["tiebreak"] else None)
    ldf, rdf = _frames(spark, left, right, kind)
    if not opts["keys"]:
        rdf = rdf.drop("k")
    elif rng.random() < 0.25:
        (ldf, rdf), opts["bucketed"] = _bucketed_tables(spark, rng, [ldf, rdf], stack)
    common = {"direction": opts["direction"], "allow_exact_matches": opts["allow_exact_matches"],
              "tolerance": tolerance_for(tol, kind), "tiebreak": "tb" if opts["tiebreak"] else None}
    if opts["strategy"].startswith("hot_"):
        spec = build_spec(ldf, rdf, on="t", left_on=None, right_on=None, by="k", left_by=None,
                          right_by=None, how=opts["how"], suffix="_right",
                          strategy="broadcast", **common)
        lo, hi = rng.choice([0, -10, 20]), rng.choice([5, 60, 10**7])
        opts["layout"] = Layout(
            buckets=rng.choice([1, 2, 7, 40, 500]),
            hot_keys=(("k0",),) if rng.random() < 0.8 else (("k0",), ("k1",)),
            span=(ordinal(lo, kind), ordinal(hi, kind)))
        build = (hot_broadcast.plan if opts["strategy"] == "hot_broadcast"
                 else hot_split.plan)
        out = build(spec.left, spec.rights[0], spec, opts["layout"])
    else:
        out = cj.asof_join(ldf, rdf, on="t", by="k" if opts["keys"] else None, how=opts["how"],
                           strategy=opts["strategy"], buckets=opts.get("buckets"), **common)
    results = {"rid": out}
    if opts["strategy"] in ("auto", "union", "broadcast") and rng.random() < 0.4:
        # The same table twice in one call: both prefixes hold the same answers.
        specs = [cj.Right(rdf, prefix=p, **common) for p in ("a_", "b_")]
        both = cj.asof_join(ldf, specs, on="t", by="k" if opts["keys"] else None,
                            how=opts["how"], strategy=opts["strategy"])
        results.update({rid: both.withColumnRenamed(rid, "rid") for rid in ("a_rid", "b_rid")})
    errors = []
    for rid, result in results.items():
        try:
            _check(result, left, expected, opts["how"])
        except AssertionError as e:
            errors.append(f"{rid}: {e}")
    if not opts["strategy"].startswith("hot_") and rng.random() < 0.4:
        opts["tables"], more = _several_tables(spark, rng, kind, left, right, opts)
        errors += more
    return {"kind": kind, "rows": (len(left), len(right)), **opts, "errors": errors}


def _bucketed_tables(spark: Any, rng: random.Random, frames: list[Any],
                     stack: contextlib.ExitStack) -> tuple[list[Any], list[int | None]]:
    """Some of ``frames`` as tables bucketed by the key and sorted by time, read back.

    Returns the frames and each one's bucket count (``None``: left as it was). The
    tables (external, under :func:`_tables_dir`) are dropped when ``stack`` closes;
    their files stay until the process ends.
    """
    out, counts = [], []
    for df in frames:
        n = rng.choice([None, 1, 2, 3, 8])
        counts.append(n)
        if n is None:
            out.append(df)
            continue
        name = f"cj_fuzz_{uuid.uuid4().hex[:12]}"
        df.write.bucketBy(n, "k").sortBy("t").option("path", f"{_tables_dir()}/{name}") \
            .saveAsTable(name)
        stack.callback(spark.sql, f"DROP TABLE IF EXISTS {name}")
        out.append(spark.table(name))
    return out, counts


@functools.cache
def _tables_dir() -> str:
    """The directory of the bucketed tables' files: one per process, removed at exit.

    Not one per case: when a case's answer is known early (an empty side), adaptive
    execution cancels the stages still reading, and a task already running goes on
    reading its files after the case has ended. Had they been deleted, it would fail
    (harmlessly, but with a stack trace in the log).
    """
    path = tempfile.mkdtemp(prefix="cj-fuzz-tables-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _several_tables(spark: Any, rng: random.Random, kind: str, left: list[dict],
                    right: list[dict], opts: dict[str, Any]) -> tuple[list[dict], list[str]]:
    """Two or three right tables in one call, each with its own options and columns.

    The first table is ``right``, the others fresh random rows of the same keys, some
    under other key and time column names. Each table's answers are checked against
    the brute force with that table's options; ``how="inner"`` keeps the left rows
    that found a match in every table.
    """
    keys = opts["keys"]
    tables = [right]
    for _ in range(rng.choice([1, 2])):
        _, extra = random_rows(seed=rng.randrange(1 << 30), n_left=0,
                               n_right=rng.choice([0, 1, 60, 300]), n_keys=rng.choice([3, 20]),
                               t_max=rng.choice([5, 60, 400]),
                               null_share=rng.choice([0.0, 0.05]), hot_key=rng.random() < 0.5)
        tables.append(extra)
    ldf, _ = _frames(spark, left, [], kind)
    drawn, specs, expected = [], [], []
    for i, rows in enumerate(tables):
        o = {"direction": rng.choice(["backward", "forward", "nearest"]),
             "allow_exact_matches": rng.random() < 0.6, "tol": rng.choice(TOLERANCES),
             "tiebreak": rng.random() < 0.5, "renamed": rng.random() < 0.5}
        drawn.append(o)
        nums = [[dict(r, t=numeric(r["t"], kind)) for r in side] for side in (left, rows)]
        if not keys:
            nums = [[dict(r, k="one") for r in side] for side in nums]
        expected.append(brute_force(
            *nums, left_on="t", right_on="t", left_by=["k"], right_by=["k"],
            direction=o["direction"], allow_exact_matches=o["allow_exact_matches"],
            tolerance=numeric(o["tol"], kind), tiebreak=["tb"] if o["tiebreak"] else None))
        _, rdf = _frames(spark, [], rows, kind)
        # Unrenamed tables sometimes leave their columns to the call's (left) names.
        on, by = ("t", "k") if rng.random() < 0.5 else (None, None)
        if o["renamed"]:
            rdf = rdf.withColumnRenamed("t", "at").withColumnRenamed("k", "key")
            on, by = "at", "key"
        if not keys:
            rdf = rdf.drop(by or "k")
        specs.append(cj.Right(
            rdf, on=on, by=by if keys else None, prefix=f"s{i}_", direction=o["direction"],
            allow_exact_matches=o["allow_exact_matches"], tolerance=tolerance_for(o["tol"], kind),
            tiebreak="tb" if o["tiebreak"] else None))
    # `left_on`/`left_by` alone: each table names its columns or takes the left names.
    names = ({"on": "t", "by": "k" if keys else None} if rng.random() < 0.5
             else {"left_on": "t", "left_by": "k" if keys else None})
    out = cj.asof_join(ldf, specs, how=opts["how"], strategy=opts["strategy"],
                       buckets=opts.get("buckets"), **names)
    kept = [all(found) for found in zip(*expected, strict=True)] if left else []
    if opts["how"] == "inner":
        left = [row for row, keep in zip(left, kept, strict=True) if keep]
        expected = [[e for e, keep in zip(exp, kept, strict=True) if keep] for exp in expected]
    wanted = {row["lid"] for row in left}
    errors = []
    for i, exp in enumerate(expected):
        result = out.withColumnRenamed(f"s{i}_rid", "rid")
        try:
            _check(result, left, exp, "left")
            extra = {r["lid"] for r in result.select("lid").collect()} - wanted
            assert not extra, f"left rows {sorted(extra)[:5]} returned but not expected"
        except AssertionError as e:
            errors.append(f"s{i}_rid: {e}")
    return drawn, errors


@contextlib.contextmanager
def _small_input_limits(on: bool) -> Iterator[None]:
    """With ``on`` False, the automatic choices gather statistics even on small inputs."""
    saved = [(m, m.SMALL_INPUT_BYTES) for m in small_input_modules()]
    try:
        if not on:
            for module, _ in saved:
                module.SMALL_INPUT_BYTES = 0
        yield
    finally:
        for module, value in saved:
            module.SMALL_INPUT_BYTES = value


def joins_case(spark: Any, rng: random.Random) -> dict[str, Any]:
    """One band join, point-in-interval join, overlap join or interval aggregate vs DuckDB."""
    what = rng.choice(["band", "point_in", "overlap", "aggregate", "aggregate"])
    opts: dict[str, Any] = {
        "what": what, "closed": rng.choice(["both", "left", "right", "neither"]),
        "how": rng.choice(["inner", "left"]), "keys": rng.random() < 0.6,
        "small_input_limits": rng.random() < 0.5}
    with _small_input_limits(opts["small_input_limits"]):
        return _joins_case(spark, rng, opts)


def _joins_case(spark: Any, rng: random.Random, opts: dict[str, Any]) -> dict[str, Any]:
    what, by = opts["what"], "k" if opts["keys"] else None
    seed = rng.randrange(1 << 30)
    if what == "aggregate":
        return {**opts, **_aggregate(spark, rng, seed, opts)}
    span = rng.choice([50, 1000, 100_000])
    n_left, n_right = rng.choice([0, 1, 50, 300]), rng.choice([0, 1, 50, 400])
    opts.update(span=span, rows=(n_left, n_right),
                bin_size=rng.choice([None, None, 1, 7, 100, 5000]))
    keys = [("k", "k")] if by else []
    common = {"closed": opts["closed"], "how": opts["how"], "by": by, "bin_size": opts["bin_size"]}
    if what == "band":
        lp = points(seed, n_left, span=span, keys=rng.choice([1, 3, 30]))
        rp = points(seed + 1, n_right, span=span)
        lower = rng.choice([-3000, -50, -10, 0, 10])
        upper = lower + rng.choice([-5, 0, 5, 60, 2000])
        opts.update(lower=lower, upper=upper)
        schema = "id long, k long, t long"
        out = cj.band_join(to_spark(spark, lp, schema), to_spark(spark, rp, schema), left_on="t",
                           right_on="t", lower=lower, upper=upper, **common)
        cond = band_condition(f"l.t + {lower}", "r.t", f"l.t + {upper}", opts["closed"])
        expected = pairs(lp, rp, cond, keys=keys, how=opts["how"])
    else:
        length = rng.choice([0, 5, 30, 500])
        tail = rng.choice([0.0, 0.0, 0.1])
        iv = intervals(seed + 2, n_right, span=span, length=length, tail=tail)
        right = to_spark(spark, iv, "id long, k long, s long, e long")
        if what == "point_in":
            lp = points(seed, n_left, span=span)
            out = cj.interval_join(to_spark(spark, lp, "id long, k long, t long"), right,
                                   left_start="t", right_start="s", right_end="e", **common)
            cond = point_in_condition("l.t", "r.s", "r.e", opts["closed"])
        else:
            lp = intervals(seed + 3, n_left, span=span, length=rng.choice([0, 5, 30, 500]),
                           tail=tail)
            out = cj.interval_join(to_spark(spark, lp, "id long, k long, s long, e long"), right,
                                   left_start="s", left_end="e", right_start="s", right_end="e",
                                   **common)
            cond = overlap_condition("l.s", "l.e", "r.s", "r.e", opts["closed"])
        expected = pairs(lp, iv, cond, keys=keys, how=opts["how"])
    got = spark_pairs(out)
    errors = []
    if got != expected:
        errors.append(f"missing {list((expected - got).elements())[:5]}, "
                      f"unexpected {list((got - expected).elements())[:5]}")
    return {**opts, "errors": errors}


def _aggregate(spark: Any, rng: random.Random, seed: int,
               opts: dict[str, Any]) -> dict[str, Any]:
    pts, ivs = random_data(seed, n_points=rng.choice([20, 80, 300]),
                           n_intervals=rng.choice([20, 40, 200]), keys=rng.choice([2, 6, 50]))
    pts, ivs = pts[: rng.choice([0, 1, len(pts)])], ivs[: rng.choice([0, 1, len(ivs)])]
    strategy = rng.choice(STRATEGIES)
    # min/max/collect where every strategy computes them, sometimes for a sweep (an
    # error) and for auto (which then joins; with sums it sweeps or decides by statistics)
    aggs = EVERYTHING if strategy == "join" or rng.random() < 0.3 else SWEEPABLE
    buckets = rng.choice([None, 1, 3, 40]) if strategy == "bucketed_sweep" else None
    by = "id" if opts["keys"] else None
    points_df = spark.createDataFrame(pts, spark_schema(POINT_SCHEMA))
    intervals_df = spark.createDataFrame(ivs, spark_schema(INTERVAL_SCHEMA))
    out = {"strategy": strategy, "buckets": buckets, "rows": (len(pts), len(ivs)),
           "functions": sorted({f for f, _ in aggs.values()})}
    try:
        result = cj.interval_aggregate(points_df, intervals_df, by=by, time="time", start="start",
                                       end="end", aggs=aggs, closed=opts["closed"],
                                       how=opts["how"], strategy=strategy, buckets=buckets)
    except InvalidArgumentError:
        if strategy in ("sweep", "bucketed_sweep") and aggs is EVERYTHING:
            return {**out, "errors": []}  # a sweep refuses min/max/collect: as documented
        raise
    keys = [by] if by else []
    expected = duckdb_interval_aggregate(
        arrow(pts, POINT_SCHEMA), arrow(ivs, INTERVAL_SCHEMA), left_by=keys, right_by=keys,
        time="time", start="start", end="end", aggs=aggs, closed=opts["closed"], how=opts["how"])
    try:
        assert_same(result.select(*[c for c, _ in POINT_SCHEMA], *aggs).collect(), expected)
    except AssertionError as e:
        return {**out, "errors": [str(e)[:500]]}
    return {**out, "errors": []}


CASES: dict[str, Case] = {"asof": asof_case, "joins": joins_case, "load": load_case}


def run(spark: Any, family: str, *, seed: int, seconds: float | None = None,
        cases: int | None = None, out: Any = sys.stdout) -> int:
    """Run cases of ``family`` from ``seed + 1`` on until ``seconds`` or ``cases`` run out.

    Every case is printed when it fails (its seed reruns it); returns the failure count.
    """
    deadline = None if seconds is None else time.monotonic() + seconds
    done = failed = 0
    while (cases is None or done < cases) and (deadline is None or time.monotonic() < deadline):
        seed += 1
        try:
            result = CASES[family](spark, random.Random(seed))
        except Exception as e:  # a crash is a failure of the case, reported with its seed
            result = {"errors": [f"raised {e!r}"[:500]]}
        done += 1
        if result["errors"]:
            failed += 1
            print(f"FAIL {family} seed={seed}: {result}", file=out, flush=True)
    print(f"{family}: {done} cases, {failed} failed (seeds {seed - done + 1}..{seed})",
          file=out, flush=True)
    return failed


#: Session settings users change that the plans must not depend on: the legacy
#: (non-ANSI) SQL mode with a session time zone that has daylight saving time, and a
#: session without adaptive execution or broadcasts, with a few shuffle partitions; and
#: Spark's generated code.
SETTINGS: dict[str, dict[str, str]] = {
    "legacy_new_york": {"spark.sql.ansi.enabled": "false",
                        "spark.sql.session.timeZone": "America/New_York"},
    "static_no_broadcast": {"spark.sql.adaptive.enabled": "false",
                            "spark.sql.autoBroadcastJoinThreshold": "-1",
                            "spark.sql.shuffle.partitions": "3"},
    # Spark's default, which the tests' session turns off for speed: generated code
    # can evaluate what interpreted code skips (an expression hoisted out of the
    # condition guarding it), so an overflow can stop a query only here
    "generated_code": {"spark.sql.codegen.wholeStage": "true",
                       "spark.sql.codegen.factoryMode": "FALLBACK"},
}


@contextlib.contextmanager
def session_settings(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` set on ``spark`` for the block, the previous values restored after."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"--conf takes KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


@contextlib.contextmanager
def _session(connect: bool, metastore: bool = False) -> Iterator[Any]:
    """The session of a run: the tests' local one, or one of the two below.

    A Connect session on a server started for the run, or a local session with a Hive
    metastore (embedded Derby) under a temporary directory.
    """
    from tests.conftest import _build_session

    with contextlib.ExitStack() as stack:
        if metastore:
            spark = _build_session(stack.enter_context(tempfile.TemporaryDirectory()))
        elif connect:
            from pyspark.sql import SparkSession

            from tests.servers import connect_server

            logs = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            url = stack.enter_context(connect_server(logs / "connect-server.log"))
            spark = SparkSession.builder.remote(url).getOrCreate()
        else:
            spark = _build_session()
        try:
            yield spark
        finally:
            spark.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("family", nargs="?", choices=[*CASES, "all"], default="all")
    parser.add_argument("--seed", type=int, default=0, help="cases use seed+1, seed+2, ...")
    parser.add_argument("--seconds", type=float, default=600.0,
                        help="time for each family (default 600)")
    parser.add_argument("--cases", type=int, default=None, help="stop after this many per family")
    parser.add_argument("--connect", action="store_true",
                        help="run on Spark Connect (a server from the pyspark wheel, 127.0.0.1)")
    parser.add_argument("--metastore", action="store_true",
                        help="a local session with a Hive metastore (embedded Derby, in a "
                             "temporary directory): loads go to metastore tables too")
    parser.add_argument("--settings", choices=list(SETTINGS), default=None,
                        help="one of the suite's other session settings")
    parser.add_argument("--conf", type=_setting, action="append", default=[],
                        metavar="KEY=VALUE", help="a session setting (repeatable)")
    args = parser.parse_args(argv)
    if args.connect and args.metastore:
        parser.error("--connect and --metastore cannot be combined")
    families = list(CASES) if args.family == "all" else [args.family]
    settings = {**SETTINGS.get(args.settings or "", {}), **dict(args.conf)}
    with _session(args.connect, args.metastore) as spark, session_settings(spark, settings):
        failed = sum(run(spark, f, seed=args.seed, seconds=args.seconds, cases=args.cases)
                     for f in families)
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
