"""``python -m chronojoin`` is the ``chronojoin`` command."""

from chronojoin.cli.main import run

run()
