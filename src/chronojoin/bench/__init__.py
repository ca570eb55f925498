"""Benchmarks: cases (what to run), the runner, metrics and stored results."""
