"""Validation of ``asof_join`` arguments into frozen specs (no Spark job runs here)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from functools import partial
from typing import Any, get_args

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from chronojoin._plan.output import right_output_names
from chronojoin._typing import AsofStrategy, Direction, How
from chronojoin._validate import columns as C
from chronojoin._validate.durations import parse_duration
from chronojoin._validate.options import check_bool, check_bucket_count, check_literal, check_str
from chronojoin._validate.timetypes import TimeKind, common_kind, exact_decimal, time_kind
from chronojoin.errors import DurationError, InvalidArgumentError

_UNSET: Any = object()


@dataclass(frozen=True)
class Right:
    """One right table of a multi-table as-of join.

    Parameters
    ----------
    df
        The right DataFrame.
    on
        Its time column (default: the call's ``right_on``/``on``, else the name of
        the call's ``left_on``).
    by
        Its equality key column(s), matched in order with the call's left keys
        (default: the call's ``right_by``/``by``, else the names of its ``left_by``).
    tolerance, direction, allow_exact_matches, tiebreak
        Override the call's value for this table.
    prefix
        Prepended to every output column of this table, its time column included.
        Without a prefix the usual ``suffix`` rule applies.
    """

    df: DataFrame
    on: str | None = None
    by: str | Sequence[str] | None = None
    tolerance: Any = _UNSET
    prefix: str | None = None
    direction: Direction | None = None
    allow_exact_matches: bool | None = None
    tiebreak: str | Sequence[str] | None = None


@dataclass(frozen=True)
class RightSpec:
    """A validated right table: its columns, rules and output names."""

    df: DataFrame
    on: str
    keys: C.KeyPair
    direction: Direction
    allow_exact_matches: bool
    tolerance: int | float | Decimal | None
    tiebreak: tuple[str, ...]
    outputs: tuple[tuple[str, str], ...]
    what: str
    time_kind: TimeKind
    #: The decimal type in which times of decimals with a fraction are told apart
    #: exactly (tolerance and distances); ``None`` for other times.
    exact: T.DecimalType | None = None


@dataclass(frozen=True)
class AsofSpec:
    """A validated as-of join: the left side and one spec per right table."""

    left: DataFrame
    left_on: str
    kind: TimeKind
    left_kind: TimeKind
    rights: tuple[RightSpec, ...]
    how: How
    strategy: AsofStrategy
    buckets: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Defaults:
    right_on: str | None
    #: The argument that named ``right_on``: ``on`` or ``right_on``.
    on_argument: str
    right_by: Any
    left_keys: tuple[str, ...]
    by_argument: str
    direction: Direction
    allow_exact_matches: bool
    tolerance: Any
    tiebreak: Any
    suffix: str


def build_spec(
    left: Any,
    right: Any,
    *,
    on: Any,
    left_on: Any,
    right_on: Any,
    by: Any,
    left_by: Any,
    right_by: Any,
    direction: Any,
    allow_exact_matches: Any,
    tolerance: Any,
    how: Any,
    suffix: Any,
    strategy: Any,
    tiebreak: Any,
    buckets: Any = None,
) -> AsofSpec:
    """Check every argument of :func:`chronojoin.asof_join` and build its spec."""
    left = C.check_dataframe("left", left)
    check_literal("direction", direction, Direction)
    check_bool("allow_exact_matches", allow_exact_matches)
    check_literal("how", how, How)
    # polars' join_asof names the direction `strategy`; here it picks the algorithm.
    polars_hint = (f"the direction is `direction={strategy!r}` (polars' `join_asof` "
                   f"calls it `strategy`)" if strategy in get_args(Direction) else None)
    check_literal("strategy", strategy, AsofStrategy, hint=polars_hint)
    check_str("suffix", suffix)
    if buckets is not None:
        buckets = check_bucket_count("buckets", buckets)
    # With a list of cj.Right, `left_on`/`left_by` may come alone: each table names
    # its own columns (`Right.on`/`Right.by`), else the left side's names are used.
    several = isinstance(right, (list, tuple))
    lo, ro = C.pair(both=on, left=left_on, right=right_on, both_name="on",
                    left_name="left_on", right_name="right_on", left_alone=several)
    if lo is None and several:
        msg = ("give the left table's time column: `on` or `left_on` (each cj.Right "
               "names its own with `Right.on`, or takes the left one's name)")
        raise InvalidArgumentError(msg)
    if lo is None:
        msg = "give the time columns: `on`, or `left_on` and `right_on`"
        raise InvalidArgumentError(msg)
    lb, rb = C.pair(both=by, left=left_by, right=right_by, both_name="by",
                    left_name="left_by", right_name="right_by", left_alone=several)
    left_arg = "on" if on is not None else "left_on"
    lfield = C.field(left.schema, argument=left_arg, name=lo, side="left")
    defaults = _Defaults(
        right_on=ro, on_argument="on" if on is not None else "right_on",
        right_by=rb, left_keys=C.names("by" if by is not None else "left_by", lb),
        by_argument="by" if by is not None else "left_by",
        direction=direction, allow_exact_matches=allow_exact_matches,
        tolerance=tolerance, tiebreak=tiebreak, suffix=suffix,
    )
    if isinstance(right, (list, tuple)):
        if not right:
            msg = "`right` is an empty list; give a DataFrame or at least one cj.Right"
            raise InvalidArgumentError(msg)
        items = [(r, f"right[{i}]") for i, r in enumerate(right)]
    else:
        items = [(Right(C.check_dataframe("right", right)), "right")]
    rights: list[RightSpec] = []
    kinds = [(time_kind(lfield.dataType, argument=left_arg, column=lo, side="left"),
              left_arg, lo, lfield.dataType)]
    taken: list[str] = []
    for item, what in items:
        spec, rkind = _right_spec(left, lo, item, what, defaults, taken)
        # A table's tolerance is in the unit its own times compare in with the left's
        # (a whole number for bigint times even when another table's are double).
        rights.append(_with_tolerance(spec, common_kind([kinds[0], rkind]),
                                      (kinds[0][3], rkind[3])))
        kinds.append(rkind)
        taken.extend(new for _, new in spec.outputs)
    kind = common_kind(kinds)
    return AsofSpec(left, lo, kind, kinds[0][0], tuple(rights), how, strategy, buckets)


def _right_spec(
    left: DataFrame, left_on: str, item: Any, what: str, d: _Defaults, taken: list[str]
) -> tuple[RightSpec, tuple[TimeKind, str, str, Any]]:
    if not isinstance(item, Right):
        hint = " (wrap it: cj.Right(df))" if isinstance(item, DataFrame) else ""
        msg = (f"`{what}`: the items of a list must be cj.Right specs; got "
               f"{type(item).__name__}{hint}")
        raise TypeError(msg)
    df = C.check_dataframe(f"{what}.df", item.df)
    side = "right" if what == "right" else f"{what} (right table #{what[6:-1]})"
    ro = item.on if item.on is not None else (d.right_on if d.right_on is not None else left_on)
    # a table of a list is told it can name its own column (`right[i].on`)
    on_arg = d.on_argument if what == "right" else f"{what}.on"
    rfield = C.field(df.schema, argument=on_arg, name=ro, side=side)
    rkind = time_kind(rfield.dataType, argument=on_arg, column=ro, side=side)
    rb: Any
    if item.by is not None:
        rb, right_by_arg = item.by, f"{what}.by"
    elif d.right_by is not None:
        rb, right_by_arg = d.right_by, "by" if d.by_argument == "by" else "right_by"
    else:  # `left_by` alone (or no keys): the table is read under the left names
        rb, right_by_arg = d.left_keys or None, f"{what}.by"
    by_args = (d.by_argument, right_by_arg)
    keys = C.keys(left.schema, df.schema, by=None, left_by=d.left_keys or None,
                  right_by=rb, left_side="left", right_side=side, arguments=by_args)
    direction = item.direction if item.direction is not None else d.direction
    check_literal(f"{what}.direction", direction, Direction)
    exact = item.allow_exact_matches
    if exact is None:
        exact = d.allow_exact_matches
    check_bool(f"{what}.allow_exact_matches", exact)
    tb_arg = "tiebreak" if item.tiebreak is None else f"{what}.tiebreak"
    tiebreak = C.names(tb_arg, item.tiebreak if item.tiebreak is not None else d.tiebreak)
    for name in tiebreak:
        tb = C.field(df.schema, argument=tb_arg, name=name, side=side)
        if kind := C.incomparable(tb.dataType):
            msg = (f"`{tb_arg}`: column {name!r} of {side} has type "
                   f"{tb.dataType.simpleString()}; {kind} cannot be ordered (expected a "
                   "number, string, date, timestamp, or a struct or array of them)")
            raise InvalidArgumentError(msg)
    if item.prefix is not None:
        check_str(f"{what}.prefix", item.prefix)
    outputs = right_output_names(left.columns, df.columns, keys, suffix=d.suffix,
                                 prefix=item.prefix, taken=taken, what=what,
                                 case_sensitive=partial(C.case_sensitive, left))
    tol = d.tolerance if item.tolerance is _UNSET else item.tolerance
    spec = RightSpec(df, ro, keys, direction, exact, tol, tiebreak, tuple(outputs), what, rkind)
    return spec, (rkind, on_arg, ro, rfield.dataType)


def _with_tolerance(
    spec: RightSpec, kind: TimeKind, types: tuple[T.DataType, T.DataType]
) -> RightSpec:
    exact = exact_decimal(types) if kind is TimeKind.FLOAT else None
    if spec.tolerance is None:
        return dataclasses.replace(spec, exact=exact)
    arg = "tolerance" if spec.what == "right" else f"{spec.what}.tolerance"
    value: int | float | Decimal = parse_duration(arg, spec.tolerance, kind)
    if value < 0:
        msg = f"`{arg}` must be positive or zero; got {spec.tolerance!r}"
        raise DurationError(msg)
    if kind is TimeKind.INTEGER and isinstance(value, float):
        # Whole times lie whole distances apart (within 1.5 is within 1); a float bound
        # would be compared in double precision, which tells large longs apart by 2**k.
        value = math.floor(value)
    if exact is not None:
        value = _exact_tolerance(spec.tolerance, value, exact)
    return dataclasses.replace(spec, tolerance=value, exact=exact)


def _exact_tolerance(given: Any, value: float | Decimal, exact: T.DecimalType) -> Decimal:
    """The tolerance as the decimal it was written as, at the scale of ``exact``.

    ``0.7`` is the decimal 0.7, not its double. Times are whole multiples of the
    scale's unit, so rounding the tolerance down to it keeps every match; past the
    largest distance of two values it is that distance.
    """
    if isinstance(given, Decimal):
        written = given
    elif isinstance(given, str):
        written = Decimal(given.strip())
    else:
        written = Decimal(repr(float(value)))
    beyond = Decimal(10) ** (exact.precision - exact.scale)
    if not written.is_finite() or written >= beyond:
        return beyond
    unit = Decimal(1).scaleb(-exact.scale)
    return written.quantize(unit, rounding=ROUND_FLOOR)
