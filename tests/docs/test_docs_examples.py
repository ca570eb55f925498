"""Every ```python block of the documentation and the README runs.

Blocks of one page share a namespace, in page order, with ``spark`` and ``cj`` given.
A block fenced ```python no-run, or with another language (```pycon, ```bash), is
not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import chronojoin as cj

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_BLOCK = re.compile(r"^```python([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The runnable ```python blocks of a Markdown text, in order."""
    return [body for info, body in _BLOCK.findall(text) if "no-run" not in info]


def test_block_parser():
    text = "```python\na = 1\n```\n```python no-run\nboom()\n```\n```pycon\n>>> 1\n```\n"
    assert python_blocks(text) == ["a = 1\n"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(spark, page, tmp_path, monkeypatch):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no python examples")
    monkeypatch.chdir(tmp_path)
    namespace = {"spark": spark, "cj": cj, "__name__": "__docs__"}
    for i, block in enumerate(blocks, 1):
        code = compile(block, f"{page.name}[block {i}]", "exec")
        exec(code, namespace)
