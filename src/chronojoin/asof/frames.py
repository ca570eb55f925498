"""Plan pieces shared by the as-of strategies.

Every strategy works on two *tagged* frames with internal column names, so user
column names never collide with ours:

* left:  ``__k0..__kN`` (keys), ``__t`` (time ordinal), ``__l`` (struct of all left
  columns, so duplicates and column order survive untouched);
* right: ``__k0..__kN``, ``__t``, ``__tb0..`` (tie-break columns), ``__r`` (struct
  ``{t, v}``: the right time ordinal and the struct of the right output columns).

A strategy produces ``__l`` plus the matched ``__r`` candidates: ``__mb`` (the backward
candidate) and/or ``__mf`` (forward). :func:`finish` applies ``nearest``, the
tolerance, ``how`` and the output projection in one place.
"""

from __future__ import annotations

from decimal import Decimal

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from chronojoin._plan.longs import shifted
from chronojoin._validate.columns import col, not_null, struct_of
from chronojoin._validate.timetypes import TimeKind, ordinal
from chronojoin.asof.spec import AsofSpec, RightSpec

LEFT_STRUCT = "__l"
RIGHT_STRUCT = "__r"
BACK = "__mb"
FORWARD = "__mf"
TIME = "__t"
SIDE = "__s"
BUCKET = "__b"


def key_names(n: int) -> list[str]:
    """Internal names of the equality keys."""
    return [f"__k{i}" for i in range(n)]


def keys_equal(left: DataFrame, right: DataFrame, keys: list[str]) -> Column | None:
    """``left.k == right.__r<k>`` for every key (``None`` without keys)."""
    cond: Column | None = None
    for k in keys:
        eq = left[k] == right[f"__r{k}"]
        cond = eq if cond is None else cond & eq
    return cond


def tiebreak_names(n: int, slot: int = 0) -> list[str]:
    """Internal names of the tie-break columns of the right table in ``slot``."""
    return [f"__tb{i}" if slot == 0 else f"__tb{slot}_{i}" for i in range(n)]


def slot_name(base: str, slot: int) -> str:
    """``__r``, ``__mb``, ``__mf`` for the first right table, ``__r1``... for the others."""
    return base if slot == 0 else f"{base}{slot}"


def reversed_time(t: Column, floating: bool) -> Column:
    """Time ordinal ``t`` in reversed order: ``-t`` for doubles, ``~t`` for longs.

    ``-t`` overflows at the smallest long, ``~t`` never; both are their own inverse.
    """
    return -t if floating else F.bitwise_not(t)


def floating_time(spec: AsofSpec, rights: list[RightSpec]) -> bool:
    """Whether ``__t`` of frames tagged from ``spec``'s left and ``rights`` is a double.

    :func:`ordinal` makes float times doubles and every other kind longs; a union of
    both holds doubles. Known from the spec, so no frame's schema is read (a round trip
    to the server on Spark Connect).
    """
    return TimeKind.FLOAT in (spec.left_kind, *(r.time_kind for r in rights))


def side_codes(right: RightSpec) -> tuple[int, int]:
    """``(right code, left code)``: the smaller code sorts first at equal times.

    Inclusive matches put right rows before left rows at the same time, strict
    matches put them after, so a plain "last right row so far" is the answer.
    """
    return (0, 1) if right.allow_exact_matches else (1, 0)


def left_frame(df: DataFrame, spec: AsofSpec, right: RightSpec) -> DataFrame:
    """The tagged left side (all rows kept, NULL keys and times included)."""
    keys = [col(k).alias(n) for k, n in zip(right.keys.left, key_names(len(right.keys.left)))]
    return df.select(
        *keys,
        ordinal(col(spec.left_on), spec.left_kind).alias(TIME),
        struct_of((c, c) for c in df.columns).alias(LEFT_STRUCT),
    )


def right_frame(spec: AsofSpec, right: RightSpec, slot: int = 0) -> DataFrame:
    """The tagged right side; rows with a NULL key or time are dropped (never match).

    ``slot`` numbers the right table when several share one union.
    """
    df = right.df
    knames = key_names(len(right.keys.right))
    t = ordinal(col(right.on), right.time_kind)
    value = struct_of(right.outputs)
    tb_names = tiebreak_names(len(right.tiebreak), slot)
    tagged = df.select(
        *[col(k).alias(n) for k, n in zip(right.keys.right, knames)],
        t.alias(TIME),
        *[col(c).alias(n) for c, n in zip(right.tiebreak, tb_names)],
        F.struct(t.alias("t"), value.alias("v")).alias(slot_name(RIGHT_STRUCT, slot)),
    )
    return tagged.where(not_null(F.col(TIME), *[F.col(n) for n in knames]))


def _not_before(lt: Column, rt: Column, tol: float | Decimal) -> Column:
    """``rt >= lt - tol`` (``tol >= 0``): ``rt`` is at most ``tol`` before ``lt``.

    A whole tolerance (long times) shifts ``lt`` through
    :func:`~chronojoin._plan.longs.shifted`, never an overflow error: below ``Long.MIN``
    (a tolerance past the long range too) is ``Long.MIN``, which any time matches. A
    float tolerance is compared with the difference, not with a rounded bound: the
    difference of two nearby doubles is exact, while ``lt - tol`` rounds to the
    spacing of ``lt`` (``1.7e18 + 256 - 200`` is ``1.7e18``, 256 away). An equal time
    is distance 0 (``inf - inf`` is NaN). A decimal tolerance compares ordinals that
    :func:`exact_times` turned back into decimals.
    """
    if isinstance(tol, int):
        return rt >= shifted(lt, -tol, low=True)
    if isinstance(tol, Decimal):
        return lt - rt <= F.lit(tol)
    return (lt - rt <= F.lit(tol)) | (rt == lt)


