"""Reports from a stored results file: tables, ratios, figures; no Spark involved."""

from __future__ import annotations

import json
import math
import os
import shutil

import pandas as pd
import pytest

from chronojoin.report import load, summarise, write_report
from chronojoin.report.tables import (
    environment_table,
    fmt_bytes,
    growth_table,
    speedup_table,
)

pytest.importorskip("matplotlib")

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "results.jsonl")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The fixture's report and figures, drawn once for the tests that embed it."""
    out = str(tmp_path_factory.mktemp("drawn"))
    write_report([os.path.dirname(FIXTURE)], out)
    return out


def _report_in(drawn: str, out) -> str:
    """A copy of the drawn report (``report.md`` and its figures) in the directory ``out``."""
    shutil.copytree(drawn, out)
    return os.path.join(str(out), "report.md")


def test_summary_medians_and_relative():
    results, envs = load([FIXTURE])
    assert len(envs) == 2
    summary = summarise(results)
    row = summary[
        (summary["case"] == "asof size n=10000 asc") & (summary["method"] == "union")
        & (summary["master"] == "local[2]")
    ].iloc[0]
    floor = summary[
        (summary["case"] == "asof size n=10000 asc") & (summary["method"] == "floor")
        & (summary["master"] == "local[2]")
    ].iloc[0]
    assert row["runs"] == 2
    assert row["relative"] == pytest.approx(row["elapsed_s"] / floor["elapsed_s"])
    assert floor["relative"] == pytest.approx(1.0)
    wrong = summary[summary["method"] == "wrong_fast"].iloc[0]
    assert wrong["status"] == "wrong" and wrong["runs"] == 0
    assert wrong["elapsed_s"] is None or math.isnan(wrong["elapsed_s"])
    duck = summary[summary["method"] == "duckdb"].iloc[0]
    memory = duck["peak_execution_memory_bytes"]
    assert memory is None or math.isnan(memory)  # unavailable stays unavailable, not 0


