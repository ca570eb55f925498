"""Column resolution: names given by arguments, checked against a DataFrame's schema."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from chronojoin._session import setting_on
from chronojoin.errors import ColumnNotFoundError, InvalidArgumentError, TimeTypeError


def quoted(name: str) -> str:
    """``name`` as a SQL identifier: in backticks, a backtick in it doubled."""
    return "`" + name.replace("`", "``") + "`"


def col(name: str) -> Column:
    """A column reference that is safe for names with dots, spaces or backticks."""
    return F.col(quoted(name))


def selected(df: DataFrame, names: Iterable[str]) -> DataFrame:
    """``df``'s columns ``names``, in that order, in one call (:func:`renamed`)."""
    return renamed(df, ((n, n) for n in names))


def renamed(df: DataFrame, pairs: Iterable[tuple[str, str]]) -> DataFrame:
    """``df``'s ``(column, new name)`` pairs, in their order, as one ``selectExpr``.

    One call however many columns (see :func:`struct_of`).
    """
    return df.selectExpr(*[f"{quoted(c)} AS {quoted(n)}" for c, n in pairs])


def struct_of(fields: Iterable[tuple[str, str]]) -> Column:
    """The struct of ``(column, field name)`` pairs, as one SQL expression.

    One call however many fields: on a classic session every column function is a few
    calls to the JVM, which made a struct of a feature table's hundreds of columns
    take seconds to build.
    """
    return F.expr("struct(" + ", ".join(f"{quoted(c)} AS {quoted(n)}" for c, n in fields) + ")")


def not_null(*columns: Column) -> Column:
    """True where none of ``columns`` is NULL (a row that can match on all of them)."""
    cond = F.lit(True)
    for c in columns:
        cond = cond & c.isNotNull()
    return cond


def check_dataframe(argument: str, value: Any) -> DataFrame:
    """Return ``value`` if it is a (classic or Connect) batch DataFrame with unique column names.

    Names that differ only in case count as the same name unless the session sets
    ``spark.sql.caseSensitive`` (Spark itself calls such a column ambiguous). A TIME
    column needs ``spark.sql.timeType.enabled``; a data frame of pandas, pyarrow,
    polars or pandas-on-Spark gets an error that says how to convert it.
    """
    if not isinstance(value, DataFrame):
        kind = type(value)
        library = next((m for m in _CONVERSIONS if kind.__module__.startswith(m + ".")), None)
        name = kind.__qualname__ if library is None else f"{library}.{kind.__qualname__}"
        msg = f"`{argument}` must be a pyspark.sql.DataFrame; got {name}"
        if library is not None and kind.__qualname__ in ("DataFrame", "Table"):
            msg += f" (convert it with {_CONVERSIONS[library]})"
        raise TypeError(msg)
    if value.isStreaming:
        msg = (f"`{argument}` is a streaming DataFrame; chronojoin plans batch queries (its "
               "statistics and sorts read whole inputs): call it on each micro-batch inside "
               "writeStream.foreachBatch")
        raise InvalidArgumentError(msg)
    fold = fold_of(value, value.columns)
    seen: dict[str, str] = {}
    for name in value.columns:
        if fold(name) in seen:
            twice = repr(name) if seen[fold(name)] == name else f"{seen[fold(name)]!r}/{name!r}"
            msg = (f"`{argument}` has the column {twice} twice; rename one first "
                   "(DataFrame.toDF or withColumnRenamed)")
            raise InvalidArgumentError(msg)
        seen[fold(name)] = name
    for f in value.schema.fields:
        if holds(f.dataType, (T.TimeType,)) and not setting_on(value, "spark.sql.timeType.enabled"):
            msg = (f"`{argument}`: column {f.name!r} has type {f.dataType.simpleString()}; "
                   "Spark aggregates and writes TIME values only with "
                   "spark.sql.timeType.enabled=true (off by default): set it in the session "
                   "or cast the column to a string")
            raise InvalidArgumentError(msg)
    return value