def _not_after(lt: Column, rt: Column, tol: float | Decimal) -> Column:
    """``rt <= lt + tol`` (``tol >= 0``), as :func:`_not_before` (saturated at ``Long.MAX``)."""
    if isinstance(tol, int):
        return rt <= shifted(lt, tol, low=False)
    if isinstance(tol, Decimal):
        return rt - lt <= F.lit(tol)
    return (rt - lt <= F.lit(tol)) | (rt == lt)


def exact_times(right: RightSpec, *times: Column) -> tuple[Column, ...]:
    """Time ordinals as the decimals they came from, where distances must be exact.

    Double ordinals of decimals with a fraction keep their order but not their
    differences (``0.80 - 0.10`` is past ``0.70``); cast back to ``right.exact`` they
    are the decimals again (see :func:`~chronojoin._validate.timetypes.exact_decimal`).
    Unchanged for other times.
    """
    if right.exact is None:
        return times
    return tuple(t.cast(right.exact) for t in times)


def time_condition(right: RightSpec, lt: Column, rt: Column) -> Column | None:
    """The condition on the left time ``lt`` and a right time ``rt`` for a candidate pair.

    ``None`` when every right row of the key is a candidate (``nearest`` without a
    tolerance, exact matches allowed). The tolerance is inclusive. Bounds are compared,
    not differences: no long overflows near its limits, and an infinite time still
    matches an equal one (``inf - inf`` is NaN).
    """
    tol = right.tolerance
    exact = right.allow_exact_matches
    dlt, drt = exact_times(right, lt, rt)
    if right.direction == "backward":
        cond = rt <= lt if exact else rt < lt
        return cond if tol is None else cond & _not_before(dlt, drt, tol)
    if right.direction == "forward":
        cond = rt >= lt if exact else rt > lt
        return cond if tol is None else cond & _not_after(dlt, drt, tol)
    strict = None if exact else rt != lt
    if tol is None:
        return strict
    near = _not_before(dlt, drt, tol) & _not_after(dlt, drt, tol)
    return near if strict is None else strict & near


def _wide(c: Column) -> Column:
    """A long as a decimal wide enough for the difference of any two longs."""
    return c.cast("decimal(20,0)")


def back_closer(lt: Column, back: Column, fwd: Column) -> Column:
    """Whether ``back`` (``<= lt``) is at least as close to ``lt`` as ``fwd`` (``>= lt``).

    An equal time is closest (infinities too, where ``inf - inf`` is NaN). A
    difference past the long range (``try_subtract`` gives NULL) is farther than any
    other; two of them are compared as decimals, computed for them only.
    """
    back_d, fwd_d = F.try_subtract(lt, back), F.try_subtract(fwd, lt)
    return (
        F.when(back == lt, True)
        .when(fwd == lt, False)
        .when(back_d.isNull() & fwd_d.isNull(),
              _wide(lt) - _wide(back) <= _wide(fwd) - _wide(lt))
        .when(back_d.isNull(), False)
        .when(fwd_d.isNull(), True)
        .otherwise(back_d <= fwd_d)
    )


def distance_order(lt: Column, rt: Column) -> list[Column]:
    """Sort keys that put the right time ``rt`` nearest to ``lt`` first.

    ``|lt - rt|``, with an equal time (infinities too) at 0, and a distance past the
    long range after every other, those ordered among themselves as decimals.
    """
    hi, lo = F.greatest(lt, rt), F.least(lt, rt)
    gap = F.when(lt == rt, F.lit(0)).otherwise(F.try_subtract(hi, lo))
    past = gap.isNull() & lt.isNotNull() & rt.isNotNull()
    return [past.asc(), F.when(past, _wide(hi) - _wide(lo)).asc(), gap.asc()]


def choose(right: RightSpec, slot: int = 0) -> Column:
    """The matched right struct, from the candidates a strategy produced."""
    back, fwd = F.col(slot_name(BACK, slot)), F.col(slot_name(FORWARD, slot))
    lt, back_t, fwd_t = exact_times(right, F.col(TIME), back["t"], fwd["t"])
    if right.tolerance is not None:
        # A strategy may bring candidates beyond the tolerance (a carried row).
        tol = right.tolerance
        back = F.when(_not_before(lt, back_t, tol), back)
        fwd = F.when(_not_after(lt, fwd_t, tol), fwd)
    if right.direction == "backward":
        return back
    if right.direction == "forward":
        return fwd
    return (
        F.when(back.isNull(), fwd)
        .when(fwd.isNull(), back)
        .when(back_closer(lt, back_t, fwd_t), back)
        .otherwise(fwd)
    )


def finish(
    matched: DataFrame,
    right: RightSpec | list[RightSpec],
    how: str,
) -> DataFrame:
    """From ``__t``, ``__l`` and the candidates to the user's output columns.

    With several right tables (slots ``0..n-1``), ``how="inner"`` keeps the left rows
    that found a match in every table. Left rows with a NULL time never match,
    whatever the strategy found for them.
    """
    rights = right if isinstance(right, list) else [right]
    matches = [
        F.when(F.col(TIME).isNotNull(), choose(r, slot)).alias(f"__m{slot}")
        for slot, r in enumerate(rights)
    ]
    out = matched.select(F.col(LEFT_STRUCT), *matches)
    if how == "inner":
        for slot in range(len(rights)):
            out = out.where(F.col(f"__m{slot}").isNotNull())
    # The structs' fields are named and ordered as the output: a star per struct, not
    # a column function per field (a few calls to the JVM each on a classic session).
    return out.select(f"{LEFT_STRUCT}.*", *[f"__m{slot}.v.*" for slot in range(len(rights))])

