"""The documentation site builds with ``mkdocs build --strict`` (warnings fail it)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronojoin.cli.main import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _options(name: str) -> set[str]:
    parser = build_parser(only=name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {s for a in sub.choices[name]._actions for s in a.option_strings}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_cli_reference_names_every_option(name):
    text = _hooks().cli_reference()
    section = text.split(f"## chronojoin {name}\n", 1)[1].split("\n## ", 1)[0]
    missing = {o for o in _options(name) if o not in section}
    assert not missing, f"chronojoin {name}: options missing from the CLI reference"


def test_benchmark_page_without_report(tmp_path):
    text, figures = _hooks().benchmark_report(tmp_path)
    assert "No benchmark results" in text and figures == []


def test_benchmark_page_copies_figures(tmp_path):
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "a.png").write_bytes(b"png")
    (tmp_path / "BENCHMARKS.md").write_text("# Benchmarks\n\n![elapsed](figs/a.png)\n")
    text, figures = _hooks().benchmark_report(tmp_path)
    assert "![elapsed](benchmarks/figs/a.png)" in text
    assert figures == [((tmp_path / "figs" / "a.png").resolve(), "benchmarks/figs/a.png")]


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
         "--config-file", str(ROOT / "mkdocs.yml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    site = tmp_path / "site"
    for page in ("index.html", "cli/index.html", "api/index.html", "guide/loader/index.html",
                 "benchmarks/index.html", "deploy/index.html"):
        assert (site / page).is_file(), page
    assert "asof_join" in (site / "api" / "index.html").read_text()
