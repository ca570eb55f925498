"""One module per sub-command: ``add_arguments(parser)`` and ``execute(args) -> int``."""
