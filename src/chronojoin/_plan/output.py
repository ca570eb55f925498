"""The output column rule shared by every join.

All left columns in their order, then the right columns in their order, except right
key columns named like their left counterpart (dropped). A right column whose name
clashes with a left column gets ``suffix``; with ``prefix`` every right output column
is prefixed instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chronojoin._validate.columns import KeyPair, differ_in_case_only
from chronojoin.errors import InvalidArgumentError


def right_output_names(
    left_columns: Sequence[str],
    right_columns: Sequence[str],
    keys: KeyPair,
    *,
    suffix: str = "_right",
    prefix: str | None = None,
    taken: Sequence[str] = (),
    what: str = "right",
    case_sensitive: Callable[[], bool] = lambda: False,
    prefixes: bool = True,
) -> list[tuple[str, str]]:
    """Return ``(right column, output name)`` for every right column that is kept.

    ``taken`` lists names already used by earlier outputs (other right tables);
    ``what`` describes the right table in error messages. Unless ``case_sensitive()``
    (the session's ``spark.sql.caseSensitive``), names that differ only in case are
    the same name, as Spark resolves them: ``Price`` and ``price`` clash. It is called
    only when two of the names compared differ in case alone.
    ``prefixes``: whether the caller takes a prefix, which the clash message then
    suggests besides another suffix.

    Examples
    --------
    >>> right_output_names(["id", "ts", "v"], ["id", "ts", "w"], KeyPair(("id",), ("id",)))
    [('ts', 'ts_right'), ('w', 'w')]
    """
    made = [prefix + n for n in right_columns] if prefix is not None else [
        n + suffix for n in right_columns]
    compared = [*left_columns, *right_columns, *taken, *keys.left, *keys.right, *made]
    exact = differ_in_case_only(compared) and case_sensitive()

    def fold(name: str) -> str:
        return name if exact else name.lower()

    dropped = {fold(r) for l_, r in zip(keys.left, keys.right) if fold(l_) == fold(r)}
    lefts = {fold(c) for c in left_columns}
    used = lefts | {fold(c) for c in taken}
    out: list[tuple[str, str]] = []
    for name in right_columns:
        if fold(name) in dropped:
            continue
        if prefix is not None:
            new = prefix + name
        else:
            new = name + suffix if fold(name) in lefts else name
        if fold(new) in used:
            how = f"prefix {prefix!r}" if prefix is not None else f"suffix {suffix!r}"
            choose = "another suffix or prefix" if prefixes else "another suffix"
            msg = (
                f"{what}: output column {new!r} (from right column {name!r} with {how}) "
                f"clashes with another output column; choose {choose}"
            )
            raise InvalidArgumentError(msg)
        used.add(fold(new))
        out.append((name, new))
    return out
