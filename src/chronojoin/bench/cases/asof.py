"""The thesis's as-of join study (chapter 5) as benchmark cases.

Datasets (section 3.3.1, :func:`chronojoin.datagen.thesis`): sizes in ids, the row
orders ``asc``/``desc``/``random``, bucketed copies (20/40/80/160 buckets) of the
largest ascending dataset, 100 left rows per id, one key holding half of the rows, and
three right tables joined in one call (``many_right``: one pass against three chained
``asof_join`` calls), the largest size and its hot key again with fixed-width feature
values (``numeric``: a double ``value`` instead of the thesis's string, which changes
how the winners are aggregated), and one global timeline without an equality key
(``no_key``: :data:`NO_KEY_LEFT_ROWS_PER_ID` left rows per id, so both sides have about
50 rows per id -- 200,000 ids give 10M x 10M rows; the time-bucketed plan with
carry-over against the same join on a constant key, which puts the whole timeline on
one task).

Methods: chronojoin's strategies (``exploding``, ``union``, ``sort_merge``, ``auto``, and
``native`` with the configuration it needs);
the FLOOR baseline (union of both sides' ``(id, time)``, one shuffle by id and a sort
within partitions: what any shuffle-and-sort algorithm must at least pay); Spark's own
``_joinAsOf`` with ``spark.sql.join.sortMergeAsOfJoin.enabled=true`` and with its
default plan (both with a time limit); tempo's ``asofJoin`` when tempo is installed; and
DuckDB's ``ASOF JOIN`` on the same Parquet files (a single-node reference, run in the
driver process with as many threads as the master has cores).

The answer check (:func:`check_plan`, computed alike by DuckDB) reads the matched right
time, not its ``value``, because with several right rows at the winning time any one of
them is a correct answer. The three right tables are checked by a hash of ``id, time,
label`` and each table's time and value.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from chronojoin.asof.strategies.native import CONF as SMJ_CONF
from chronojoin.bench.case import Case, Inputs, Method
from chronojoin.bench.data import bucketed_tables, cached_parquet, duckdb_row, duckdb_threads
from chronojoin.datagen import THESIS_BUCKETS, dataset_name, thesis

STRATEGIES = ("exploding", "union", "sort_merge", "auto", "broadcast")
CHECKSUM_COLUMNS = ("id", "time", "label", "time_right")
SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000,)
ORDERS = ("asc", "desc", "random")
VARIANTS = ("size", "order", "buckets", "many_left", "hot_key", "many_right", "wide",
            "numeric", "no_key")
#: Left rows per id of the ``no_key`` case: about as many as right rows (50 per id).
NO_KEY_LEFT_ROWS_PER_ID = 50


def cases(
    *,
    sizes: Sequence[int] | None = None,
    quick: bool = False,
    data_dir: str | None = None,
    seed: int = 0,
    orders: Sequence[str] | None = None,
    buckets: Sequence[int] | None = None,
    variants: Sequence[str] | None = None,
    time_type: str = "timestamp",
    timeout_s: float | None = None,
) -> list[Case]:
    """Build the as-of cases.

    Parameters
    ----------
    sizes
        Numbers of ids (default 10,000 and 100,000; ``quick``: 1,000).
    quick
        One small ascending dataset only (proves the harness, CI).
    data_dir
        Where generated Parquet inputs are cached.
    seed
        Generator seed.
    orders
        Row orders of the size study (default asc, desc, random).
    buckets
        Bucket counts for the bucketing study at the largest size (default 20/40/80/160).
    variants
        Subset of ``size``, ``order``, ``buckets``, ``many_left``, ``hot_key``,
        ``many_right``, ``wide``, ``numeric``, ``no_key``.
    time_type
        ``timestamp`` or ``integer`` time columns.
    timeout_s
        Time limit of the baselines that may not finish (Spark's ``_joinAsOf`` plans,
        tempo, DuckDB); default 600 s. ``quick`` defaults to 60 s, and to 5 s for
        Spark's default plan (a cartesian product, which only proves the limit works).
    """
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    limit = timeout_s or (60.0 if quick else 600.0)
    cartesian_limit = timeout_s or (5.0 if quick else 600.0)
    unknown = [v for v in variants or () if v not in VARIANTS]
    if unknown:
        msg = f"unknown asof variant(s) {unknown}; expected some of {VARIANTS}"
        raise ValueError(msg)
    if quick:
        chosen: Sequence[str] = variants or ("size",)
        orders = ("asc",)
    else:
        chosen = variants or ("size", "order", "buckets", "many_left", "hot_key")
    largest = max(sizes)
    out: list[Case] = []

    def add(variant: str, n_ids: int, **params: Any) -> None:
        out.append(
            _case(
                variant, n_ids, data_dir=data_dir, seed=seed, time_type=time_type,
                limit=limit, cartesian_limit=cartesian_limit, **params,
            )
        )

    for n in sizes:
        for order in orders or ORDERS:
            if order == "asc" and "size" in chosen:
                add("size", n, order="asc")
            elif order != "asc" and "order" in chosen:
                add("order", n, order=order)
    if "buckets" in chosen:
        for b in buckets or THESIS_BUCKETS:
            add("buckets", largest, order="asc", buckets=int(b))
    if "many_left" in chosen:
        add("many_left", min(sizes), order="asc", left_rows_per_id=100)
    if "hot_key" in chosen:
        add("hot_key", largest, order="asc", skew=0.5)
    if "numeric" in chosen:
        add("numeric", largest, order="asc", value_type="double")
        add("numeric", largest, order="asc", skew=0.5, value_type="double")
    if "no_key" in chosen:
        out.append(_no_key_case(largest, data_dir=data_dir, seed=seed, time_type=time_type,
                                limit=limit))
    if "many_right" in chosen:
        out.append(_many_right_case(largest, data_dir=data_dir, seed=seed,
                                    time_type=time_type))
    if "wide" in chosen:
        out.append(_many_right_case(largest, data_dir=data_dir, seed=seed,
                                    time_type=time_type, columns=WIDE_COLUMNS))
    return out


def _case(
    variant: str, n_ids: int, *, data_dir: str | None, seed: int, time_type: str,
    limit: float, cartesian_limit: float, order: str, buckets: int | None = None,
    left_rows_per_id: int = 1, skew: float = 0.0, value_type: str = "string",
) -> Case:
    gen: dict[str, Any] = {
        "n_ids": n_ids, "order": order, "time_type": time_type, "seed": seed,
        "left_rows_per_id": left_rows_per_id, "skew": skew,
    }
    if value_type != "string":   # the thesis's datasets keep their names
        gen["value_type"] = value_type
    params = {"variant": variant, **gen, "buckets": buckets}
    name = f"asof {variant} n={n_ids} {order}"
    if buckets:
        name += f" b={buckets}"
    if left_rows_per_id > 1:
        name += f" left/id={left_rows_per_id}"
    if skew:
        name += f" hot={skew:g}"
    if value_type != "string":
        name += f" values={value_type}"
    load = functools.partial(_load, data_dir=data_dir, gen=gen, buckets=buckets)
    return Case(
        name=name, load=load, methods=methods(limit, cartesian_limit), params=params,
        checksum_columns=CHECKSUM_COLUMNS, checksum_plan=check_plan,
    )


#: Right tables of the ``many_right`` case and their output prefixes.
MANY_RIGHT = ("f1_", "f2_", "f3_")
#: Feature columns of each right table of the ``wide`` case (doubles, besides ``value``).
WIDE_COLUMNS = 100


def _many_right_case(n_ids: int, *, data_dir: str | None, seed: int, time_type: str,
                     columns: int = 0) -> Case:
    """Three right tables in one call against three chained calls.

    ``columns``: that many feature columns more in each right table (the ``wide`` case,
    a feature store's tables).
    """
    gen = {"n_ids": n_ids, "order": "asc", "time_type": time_type, "seed": seed}
    load = functools.partial(_load_many_right, data_dir=data_dir, gen=gen, columns=columns)
    values = ("time", "value", *([f"x{columns - 1}"] if columns else []))
    checked = ("id", "time", "label", *(p + c for p in MANY_RIGHT for c in values))
    variant = "wide" if columns else "many_right"
    name = f"asof {variant} n={n_ids} asc tables={len(MANY_RIGHT)}"
    return Case(
        name=name + (f" columns={columns}" if columns else ""), load=load,
        methods=(
            Method("floor", _floor_many, baseline=True, checked=False),
            Method("one_pass", functools.partial(_many_right, chained=False)),
            Method("chained", functools.partial(_many_right, chained=True)),
        ),
        params={"variant": variant, **gen, "tables": len(MANY_RIGHT),
                **({"columns": columns} if columns else {})},
        checksum_columns=checked,
    )


def _no_key_case(n_ids: int, *, data_dir: str | None, seed: int, time_type: str,
                 limit: float) -> Case:
    gen = {"n_ids": n_ids, "order": "asc", "time_type": time_type, "seed": seed,
           "left_rows_per_id": NO_KEY_LEFT_ROWS_PER_ID, "skew": 0.0}
    load = functools.partial(_load, data_dir=data_dir, gen=gen, buckets=None)
    return Case(
        name=f"asof no_key n={n_ids} asc left/id={NO_KEY_LEFT_ROWS_PER_ID}", load=load,
        methods=(
            Method("floor", _floor_time, baseline=True, checked=False),
            Method("auto", _no_key),
            Method("constant_key", _constant_key, timeout_s=limit),
            Method("duckdb", _duckdb_no_key, local=True, timeout_s=limit),
        ),
        params={"variant": "no_key", **gen},
        checksum_columns=CHECKSUM_COLUMNS, checksum_plan=check_plan,
    )


def _floor_time(inputs: Inputs) -> DataFrame:
    both = inputs["left"].select("time").unionByName(inputs["right"].select("time"))
    return both.repartitionByRange(F.col("time")).sortWithinPartitions("time")


def _no_key(inputs: Inputs) -> DataFrame:
    import chronojoin as cj

    return cj.asof_join(inputs["left"], inputs["right"], on="time")


def _constant_key(inputs: Inputs) -> DataFrame:
    import chronojoin as cj

    left = inputs["left"].withColumn("_one", F.lit(1))
    right = inputs["right"].withColumn("_one", F.lit(1))
    return cj.asof_join(left, right, on="time", by="_one", strategy="union")


def _duckdb_no_key(inputs: Inputs) -> tuple[int, str]:
    return _duckdb_checked(inputs, "l.time >= r.time")


def _load_many_right(spark: Any, *, data_dir: str | None, gen: dict[str, Any],
                     columns: int = 0) -> Inputs:
    name = dataset_name("thesis_wide" if columns else "thesis_many_right",
                        **gen, **({"columns": columns} if columns else {}))
    make = functools.partial(_generate_many_right, spark, gen, columns)
    return cached_parquet(spark, data_dir, name, make, params=gen)


def _generate_many_right(spark: Any, gen: dict[str, Any],
                         columns: int = 0) -> dict[str, DataFrame]:
    opts = {k: v for k, v in gen.items() if k not in ("n_ids", "seed")}
    out: dict[str, DataFrame] = {}
    for i, _ in enumerate(MANY_RIGHT):
        left, right = thesis(spark, gen["n_ids"], seed=gen["seed"] + i, **opts)
        if i == 0:
            out["left"] = left
        # Feature values drawn from the row and the column number, with two decimals.
        features = [(F.xxhash64("id", "time", F.lit(j)) % 10_000 / 100.0).alias(f"x{j}")
                    for j in range(columns)]
        out[f"right{i + 1}"] = right.select("*", *features)
    return out


def _floor_many(inputs: Inputs) -> DataFrame:
    both = inputs["left"].select("id", "time")
    for i, _ in enumerate(MANY_RIGHT):
        both = both.unionByName(inputs[f"right{i + 1}"].select("id", "time"))
    return both.repartition(F.col("id")).sortWithinPartitions("id", "time")


def _many_right(inputs: Inputs, *, chained: bool) -> DataFrame:
    import chronojoin as cj

    rights = [
        cj.Right(inputs[f"right{i + 1}"], prefix=p) for i, p in enumerate(MANY_RIGHT)
    ]
    if not chained:
        return cj.asof_join(inputs["left"], rights, on="time", by="id")
    out = inputs["left"]
    for r in rights:
        out = cj.asof_join(out, [r], on="time", by="id")
    return out


def _load(
    spark: Any, *, data_dir: str | None, gen: dict[str, Any], buckets: int | None
) -> Inputs:
    name = dataset_name("thesis", **gen)
    make = functools.partial(_generate, spark, gen)
    inputs = cached_parquet(spark, data_dir, name, make, params=gen)
    if buckets:
        tables = {"left": inputs["left"], "right": inputs["right"]}
        inputs.update(bucketed_tables(spark, tables, name=name, buckets=buckets))
    inputs["threads"] = duckdb_threads(spark)
    inputs["time_type"] = gen["time_type"]
    return inputs


def _generate(spark: Any, gen: dict[str, Any]) -> dict[str, DataFrame]:
    left, right = thesis(spark, gen["n_ids"], **{k: v for k, v in gen.items() if k != "n_ids"})
    return {"left": left, "right": right}


def methods(limit: float, cartesian_limit: float | None = None) -> tuple[Method, ...]:
    """Every method of an as-of case (tempo only when installed).

    ``limit`` bounds the baselines; ``cartesian_limit`` (default ``limit``) Spark's
    default ``_joinAsOf`` plan.
    """
    out = [Method("floor", _floor, baseline=True, checked=False)]
    out.extend(Method(s, functools.partial(_chronojoin, strategy=s)) for s in STRATEGIES)
    out.append(
        Method(
            "spark_smj", _spark_asof, timeout_s=limit,
            spark_conf={SMJ_CONF: "true"},
        )
    )
    out.append(
        Method(
            "native", functools.partial(_chronojoin, strategy="native"), timeout_s=limit,
            spark_conf={SMJ_CONF: "true"},
        )
    )
    out.append(
        Method(
            "spark_default", _spark_asof, timeout_s=cartesian_limit or limit,
            spark_conf={SMJ_CONF: "false"},
        )
    )
    if _tempo_available():
        out.append(Method("tempo", _tempo, timeout_s=limit))
    out.append(Method("duckdb", _duckdb, local=True, timeout_s=limit))
    return tuple(out)


def _floor(inputs: Inputs) -> DataFrame:
    left, right = inputs["left"], inputs["right"]
    both = left.select("id", "time").unionByName(right.select("id", "time"))
    return both.repartition(F.col("id")).sortWithinPartitions("id", "time")


def _chronojoin(inputs: Inputs, *, strategy: str) -> DataFrame:
    import chronojoin as cj

    join: Any = cj.asof_join  # strategy names are checked by asof_join itself
    return join(inputs["left"], inputs["right"], on="time", by="id", strategy=strategy)


def _spark_asof(inputs: Inputs) -> DataFrame:
    left = inputs["left"].withColumn("_lt", F.col("time").cast("long"))
    right = inputs["right"].select(
        F.col("id").alias("_rid"), F.col("time").alias("time_right"), "value",
        F.col("time").cast("long").alias("_rt"),
    )
    joined = left._joinAsOf(
        right, leftAsOfColumn="_lt", rightAsOfColumn="_rt",
        on=left["id"] == right["_rid"], how="left", direction="backward",
    )
    return joined.select("id", "time", "label", "time_right", "value")


def _tempo_available() -> bool:
    try:
        import tempo  # noqa: F401
    except ImportError:
        return False
    return True


def _tempo(inputs: Inputs) -> DataFrame:
    from tempo import TSDF

    left = TSDF(inputs["left"], ts_col="time", partition_cols=["id"])
    right = TSDF(inputs["right"], ts_col="time", partition_cols=["id"])
    out = left.asofJoin(right, right_prefix="r").df
    return out.select(
        "id", "time", "label", F.col("r_time").alias("time_right"), F.col("r_value").alias("value")
    )


def _duckdb(inputs: Inputs) -> tuple[int, str]:
    return _duckdb_checked(inputs, "l.id = r.id AND l.time >= r.time")


def check_plan(df: DataFrame) -> DataFrame:
    """One row ``(rows, checksum)`` of an as-of answer, from numbers DuckDB computes alike.

    The checksum joins with ``:`` the count of left rows without a match, the sum of the
    matched right times and the sum of ``id * (time - time_right)`` (times as
    microseconds since the epoch, integer times as they are): which right time each
    left row matched, whatever its position in the output. The ``label`` is not read:
    it is the left row's own. (A hash of the columns, as the other cases use, cannot be
    computed alike by DuckDB, whose hash functions differ from Spark's.)
    """
    micros = {
        name: F.unix_micros(F.col(name)) if dtype.startswith("timestamp")
        else F.col(name).cast("long")
        for name, dtype in df.dtypes if name in ("time", "time_right")
    }
    wide = "decimal(38,0)"
    weighted = F.col("id").cast(wide) * (micros["time"] - micros["time_right"]).cast(wide)
    parts = [
        F.count_if(F.col("time_right").isNull()),
        F.coalesce(F.sum(micros["time_right"].cast(wide)), F.lit(0)),
        F.coalesce(F.sum(weighted.cast(wide)), F.lit(0)),
    ]
    return df.agg(F.count(F.lit(1)).alias("rows"),
                  F.concat_ws(":", *(p.cast("string") for p in parts)).alias("checksum"))


def _duckdb_checked(inputs: Inputs, condition: str) -> tuple[int, str]:
    """DuckDB's ``ASOF LEFT JOIN`` on ``condition``: row count and :func:`check_plan`'s sums."""
    def us(column: str) -> str:
        return f"epoch_us({column})" if inputs.get("time_type") == "timestamp" else column

    query = (
        "SELECT count(*), count(*) - count(r.time), "
        f"coalesce(sum({us('r.time')}::HUGEINT), 0), "
        f"coalesce(sum(l.id::HUGEINT * ({us('l.time')} - {us('r.time')})::HUGEINT), 0) "
        "FROM read_parquet(?) l ASOF LEFT JOIN read_parquet(?) r "
        f"ON {condition}"
    )
    rows, *sums = duckdb_row(inputs, query, [inputs["left_path"], inputs["right_path"]])
    return int(rows), ":".join(str(int(v)) for v in sums)
