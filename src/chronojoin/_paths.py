"""Locations on the local file system, spelled as paths or ``file:`` URLs."""

from __future__ import annotations

import glob
from urllib.parse import urlparse


def local_path(location: str) -> str | None:
    """The local path that ``location`` names: itself, or a ``file:`` URL's path.

    ``None`` for a URL of another scheme (``hdfs://``, ``s3a://``) or another host.
    """
    if location[:5].lower() == "file:":
        parsed = urlparse(location)
        return (parsed.path or None) if parsed.netloc in ("", "localhost") else None
    return None if "://" in location else location


#: The characters that make a path a pattern to Spark (Hadoop's glob syntax).
_GLOB = frozenset("*?[{")


def is_pattern(location: str) -> bool:
    """Whether Spark reads ``location`` as a glob pattern (``data/*.parquet``, ``d/{a,b}``)."""
    return not _GLOB.isdisjoint(location)


def matches(pattern: str) -> list[str]:
    """The local paths that the glob ``pattern`` names, sorted, as Spark would read them.

    Hadoop's syntax: ``*`` and ``?`` within one path component, ``[ab]``, ``[^ab]``
    and ``{a,b}`` (nested too).
    """
    found: set[str] = set()
    for alternative in _alternatives(pattern):
        found.update(glob.glob(alternative.replace("[^", "[!")))
    return sorted(found)


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` with its first ``{a,b}`` group (and so, recursively, every one) expanded."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, last, parts = 0, start + 1, []
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            depth += 1
        elif pattern[i] == "," and depth == 1:
            parts.append(pattern[last:i])
            last = i + 1
        elif pattern[i] == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[last:i])
                head, tail = pattern[:start], pattern[i + 1:]
                return [path for part in parts for path in _alternatives(head + part + tail)]
    return [pattern]  # an unclosed brace is a character
