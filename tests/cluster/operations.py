"""Every public operation on small seeded data; run on a cluster and locally alike.

``python -m tests.cluster.operations MASTER OUT LOADER_DIR [CLI_ARGS...]`` (run from
the repository root) builds a session on ``MASTER``, runs :func:`operations` and writes
each result to ``OUT/<name>`` as Parquet; then it runs the command line with
``CLI_ARGS`` in the same process (the command reuses the session on ``MASTER``: one
driver and one set of executors for both).
"""

from __future__ import annotations

import datetime as dt
import random
import sys

from pyspark.sql import DataFrame, SparkSession

import chronojoin as cj
from chronojoin.asof.strategies.native import CONF

ASOF_STRATEGIES = ("exploding", "union", "sort_merge", "auto", "native")
#: ``strategy="native"`` needs this session configuration (set by whoever runs the
#: operations; chronojoin never sets it)
NATIVE_CONF = CONF


def inputs(spark: SparkSession, seed: int = 7) -> dict[str, DataFrame]:
    """Seeded inputs; right times are unique per key so every result is deterministic."""
    rng = random.Random(seed)
    left = [(rng.randrange(20), rng.randrange(1000), i) for i in range(300)]
    left += [(None, 5, 300), (3, None, 301)]
    right = []
    for key in range(20):
        times = rng.sample(range(1000), 25 if key else 120)   # key 0 is hot
        right += [(key, t, rng.randrange(100)) for t in times]
    intervals = []
    for _ in range(150):
        start = rng.randrange(1000)
        intervals.append((rng.randrange(20), start, start + rng.randrange(80), rng.randrange(50)))
    intervals.append((1, None, 10, 1))
    day = dt.date(2024, 1, 1)
    batch = [(rng.randrange(60), rng.randrange(3), day + dt.timedelta(days=rng.randrange(3)),
              i) for i in range(200)]
    return {
        "left": spark.createDataFrame(left, "id int, t int, n int"),
        "right": spark.createDataFrame(right, "id int, t int, v int"),
        "intervals": spark.createDataFrame(intervals, "id int, start int, end int, w int"),
        "batch": spark.createDataFrame(batch, "user long, click int, day date, seq int"),
    }


def operations(spark: SparkSession, loader_dir: str) -> dict[str, DataFrame]:
    """Name -> result DataFrame of every public operation (the loader appends first)."""
    data = inputs(spark)
    left, right, intervals = data["left"], data["right"], data["intervals"]
    out = {
        f"asof_{s}": cj.asof_join(left, right, on="t", by="id", strategy=s)
        for s in ASOF_STRATEGIES
    }
    out["asof_nearest_tolerance"] = cj.asof_join(
        left, right, on="t", by="id", direction="nearest", tolerance=3, how="inner",
        strategy="union",
    )
    out["interval_aggregate"] = cj.interval_aggregate(
        left, intervals, by="id", time="t",
        aggs={"total": ("sum", "w"), "covering": ("count", None)},
    )
    out["band_join"] = cj.band_join(
        left, right, left_on="t", right_on="t", by="id", lower=-5, upper=5, how="left",
    )
    out["interval_join"] = cj.interval_join(
        left, intervals, left_start="t", right_start="start", right_end="end", by="id",
    )
    loader = cj.IncrementalLoader(
        spark, path=loader_dir, keys=["user", "click"], partition_by="day", order_by="seq",
    )
    loader.append(data["batch"])
    out["loader"] = spark.read.parquet(loader_dir)
    return out


def main(master: str, out: str, loader_dir: str, *cli_args: str) -> int:
    """Run every operation on ``master``, write the results under ``out``, then the CLI."""
    from chronojoin.bench.cluster import HOST
    from tests.servers import TEST_JIT

    spark = (
        SparkSession.builder.master(master).appName("chronojoin cluster test")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4").config(NATIVE_CONF, "true")
        .config("spark.executor.cores", "1").config("spark.cores.max", "2")
        .config("spark.executor.memory", "512m")
        .config("spark.driver.extraJavaOptions", TEST_JIT)
        .config("spark.executor.extraJavaOptions", TEST_JIT)
        .config("spark.driver.host", HOST).config("spark.driver.bindAddress", HOST)
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    try:
        print(f"master {spark.conf.get('spark.master')}")
        for name, df in operations(spark, loader_dir).items():
            df.write.parquet(f"{out}/{name}")
            print(f"wrote {name}")
        if cli_args:
            from chronojoin.cli.main import main as cli

            return cli([*cli_args, "--master", master])
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
