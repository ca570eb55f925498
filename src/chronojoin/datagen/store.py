"""Storing generated datasets: Parquet directories and bucketed metastore tables.

Bucketed tables (``bucketBy(n, "id").sortBy("time")``) are written with
``saveAsTable``; they outlive the session only when it has a persistent metastore
(``chronojoin generate --buckets`` builds one with Hive support and embedded Derby).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chronojoin.errors import InvalidArgumentError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Bucket counts of the thesis (section 3.3.1).
THESIS_BUCKETS = (20, 40, 80, 160)

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dataset_name(kind: str, **params: Any) -> str:
    """Return a stable, readable name for a dataset, e.g. ``thesis_n10000_asc_timestamp_s0``."""
    parts = [kind]
    short = {"n_ids": "n", "seed": "s", "left_rows_per_id": "l", "skew": "k"}
    for key in sorted(params):
        value = params[key]
        if value is None:
            continue
        text = str(value).replace(".", "p").replace("-", "m")
        parts.append(f"{short[key]}{text}" if key in short else text)
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))


def write_tables(
    tables: Mapping[str, DataFrame], out: str, *, mode: str = "errorifexists",
    params: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Write each table as Parquet under ``out/<name>``; return name -> path.

    A ``_dataset.json`` beside them records ``params`` (how the data was generated).
    """
    os.makedirs(out, exist_ok=True)
    paths = {}
    for name, df in tables.items():
        path = os.path.join(out, name)
        df.write.mode(mode).parquet(path)
        paths[name] = path
    if params is not None:
        with open(os.path.join(out, "_dataset.json"), "w", encoding="utf-8") as fh:
            json.dump(dict(params), fh, indent=1, sort_keys=True, default=str)
    return paths


def write_bucketed(
    tables: Mapping[str, DataFrame], *, buckets: int, database: str, prefix: str,
    key: str = "id", sort: str = "time", mode: str = "overwrite",
) -> dict[str, str]:
    """Save each table as ``database.<prefix>_<name>_b<buckets>``, bucketed by ``key``.

    Returns name -> qualified table name. Both tables get the same bucket count, so
    bucket ``i`` of the left and of the right table hold the same ids.
    """
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        msg = f"`buckets` must be a positive integer; got {buckets!r}"
        raise InvalidArgumentError(msg)
    for argument, value in (("database", database), ("prefix", prefix)):
        if not _IDENTIFIER.match(value):
            msg = f"`{argument}` must be a plain identifier (letters, digits, _); got {value!r}"
            raise InvalidArgumentError(msg)
    names = {}
    spark = next(iter(tables.values())).sparkSession if tables else None
    if spark is not None:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    for name, df in tables.items():
        table = f"{database}.{prefix}_{name}_b{buckets}"
        (
            df.write.mode(mode).format("parquet")
            .bucketBy(buckets, key).sortBy(sort).saveAsTable(table)
        )
        names[name] = table
    return names


def parse_buckets(values: Sequence[str] | None) -> tuple[int, ...]:
    """``["20", "40"]`` -> ``(20, 40)``; ``["thesis"]`` -> the thesis's four counts."""
    if not values:
        return ()
    if list(values) == ["thesis"]:
        return THESIS_BUCKETS
    out = []
    for v in values:
        if not v.isdigit() or int(v) < 1:
            msg = f"`buckets` must be positive integers or 'thesis'; got {v!r}"
            raise InvalidArgumentError(msg)
        out.append(int(v))
    return tuple(out)
