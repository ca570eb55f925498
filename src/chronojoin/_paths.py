"""Locations on the local file system, spelled as paths or ``file:`` URLs."""

from __future__ import annotations

from urllib.parse import urlparse


def local_path(location: str) -> str | None:
    """The local path that ``location`` names: itself, or a ``file:`` URL's path.

    ``None`` for a URL of another scheme (``hdfs://``, ``s3a://``) or another host.
    """
    if location[:5].lower() == "file:":
        parsed = urlparse(location)
        return (parsed.path or None) if parsed.netloc in ("", "localhost") else None
    return None if "://" in location else location
