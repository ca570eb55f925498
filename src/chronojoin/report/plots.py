"""PNG figures equivalent to the thesis's figures 5.1-5.8, drawn from summaries only.

Each function takes the summary rows (:func:`chronojoin.report.load.summarise`) of one
family in one run and writes zero or more PNG files; it returns ``(title, filename)``
pairs. A figure whose data is absent is simply not drawn.
"""

from __future__ import annotations

import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

Figure = tuple[str, str]
_GIB = 1024.0**3
_MIB = 1024.0**2


#: What a case's size counts, per family (reports label their size axes with it).
SIZE_UNITS = {"asof": "ids", "band": "rows per side", "intervals": "points",
              "interval_join": "points",
              "loader": "table rows"}


def size_unit(summary: pd.DataFrame) -> str:
    """The size unit of a family's rows: ``ids`` for as-of joins, ``points``, ..."""
    if "family" in summary and not summary.empty:
        return SIZE_UNITS.get(str(summary["family"].iloc[0]), "size")
    return "ids"


def is_standalone(master: str) -> bool:
    """Whether ``master`` is a standalone cluster's URL (``spark://host:port``)."""
    return master.startswith("spark://")


def finished(summary: pd.DataFrame) -> pd.Series:
    """Rows with a time: at least one timed run finished (``ok``, ``ok (1 timeout)``)."""
    if "runs" in summary:
        return summary["runs"] > 0
    return summary["status"] == "ok"


#: Variants of the as-of size/order study: drawn like the rows of a family without variants.
SIZE_VARIANTS = ("size", "order")


def study_of(df: pd.DataFrame) -> pd.Series:
    """The size study of each row: its variant (``few_pairs``, ``short_inner``, ...).

    ``""`` for the as-of size/order study (:data:`SIZE_VARIANTS`) and for rows without a
    variant, which reports draw as they always did (panels by row order only).
    """
    if "p_variant" not in df:
        return pd.Series("", index=df.index, dtype=object)
    variant = df["p_variant"]
    other = variant.notna() & ~variant.isin(SIZE_VARIANTS)
    return variant.where(other, "").astype(str)


def has_studies(df: pd.DataFrame) -> bool:
    """Whether ``df`` holds rows of a variant other than the size/order study."""
    return bool(study_of(df).ne("").any())


def size_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of the size studies: plain datasets (no buckets) at several sizes.

    The as-of size/order study and a family without variants give all their rows; any
    other variant (``few_pairs``, ``short_inner``, ...) gives its rows when it was run
    at two sizes or more, so each of them gets its own growth line. A variant run at one
    size only (as-of ``hot_key``, ``many_left``, ...) is a single measurement, which the
    results table shows.
    """
    df = summary[finished(summary)]
    if "p_buckets" in df:
        df = df[df["p_buckets"].isna()]
    df = df[df["size"].notna()]
    if "p_variant" in df:
        study = study_of(df)
        sizes = df.groupby(study)["size"].transform("nunique")
        df = df[study.eq("") | (sizes > 1)]
    return df


def _panels(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One panel per size study and row order: ``order asc``, ``few_pairs``, ..."""
    study = study_of(df).rename("_study")
    order = (df["p_order"] if "p_order" in df else pd.Series(None, index=df.index))
    order = order.fillna("").astype(str).rename("_order")
    if study.eq("").all() and order.eq("").all():
        return [("", df)]
    panels = []
    for (name, by), g in df.groupby([study, order], sort=True):
        label = ", ".join(p for p in (str(name), f"order {by}" if by else "") if p)
        panels.append((label, g))
    return panels


def _grid(n: int) -> tuple[int, int]:
    """Rows and columns of ``n`` panels: at most three a row, rows as even as can be."""
    rows = math.ceil(n / 3)
    return rows, math.ceil(n / rows)


