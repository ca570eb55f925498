"""Build-time hooks of the documentation site (``mkdocs.yml`` names this file).

* ``docs/cli.md``: the marker ``<!-- cli-reference -->`` is replaced by the ``--help`` text
  of ``chronojoin`` and of every command, taken from the argparse parsers themselves,
  so the reference cannot drift from the code.
* ``docs/benchmarks.md``: the marker ``<!-- benchmarks -->`` is replaced by the
  repository's ``BENCHMARKS.md`` (its figures are copied into the site); without that
  file, a short note says that no results are recorded yet.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

CLI_MARKER = "<!-- cli-reference -->"
BENCH_MARKER = "<!-- benchmarks -->"
BENCH_FILE = "BENCHMARKS.md"
FIGURE_DIR = "benchmarks"
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def cli_reference() -> str:
    """Markdown with the help of ``chronojoin`` and of each command, in registry order."""
    from chronojoin.cli.main import COMMANDS, build_parser

    os.environ.setdefault("COLUMNS", "100")
    parts = ["## chronojoin", "", "```text", build_parser(only="").format_help().rstrip(),
             "```", ""]
    for name in COMMANDS:
        parser = build_parser(only=name)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        text = sub.choices[name].format_help().rstrip()
        parts += [f"## chronojoin {name}", "", "```text", text, "```", ""]
    return "\n".join(parts)


def _figures(text: str, source: Path) -> tuple[str, list[tuple[Path, str]]]:
    """Rewrite relative image links to ``benchmarks/...``; return the files to copy."""
    copies: list[tuple[Path, str]] = []

    def swap(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith("/"):
            return match.group(0)
        path = (source.parent / target).resolve()
        if not path.is_file():
            return f"*(figure {match.group(1) or target} not found)*"
        uri = f"{FIGURE_DIR}/{Path(target).as_posix().lstrip('./')}"
        copies.append((path, uri))
        return f"![{match.group(1)}]({uri})"

    return _IMAGE.sub(swap, text), copies


def benchmark_report(root: Path) -> tuple[str, list[tuple[Path, str]]]:
    """The report's Markdown (top heading removed) and its figures, or a placeholder."""
    source = root / BENCH_FILE
    if not source.is_file():
        return ("No benchmark results are recorded in this version yet. Run "
                "`chronojoin bench` to produce a report (see the CLI reference).", [])
    text = source.read_text(encoding="utf-8")
    text = re.sub(r"\A#\s[^\n]*\n", "", text.lstrip())
    return _figures(text, source)


def on_files(files: Any, config: Any) -> Any:
    """Add the benchmark figures to the site."""
    from mkdocs.structure.files import File

    _, copies = benchmark_report(_root(config))
    for path, uri in copies:
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the generated sections."""
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if BENCH_MARKER in markdown:
        text, _ = benchmark_report(_root(config))
        markdown = markdown.replace(BENCH_MARKER, text)
    return markdown