#: How a data frame of another library becomes a Spark DataFrame, by its package.
_CONVERSIONS = {
    "pandas": "spark.createDataFrame(df)",
    "pyarrow": "spark.createDataFrame(table)",
    "polars": "spark.createDataFrame(df.to_arrow())",
    "pyspark.pandas": "df.to_spark()",
}


def case_sensitive(df: DataFrame) -> bool:
    """Whether ``df``'s session tells column names apart by case (``spark.sql.caseSensitive``)."""
    return setting_on(df, "spark.sql.caseSensitive")


def name_fold(df: DataFrame) -> Callable[[str], str]:
    """The map under which two column names of ``df``'s session are the same name."""
    return (lambda name: name) if case_sensitive(df) else str.lower


def differ_in_case_only(names: Iterable[str]) -> bool:
    """Whether two of ``names`` differ in case alone (``Price`` and ``price``)."""
    distinct = set(names)
    return len({name.lower() for name in distinct}) < len(distinct)


def fold_of(df: DataFrame, names: Iterable[str]) -> Callable[[str], str]:
    """:func:`name_fold` for comparisons among ``names`` only.

    The session's setting is read only when two of the names differ in case alone:
    otherwise both maps tell the same names apart, and the read (a round trip to the
    server on Spark Connect) is saved.
    """
    return name_fold(df) if differ_in_case_only(names) else str.lower


def field(schema: T.StructType, *, argument: str, name: Any, side: str) -> T.StructField:
    """Return the field called ``name`` of ``schema``.

    Raises
    ------
    ColumnNotFoundError
        "`left_on`: column 'ts' not found in left; available: ['id', 'time', 'label']".
    """
    if not isinstance(name, str):
        msg = f"`{argument}` must be a column name (str); got {name!r} ({type(name).__name__})"
        raise InvalidArgumentError(msg)
    for f in schema.fields:
        if f.name == name:
            return f
    msg = f"`{argument}`: column {name!r} not found in {side}; available: {schema.names}"
    spelled = [n for n in schema.names if n.lower() == name.lower()]
    head = name.split(".", 1)[0]
    if spelled:  # names are exact, whatever spark.sql.caseSensitive says
        msg += f" (column names are matched exactly, case included: did you mean {spelled[0]!r}?)"
    elif head != name and head in schema.names and isinstance(schema[head].dataType,
                                                                  T.StructType):
        msg += (f" (a name is a top-level column, never a field of struct {head!r}: select "
                f"the field as a column of its own first, e.g. withColumn)")
    raise ColumnNotFoundError(msg)


