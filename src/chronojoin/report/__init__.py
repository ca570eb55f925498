"""Benchmark reports: Markdown tables and PNG figures drawn from stored results only.

Nothing here runs Spark: :func:`write_report` reads the JSON lines written by
``chronojoin bench`` and writes ``report.md`` plus one PNG per figure;
:func:`embed_report` copies that report into another Markdown file (a project's
``BENCHMARKS.md``) below a marker line, so the copy is redrawn with the report.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from urllib.parse import quote

import pandas as pd

from chronojoin.bench.metrics import MIN_SKEW_TASKS
from chronojoin.report.load import load, summarise
from chronojoin.report.tables import (
    environment_table,
    growth_table,
    memory_table,
    results_table,
    speedup_table,
)

__all__ = [
    "EMBED_MARKER", "embed_report", "load", "marker_line", "render", "summarise", "write_report",
]

#: The line of a Markdown file below which :func:`embed_report` writes the report.
EMBED_MARKER = "<!-- chronojoin bench report -->"
_IMAGE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"(`{3,}|~{3,})")


def write_report(paths: Sequence[str], out: str, *, name: str = "report.md") -> str:
    """Write ``out/report.md`` and its figures from the results in ``paths``; return its path."""
    results, envs = load(paths)
    if results.empty:
        msg = f"no benchmark results found in {list(paths)}"
        raise ValueError(msg)
    os.makedirs(out, exist_ok=True)
    text = render(results, envs, out)
    path = os.path.join(out, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def marker_line(lines: Sequence[str], target: str) -> int:
    """The index of the first :data:`EMBED_MARKER` line in ``lines`` (``target``'s).

    A marker shown in a fenced code block (```` ``` ```` or ``~~~``) is text, not the place
    to write the report: everything after it would be replaced.
    """
    fence = ""
    for i, line in enumerate(lines):
        text = line.strip()
        opening = _FENCE.match(text)
        if fence:
            if text.startswith(fence) and not text.strip(fence[0]):
                fence = ""
        elif opening:
            fence = opening.group(1)
        elif text == EMBED_MARKER:
            return i
    msg = f"{target} has no line {EMBED_MARKER!r} to write the report below"
    raise ValueError(msg)


def embed_report(report: str, target: str) -> None:
    """Replace everything below :data:`EMBED_MARKER` in ``target`` with ``report``'s text.

    The report's title is left out and its figure paths are rewritten relative to
    ``target``'s directory; the text above the marker is kept as it is.
    """
    with open(target, encoding="utf-8", newline="") as fh:
        lines = fh.read().splitlines(keepends=True)
    mark = marker_line(lines, target)
    marker = lines[mark].splitlines()[0]
    newline = "\r\n" if lines[mark].endswith("\r\n") else "\n"
    with open(report, encoding="utf-8") as fh:
        body = re.sub(r"\A#\s[^\n]*\n+", "", fh.read())
    base = os.path.relpath(os.path.dirname(os.path.abspath(report)),
                           os.path.dirname(os.path.abspath(target)))

    def move(match: re.Match[str]) -> str:
        path = match.group(2)
        if "://" in path or path.startswith("/"):
            return match.group(0)
        moved = os.path.normpath(os.path.join(base, path)).replace(os.sep, "/")
        return f"{match.group(1)}{quote(moved)}{match.group(3)}"  # a space ends a link

    below = f"\n\n{_IMAGE.sub(move, body).rstrip()}\n".replace("\n", newline)
    text = "".join(lines[:mark]) + marker + below
    partial = f"{target}.partial"
    with open(partial, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    os.replace(partial, target)  # never a half-written target


def render(results: pd.DataFrame, envs: pd.DataFrame, out: str) -> str:
    """Return the Markdown text; figures are written into ``out``."""
    summary = summarise(results)
    parts = [
        "# chronojoin benchmark report",
        "",
        "Drawn by `chronojoin bench report` from the raw results (JSON lines) of "
        "`chronojoin bench`. Times are medians over the timed repetitions; *relative* is "
        "the ratio to the case's baseline method (the FLOOR for as-of joins) in the same "
        "run and session. A master started twice in one run (`--masters "
        "local[2],local[2]`) is shown as `local[2] (session 2)` and the like (its place "
        "in `--masters`); the growth and memory tables and the size figures are of the "
        "first session of the master with the most executors, the speedup table and the "
        "executor figure take the median of a master's sessions. Memory and shuffle "
        "figures come from Spark's monitoring REST API (sums over the run's stages, as "
        "sparkMeasure reports them); *task skew* is the "
        "longest task over the median task of the heaviest stage that reads a shuffle "
        "(results of earlier releases: of the heaviest stage); a stage of fewer than "
        f"{MIN_SKEW_TASKS} tasks has none (`n/a (2 tasks)`). `n/a` means the metric "
        "could not be read. A method whose answer differed from the others is marked "
        "**wrong** and never timed (**disagree**: two answers differed and no baseline "
        "decided). *check* says what the answer was compared with: `compared` (another "
        "method's row count and checksum), `rows` (the row count only), `none` (no other "
        "checked method ran: the answer was not checked), `baseline` (the baseline's "
        "answer, which no other method matched), `-` (not checked), `n/a` (not recorded). "
        "A status `ok (1 timeout)` marks a method some of whose timed runs failed: its "
        "median is of the runs that finished.",
    ]
    for run_id, run in summary.groupby("run_id", sort=True):
        run_envs = envs[envs["run_id"] == run_id] if not envs.empty else envs
        parts += ["", f"## Run {run_id}", ""]
        command = _command(run_envs)
        if command:
            parts += [f"Command: `{command}`", ""]
        if not run_envs.empty:
            parts += ["### Environment", "", environment_table(run_envs), ""]
        for family, fam in run.groupby("family", sort=True):
            prefix = re.sub(r"[^A-Za-z0-9]+", "_", f"{run_id}_{family}")
            parts += _family_section(str(family), fam, out, prefix)
    return "\n".join(parts) + "\n"


def _family_section(family: str, fam: pd.DataFrame, out: str, prefix: str) -> list[str]:
    from chronojoin.report.plots import main_master_rows

    title = family or "(no family)"
    parts = [f"### {title}", "", results_table(fam), ""]
    main = main_master_rows(fam)
    sessions = fam[[c for c in ("master", "session") if c in fam]].drop_duplicates()
    on = f", master {main['label'].iloc[0]}" if len(sessions) > 1 else ""
    for heading, table in (
        (f"Growth with size (thesis table 5.1 analogue{on})", growth_table(main)),
        (f"Memory{', ascending data' if family == 'asof' else ''} "
         f"(thesis table 5.2 analogue{on})", memory_table(main)),
        ("Speedup S = elapsed(fewest executors) / elapsed(master) (eq. 5.2, table 5.3)",
         speedup_table(fam)),
    ):
        if table:
            parts += [f"#### {heading}", "", table, ""]
    from chronojoin.report.plots import all_figures

    figures = all_figures(fam, out, prefix)
    if figures:
        parts += ["#### Figures", ""]
        parts += [f"![{t}]({f})\n" for t, f in figures]
    return parts


def _command(envs: pd.DataFrame) -> str | None:
    if envs.empty or "environment" not in envs:
        return None
    for env in envs["environment"]:
        if isinstance(env, dict) and env.get("command"):
            return str(env["command"])
    return None
