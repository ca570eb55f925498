"""The ``chronojoin`` command line."""