def names(argument: str, value: Any) -> tuple[str, ...]:
    """Normalise one column name or a list of names to a tuple (``None`` -> empty)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        if len(set(value)) != len(value):
            msg = f"`{argument}` names a column twice: {list(value)}"
            raise InvalidArgumentError(msg)
        return tuple(value)
    msg = f"`{argument}` must be a column name or a list of column names; got {value!r}"
    raise InvalidArgumentError(msg)


def pair(
    *, both: Any, left: Any, right: Any, both_name: str, left_name: str, right_name: str,
    left_alone: bool = False,
) -> tuple[Any, Any]:
    """Resolve ``on`` versus ``left_on``/``right_on`` style argument pairs.

    ``left_alone``: the left argument may come without the right one (the right
    ``None``), where each right table names its own columns.
    """
    if both is not None:
        if left is not None or right is not None:
            msg = f"give either `{both_name}` or `{left_name}`/`{right_name}`, not both"
            raise InvalidArgumentError(msg)
        return both, both
    if left_alone and right is None:
        return left, None
    if (left is None) != (right is None):
        msg = f"`{left_name}` and `{right_name}` must be given together"
        raise InvalidArgumentError(msg)
    return left, right


@dataclass(frozen=True)
class KeyPair:
    """Equality keys of both sides, in matching order."""

    left: tuple[str, ...]
    right: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.left)


_STRINGS = (T.StringType, T.VarcharType, T.CharType)
_NUMBERS = (T.NumericType,)


def holds(data_type: T.DataType, types: tuple[type[T.DataType], ...]) -> T.DataType | None:
    """The first type of ``types`` that ``data_type`` is or holds (in arrays, maps, structs)."""
    if isinstance(data_type, types):
        return data_type
    if isinstance(data_type, T.ArrayType):
        return holds(data_type.elementType, types)
    if isinstance(data_type, T.MapType):
        return holds(data_type.keyType, types) or holds(data_type.valueType, types)
    if isinstance(data_type, T.StructType):
        return next((t for f in data_type.fields if (t := holds(f.dataType, types))), None)
    return None


def incomparable(data_type: T.DataType, *, variant: bool = True) -> str | None:
    """What makes ``data_type`` impossible to compare, order or hash, or ``None``.

    Spark can do none of these with a map, a variant, a geometry, a geography or a
    calendar interval (``"a map"``, ``"a variant"``, ..., ``"an interval"``), nor with a
    struct or array that holds one. ``variant=False`` looks for maps only
    (``collect_set`` takes the others).
    """
    kinds: tuple[type[T.DataType], ...] = (T.MapType,)
    if variant:
        kinds = (*kinds, T.VariantType, T.SpatialType, T.CalendarIntervalType)
    found = holds(data_type, kinds)
    if found is None:
        return None
    return "an interval" if isinstance(found, T.CalendarIntervalType) else "a " + found.typeName()


def comparable(column: Column, data_type: T.DataType) -> Column:
    """``column`` itself, or a value Spark can compare, order and hash in its place.

    For equality tests and hashes of whole rows, where equal values give equal
    stand-ins and distinct values distinct ones: a geometry or geography's SRID and
    well-known binary (also inside structs, arrays and maps), then the JSON text of a
    map, variant or calendar interval (or of a struct or array holding one). A calendar
    interval's text (``"1 years 2 months 3 days"``) is a function of its months, days
    and microseconds, as its equality is.
    """
    flat = _spatial_free(column, data_type)
    if holds(data_type, (T.MapType, T.VariantType, T.CalendarIntervalType)):
        return F.to_json(F.array(flat), _EXACT_JSON)
    return flat


def _spatial_free(column: Column, data_type: T.DataType) -> Column:
    """``column`` with every geometry or geography in it replaced by its SRID and binary.

    Spark can neither hash these types nor write them as JSON, at any depth.
    """
    if not holds(data_type, (T.SpatialType,)):
        return column
    if isinstance(data_type, T.SpatialType):
        return F.struct(F.call_function("st_srid", column),
                        F.call_function("st_asbinary", column))
    if isinstance(data_type, T.ArrayType):
        element = data_type.elementType
        return F.transform(column, lambda x: _spatial_free(x, element))
    if isinstance(data_type, T.MapType):
        key, value = data_type.keyType, data_type.valueType
        if holds(key, (T.SpatialType,)):
            column = F.transform_keys(column, lambda k, _: _spatial_free(k, key))
        if holds(value, (T.SpatialType,)):
            column = F.transform_values(column, lambda _, v: _spatial_free(v, value))
        return column
    assert isinstance(data_type, T.StructType)
    fields = [_spatial_free(column.getField(f.name), f.dataType).alias(f.name)
              for f in data_type.fields]
    return F.when(column.isNotNull(), F.struct(*fields))


#: ``to_json`` options under which distinct values give distinct text whatever the
#: session: timestamps to the microsecond (the default stops at milliseconds) in UTC.
_EXACT_JSON = {"timeZone": "UTC", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
               "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"}


def _compatible_keys(a: T.DataType, b: T.DataType) -> bool:
    """Whether Spark compares keys of these types for equality.

    Strings of one collation, any two numbers, or the same type up to the nullability
    of its elements and fields.
    """
    if isinstance(a, _STRINGS) and isinstance(b, _STRINGS):
        return _collation(a) == _collation(b)
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS):
        return True
    return same_type(a, b)


def collated(data_type: T.DataType) -> T.DataType | None:
    """The first string type with a collation other than binary in ``data_type``, or ``None``.

    Also in arrays, maps and structs. Equal values of such a type can differ in their
    bytes (``'b'`` and ``'B'`` under ``UTF8_LCASE``), hence in their hashes.
    """
    if isinstance(data_type, _STRINGS):
        return None if _collation(data_type) == "UTF8_BINARY" else data_type
    if isinstance(data_type, T.ArrayType):
        return collated(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return collated(data_type.keyType) or collated(data_type.valueType)
    if isinstance(data_type, T.StructType):
        return next((t for f in data_type.fields if (t := collated(f.dataType))), None)
    return None


def _collation(data_type: T.DataType) -> str:
    """A string type's collation (``char``/``varchar`` compare as binary strings)."""
    return str(getattr(data_type, "collation", "UTF8_BINARY"))


