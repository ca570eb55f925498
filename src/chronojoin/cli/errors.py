"""The error a command raises to end with a one-line message and exit code 2."""

from __future__ import annotations


class CliError(Exception):
    """A user error on the command line (bad path, bad option)."""
