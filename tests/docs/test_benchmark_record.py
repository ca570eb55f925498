"""The project's benchmark record: BENCHMARKS.md and the report hold every stored run."""

from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_benchmarks_md_holds_every_stored_run():
    """The project's own record: every results file has its section in both reports."""
    results = os.path.join(ROOT, "benchmarks", "results")
    if not os.path.isdir(results):
        pytest.skip("no stored benchmark results in this checkout")
    runs = {name.rsplit(".", 1)[0] for name in os.listdir(results) if name.endswith(".jsonl")}
    for doc in ("BENCHMARKS.md", os.path.join("benchmarks", "report", "report.md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            text = fh.read()
        missing = sorted(r for r in runs if f"\n## Run {r}\n" not in text)
        assert not missing, (f"{doc} lacks runs {missing}: chronojoin bench report --results "
                             "benchmarks/results --out benchmarks/report --embed BENCHMARKS.md")
