"""Facts about the Spark session that plans and tools size themselves by."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def local_cores(master: str) -> int | None:
    """The cores of a local master (``local``, ``local[N]``, ``local[*]``, ``local[N,F]``).

    ``None`` for a cluster URL, whose cores only its executors know.
    """
    if not master.startswith("local"):
        return None
    inside = master.partition("[")[2].partition(",")[0].rstrip("]") or "1"
    return int(inside) if inside.isdigit() else (os.cpu_count() or 1)


def is_connect(obj: object) -> bool:
    """Whether a session or DataFrame is Spark Connect's (its paths are the server's)."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def setting_on(df: DataFrame, key: str) -> bool:
    """Whether the boolean session setting ``key`` of ``df``'s session is true (default off)."""
    value = df.sparkSession.conf.get(key, "false")
    return str(value).strip().lower() == "true"
