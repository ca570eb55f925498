"""Validation of the loader's arguments into a frozen spec (no Spark jobs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._validate.columns import collated, field, holds, incomparable, names
from chronojoin._validate.options import check_literal, check_str
from chronojoin.errors import InvalidArgumentError

OnDuplicate = Literal["drop", "fail", "allow"]
Format = Literal["parquet", "orc"]
#: The prefix of the loader's own column names, refused in batches.
RESERVED = "__cj_"
_PARTITION_TYPES = (T.DateType, T.StringType, T.ByteType, T.ShortType, T.IntegerType,
                    T.LongType, T.BooleanType)


@dataclass(frozen=True)
class LoaderSpec:
    """Validated loader settings."""

    path: str | None
    table: str | None
    keys: tuple[str, ...]
    partition_by: str
    format: str
    order_by: tuple[str | Column, ...]
    on_duplicate: str

    def settings(self) -> dict[str, Any]:
        """Return what, besides the content, decides a batch's outcome (part of its id)."""
        return {"keys": list(self.keys), "partition_by": self.partition_by,
                "order_by": [str(c) for c in self.order_by], "on_duplicate": self.on_duplicate}


def loader_spec(*, path: Any, table: Any, keys: Any, partition_by: Any, format: Any,
                order_by: Any, on_duplicate: Any) -> LoaderSpec:
    """Check the constructor's arguments."""
    if (path is None) == (table is None):
        msg = "exactly one of `path` and `table` must be given"
        raise InvalidArgumentError(msg)
    if path is not None:
        check_str("path", path)
    if table is not None:
        check_str("table", table)
    key_names = names("keys", keys)
    if not key_names:
        msg = "`keys` must name at least one column"
        raise InvalidArgumentError(msg)
    check_str("partition_by", partition_by)
    if partition_by.startswith(("_", ".")):
        msg = (f"`partition_by`: column {partition_by!r} starts with {partition_by[0]!r}, so "
               "its partition directories would be hidden from readers; rename the column")
        raise InvalidArgumentError(msg)
    if partition_by in key_names:
        msg = f"`partition_by`: column {partition_by!r} is also in `keys`; list it only once"
        raise InvalidArgumentError(msg)
    order = () if order_by is None else (
        (order_by,) if isinstance(order_by, (str, Column)) else tuple(order_by))
    for c in order:
        if not isinstance(c, (str, Column)):
            msg = f"`order_by` must be column names or Columns; got {c!r}"
            raise InvalidArgumentError(msg)
    return LoaderSpec(
        path=path, table=table, keys=key_names, partition_by=partition_by,
        format=check_literal("format", format, Format), order_by=order,
        on_duplicate=check_literal("on_duplicate", on_duplicate, OnDuplicate),
    )


def check_batch_columns(batch: DataFrame, spec: LoaderSpec) -> None:
    """Key, partition and ``order_by`` columns exist; their types and the format fit.

    Each ``order_by`` item is resolved against the batch (Spark's analysis, no job).
    """
    schema = batch.schema
    for f in schema.fields:
        if f.name.lower().startswith(RESERVED):
            msg = (f"`batch`: column {f.name!r} starts with {RESERVED!r}, which the loader "
                   "keeps for its own columns; rename it")
            raise InvalidArgumentError(msg)
    for k in spec.keys:
        _check_comparable(schema, "keys", k, "compared")
    p = field(schema, argument="partition_by", name=spec.partition_by, side="batch")
    if not isinstance(p.dataType, _PARTITION_TYPES) or collated(p.dataType):
        msg = (f"`partition_by`: column {spec.partition_by!r} has type "
               f"{p.dataType.simpleString()}; expected date, string (without a collation), "
               "an integer type or boolean")
        raise InvalidArgumentError(msg)
    for c in spec.order_by:
        if isinstance(c, str):
            _check_comparable(schema, "order_by", c, "ordered")
        else:
            _check_resolves(batch, c)
    if spec.format == "orc":
        for f in schema.fields:
            if holds(f.dataType, (T.VariantType, T.SpatialType, T.NullType)):
                msg = (f"`format`: ORC cannot store column {f.name!r} of batch "
                       f"({f.dataType.simpleString()}); use format='parquet'")
                raise InvalidArgumentError(msg)


def _check_comparable(schema: T.StructType, argument: str, name: str, verb: str) -> None:
    """Column ``name`` of the batch exists and Spark can compare (order) its values."""
    f = field(schema, argument=argument, name=name, side="batch")
    if kind := incomparable(f.dataType):
        msg = (f"`{argument}`: column {name!r} of batch has type {f.dataType.simpleString()}; "
               f"{kind} cannot be {verb} (expected a number, string, date, timestamp, or a "
               "struct or array of them)")
        raise InvalidArgumentError(msg)


def _check_resolves(batch: DataFrame, order: Column) -> None:
    """``order`` sorts ``batch``, by Spark's analysis of the sort (no job).

    A projection over the sort: Spark Connect reuses the batch's schema for a sort
    alone, without asking the server.
    """
    try:
        _ = batch.orderBy(order).select(F.lit(1)).schema
    except Exception as exc:  # AnalysisException, classic or Spark Connect
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = f"`order_by`: {order} cannot order the batch: {reason}"
        raise InvalidArgumentError(msg) from None