def test_report_markdown_and_figures(drawn):
    path = os.path.join(drawn, "report.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert "| master | case | method | median s | relative |" in text
    assert "floor (baseline)" in text and "1.00x" in text
    assert "**wrong**" in text and "**timeout** (over 600 s)" in text
    assert "Growth with size" in text and "exponent" in text
    assert "Memory, ascending data" in text
    assert "S(local[2])" in text
    assert "Command: `chronojoin bench --cases asof --masters local[1],local[2]`" in text
    assert "| local[2] | 2 | 4.3.0 |" in text
    images = [line for line in text.splitlines() if line.startswith("![")]
    expected = (
        "elapsed_s_vs_size", "peak_execution_memory_bytes_vs_size",
        "shuffle_write_bytes_vs_size", "elapsed_s_vs_buckets", "disk_spill_bytes_vs_buckets",
        "elapsed_vs_executors", "methods_by_size",
    )
    for stem in expected:
        assert any(stem in line for line in images), stem
    for line in images:
        name = line.split("](")[1].rstrip(")")
        png = os.path.join(drawn, name)
        assert os.path.exists(png) and os.path.getsize(png) > 5000
        with open(png, "rb") as fh:
            assert fh.read(4) == b"\x89PNG"


def test_speedup_and_growth_values():
    results, _ = load([FIXTURE])
    summary = summarise(results)
    speed = speedup_table(summary)
    # the fixture's times are 2.2 / executors times a size term: S(local[2]) = 2
    assert "| method | ids | order | S(local[2]) |" in speed
    assert "| floor | 100000 | asc | 2.00 |" in speed
    growth = growth_table(summary[summary["master"] == "local[2]"])
    assert len(growth.splitlines()) == 2 + 3 * 4  # header + orders x methods


def test_speedup_keeps_masters_of_equal_executor_counts_apart():
    """local[2] and a standalone cluster of two workers are two columns, not one median."""
    rows = [("local[1]", 1, 6.0), ("local[2]", 2, 3.0), ("spark://127.0.0.1:40001", 2, 4.0)]
    summary = pd.DataFrame([
        {"family": "asof", "method": "union", "size": 1000, "p_variant": "size",
         "status": "ok", "master": master, "executors": n, "elapsed_s": seconds}
        for master, n, seconds in rows
    ])
    speed = speedup_table(summary)
    assert "| method | ids | S(local[2]) | S(standalone x2) |" in speed
    assert "| union | 1000 | 2.00 | 1.50 |" in speed
    assert speedup_table(summary[summary["executors"] == 2]) == ""


def test_unavailable_values_and_errors(tmp_path):
    assert fmt_bytes(None) == "n/a" and fmt_bytes(float("nan")) == "n/a"
    assert fmt_bytes(1536) == "1.5 KiB"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no benchmark results"):
        write_report([str(empty)], str(tmp_path / "out"))
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(FIXTURE, bad / "a.jsonl")
    with open(bad / "a.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(ValueError, match=r"a\.jsonl line 109: not JSON"):
        load([str(bad)])
    with pytest.raises(FileNotFoundError, match="results path does not exist"):
        load([str(tmp_path / "missing")])
    with open(FIXTURE, encoding="utf-8") as fh:
        assert json.loads(fh.readline())["kind"] == "environment"


def test_environment_table_marks_a_modified_tree():
    envs = pd.DataFrame([
        {"master": "local[2]", "executors": 2,
         "environment": {"git_commit": "0123456789abcdef", "git_modified": flag}}
        for flag in (False, True, None)
    ])
    table = environment_table(envs)
    assert table.count("0123456789 (modified)") == 1
    assert table.count("0123456789") == 3


def test_embed_report_replaces_the_text_below_the_marker(tmp_path, drawn):
    from chronojoin.report import EMBED_MARKER, embed_report

    report = _report_in(drawn, tmp_path / "figs" / "r")
    target = tmp_path / "BENCHMARKS.md"
    target.write_text(f"# Ours\n\nkept ![a](own.png)\n\n{EMBED_MARKER}\n\nan older copy\n")
    for _ in range(2):  # a second copy replaces the first instead of following it
        embed_report(report, str(target))
        text = target.read_text()
        assert text.startswith(f"# Ours\n\nkept ![a](own.png)\n\n{EMBED_MARKER}\n\nDrawn by")
        assert "an older copy" not in text and "# chronojoin benchmark report" not in text
        assert text.count("\n## Run ") == 1 and text.endswith(")\n")
    images = [line.split("](")[1].rstrip(")") for line in text.splitlines()
              if line.startswith("![")]
    assert images and all(p.startswith("figs/r/") and (tmp_path / p).is_file() for p in images)


def test_embed_report_needs_the_marker(tmp_path):
    from chronojoin.report import embed_report

    target = tmp_path / "notes.md"
    target.write_text("# Notes\n")
    with pytest.raises(ValueError, match=r"notes\.md has no line '<!-- chronojoin bench"):
        embed_report(FIXTURE, str(target))
    assert target.read_text() == "# Notes\n"


def test_embed_report_skips_a_marker_shown_in_a_code_block(tmp_path, drawn):
    from chronojoin.report import EMBED_MARKER, embed_report

    report = _report_in(drawn, tmp_path / "r")
    head = (f"# Ours\n\nAdd this line:\n\n```markdown\n{EMBED_MARKER}\n```\n\n"
            f"~~~~\n{EMBED_MARKER}\n~~~\n~~~~\n\nNotes to keep.\n\n{EMBED_MARKER}\n")
    target = tmp_path / "BENCHMARKS.md"
    target.write_text(head + "\nan older copy\n")
    embed_report(report, str(target))
    text = target.read_text()
    assert text.startswith(head + "\nDrawn by") and "an older copy" not in text
    target.write_text(f"```\n{EMBED_MARKER}\n```\n")
    with pytest.raises(ValueError, match="has no line"):
        embed_report(report, str(target))


def test_embed_report_keeps_the_text_above_the_marker_byte_for_byte(tmp_path, drawn):
    """Windows line ends and a form feed above the marker stay; the copy takes the same ends."""
    from chronojoin.report import EMBED_MARKER, embed_report

    report = _report_in(drawn, tmp_path / "r")
    head = f"# Ours\r\n\r\nkept\x0cnext page\r\n{EMBED_MARKER}\r\n".encode()
    target = tmp_path / "BENCHMARKS.md"
    target.write_bytes(head + b"an older copy\r\n")
    for _ in range(2):
        embed_report(report, str(target))
        data = target.read_bytes()
        assert data.startswith(head + b"\r\nDrawn by") and data.endswith(b")\r\n")
        assert data.count(b"\n") == data.count(b"\r\n") and b"an older copy" not in data


def test_embed_report_encodes_figure_paths_with_spaces(tmp_path, drawn):
    """A link's path ends at a space: ``![t](bench report/x.png)`` is no image."""
    from urllib.parse import unquote

    from chronojoin.report import EMBED_MARKER, embed_report

    report = _report_in(drawn, tmp_path / "bench report (latest)")
    target = tmp_path / "BENCHMARKS.md"
    target.write_text(f"# Ours\n{EMBED_MARKER}\n")
    embed_report(report, str(target))
    images = [line.split("](")[1][:-1] for line in target.read_text().splitlines()
              if line.startswith("![")]
    assert images and all(p.startswith("bench%20report%20%28latest%29/") for p in images)
    assert all((tmp_path / unquote(p)).is_file() for p in images)



def _records(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for method, rep, status, seconds, extra in rows:
            rec = {
                "kind": "result", "run_id": "R1", "family": "asof",
                "case": "asof hot_key n=1000 asc hot=0.5",
                "params": {"variant": "hot_key", "n_ids": 1000, "order": "asc"},
                "method": method, "baseline": method == "floor", "checked": method != "floor",
                "master": "local[2]", "executors": 2, "repetition": rep, "status": status,
                "elapsed_s": seconds, "error": None if status == "ok" else "over 60 s",
                "metrics": {"task_skew": None, "task_skew_tasks": 2,
                            "busiest_stage_skew": 3.5, "busiest_stage_tasks": 4},
            }
            rec.update(extra)
            fh.write(json.dumps(rec) + "\n")


def test_skew_of_too_few_tasks_partial_timeouts_and_the_check_column(tmp_path):
    from chronojoin.report.tables import results_table

    path = tmp_path / "R1.jsonl"
    _records(path, [
        ("floor", 0, "ok", 1.0, {}), ("floor", 1, "ok", 1.0, {}), ("floor", 2, "ok", 1.0, {}),
        ("auto", 0, "ok", 2.0, {"check": "none"}), ("auto", 1, "ok", 2.0, {"check": "none"}),
        ("auto", 2, "ok", 2.0, {"check": "none"}),
        ("spark_smj", 0, "ok", 5.0, {"check": "compared"}),
        ("spark_smj", 1, "timeout", None, {"check": "compared"}),
    ])
    summary = summarise(load([str(path)])[0])
    by = summary.set_index("method")
    assert by.loc["floor", "status"] == "ok" and by.loc["auto", "status"] == "ok"
    assert by.loc["spark_smj", "status"] == "ok (1 timeout)"
    assert by.loc["spark_smj", "runs"] == 1 and by.loc["spark_smj", "relative"] == 5.0
    table = results_table(summary)
    assert "| task skew | busiest-stage skew | check | status |" in table
    assert "| n/a (2 tasks) | 3.50 | none | ok |" in table
    assert "| n/a (2 tasks) | 3.50 | - | ok |" in table   # the floor is not checked
    assert "| compared | **ok (1 timeout)** |" in table


def test_results_without_the_newer_fields_still_load():
    from chronojoin.report.tables import results_table

    summary = summarise(load([FIXTURE])[0])
    table = results_table(summary)
    union = next(line for line in table.splitlines() if "| union |" in line)
    assert union.endswith("| 1.30 | n/a | n/a | ok |")   # skew kept; no check recorded
    floor = next(line for line in table.splitlines() if "floor (baseline)" in line)
    assert floor.endswith("| - | ok |")


def test_growth_and_speedup_of_a_family_without_orders_next_to_one_with_them(tmp_path):
    """Band rows loaded with as-of rows carry an empty ``p_order``: they are not dropped."""
    records = [{"kind": "result", "run_id": "R1", "family": "asof",
                "case": "asof size n=1000 asc", "method": "floor", "baseline": True,
                "status": "ok", "master": "local[1]", "executors": 1, "elapsed_s": 1.0,
                "params": {"variant": "size", "n_ids": 1000, "order": "asc"}}]
    for master, executors in (("local[1]", 1), ("local[2]", 2)):
        for size, seconds in ((1000, 2.0), (10000, 8.0)):
            records.append({
                "kind": "result", "run_id": "R2", "family": "band",
                "case": f"band rows={size}", "method": "chronojoin", "baseline": True,
                "status": "ok", "master": master, "executors": executors,
                "elapsed_s": seconds / executors, "params": {"size": size},
            })
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = summarise(load([str(path)])[0])
    band = summary[summary["family"] == "band"]
    assert band["p_order"].isna().all()
    growth = growth_table(band[band["master"] == "local[1]"])
    assert "| chronojoin | 6.667e-04 | 1.333 | 0.60 | 2 |" in growth
    speed = speedup_table(band)
    assert "| method | rows per side | S(local[2]) |" in speed
    assert "| chronojoin | 1000 | 2.00 |" in speed


def _interval_records(path):
    """Intervals rows of two variants at two sizes each, one more variant at one size."""
    records = []
    for variant, sizes in (("few_pairs", (1000, 10000)), ("hot_key", (1000, 10000)),
                           ("many_pairs", (1000,))):
        for size in sizes:
            for method, seconds in (("floor", 1.0), ("sweep", 2.0)):
                records.append({
                    "kind": "result", "run_id": "R1", "family": "intervals",
                    "case": f"intervals {variant} points={size}", "method": method,
                    "baseline": method == "floor", "status": "ok", "master": "local[2]",
                    "executors": 2, "session": 0, "repetition": 0,
                    "elapsed_s": seconds * size / 1000 * (3 if variant == "hot_key" else 1),
                    "params": {"variant": variant, "points": size},
                    "metrics": {"peak_execution_memory_bytes": size * 100,
                                "shuffle_write_bytes": size * 10},
                })
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_growth_tables_and_figures_per_variant(tmp_path):
    """A family whose runs are all variants (intervals) gets a growth line per variant."""
    from chronojoin.report.tables import memory_table

    _interval_records(tmp_path / "R1.jsonl")
    summary = summarise(load([str(tmp_path)])[0])
    growth = growth_table(summary)
    assert "| variant | method | slope (s/point) | intercept (s) | exponent | sizes |" in growth
    assert "| few_pairs | sweep | 2.000e-03 | 0.000 | 1.00 | 2 |" in growth
    assert "| hot_key | sweep | 6.000e-03 | 0.000 | 1.00 | 2 |" in growth
    assert "many_pairs" not in growth  # one size: no growth
    memory = memory_table(summary)
    assert "| variant | points | method | peak execution memory |" in memory
    assert "| hot_key | 10000 | floor | 976.6 KiB |" in memory
    path = write_report([str(tmp_path)], str(tmp_path / "out"))
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert "#### Growth with size" in text and "#### Memory" in text
    images = [line.split("](")[1].rstrip(")") for line in text.splitlines()
              if line.startswith("![")]
    assert any("elapsed_s_vs_size" in p for p in images)
    assert any("methods_by_size" in p for p in images)


def test_speedup_per_variant():
    """Two variants at the same size are two speedup rows, not one median."""
    summary = pd.DataFrame([
        {"family": "intervals", "method": "sweep", "size": size, "p_variant": variant,
         "status": "ok", "master": master, "executors": n,
         "elapsed_s": seconds / n * (size / 1000)}
        for variant, seconds in (("few_pairs", 4.0), ("hot_key", 9.0))
        for size in (1000, 2000)
        for master, n in (("local[1]", 1), ("local[2]", 2), ("local[4]", 4))
        if not (variant == "hot_key" and master == "local[4]")
    ])
    speed = speedup_table(summary)
    assert "| variant | method | points | S(local[2]) | S(local[4]) |" in speed
    assert "| few_pairs | sweep | 1000 | 2.00 | 4.00 |" in speed
    assert "| hot_key | sweep | 2000 | 2.00 | n/a |" in speed


def test_two_sessions_of_one_master_are_reported_apart(tmp_path):
    """``--masters local[1],local[2],local[2]``: ratios and rows per session, not pooled."""
    from chronojoin.report.tables import results_table

    records = []
    sessions = (("local[1]", 1, 0, 4.0), ("local[2]", 2, 1, 1.0), ("local[2]", 2, 2, 3.0))
    for master, executors, session, scale in sessions:
        records.append({"kind": "environment", "run_id": "R1", "master": master,
                        "executors": executors, "session": session,
                        "environment": {"spark_version": "4.3.0"}})
        for size in (1000, 10000):
            for method, seconds in (("floor", 1.0), ("auto", 2.0 if session == 1 else 3.0)):
                records.append({
                    "kind": "result", "run_id": "R1", "family": "asof",
                    "case": f"asof size n={size} asc", "method": method,
                    "baseline": method == "floor", "status": "ok", "master": master,
                    "executors": executors, "session": session, "repetition": 0,
                    "elapsed_s": seconds * scale * size / 1000,
                    "params": {"variant": "size", "n_ids": size, "order": "asc"},
                })
    path = tmp_path / "R1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    results, envs = load([str(path)])
    summary = summarise(results)
    auto = summary[(summary["method"] == "auto") & (summary["size"] == 1000)]
    assert sorted(auto["relative"]) == [2.0, 3.0, 3.0]  # pooled, session 2 read 2.5x
    table = results_table(summary)
    assert "| local[1] | asof size n=1000 asc | auto | 12.000 | 3.00x |" in table
    assert "| local[2] (session 2) | asof size n=1000 asc | auto | 2.000 | 2.00x |" in table
    assert "| local[2] (session 3) | asof size n=1000 asc | auto | 9.000 | 3.00x |" in table
    assert "| local[2] (session 2) | 2 | 4.3.0 |" in environment_table(envs)
    speed = speedup_table(summary)
    assert "| floor | 1000 | asc | 2.00 |" in speed  # 4 s over the sessions' median, 2 s
    report = write_report([str(path)], str(tmp_path / "out"))
    with open(report, encoding="utf-8") as fh:
        text = fh.read()
    assert "Growth with size (thesis table 5.1 analogue, master local[2] (session 2))" in text
    assert "| asc | auto | 2.000e-03 | 0.000 | 1.00 | 2 |" in text  # session 2 only
