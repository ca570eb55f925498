"""Benchmark cases, one module per family: each exposes ``cases(**params) -> list[Case]``."""
