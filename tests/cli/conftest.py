"""Fixtures of the command-line tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_spark(monkeypatch):
    """The command fails if it starts a session: its checks come before Spark."""
    def refuse(*args, **kwargs):
        raise AssertionError("a session was started")

    monkeypatch.setattr("chronojoin.cli.session.session", refuse)
