"""The error a command raises to end with a one-line message and exit code 2."""

from __future__ import annotations


class CliError(Exception):
    """A user error on the command line (bad path, bad option)."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