def _lines(
    df: pd.DataFrame, x: str, y: str, *, title: str, xlabel: str, ylabel: str, path: str,
    scale: float = 1.0, logx: bool = True, logy: bool = False,
    hlines: pd.DataFrame | None = None,
) -> bool:
    panels = _panels(df)
    panels = [(n, g[g[y].notna()]) for n, g in panels if g[y].notna().any()]
    if not panels:
        return False
    methods = sorted({str(m) for _, g in panels for m in g["method"]})
    colours = {m: f"C{i % 10}" for i, m in enumerate(methods)}  # one colour a method
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4 * rows), squeeze=False)
    legend: dict[str, object] = {}
    for ax, (name, group) in zip(axes.flat, panels, strict=False):
        for method, unsorted in group.groupby("method", sort=True):
            g = unsorted.sort_values(x)
            line = ax.plot(g[x], g[y] / scale, marker="o", label=str(method),
                           color=colours[str(method)])
            legend.setdefault(str(method), line[0])
            if hlines is not None:
                ref = hlines[hlines["method"] == method]["elapsed_s"].dropna()
                if len(ref):
                    ax.axhline(float(ref.iloc[0]) / scale, ls="--", lw=0.8,
                               color=line[0].get_color())
        if name:
            ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    labels = sorted(legend)
    axes.flat[len(panels) - 1].legend([legend[m] for m in labels], labels, fontsize=8,
                                      loc="best")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def size_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figures 5.1-5.3: elapsed time, peak execution memory, shuffle bytes vs size."""
    df = size_rows(summary)
    specs = [
        ("elapsed_s", "Elapsed time vs dataset size (fig. 5.1)", "seconds", 1.0, True),
        ("peak_execution_memory_bytes", "Peak execution memory (fig. 5.2)", "GiB", _GIB, False),
        ("shuffle_write_bytes", "Shuffle bytes written (fig. 5.3)", "MiB", _MIB, False),
        ("shuffle_read_bytes", "Shuffle bytes read", "MiB", _MIB, False),
    ]
    made = []
    for metric, title, unit, scale, logy in specs:
        name = f"{prefix}_{metric}_vs_size.png"
        if _lines(df, "size", metric, title=title, xlabel=size_unit(summary), ylabel=unit,
                  path=os.path.join(out, name), scale=scale, logy=logy):
            made.append((title, name))
    return made


def bucket_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figures 5.4-5.6: elapsed, memory and spill vs bucket count (ref: unbucketed)."""
    if "p_buckets" not in summary:
        return []
    ok = summary[finished(summary)]
    df = ok[ok["p_buckets"].notna()].copy()
    if df.empty:
        return []
    df["p_buckets"] = df["p_buckets"].astype(int)
    sizes = set(df["size"].dropna())
    plain = size_rows(summary)
    ref = plain[plain["size"].isin(sizes)]
    if "p_order" in ref:
        ref = ref[ref["p_order"] == "asc"]
    df = df.drop(columns=[c for c in ("p_order", "p_variant") if c in df])  # one panel
    specs = [
        ("elapsed_s", "Elapsed time vs buckets (fig. 5.4; dashed: unbucketed)", "seconds", 1.0),
        ("peak_execution_memory_bytes", "Peak execution memory vs buckets (fig. 5.5)", "GiB",
         _GIB),
        ("disk_spill_bytes", "Disk spill vs buckets (fig. 5.6a)", "MiB", _MIB),
        ("memory_spill_bytes", "Memory spill vs buckets (fig. 5.6b)", "MiB", _MIB),
    ]
    made = []
    for metric, title, unit, scale in specs:
        name = f"{prefix}_{metric}_vs_buckets.png"
        hl = ref if metric == "elapsed_s" else None
        if _lines(df, "p_buckets", metric, title=title, xlabel="buckets", ylabel=unit,
                  path=os.path.join(out, name), scale=scale, logx=False, hlines=hl):
            made.append((title, name))
    return made


def executor_figure(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figure 5.7: elapsed time vs executors (one line per method and dataset).

    Local masters and standalone clusters get lines of their own: ``local[2]`` and a
    cluster of two workers have the same executor count but not the same costs.
    """
    df = size_rows(summary)
    df = df[df["executors"].notna()]
    if df["executors"].nunique() < 2:
        return []
    df = df.copy()
    standalone = df["master"].fillna("").map(is_standalone)
    df["method"] = (df["method"] + " n=" + df["size"].astype(int).astype(str)
                    + standalone.map({True: " (standalone)", False: ""}))
    if "session" in df:  # one point per master: the median of its sessions
        keys = [c for c in ("method", "master", "executors", "p_order", "p_variant") if c in df]
        df = df.groupby(keys, dropna=False, sort=False)["elapsed_s"].median().reset_index()
    name = f"{prefix}_elapsed_vs_executors.png"
    title = "Elapsed time vs executors (fig. 5.7)"
    if _lines(df, "executors", "elapsed_s", title=title, xlabel="executors (cores)",
              ylabel="seconds", path=os.path.join(out, name), logx=False):
        return [(title, name)]
    return []


def reference_figure(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figure 5.8 analogue: every method side by side per size, local references included.

    One chart per size study (``few_pairs``, ``short_inner``, ...), one above the other.
    """
    df = size_rows(summary)
    if "p_order" in df:
        df = df[df["p_order"].isin(["asc"]) | df["p_order"].isna()]
    if df.empty:
        return []
    study = study_of(df).rename("_study")
    table = df.pivot_table(index=[study, "size"], columns="method", values="elapsed_s",
                           aggfunc="median")
    if table.empty:
        return []
    charts = [(str(name), t.droplevel(0)) for name, t in table.groupby(level=0, sort=True)]
    width = max(5.0, 1.2 * len(table.columns) * max(len(t) for _, t in charts))
    fig, axes = plt.subplots(len(charts), 1, figsize=(width, 4 * len(charts)), squeeze=False,
                             layout="constrained" if len(charts) > 1 else None)
    title = "All methods side by side (fig. 5.8 analogue)"
    for ax, (name, chart) in zip(axes[:, 0], charts, strict=True):
        chart.plot.bar(ax=ax, logy=True, rot=0)  # every method a column: colours agree
        ax.set_xlabel(size_unit(summary))
        ax.set_ylabel("seconds (log)")
        ax.set_title(name or title, fontsize=10)
        ax.legend(fontsize=8)
    if len(charts) > 1:
        fig.suptitle(title, fontsize=11)  # the constrained layout keeps it off the charts
    else:
        fig.tight_layout()
    name = f"{prefix}_methods_by_size.png"
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)
    return [(title, name)]


def all_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Every figure of one family in one run."""
    made: list[Figure] = []
    one = main_master_rows(summary)
    made += size_figures(one, out, prefix)
    made += bucket_figures(one, out, prefix)
    made += reference_figure(one, out, prefix)
    made += executor_figure(summary, out, prefix)
    return made


def main_master_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of the master with the most executors (figures 5.1-5.6 use one master).

    Of a master started in several sessions of the run, the rows of its first session.
    """
    ranked = summary.sort_values("executors", ascending=False, na_position="last")
    if summary["master"].nunique(dropna=True) >= 2:
        summary = summary[summary["master"] == ranked["master"].iloc[0]]
    if "session" in summary and summary["session"].nunique() > 1:
        summary = summary[summary["session"] == summary["session"].min()]
    return summary
