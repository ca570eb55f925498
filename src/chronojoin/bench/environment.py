"""The environment fingerprint stored with every benchmark run."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from typing import TYPE_CHECKING, Any

from chronojoin._session import is_connect

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_SECRET = re.compile(r"secret|password|token|credential|key\.pem", re.IGNORECASE)
_PACKAGES = ("chronojoin", "pyspark", "pandas", "pyarrow", "numpy", "duckdb", "dbl-tempo")


def environment(spark: SparkSession | None, **extra: Any) -> dict[str, Any]:
    """Versions, master, cores, memory, Spark confs and the git commit, as a dict.

    ``git_modified`` says whether tracked files had uncommitted changes.
    """
    env: dict[str, Any] = {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "java": _java_version(),
        "packages": {name: _version(name) for name in _PACKAGES},
        "git_commit": git_commit(),
        "git_modified": git_modified(),
    }
    if spark is not None:
        confs = spark_confs(spark)
        env["spark_version"] = spark.version
        env["master"] = confs.get("spark.master")
        env["spark_confs"] = confs
        env["connect"] = is_connect(spark)
    env.update(extra)
    return env


def spark_confs(spark: SparkSession) -> dict[str, str]:
    """Return the session's Spark configuration, secrets removed."""
    pairs: dict[str, str] = {}
    try:
        pairs = dict(spark.sparkContext.getConf().getAll())
    except Exception:
        try:
            pairs = dict(spark.conf.getAll)
        except Exception:
            pairs = {}
    for key in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled"):
        try:
            pairs.setdefault(key, str(spark.conf.get(key)))
        except Exception:
            continue
    return {k: str(v) for k, v in sorted(pairs.items()) if not _SECRET.search(k)}


def git_commit() -> str | None:
    """``git rev-parse HEAD`` of the working directory, or ``None``."""
    out = _git("rev-parse", "HEAD")
    return None if out is None else out.strip() or None


def git_modified() -> bool | None:
    """Whether tracked files differ from ``HEAD`` (the run did not time the commit).

    ``None`` outside a git working tree.
    """
    out = _git("status", "--porcelain", "--untracked-files=no")
    return None if out is None else bool(out.strip())


def _git(*args: str) -> str | None:
    """The output of ``git args`` in the working directory; ``None`` when it fails."""
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _memory_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _java_version() -> str | None:
    try:
        out = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    first = (out.stderr or out.stdout).strip().splitlines()
    return first[0] if first else None