def same_type(a: T.DataType, b: T.DataType) -> bool:
    """Whether two types (or two schemas, column by column) are the same, nullability aside."""
    def strip(d: T.DataType) -> Any:
        j = d.jsonValue()
        return _drop_nullability(j)

    return bool(strip(a) == strip(b))


def _drop_nullability(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_nullability(v) for k, v in obj.items()
                if k not in ("nullable", "containsNull", "valueContainsNull", "metadata")}
    if isinstance(obj, list):
        return [_drop_nullability(v) for v in obj]
    return obj


def keys(
    left_schema: T.StructType,
    right_schema: T.StructType,
    *,
    by: Any,
    left_by: Any,
    right_by: Any,
    left_side: str = "left",
    right_side: str = "right",
    arguments: tuple[str, str] | None = None,
) -> KeyPair:
    """Resolve ``by``/``left_by``/``right_by`` into a checked :class:`KeyPair`.

    ``arguments`` overrides the argument names used in messages (left, right).
    """
    left_name, right_name = arguments or ("left_by", "right_by")
    # An empty list names no keys, as None does (one global timeline).
    def empty(value: Any) -> bool:
        return value is None or (isinstance(value, (list, tuple)) and not value)

    if empty(by):
        by = None
    if empty(left_by) and empty(right_by):
        left_by = right_by = None
    lb, rb = pair(
        both=by, left=left_by, right=right_by,
        both_name="by", left_name=left_name, right_name=right_name,
    )
    left_arg = "by" if by is not None else "left_by"
    right_arg = "by" if by is not None else "right_by"
    if arguments is not None:
        left_arg, right_arg = arguments
    lnames, rnames = names(left_arg, lb), names(right_arg, rb)
    if len(lnames) != len(rnames):
        both = f"`{left_arg}`" if left_arg == right_arg else f"`{left_arg}` and `{right_arg}`"
        msg = f"{both} must name as many keys of {left_side} as of {right_side}"
        raise InvalidArgumentError(f"{msg}: {list(lnames)} vs {list(rnames)}")
    for ln, rn in zip(lnames, rnames):
        lf = field(left_schema, argument=left_arg, name=ln, side=left_side)
        rf = field(right_schema, argument=right_arg, name=rn, side=right_side)
        for arg, name, side, f in ((left_arg, ln, left_side, lf), (right_arg, rn, right_side, rf)):
            if kind := incomparable(f.dataType):
                msg = (f"`{arg}`: key {name!r} of {side} has type {f.dataType.simpleString()}; "
                       f"{kind} cannot be compared for equality (expected a number, string, "
                       "date, timestamp, or a struct or array of them)")
                raise InvalidArgumentError(msg)
        if not _compatible_keys(lf.dataType, rf.dataType):
            msg = (
                f"`{left_arg}`/`{right_arg}`: key {ln!r} of {left_side} is "
                f"{lf.dataType.simpleString()} but key {rn!r} of {right_side} is "
                f"{rf.dataType.simpleString()}; "
                + ("give both the same collation (`collate`)"
                   if isinstance(lf.dataType, _STRINGS) and isinstance(rf.dataType, _STRINGS)
                   else "cast one side")
            )
            raise TimeTypeError(msg)
    return KeyPair(lnames, rnames)
