"""Facts about the Spark session that plans and tools size themselves by."""

from __future__ import annotations

import os


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
