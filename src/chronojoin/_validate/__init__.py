"""Argument validation: turns user arguments into frozen specs without running Spark."""
