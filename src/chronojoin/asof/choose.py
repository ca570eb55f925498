"""``strategy="auto"``: a pure function of the spec (and cheap statistics) that picks one."""

from __future__ import annotations

import logging

from chronojoin.asof.spec import AsofSpec, RightSpec

log = logging.getLogger("chronojoin.asof")


def choose(spec: AsofSpec, right: RightSpec) -> tuple[str, str]:
    """Return ``(strategy, reason)`` for one right table."""
    if not right.keys:
        return "union", "no equality key: time-bucketed union with carry-over runs in parallel"
    return "union", "keyed join: one shuffle and one sort, cost independent of pairs per key"
